import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// `decode` gives exactly the samples that were encoded, at the right time: encoder delay and
/// padding are trimmed where the file says what they are, as ffmpeg and AVAssetReader do.
/// Every file is made by ffmpeg (or LAME) from the same known signal, 3 s of white noise plus
/// 7 samples at 22,050 Hz: a length that is no multiple of any codec's frame.
@Suite(.media) struct SampleExactDecodingTests {
    static let rate = 22_050, count = 66_157

    static func source(in folder: URL, rate: Int = rate) throws -> String {
        let wav = folder.appendingPathComponent("source.wav").path
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "anoisesrc=r=\(rate):a=0.25:seed=3",
                                             "-af", "atrim=end_sample=\(count)", "-c:a", "pcm_s16le", wav])
        return wav
    }

    /// The file decoded by `decode`, mono 16-bit at the file's rate.
    static func decode(_ path: String) throws -> [Int16] {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(path)" } },
              "dec": { "type": "decode", "params": { "sampleFormat": "s16le" } }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.audio -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        var samples: [Int16] = []
        while let b = try run.output("out").copyNextSampleBuffer() { samples += b.withAudioSamples(as: Int16.self) { Array($0) } }
        #expect(run.wait().status == .completed)
        return samples
    }

    static func encode(_ wav: String, to file: String, _ arguments: [String]) throws {
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", wav] + arguments + [file])
    }

    /// MP3 with an Info tag, from ffmpeg ("Lavc") and from LAME itself, CBR and VBR: the decoder
    /// delay (529) and the encoder's delay and padding are trimmed, and the count is the source's.
    /// Remuxed by ffmpeg (`-c:a copy`, as when cover art is added), ffmpeg's tag says "Lavf"
    /// (LAME's keeps its name).
    @Test(arguments: ["lavc-cbr", "lavc-vbr", "lame-cbr", "lame-vbr",
                      "lavc-cbr-remuxed", "lavc-vbr-remuxed", "lame-vbr-remuxed", "lavc-cbr-cover"])
    func mp3WithATagDecodesToTheSourceExactly(_ kind: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = try Self.source(in: folder), encoded = folder.appendingPathComponent("\(kind)-encoded.mp3").path
        let vbr = kind.contains("vbr")
        if kind.hasPrefix("lame") {
            _ = try TestMedia.runTool("lame", ["--silent"] + (vbr ? ["-V", "4"] : ["-b", "64"]) + [wav, encoded])
        } else {
            try Self.encode(wav, to: encoded, ["-c:a", "libmp3lame"] + (vbr ? ["-q:a", "4"] : ["-b:a", "64k"]))
        }
        var mp3 = encoded
        if kind.hasSuffix("remuxed") {
            mp3 = folder.appendingPathComponent("\(kind).mp3").path
            try Self.encode(encoded, to: mp3, ["-c:a", "copy"])
        } else if kind.hasSuffix("cover") {
            let png = folder.appendingPathComponent("cover.png").path
            mp3 = folder.appendingPathComponent("\(kind).mp3").path
            _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x64", "-frames:v", "1", png])
            _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", encoded, "-i", png, "-map", "0", "-map", "1", "-c:a", "copy",
                                                 "-c:v", "png", "-disposition:v", "attached_pic", mp3])
        }
        let input = try Self.decode(wav), decoded = try Self.decode(mp3)
        #expect(input.count == Self.count)
        #expect(decoded.count == Self.count, "\(kind): \(decoded.count) samples")
        #expect(TestMedia.lag(of: decoded, against: input) == 0, "\(kind)")
    }

    /// Without the tag, nothing says what to trim: decoded as GStreamer gives it, delay and all
    /// (ffmpeg does the same).
    @Test func mp3WithoutATagKeepsWhatTheDecoderGives() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = try Self.source(in: folder), mp3 = folder.appendingPathComponent("untagged.mp3").path
        try Self.encode(wav, to: mp3, ["-c:a", "libmp3lame", "-b:a", "64k", "-write_xing", "0"])
        let decoded = try Self.decode(mp3)
        #expect(decoded.count > Self.count && decoded.count % 576 == 0, "\(decoded.count)")
        #expect(TestMedia.lag(of: decoded, against: try Self.decode(wav)) > 0)
    }

    /// Opus (pre-skip and end trimming, in Ogg and in MP4), Vorbis (granule positions), FLAC,
    /// ALAC and WAV are exact: pinned here.
    @Test(arguments: [("opus", ["-c:a", "libopus", "-b:a", "48k"]), ("ogg", ["-c:a", "libvorbis"]), ("flac", []), ("wav", ["-c:a", "pcm_s24le"]),
                        ("m4a", ["-c:a", "alac"]), ("mp4", ["-c:a", "libopus", "-b:a", "48k"])])
    func otherCodecsAreExact(_ ext: String, _ arguments: [String]) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Opus runs at 48 kHz: its source is made at that rate.
        let rate = arguments.contains("libopus") ? 48_000 : Self.rate
        let wav = try Self.source(in: folder, rate: rate), file = folder.appendingPathComponent("out.\(ext)").path
        try Self.encode(wav, to: file, arguments)
        let input = try Self.decode(wav), decoded = try Self.decode(file)
        #expect(decoded.count == Self.count, "\(ext): \(decoded.count) samples")
        #expect(TestMedia.lag(of: decoded, against: input) == 0, "\(ext)")
    }

    /// AAC in M4A from ffmpeg: its edit list skips the 1,024 priming samples and lasts the
    /// source's count (in a 1 ms movie clock; the sample table's end makes it exact). GStreamer
    /// alone gave 203 samples short, one early; decode gives the source's, aligned.
    @Test(arguments: [22_050, 44_100, 48_000])
    func aacWithAnEditListDecodesToTheSourceExactly(_ rate: Int) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = try Self.source(in: folder, rate: rate), m4a = folder.appendingPathComponent("ffmpeg.m4a").path
        try Self.encode(wav, to: m4a, ["-c:a", "aac", "-b:a", "96k"])
        let input = try Self.decode(wav), decoded = try Self.decode(m4a)
        #expect(decoded.count == Self.count, "\(rate) Hz: \(decoded.count) samples")
        #expect(TestMedia.lag(of: decoded, against: input) == 0)
    }

    /// An M4A whose priming and padding only iTunes' gapless tag describes (its edit list covers
    /// the whole media, as GStreamer's writer leaves it): the tag is honoured.
    @Test func aacWithAnITunesGaplessTagDecodesToTheSourceExactly() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = try Self.source(in: folder), m4a = folder.appendingPathComponent("itunes.m4a").path
        try TestMedia.gstLaunch("filesrc location=\(wav) ! wavparse ! audioconvert ! avenc_aac ! mp4mux ! filesink location=\(m4a)")
        let plain = try Self.decode(m4a)
        // ffmpeg's AAC priming is 1,024; the padding fills the last frame.
        let padding = (Self.count + 1024 + 1023) / 1024 * 1024 - Self.count - 1024
        try Self.addGaplessTag(to: m4a, delay: 1024, padding: padding, count: Self.count)
        let input = try Self.decode(wav), decoded = try Self.decode(m4a)
        #expect(plain.count > Self.count + 1000, "without the tag: \(plain.count)")
        #expect(decoded.count == Self.count, "\(decoded.count) samples")
        #expect(TestMedia.lag(of: decoded, against: input) == 0)
    }

    /// Neither an edit list nor a tag: what GStreamer gives is kept, priming and all.
    @Test func aacWithNeitherKeepsWhatTheDecoderGives() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = try Self.source(in: folder), m4a = folder.appendingPathComponent("plain.m4a").path
        try TestMedia.gstLaunch("filesrc location=\(wav) ! wavparse ! audioconvert ! avenc_aac ! mp4mux ! filesink location=\(m4a)")
        let decoded = try Self.decode(m4a)
        #expect(decoded.count == Self.count + 1024, "\(decoded.count) samples")
        #expect(TestMedia.lag(of: decoded, against: try Self.decode(wav)) == 1024)
    }

    /// GraphKit's own M4A (sink.mp4's edit list) reads back as its source, exactly.
    @Test func graphKitsOwnAACReadsBackExactly() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = try Self.source(in: folder), m4a = folder.appendingPathComponent("graphkit.m4a").path
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } },
              "dec": { "type": "decode" }, "aac": { "type": "encode.aac" },
              "file": { "type": "sink.mp4", "params": { "path": "\(m4a)" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> aac.in", "aac.out -> file.audio" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        #expect(run.wait().status == .completed)
        let input = try Self.decode(wav), decoded = try Self.decode(m4a)
        #expect(decoded.count == Self.count, "\(decoded.count) samples")
        #expect(TestMedia.lag(of: decoded, against: input) == 0)
    }

    /// Writes iTunes' `iTunSMPB` into the file's index (moov/udta/meta/ilst), which GStreamer's
    /// writer puts at the end of the file, so the index can grow in place.
    static func addGaplessTag(to path: String, delay: Int, padding: Int, count: Int) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let top = MP4AudioEdit.boxes(in: bytes, 0..<bytes.count)
        let (offset, size) = try #require(top.last)
        #expect(bytes.fourCC(offset + 4) == "moov")
        var moov = try #require(try MP4Box.parse(bytes[offset..<(offset + size)]).first)
        func hex(_ v: Int, _ digits: Int) -> String { let s = String(v, radix: 16, uppercase: true); return String(repeating: "0", count: max(0, digits - s.count)) + s }
        let text = " 00000000 \(hex(delay, 8)) \(hex(padding, 8)) \(hex(count, 16)) 00000000 00000000"
        func box(_ type: String, _ body: [UInt8]) -> MP4Box { MP4Box(type: type, body: body) }
        let mean = box("mean", [0, 0, 0, 0] + Array("com.apple.iTunes".utf8)).bytes
        let name = box("name", [0, 0, 0, 0] + Array("iTunSMPB".utf8)).bytes
        let data = box("data", [0, 0, 0, 1, 0, 0, 0, 0] + Array(text.utf8)).bytes
        let ilst = box("ilst", box("----", mean + name + data).bytes).bytes
        let hdlr = box("hdlr", [0, 0, 0, 0, 0, 0, 0, 0] + Array("mdir".utf8) + Array("appl".utf8) + [UInt8](repeating: 0, count: 9)).bytes
        moov.children.append(box("udta", box("meta", [0, 0, 0, 0] + hdlr + ilst).bytes))
        try Data(bytes[..<offset] + moov.bytes).write(to: URL(fileURLWithPath: path))
    }
}
