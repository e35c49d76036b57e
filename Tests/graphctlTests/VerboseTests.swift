import Foundation
import GraphKitTesting
import Testing

/// GStreamer's debug text is for developers: `graphctl run` prints it only with --verbose.
@Suite struct VerboseTests {
    @Test(.timeLimit(.minutes(10)))
    func theCauseIsPrintedOnlyWithVerbose() throws {
        let folder = try TestMedia.temporaryFolder()
        let junk = folder.appendingPathComponent("junk.wav").path
        try Data((0..<4000).map { UInt8(truncatingIfNeeded: ($0 &* 7919) >> 3) }).write(to: URL(fileURLWithPath: junk))
        let args = ["run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(junk)",
                    "--set", "file.path=\(folder.appendingPathComponent("o.m4a").path)"]
        let plain = Graphctl.wait(try Graphctl.start(args))
        #expect(plain.status == 70)
        #expect(plain.stderr.contains("error: node \"dec\" (decode, reading \"\(junk)\")"), "\(plain.stderr)")
        #expect(!plain.stderr.contains("cause:"), "\(plain.stderr)")
        let verbose = Graphctl.wait(try Graphctl.start(args + ["--verbose"]))
        #expect(verbose.status == 70)
        #expect(verbose.stderr.contains("  cause: "), "\(verbose.stderr)")
        let both = Graphctl.wait(try Graphctl.start(args + ["--verbose", "--quiet"]))
        #expect(both.status == 64)
    }
}
