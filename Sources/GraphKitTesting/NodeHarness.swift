@_spi(Testing) import GraphKit
import Nodes

/// Tests one node without writing GStreamer code, like `GstHarness` or NIO's `EmbeddedChannel`.
///
/// Built from the same JSON as a graph node. Each connected input is fed by a `source.app` and
/// each output drained by a `sink.app`, all unbounded, so pushing never waits on pulling:
///
/// ```swift
/// let h = try NodeHarness(#"{ "type": "effect.gain", "params": { "gain": 2 } }"#)
/// try h.push(buffer)            // to "in"
/// let out = h.pull()            // from "out"
/// let result = try h.finish()   // end of stream; what was left unpulled, and the run report
/// ```
public final class NodeHarness: Sendable {
    public let run: GraphRun
    public let inputs: [String]
    public let outputs: [String]
    /// Whether ``finish(timeout:)`` has ended the inputs.
    private let finished = Guarded(false)

    /// - Parameters:
    ///   - node: the node as it would appear under `nodes` in a graph file.
    ///   - inputs: which inputs to feed (default: every input that must be connected).
    ///   - outputs: which outputs to drain (default: every output).
    ///   - registry: where node types are looked up (default: the built-ins).
    public init(_ node: String, inputs: [String]? = nil, outputs: [String]? = nil,
                registry: NodeRegistry = .builtIn) throws {
        let json: JSONValue
        do {
            json = try JSONParser.parse(node)
        } catch {
            throw GraphError(.invalidGraph, at: "line \(error.line), column \(error.column)", "malformed node JSON: \(error.message)")
        }
        guard case .string(let typeName)? = json["type"], let type = registry.lookup(typeName) else {
            throw GraphError(.invalidGraph, at: "type", "the node needs a known \"type\"")
        }
        let d = type.descriptor
        self.inputs = inputs ?? d.inputs.filter { $0.presence == .always }.map(\.name)
        self.outputs = outputs ?? d.outputs.map(\.name)
        var nodes: [(key: String, value: JSONValue)] = [("node", json)]
        var edges: [JSONValue] = []
        let unbounded: JSONValue = ["buffers": 1_000_000]
        for port in self.inputs {
            nodes.append(("in_\(port)", ["type": "source.app", "params": ["maxBuffers": 0]]))
            edges.append(["from": .string("in_\(port).out"), "to": .string("node.\(port)"), "capacity": unbounded])
        }
        for port in self.outputs {
            nodes.append(("out_\(port)", ["type": "sink.app", "params": ["maxBuffers": 0]]))
            let (from, to) = (JSONValue.string("node.\(port)"), JSONValue.string("out_\(port).in"))
            // A file's bytes are never queued (a capacity there is refused); the sink.app holds them.
            edges.append(d.output(port)?.formats == .container ? ["from": from, "to": to] : ["from": from, "to": to, "capacity": unbounded])
        }
        let document: JSONValue = .object([("version", 1), ("name", "harness"), ("nodes", .object(nodes)), ("edges", .array(edges))])
        let graph = try GraphLoader(registry: registry).load(document)
        run = try GraphRun(graph)
        try run.start()
    }

    /// The node under test.
    public var node: any Node { run.node("node")! }

    /// Pushes one buffer into an input. Never waits: the harness's connections are unbounded.
    /// Unlike an app's append, nothing is checked: a test may feed a node untimed or odd samples.
    public func push(_ buffer: SampleBuffer, to port: String = "in") throws {
        try run.input("in_\(port)").appendUnchecked(buffer)
    }

    /// Pushes several buffers.
    public func push(_ buffers: [SampleBuffer], to port: String = "in") throws {
        for b in buffers { try push(b, to: port) }
    }

    /// Ends one input (end of stream), as `finish()` does for all.
    public func endInput(_ port: String = "in") throws {
        try run.input("in_\(port)").markAsFinished()
    }

    /// The next buffer out of an output, waiting up to `timeout` seconds; nil at end of stream
    /// or on timeout.
    public func pull(from port: String = "out", timeout: Double = 10) -> SampleBuffer? {
        (try? run.output("out_\(port)"))?.copyNextSampleBuffer(timeout: timeout)
    }

    /// Pulls until end of stream (ends every input first).
    public func pullAll(from port: String = "out", timeout: Double = 30) throws -> [SampleBuffer] {
        for p in inputs { try endInput(p) }
        var result: [SampleBuffer] = []
        while let b = pull(from: port, timeout: timeout) { result.append(b) }
        return result
    }

    public struct Result: Sendable {
        /// Buffers that came out but were never pulled, by output.
        public var leftovers: [String: [SampleBuffer]]
        public var report: RunReport
        public var hasLeftovers: Bool { leftovers.values.contains { !$0.isEmpty } }
    }

    /// Ends every input, waits for end of stream, and returns what was left unpulled and the
    /// run's report. Throws the run's error if it failed.
    @discardableResult
    public func finish(timeout: Double = 30) throws -> Result {
        let first = finished.withLock { done in
            defer { done = true }
            return !done
        }
        if first {
            for p in inputs { try endInput(p) }
        }
        var leftovers: [String: [SampleBuffer]] = [:]
        for port in outputs {
            var rest: [SampleBuffer] = []
            while let b = pull(from: port, timeout: timeout) { rest.append(b) }
            leftovers[port] = rest
        }
        let report = run.wait()
        if let error = report.error { throw error }
        return Result(leftovers: leftovers, report: report)
    }
}
