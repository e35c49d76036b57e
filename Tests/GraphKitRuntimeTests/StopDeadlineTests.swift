import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import Testing
import TestSupport

/// A stop that would wait on work queued upstream (a slow node with a full queue before it,
/// as a long encode is) ends at the sinks once its deadline passes: the file is finished with
/// what reached it, and the run is `stopped`, not left draining.
@Suite(.media) struct StopDeadlineTests {
    /// Passes audio through, taking 50 ms a buffer, and counts the buffers it has processed.
    final class Slow: ProcessingNode, @unchecked Sendable {
        static let bufferFlow = BufferFlow.passThrough
        static let descriptor = NodeDescriptor(
            type: "test.slow", category: .effect, summary: "50 ms a buffer",
            inputs: [PortDescriptor("in", .pcm(), help: "")], outputs: [PortDescriptor("out", .pcm(), help: "")],
            example: #"{ "type": "test.slow" }"#)
        private let lock = NSLock()
        private var count = 0
        init(context: NodeContext) throws(GraphError) {}
        func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
            usleep(50_000)
            lock.withLock { count += 1 }
            return true
        }
        var processed: Int { lock.withLock { count } }
    }

    /// An endless tone made as fast as it is taken, 32 buffers queued before the slow node,
    /// then AAC into an M4A.
    func start(in folder: URL) throws -> (GraphRun, Slow) {
        var registry = NodeRegistry.builtIn
        registry.register(Slow.self)
        let graph = try GraphLoader(registry: registry).load(json: """
            { "version": 1, "nodes": {
                "mic": { "type": "capture.audio", "params": { "live": false, "duration": 0 } },
                "slow": { "type": "test.slow" }, "aac": { "type": "encode.aac" },
                "file": { "type": "sink.mp4", "params": { "path": "\(folder.path)/out.m4a" } } },
              "edges": [ { "from": "mic.out", "to": "slow.in", "capacity": { "buffers": 32 } }, "slow.out -> aac.in", "aac.out -> file.audio" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let slow = try #require(run.node("slow") as? Slow)
        return (run, slow)
    }

    /// Waits until the slow node has processed `count` buffers (the queue before it is full by then).
    func waitFor(_ slow: Slow, _ count: Int) {
        while slow.processed < count { usleep(10_000) }
    }

    @Test(.timeLimit(.minutes(10)))
    func aStopPastItsDeadlineEndsAtTheSinks() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }

        // A plain stop drains the queue: every queued buffer goes through the slow node.
        var (run, slow) = try start(in: folder)
        waitFor(slow, 5)
        var atStop = slow.processed
        run.stop()
        var report = run.wait()
        #expect(report.status == .stopped, "\(String(describing: report.error))")
        let drained = slow.processed - atStop
        #expect(drained >= 20, "a plain stop processed only \(drained) buffers after it")

        // With a deadline of 200 ms, the sinks get end of stream then: a few buffers more at
        // most, and a finished file.
        (run, slow) = try start(in: folder)
        waitFor(slow, 5)
        atStop = slow.processed
        #expect(run.stop(finishingWithin: .milliseconds(200)))
        report = run.wait()
        #expect(report.status == .stopped, "\(String(describing: report.error))")
        #expect(report.error == nil)
        let after = slow.processed - atStop
        #expect(after < drained / 2, "\(after) buffers processed after the stop, where a drain took \(drained)")
        #expect(report.outputs.first?.status == .completed)
        let probe = try MediaProbe(folder.appendingPathComponent("out.m4a").path)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(probe.duration > 0)
    }

    /// A run not playing yet is cancelled by a stop with a deadline, which says so.
    @Test(.timeLimit(.minutes(10)))
    func aStopBeforeTheRunPlaysCancels() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "aac": { "type": "encode.aac" },
              "file": { "type": "sink.mp4", "params": { "path": "\(folder.path)/out.m4a" } } },
              "edges": [ "feed.out -> aac.in", "aac.out -> file.audio" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()  // nothing appended: it cannot preroll, so it never plays
        #expect(!run.stop(finishingWithin: .seconds(1)))
        #expect(run.wait().status == .cancelled)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
    }
}
