import Foundation
import GraphKit
import TestSupport
import Testing

/// 1,000 small graphs through the library in one process (transcodes, waveforms, an app source,
/// a failing graph and a cancelled one, in turn): descriptors and threads return to their
/// counts, RSS grows by less than 5 MB, and every node object is freed after its run. The runs
/// happen in `graphkit-soak`, a process of their own, so that no other test opens files or
/// starts threads meanwhile.
@Suite struct SoakTests {
    static let executable: URL = {
        var dir = Bundle.main.bundleURL
        for _ in 0..<3 {
            let candidate = dir.appendingPathComponent("graphkit-soak")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return root.appendingPathComponent(".build/debug/graphkit-soak")
    }()

    /// Under a sanitizer (`Sanitizer.isRunning`, `make test-sanitize`) the RSS check is left out.
    /// ThreadSanitizer's runtime grows and trims its own shadow memory and traces as it goes:
    /// there graphkit-soak's RSS moved by +12.9 MB over 500 runs, +12.1 MB over 1,000, +3.7 MB over 2,000 and +6.5 MB over 3,000,
    /// against +1.8 MB over 1,000 in the ordinary build. The RSS check says nothing about GraphKit
    /// there and is left out; descriptors, threads and freed nodes are still checked (and leaks
    /// by the address sanitizer's run).
    /// The same under AddressSanitizer, which keeps freed memory in a quarantine of up to 256 MB
    /// before reusing it (graphkit-soak's RSS grew by 275 MB over 1,000 runs there).
    @Test(.media, .timeLimit(.minutes(15)))
    func aThousandRunsLeaveNothingBehind() throws {
        let rssLimitMB = Sanitizer.isRunning ? Double.infinity : 5
        let p = Process()
        p.executableURL = Self.executable
        p.arguments = ["1000", "--rss-limit-mb", String(rssLimitMB)]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let summary = try JSONParser.parse(String(decoding: data, as: UTF8.self))
        #expect(p.terminationStatus == 0, "\(summary)")
        #expect(summary["runs"] == .number(1000))
        guard case .array(let fds)? = summary["fileDescriptors"], case .array(let threads)? = summary["threads"],
              case .array(let rss)? = summary["rssKB"], case .number(let rss0) = rss[0], case .number(let rss1) = rss[1] else {
            Issue.record("unexpected summary: \(summary)")
            return
        }
        #expect(fds[0] == fds[1], "open file descriptors before and after")
        #expect(threads[0] == threads[1], "threads before and after")
        #expect(rss1 - rss0 < rssLimitMB * 1024, "RSS grew by \(rss1 - rss0) KB")
        #expect(summary["undeallocatedNodes"] == .number(0))
        #expect(summary["problems"] == .array([]))
    }
}
