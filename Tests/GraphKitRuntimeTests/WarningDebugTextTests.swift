import Foundation
import GraphKit
import Logging
import Nodes
import Testing
import TestSupport

/// GStreamer's debug text (source file, line, element path) is for developers: a warning carries
/// it as `debug` metadata only to a logger that shows debug messages (graphctl's --verbose), as
/// an error prints its cause only then.
@Suite(.media) struct WarningDebugTextTests {
    /// An element node whose element warns, with debug text, as the first buffer passes.
    final class WarnsWithDebug: ElementNode, Sendable {
        static let descriptor = NodeDescriptor(
            type: "test.warnsWithDebug", category: .effect, summary: "passes audio on and warns once, with debug text",
            inputs: [PortDescriptor("in", .pcm(), help: "")], outputs: [PortDescriptor("out", .pcm(), help: "")],
            example: #"{ "type": "test.warnsWithDebug" }"#)
        init(context: NodeContext) throws(GraphError) {}
        func build(in bin: BinBuilder) throws(GraphError) {
            let identity = try bin.make("identity", name: "warner")
            identity.onEachBuffer { index, _ in
                if index == 0 { identity.postWarning("the first buffer passed", debug: "warner.c(12): details for developers") }
            }
            try bin.expose(input: "in", identity)
            try bin.expose(output: "out", identity)
        }
    }

    func warnings(loggingAt level: Logger.Level) throws -> [(level: Logger.Level, message: String, metadata: Logger.Metadata)] {
        var registry = NodeRegistry.builtIn
        registry.register(WarnsWithDebug.self)
        let graph = try GraphLoader(registry: registry).load(json: """
            { "version": 1, "nodes": { "mic": { "type": "capture.audio", "params": { "duration": 0.1, "live": false } },
              "careful": { "type": "test.warnsWithDebug" }, "drain": { "type": "sink.app" } },
              "edges": ["mic.out -> careful.in", "careful.out -> drain.in"] }
            """)
        let captured = LoggingTests.Captured()
        let run = try GraphRun(graph, logger: Logger(label: "test") { _ in
            var handler = LoggingTests.CapturingHandler(captured: captured)
            handler.logLevel = level
            return handler
        })
        try run.start()
        let output = try run.output("drain")
        while output.copyNextSampleBuffer() != nil {}
        #expect(run.wait().status == .completed)
        captured.lock.lock()
        defer { captured.lock.unlock() }
        return captured.entries.filter { $0.level == .warning }
    }

    @Test(.timeLimit(.minutes(10)))
    func aWarningCarriesTheDebugTextOnlyToADebugLogger() throws {
        let plain = try warnings(loggingAt: .warning)
        #expect(plain.count == 1)
        #expect(plain.first?.message == "the first buffer passed")
        #expect(plain.first?.metadata["node"] == "careful")
        #expect(plain.first?.metadata["debug"] == nil)
        let verbose = try warnings(loggingAt: .debug)
        #expect(verbose.count == 1)
        #expect(verbose.first?.metadata["debug"] == "warner.c(12): details for developers")
    }
}
