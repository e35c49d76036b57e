import Foundation
import GraphKitTesting
import Testing
import TestSupport

/// GStreamer's debug text is for developers: `graphctl run` prints it only with --verbose.
@Suite(.media) struct VerboseTests {
    @Test(.timeLimit(.minutes(10)))
    func theCauseIsPrintedOnlyWithVerbose() throws {
        let folder = try TestMedia.temporaryFolder()
        let junk = folder.appendingPathComponent("junk.wav").path
        try Data((0..<4000).map { UInt8(truncatingIfNeeded: ($0 &* 7919) >> 3) }).write(to: URL(fileURLWithPath: junk))
        let args = ["run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(junk)",
                    "--set", "file.path=\(folder.appendingPathComponent("o.m4a").path)"]
        let plain = Graphctl.wait(try Graphctl.start(args))
        #expect(plain.status == 70)
        #expect(plain.stderr.contains("error: node \"dec\" (decode, reading \"\(junk)\"): \"\(junk)\" is not in a media format GStreamer recognises"),
                "\(plain.stderr)")
        #expect(!plain.stderr.contains("cause:"), "\(plain.stderr)")
        #expect(!plain.stderr.contains("typefind"), "\(plain.stderr)")
        let verbose = Graphctl.wait(try Graphctl.start(args + ["--verbose"]))
        #expect(verbose.status == 70)
        // GStreamer's own words, then its debug text (the element and the source line).
        #expect(verbose.stderr.contains("  cause: Could not determine type of stream.\n"), "\(verbose.stderr)")
        #expect(verbose.stderr.contains("gsttypefindelement.c"), "\(verbose.stderr)")
        let both = Graphctl.wait(try Graphctl.start(args + ["--verbose", "--quiet"]))
        #expect(both.status == 64)
    }

    /// The same for a diagnosed file: an M4A whose index never came (cut before it). The user
    /// reads what happened to the file; the demuxer's words and debug text only with --verbose.
    @Test(.timeLimit(.minutes(10)))
    func aDiagnosedFileKeepsTheDemuxersWordsForVerbose() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let good = folder.appendingPathComponent("good.m4a").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=40 ! audioconvert ! avenc_aac ! mp4mux faststart=false ! filesink location=\(good)")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: good))
        let cut = folder.appendingPathComponent("cut.m4a").path
        try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: cut))
        let args = ["run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(cut)",
                    "--set", "file.path=\(folder.appendingPathComponent("o.m4a").path)"]
        let expected = "error: node \"dec\" (decode, reading \"\(cut)\"): \"\(cut)\" ends at byte \(bytes.count / 2) before its index: the file was not finished\n"
        let plain = Graphctl.wait(try Graphctl.start(args))
        #expect(plain.status == 70)
        #expect(plain.stderr.hasSuffix(expected), "\(plain.stderr)")  // one line, nothing after it
        let verbose = Graphctl.wait(try Graphctl.start(args + ["--verbose"]))
        #expect(verbose.status == 70)
        #expect(verbose.stderr.contains(expected + "  cause: "), "\(verbose.stderr)")
        #expect(verbose.stderr.contains("qtdemux.c"), "\(verbose.stderr)")
    }
}
