import Foundation
import Testing
import MediaContainers
import GraphKit
import GraphKitTesting
import TestSupport

/// Damaged files, as users have them: cut short, with bytes flipped, with a block zeroed. For
/// each, `transcode-audio` either fails with 70 (corrupt media) and leaves nothing under the
/// output's name, or succeeds with a file ffprobe reads, holding audio. Never a hang (the
/// runner's guard would fail the test), a crash, or exit 0 with an unreadable file.
@Suite(.media) struct DamagedInputTests {
    static let formats: [(ext: String, pipeline: String)] = [
        ("wav", "wavenc"),
        ("flac", "flacenc"),
        ("mp3", "lamemp3enc"),
        ("ogg", "vorbisenc ! oggmux"),
        ("m4a", "avenc_aac ! mp4mux faststart=true"),
        ("mov", "avenc_aac ! qtmux"),
    ]

    /// Ways to damage a file of `count` bytes: a name, and the bytes made from the good ones.
    static func damages(of good: [UInt8], seed: UInt64) -> [(String, [UInt8])] {
        var random = SplitMix(seed: seed)
        var result: [(String, [UInt8])] = []
        for fraction in [0.05, 0.5, 0.9] { result.append(("cut at \(Int(fraction * 100))%", Array(good.prefix(Int(Double(good.count) * fraction))))) }
        var flipped = good
        for _ in 0..<16 { let i = 16 + random.below(good.count - 16); flipped[i] ^= UInt8(truncatingIfNeeded: 1 + random.below(255)) }
        result.append(("16 bytes flipped", flipped))
        var header = good
        for _ in 0..<4 { let i = 4 + random.below(min(200, good.count) - 4); header[i] ^= 0xFF }
        result.append(("header bytes flipped", header))
        var zeroed = good
        let start = good.count / 3
        for i in start..<min(good.count, start + 2048) { zeroed[i] = 0 }
        result.append(("2 KB zeroed", zeroed))
        return result
    }

    @Test(arguments: formats.map(\.ext))
    func damagedAudioFailsCleanlyOrGivesAPlayableFile(_ ext: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let encoder = try #require(Self.formats.first { $0.ext == ext }).pipeline
        let good = folder.appendingPathComponent("good.\(ext)").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=40 samplesperbuffer=1024 wave=pink-noise ! audio/x-raw,rate=44100,channels=2 ! audioconvert ! \(encoder) ! filesink location=\(good)")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        for (i, (what, damaged)) in Self.damages(of: bytes, seed: UInt64(ext.utf8.reduce(0) { $0 &* 31 &+ Int($1) })).enumerated() {
            let input = folder.appendingPathComponent("damaged-\(i).\(ext)").path, output = folder.appendingPathComponent("out-\(i).m4a").path
            try Data(damaged).write(to: URL(fileURLWithPath: input))
            let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--quiet", "--set", "src.path=\(input)", "--set", "file.path=\(output)")
            switch r.status {
            case 0:
                // A success must be a file another program plays: audio, some of it.
                let probe = try? MediaProbe(output)
                #expect(probe?.stream("audio")?.codecName == "aac", "\(ext), \(what): exit 0 but ffprobe cannot read \(output)")
                #expect((probe?.duration ?? 0) > 0, "\(ext), \(what): exit 0 with an empty file")
            case 70:
                // The decoder's error ("reading" the file), or, when it gave nothing at all
                // without one, the sink's ("no media reached it from" the file): either names it.
                #expect(r.stderr.contains("\"\(input)\""), "\(ext), \(what): \(r.stderr)")
                // A file cut short says so, and where: not the demuxer's words.
                if what.hasPrefix("cut at") {
                    #expect(r.stderr.contains("\"\(input)\" ends at byte \(damaged.count)"), "\(ext), \(what): \(r.stderr)")
                }
                #expect(!FileManager.default.fileExists(atPath: output), "\(ext), \(what): a failed run left \(output)")
            default:
                Issue.record("\(ext), \(what): exit \(r.status): \(r.stderr)")
            }
            #expect(!r.stderr.contains("killed"), "\(ext), \(what): hung")
        }
        // Nothing half-written is left anywhere in the folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).allSatisfy { !$0.hasSuffix(".partial") })
    }
    /// The same for a video with sound through `transcode-video`: both tracks, or a clean 70.
    @Test func damagedVideoFailsCleanlyOrGivesAPlayableFile() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("good.mp4").path
        try TestMedia.gstLaunch("mp4mux name=m ! filesink location=\(good) videotestsrc num-buffers=20 ! video/x-raw,width=160,height=120,framerate=20/1 ! x264enc ! m. "
                                + "audiotestsrc num-buffers=22 ! audioconvert ! avenc_aac ! m.")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        for (i, (what, damaged)) in Self.damages(of: bytes, seed: 4).enumerated() {
            let input = folder.appendingPathComponent("damaged-\(i).mp4").path, output = folder.appendingPathComponent("out-\(i).mp4").path
            try Data(damaged).write(to: URL(fileURLWithPath: input))
            let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--quiet", "--set", "src.path=\(input)", "--set", "file.path=\(output)")
            switch r.status {
            case 0:
                let probe = try? MediaProbe(output)
                #expect(probe?.stream("video")?.codecName == "h264" && probe?.stream("audio")?.codecName == "aac",
                        "\(what): exit 0 but \(output) lacks a track ffprobe reads")
            case 70:
                #expect(r.stderr.contains("\"\(input)\""), "\(what): \(r.stderr)")
                if what.hasPrefix("cut at") {
                    // The index (moov) is written last: a cut loses it.
                    #expect(r.stderr.contains("\"\(input)\" ends at byte \(damaged.count) before its index: the file was not finished"),
                            "\(what): \(r.stderr)")
                }
                #expect(!FileManager.default.fileExists(atPath: output), "\(what): a failed run left \(output)")
            default:
                Issue.record("\(what): exit \(r.status): \(r.stderr)")
            }
        }
    }

    /// A recording killed before it wrote its index (kill -9 of a graphctl writing an MP4 whose
    /// index comes last) leaves a temporary file that a later run cannot decode: it says that the
    /// file was not finished, where it ends, and exits 70.
    @Test(.timeLimit(.minutes(10)))
    func aRecordingKilledBeforeItsIndexIsSaidToBeUnfinished() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("rec.m4a").path
        let partial = folder.appendingPathComponent(".rec.m4a.partial").path
        // Not live, so that it records faster than real time; without faststart, so that the
        // media goes into the file as it comes and the index would come last.
        let recording = try Graphctl.start(["run", Graphctl.graph("m4a.json"), "--progress", "always",
                                            "--set", "mic.live=false", "--set", "mic.duration=3600",
                                            "--set", "file.faststart=false", "--set", "file.path=\(target)"])
        try recording.waitForPosition(atLeast: 60)  // a minute of AAC: far more than filesink holds back
        recording.send(SIGKILL)
        _ = recording.wait()
        let size = try #require(try FileManager.default.attributesOfItem(atPath: partial)[.size] as? Int)
        #expect(size > 65_536)
        let killed = folder.appendingPathComponent("killed.m4a").path
        try FileManager.default.moveItem(atPath: partial, toPath: killed)
        let output = folder.appendingPathComponent("out.m4a").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(killed)", "--set", "file.path=\(output)")
        #expect(r.status == 70, "\(r.stderr)")
        #expect(r.stderr.contains("error: node \"dec\" (decode, reading \"\(killed)\"): \"\(killed)\" ends at byte \(size) before its index: the file was not finished"),
                "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["killed.m4a"])
    }

    /// An index-first M4A cut in half decodes up to the cut without an error: the run succeeds
    /// with what there is, and a warning says that the input ends early, and where.
    @Test(.timeLimit(.minutes(10)))
    func anIndexFirstFileCutInHalfSucceedsWithAWarning() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("good.m4a").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=200 samplesperbuffer=1024 ! audio/x-raw,rate=44100,channels=2 ! audioconvert ! avenc_aac ! mp4mux faststart=true ! filesink location=\(good)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        let half = folder.appendingPathComponent("half.m4a").path
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: half))
        let output = folder.appendingPathComponent("out.m4a").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--progress", "never",
                                 "--set", "src.path=\(half)", "--set", "file.path=\(output)")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("node=src"), "\(r.stderr)")
        #expect(r.stderr.contains("\"\(half)\" ends at byte \(bytes.count / 2), inside its media data (which runs to byte "), "\(r.stderr)")
        #expect(r.stderr.contains("the file was cut short; only what it holds was read"), "\(r.stderr)")
        let full = try MediaProbe(good).duration, written = try MediaProbe(output).duration
        #expect(written > 0 && written < full * 0.75, "\(written) s of \(full) s")
        // The complete file: no warning.
        let whole = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--progress", "never",
                                     "--set", "src.path=\(good)", "--set", "file.path=\(output)")
        #expect(whole.status == 0 && !whole.stderr.contains("warning"), "\(whole.stderr)")
    }

    /// Two transport streams joined with cat, the second's clock continuing the first's: they
    /// overlap by two frames and 0.1 s of sound, as cut-and-joined recordings do. The transcode
    /// gave exit 0 and a file whose decode times went back (ffmpeg: "non monotonically
    /// increasing dts"). Now decode leaves out what goes back, says how much, and the file is
    /// clean: every other frame, and the sound to the end.
    @Test(.timeLimit(.minutes(10)))
    func joinedTransportStreamsMakeACleanFile() throws {
        let folder = try TestMedia.temporaryFolder()
        func segment(_ name: String, offset: Int, frequency: Int) throws -> [UInt8] {
            let path = folder.appendingPathComponent(name).path
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=2",
                                             "-f", "lavfi", "-i", "sine=f=\(frequency):sample_rate=44100:d=2", "-c:v", "libx264",
                                             "-c:a", "aac", "-ac", "1", "-output_ts_offset", "\(offset)", "-y", path])
            return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        }
        let joined = folder.appendingPathComponent("joined.ts")
        try Data(try segment("a.ts", offset: 0, frequency: 440) + segment("b.ts", offset: 2, frequency: 880)).write(to: joined)
        let out = folder.appendingPathComponent("out.mp4").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--progress", "never",
                                 "--set", "src.path=\(joined.path)", "--set", "file.path=\(out)")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("video frames out of time order left out"), "\(r.stderr)")
        #expect(r.stderr.contains("audio samples out of time order left out"), "\(r.stderr)")
        let decoded = try Graphctl.runCommand("/usr/bin/ffmpeg", ["-v", "error", "-i", out, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.stderr.isEmpty, "\(decoded.stderr)")
        let frames = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v",
                                                       "-show_entries", "stream=nb_read_frames", "-of", "csv=p=0", out])
        #expect((96...100).contains(Int(frames.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0), "\(frames)")
        let probe = try MediaProbe(out)
        #expect(abs((probe.stream("audio")?.duration ?? 0) - 3.9) < 0.15, "\(probe.streams)")
    }

    /// An M4A's header followed by bytes that are no MP4 boxes: the message said the file "ends
    /// at byte 28 before its index" when 100 KB followed. It says what is there, and where.
    @Test func bytesThatAreNoBoxesAfterAnMP4HeaderAreNamed() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("good.m4a").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", "-y", good])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: good)))
        var walker = BoxWalker(MemoryBytes(bytes))
        guard case .box(let ftyp)? = try walker.next() else { Issue.record("no first box in \(good)"); return }
        #expect(ftyp.type == "ftyp")
        let header = Int(ftyp.size)
        var random = SplitMix(seed: 11)
        var tail = (0..<100_000).map { _ in UInt8(random.below(256)) }
        tail[4] = 0x01  // no box type by chance
        let damaged = folder.appendingPathComponent("damaged.m4a").path, out = folder.appendingPathComponent("out.m4a").path
        try Data(bytes.prefix(header) + tail).write(to: URL(fileURLWithPath: damaged))
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--progress", "never",
                                 "--set", "src.path=\(damaged)", "--set", "file.path=\(out)")
        #expect(r.status == 70)
        #expect(r.stderr == "error: node \"dec\" (decode, reading \"\(damaged)\"): \"\(damaged)\" is damaged at byte \(header): no MP4 box starts there, and no index came before it (100000 more bytes follow, which are not MP4 boxes)\n")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A file under /proc says its size is 0 until it is read: it was called "empty". It is
    /// read, found to be text, and said to be so.
    @Test func aProcFileIsNotCalledEmpty() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let json = folder.appendingPathComponent("w.json").path
        let r = try Graphctl.run("run", Graphctl.graph("waveform.json"), "--progress", "never",
                                 "--set", "src.path=/proc/self/status", "--set", "wave.json=\(json)", "--set", "wave.png=")
        #expect(r.status == 70)
        #expect(r.stderr == "error: node \"dec\" (decode, reading \"/proc/self/status\"): \"/proc/self/status\" is not in a media format GStreamer recognises (this appears to be a text file)\n")
        #expect(!FileManager.default.fileExists(atPath: json))
    }
}
