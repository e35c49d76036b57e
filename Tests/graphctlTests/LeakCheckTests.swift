import Foundation
import Testing
import TestSupport

/// GStreamer's leaks tracer finds no object alive when `graphctl run` exits, for every graph in
/// graphs/ (scripts/leak-check.sh gives each one small test inputs).
@Suite(.media) struct LeakCheckTests {
    @Test(.timeLimit(.minutes(10)))
    func everyExampleGraphLeavesNoGStreamerObjectAlive() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = [Graphctl.root.appendingPathComponent("scripts/leak-check.sh").path, Graphctl.executable.path]
        let err = Pipe(), out = Pipe()
        p.standardError = err
        p.standardOutput = out
        try p.run()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let report = String(decoding: o, as: UTF8.self)
        #expect(p.terminationStatus == 0, "\(String(decoding: e, as: UTF8.self))")
        // Every graph was checked, not skipped.
        let graphs = try FileManager.default.contentsOfDirectory(atPath: Graphctl.root.appendingPathComponent("graphs").path)
            .filter { $0.hasSuffix(".json") }
        #expect(report.components(separatedBy: "no GStreamer object alive at exit").count - 1 == graphs.count, "\(report)")
    }
}
