import Foundation
import Testing
import GraphKit
import GraphKitTesting
import MediaContainers
@testable import Nodes
import TestSupport

/// `source.concat` where a piece has less sound than pictures (issue 73, class 7): silence fills
/// the gap, said by a warning naming the piece, and the sound of the pieces after it plays with
/// their pictures. Before, the sound ran on from where it stopped: after a piece whose sound
/// track held nothing, the next piece's sound played as early as that piece was long.
@Suite(.media, .timeLimit(.minutes(10))) struct ConcatSilenceTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of pictures with a tone of `tone` Hz as AAC at 44.1 kHz lasting `sound` seconds
    /// from `soundStart`.
    func movie(_ name: String, seconds: Double, tone: Int, sound: Double? = nil, soundStart: Double = 0) throws -> String {
        let p = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=\(seconds)",
                                         "-itsoffset", "\(soundStart)", "-f", "lavfi", "-i", "sine=frequency=\(tone):sample_rate=44100:duration=\(sound ?? seconds)",
                                         "-c:v", "libx264", "-g", "25", "-bf", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-y", p])
        return p
    }

    /// A copy of `file` whose sound track holds no samples (its tables emptied), as the sweep made one.
    func withoutSound(_ file: String, _ name: String) throws -> String {
        let out = path(name)
        try CraftedMP4.edited(file, to: out) { movie in
            try CraftedMP4.track("soun", of: &movie) { track in
                track.box.modify(["mdia", "minf", "stbl"]) { stbl in
                    func box(_ type: FourCC, _ words: [UInt32]) -> MP4Box {
                        MP4Box(type: type, body: words.flatMap { w in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: w >> UInt32($0)) } })
                    }
                    stbl.children.removeAll { ["stsz", "stts", "stsc", "stco", "co64", "ctts", "stss"].contains($0.type) }
                    stbl.children += [box("stts", [0, 0]), box("stsc", [0, 0]), box("stsz", [0, 0, 0]), box("stco", [0, 0])]
                }
                track.setEdits([])
            }
        }
        return out
    }

    /// `pieces` joined into `out` by `source.concat → sink.mp4` on `plan`.
    func join(_ pieces: [String], into out: String, plan: RunPlan) throws -> RunReport {
        let list = pieces.map { #"{ "path": "\#($0)" }"# }.joined(separator: ", ")
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "join": { "type": "source.concat", "params": { "pieces": [\(list)] } },
              "file": { "type": "sink.mp4", "params": { "path": "\(out)" } } }, "edges": ["join.video -> file.video", "join.audio -> file.audio"] }
            """)
        let run = try GraphRun(graph, plan: plan)
        try run.start()
        return run.wait()
    }

    /// The plan's warnings for `pieces`.
    func warnings(_ pieces: [String]) throws -> [String] {
        try ConcatPlan(pieces.enumerated().map { ConcatSourceNode.Piece(path: $1, inpoint: 0, outpoint: nil, location: "nodes.join.params.pieces[\($0)]") },
                       kinds: ["video", "audio"], node: "join").warnings
    }

    /// `file`'s sound decoded by ffmpeg to 16-bit mono at 44.1 kHz.
    func pcm(_ file: String) throws -> [Int16] {
        let raw = path(URL(fileURLWithPath: file).lastPathComponent + ".pcm")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-map", "0:a", "-ac", "1", "-f", "s16le", "-y", raw])
        return try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    /// What is heard from `from` to `to` seconds of `sound`: silence, or the tone's frequency.
    func heard(_ sound: [Int16], _ from: Double, _ to: Double) -> String {
        let part = sound[min(sound.count, Int(from * 44_100))..<min(sound.count, Int(to * 44_100))]
        guard part.count > 1_000 else { return "nothing (the sound ends at \(Double(sound.count) / 44_100) s)" }
        if part.allSatisfy({ abs(Int($0)) < 64 }) { return "silence" }
        let crossings = zip(part, part.dropFirst()).filter { $0.0 < 0 && $0.1 >= 0 }.count
        return "\(Int((Double(crossings) * 44_100 / Double(part.count) / 10).rounded()) * 10) Hz"
    }

    /// The sweep's case: a 3-s piece whose sound track has no samples, then a 2-s piece at
    /// 660 Hz. The join's first 3 s are silent and its tone starts with the second piece's
    /// pictures (it started at 0, 3 s early); a warning names the first piece.
    @Test(arguments: RunPlan.allCases) func aPieceWithAnEmptySoundTrackIsFilledWithSilence(plan: RunPlan) throws {
        let a = try withoutSound(try movie("a.mp4", seconds: 3, tone: 440), "a-silent.mp4"), b = try movie("b.mp4", seconds: 2, tone: 660)
        let out = path("joined.mp4")
        let report = try join([a, b], into: out, plan: plan)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let sound = try pcm(out)
        #expect(heard(sound, 0.1, 2.9) == "silence")
        #expect(heard(sound, 3.1, 4.9) == "660 Hz")
        let audio = try MediaProbe(out).stream("audio")?.duration ?? 0
        #expect(abs(audio - 5) < 0.05, "the sound lasts \(audio) s")
        let said = try warnings([a, b])
        #expect(said.count == 1 && said.allSatisfy { $0.contains("piece 0 (\"\(a)\") has no sound for 3.0") && $0.contains("silence fills it") }, "\(said)")
    }

    /// Sound that ends early (1 s of a 3-s piece) and sound that starts late (at 1 s of a 2-s
    /// piece): silence to the next piece's pictures, and before the late sound; each tone is
    /// heard with its own pictures.
    @Test func soundThatEndsEarlyOrStartsLateKeepsItsPlace() throws {
        let a = try movie("early.mp4", seconds: 3, tone: 440, sound: 1)
        let b = try movie("late.mp4", seconds: 2, tone: 660, sound: 1, soundStart: 1)
        let c = try movie("c.mp4", seconds: 2, tone: 880)
        let out = path("joined.mp4")
        let report = try join([a, b, c], into: out, plan: .pipeline)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let sound = try pcm(out)
        for (from, to, expected) in [(0.1, 0.9, "440 Hz"), (1.1, 3.9, "silence"), (4.1, 4.9, "660 Hz"), (5.1, 6.9, "880 Hz")] {
            #expect(heard(sound, from, to) == expected, "from \(from) s to \(to) s")
        }
        let said = try warnings([a, b, c])
        #expect(said.count == 2 && said[0].contains("piece 0") && said[1].contains("piece 1"), "\(said)")
    }

    /// The silent frame for each channel layout of AAC LC is what decoders take (ffmpeg decodes
    /// it to zeros: 4 bytes mono, 7 stereo); HE-AAC, an extension, or another layout has none.
    @Test func theSilentFrameIsAACLCsAndNothingElses() throws {
        // LC at 44.1 kHz mono, stereo, 5.1; LC with an explicit rate (escape index 15: 5 bytes).
        let mono = try #require(AACSilence.frame(for: [0x12, 0x08]))
        #expect(mono.bytes == [0x00, 0x00, 0x00, 0x07] && mono.samples == 1024 && mono.rate == 44_100)
        #expect(AACSilence.frame(for: [0x12, 0x10])?.bytes.count == 7)
        #expect(AACSilence.frame(for: [0x12, 0x30]) != nil)
        #expect(AACSilence.frame(for: [0x17, 0x80, 0x01, 0xF4, 0x08])?.rate == 1000)
        #expect(AACSilence.frame(for: [0x12, 0x0C])?.samples == 960)  // frameLengthFlag
        #expect(AACSilence.frame(for: [0x12, 0x08, 0x56, 0xE5, 0x00])?.bytes.count == 4)  // ffmpeg's: "no SBR" said
        for config: [UInt8] in [[0x2B, 0x92, 0x08, 0x00], [0x12, 0x10, 0x56, 0xE5, 0x98], [0x12, 0x10, 0x00], [0x12, 0x00], [0x12, 0x40], [0x12], []] {
            #expect(AACSilence.frame(for: config) == nil, "\(config)")  // HE-AAC, SBR said, more bytes, layouts 0 and 8, short
        }
        for layout in 1...7 {
            let frame = try #require(AACSilence.frame(for: [0x12, UInt8(layout << 3)])).bytes
            var adts: [UInt8] = []
            for _ in 0..<50 {
                let length = frame.count + 7
                adts += [0xFF, 0xF1, UInt8(1 << 6 | 4 << 2 | layout >> 2), UInt8((layout & 3) << 6 | length >> 11), UInt8((length >> 3) & 0xFF),
                         UInt8((length & 7) << 5 | 0x1F), 0xFC] + frame
            }
            let file = path("silence-\(layout).aac")
            try Data(adts).write(to: URL(fileURLWithPath: file))
            #expect(try pcm(file).allSatisfy { $0 == 0 }, "layout \(layout)")
            #expect(try pcm(file).count == 50 * 1024, "layout \(layout)")
        }
    }
}
