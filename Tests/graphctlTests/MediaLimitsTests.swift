import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// Media whose parameters no node handles are refused saying what is wrong and where, never
/// worked on for as long as a damaged header claims, never blamed on whoever pushed.
@Suite(.media, .timeLimit(.minutes(10))) struct MediaLimitsTests {
    static func errors(_ r: Graphctl.Result) -> String {
        r.stderr.split(separator: "\n").filter { $0.hasPrefix("error: ") }.map { $0 + "\n" }.joined()
    }

    /// A 200 KB WAV whose header says 1 Hz claims 100,000 s: the transcode resampled it to AAC's
    /// 7,350 Hz for 18 minutes (ffmpeg does the same, for as long). decode refuses a rate no
    /// audio has, naming the file and the field, at once; 1,000 Hz, the lowest it takes, runs.
    @Test func aWAVWhoseHeaderSaysOneHertzIsRefusedAtOnce() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let made = folder.appendingPathComponent("made.wav").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "anoisesrc=r=8000:a=0.3:d=12.5", "-c:a", "pcm_s16le", made])
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: made)))
        #expect(bytes.count > 200_000 && String(decoding: bytes[12..<16], as: UTF8.self) == "fmt ")
        /// The fmt chunk's sample rate and byte rate (bytes 24 and 28), little-endian.
        func claim(_ rate: UInt32) throws -> String {
            for (offset, value) in [(24, rate), (28, rate * 2)] {
                for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
            }
            let path = folder.appendingPathComponent("\(rate)hz.wav").path
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            return path
        }
        let wav = try claim(1), m4a = folder.appendingPathComponent("out.m4a").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--progress", "never",
                                 "--set", "src.path=\(wav)", "--set", "file.path=\(m4a)")
        #expect(r.status == 70)
        #expect(Self.errors(r) == "error: node \"dec\" (decode, reading \"\(wav)\"): \"\(wav)\" says its audio has 1 sample a second "
                + "(the sample rate its header gives), and decode takes audio of 1000 to 768000 Hz: no sound is that slow; "
                + "the header is damaged, or the file holds no audio\n")
        #expect(!FileManager.default.fileExists(atPath: m4a))
        let lowest = try claim(1_000)
        let ok = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--progress", "never", "--quiet",
                                  "--set", "src.path=\(lowest)", "--set", "file.path=\(m4a)")
        #expect(ok.status == 0, "\(ok.stderr)")
        #expect(abs(try MediaProbe(m4a).duration - 100) < 0.1)  // 100,000 samples at 1,000 Hz
    }

    /// 1×1 video: the run said "Internal data stream error" from the decoder. The node that
    /// cannot take it is named, with the size and what it takes (GStreamer's MP4 muxer takes
    /// 16×16 and up, as an H.264 track).
    @Test(arguments: ["png", "rawvideo"])
    func oneByOneVideoNamesTheNodeThatCannotTakeIt(_ codec: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let mkv = folder.appendingPathComponent("tiny.mkv").path, mp4 = folder.appendingPathComponent("out.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=c=red:s=2x2:r=10:d=1", "-f", "lavfi", "-i", "sine=d=1",
                                         "-vf", "scale=1:1", "-shortest", "-c:v", codec, "-c:a", "aac", mkv])
        let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--progress", "never",
                                 "--set", "src.path=\(mkv)", "--set", "file.path=\(mp4)")
        #expect(r.status == 70)
        #expect(Self.errors(r) == "error: node \"file\" (sink.mp4, writing \"\(mp4)\"): \"\(mkv)\" has 1x1 video, "
                + "and its input \"video\" takes a width of 16 or more and a height of 16 or more\n")
        #expect(!FileManager.default.fileExists(atPath: mp4))
    }
}
