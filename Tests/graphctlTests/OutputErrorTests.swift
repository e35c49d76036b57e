import Foundation
import GraphKitTesting
import Testing

/// A write that fails part-way (here a file-size limit, as a full disk would) names the output
/// being written, exits 73, and leaves nothing under the target's name or beside it.
@Suite struct OutputErrorTests {
    @Test(.timeLimit(.minutes(10)))
    func aFailedWriteNamesTheOutputPath() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("in.wav").path
        // 120 s at 96 kb/s is about 1.4 MB of AAC, past the 1 MiB limit below. The limit is not
        // lower because a ThreadSanitizer build writes 512 KiB to a temporary file as it starts
        // (its read-only shadow), and under a smaller limit faults before main.
        try TestMedia.writeWAV(wav, seconds: 120, sampleRate: 44_100, channels: 2)
        let out = folder.appendingPathComponent("out.m4a").path
        // SIGXFSZ ignored, so that writing past the limit fails with EFBIG instead of killing.
        let script = "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\""
        let r = try Graphctl.runCommand("/bin/bash", ["-c", script, Graphctl.executable.path, "run", Graphctl.graph("transcode-audio.json"),
                                                      "--set", "src.path=\(wav)", "--set", "file.path=\(out)"])
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr.contains("error: node \"file\" (sink.mp4, writing \"\(out)\")"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["in.wav"])
    }
}
