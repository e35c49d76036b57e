import Foundation
import GraphKit
import Logging
import Nodes
import Testing
import TestSupport

/// GraphKit logs through swift-log: an application's own logger receives GStreamer's warnings
/// with the id of the node they came from.
@Suite(.media) struct LoggingTests {
    /// Keeps what is logged, for the test to read.
    final class Captured: @unchecked Sendable {
        let lock = NSLock()
        var entries: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] = []
    }

    struct CapturingHandler: LogHandler {
        let captured: Captured
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            captured.lock.lock()
            captured.entries.append((event.level, "\(event.message)", metadata.merging(event.metadata ?? [:]) { $1 }))
            captured.lock.unlock()
        }
    }

    /// An element node whose element warns as the first buffer passes.
    final class Warns: ElementNode, Sendable {
        static let descriptor = NodeDescriptor(
            type: "test.warns", category: .effect, summary: "passes audio on and warns once",
            inputs: [PortDescriptor("in", .pcm(), help: "")], outputs: [PortDescriptor("out", .pcm(), help: "")],
            example: #"{ "type": "test.warns" }"#)
        init(context: NodeContext) throws(GraphError) {}
        func build(in bin: BinBuilder) throws(GraphError) {
            let identity = try bin.make("identity", name: "warner")
            identity.onEachBuffer { index, _ in if index == 0 { identity.postWarning("the first buffer passed") } }
            try bin.expose(input: "in", identity)
            try bin.expose(output: "out", identity)
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func gstreamerWarningsReachTheApplicationsLoggerWithTheNodeID() throws {
        var registry = NodeRegistry.builtIn
        registry.register(Warns.self)
        let graph = try GraphLoader(registry: registry).load(json: """
            { "version": 1, "nodes": { "mic": { "type": "capture.audio", "params": { "duration": 0.1, "live": false } },
              "careful": { "type": "test.warns" }, "drain": { "type": "sink.app" } },
              "edges": ["mic.out -> careful.in", "careful.out -> drain.in"] }
            """)
        let captured = Captured()
        let run = try GraphRun(graph, logger: Logger(label: "test") { _ in CapturingHandler(captured: captured) })
        try run.start()
        let output = try run.output("drain")
        while output.copyNextSampleBuffer() != nil {}
        let report = run.wait()
        #expect(report.status == .completed)
        captured.lock.lock()
        defer { captured.lock.unlock() }
        let warnings = captured.entries.filter { $0.level == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.message == "the first buffer passed")
        #expect(warnings.first?.metadata["node"] == "careful")
    }
}
