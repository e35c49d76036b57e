import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphs/concat.json` through graphctl: the pieces given with `--set` as JSON, a field's
/// mistake named at its place, and an output that is one of the pieces refused.
@Suite(.media) struct ConcatGraphTests {
    @Test func piecesSetOnTheCommandLineJoinAsStored() throws {
        let folder = try TestMedia.temporaryFolder()
        func movie(_ name: String, _ seconds: Int) throws -> String {
            let p = folder.appendingPathComponent(name).path
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=\(seconds)",
                                             "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=\(seconds)",
                                             "-c:v", "libx264", "-g", "25", "-bf", "0", "-pix_fmt", "yuv420p", "-c:a", "aac", "-y", p])
            return p
        }
        let a = try movie("a.mp4", 3), b = try movie("b.mp4", 2)
        let out = folder.appendingPathComponent("joined.mp4").path
        let r = try Graphctl.run("run", Graphctl.graph("concat.json"), "--quiet", "--set", "file.path=\(out)",
                                 "--set", #"join.pieces=[{"path": "\#(a)", "inpoint": 1, "outpoint": 2.5}, {"path": "\#(b)"}]"#)
        #expect(r.status == 0, "\(r.stderr)")
        let probe = try MediaProbe(out)
        #expect(abs(probe.duration - 3.5) < 0.05, "\(probe.duration) s")
        #expect(probe.stream("video")?.codecName == "h264" && probe.stream("audio")?.codecName == "aac")

        let typo = try Graphctl.run("validate", Graphctl.graph("concat.json"), "--set", #"join.pieces=[{"path": "\#(a)", "inpiont": 1}]"#)
        #expect(typo.status == 65)
        #expect(typo.stderr.contains("[0]: unknown field \"inpiont\"; did you mean \"inpoint\"?"), "\(typo.stderr)")

        let over = try Graphctl.run("run", Graphctl.graph("concat.json"), "--set", "file.path=\(b)",
                                    "--set", #"join.pieces=[{"path": "\#(a)"}, {"path": "\#(b)"}]"#)
        #expect(over.status != 0)
        #expect(over.stderr.contains("pieces[1].path"), "\(over.stderr)")
        #expect(try MediaProbe(b).duration > 1.9)  // untouched
    }
}
