import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

/// Compiles a validated ``Graph`` into one GStreamer pipeline: makes each node (its elements,
/// or the host of a Swift node), then links every edge by the ``EdgePolicy`` (a direct link, a
/// bounded queue, a tee for a fan-out), and gives outputs the graph leaves unconnected a sink
/// that discards, since an unlinked pad would stop the stream.
struct PipelineCompiler {
    let graph: Graph

    struct Compiled {
        let pipeline: Pipeline
        /// In the graph's (topological) order.
        let nodes: [(spec: Graph.NodeSpec, node: any Node)]
        let failures: NodeFailures
    }

    func compile() throws(GraphError) -> Compiled {
        let pipeline = try Pipeline(name: graph.name ?? "graph")
        let failures = NodeFailures()
        var nodes: [(spec: Graph.NodeSpec, node: any Node)] = []
        var ports: [String: ExposedPorts] = [:]
        var descriptions: [String: String] = [:]
        let filesRead = self.filesRead
        for spec in graph.nodes {
            let (node, context) = try make(spec, descriptions: &descriptions, filesRead: filesRead)
            let exposed = try build(node, spec: spec, context: context, in: pipeline, failures: failures)
            for port in context.connectedInputs where exposed.inputs[port] == nil {
                throw GraphError(.runFailed, at: "node \"\(spec.id)\"", "\(spec.descriptor.type) did not expose its input \"\(port)\"", node: spec.id)
            }
            for port in context.connectedOutputs where exposed.outputs[port] == nil {
                throw GraphError(.runFailed, at: "node \"\(spec.id)\"", "\(spec.descriptor.type) did not expose its output \"\(port)\"", node: spec.id)
            }
            ports[spec.id] = exposed
            nodes.append((spec, node))
        }
        let live = Set(nodes.filter { ($0.node as? any LiveNode)?.isLive == true }.map(\.spec.id))
        try link(EdgePolicy(graph: graph, live: live), ports: ports, in: pipeline)
        for (id, exposed) in ports { pipeline.statistics.countOutputs(of: id, Array(exposed.outputs.values)) }
        try discardUnconnectedOutputs(ports, in: pipeline)
        return Compiled(pipeline: pipeline, nodes: nodes, failures: failures)
    }

    /// Every node made, in the graph's order, none built: for a run on the container path.
    func makeNodes() throws(GraphError) -> [(spec: Graph.NodeSpec, node: any Node)] {
        var descriptions: [String: String] = [:]
        var nodes: [(spec: Graph.NodeSpec, node: any Node)] = []
        let filesRead = self.filesRead
        for spec in graph.nodes { nodes.append((spec, try make(spec, descriptions: &descriptions, filesRead: filesRead).node)) }
        return nodes
    }

    /// The files the graph's parameters say it reads (each node is told them).
    private var filesRead: [String] { graph.fileParameters.filter { !$0.writes }.map(\.path) }

    /// The files the nodes upstream of `id` read, in the graph's order.
    private func filesUpstream(of id: String) -> [String] {
        var upstream: Set<String> = []
        var queue = graph.edges(into: id).map(\.from.node)
        while let next = queue.popLast() {
            guard upstream.insert(next).inserted else { continue }
            queue += graph.edges(into: next).map(\.from.node)
        }
        return graph.fileParameters.filter { !$0.writes && upstream.contains($0.node) }.map(\.path)
    }

    /// Makes the node `spec` names, with what feeds it described by `descriptions` (the nearest
    /// description upstream of each node made before it), to which its own is added.
    private func make(_ spec: Graph.NodeSpec, descriptions: inout [String: String], filesRead: [String]) throws(GraphError) -> (node: any Node, context: NodeContext) {
        let into = graph.edges(into: spec.id), out = graph.edges(from: spec.id)
        var inputDescriptions: [String: String] = [:]
        for e in into { if let d = descriptions[e.from.node] { inputDescriptions[e.to.port] = d } }
        var context = NodeContext(id: spec.id, parameters: spec.parameters,
                                  connectedInputs: Set(into.map(\.to.port)),
                                  connectedOutputs: Set(out.map(\.from.port)),
                                  inputDescriptions: inputDescriptions, filesRead: filesRead)
        context.filesUpstream = filesUpstream(of: spec.id)
        context.feedsOnlyPrimingPlayers = !out.isEmpty && out.allSatisfy { edge in
            guard let to = graph.node(edge.to.node), let player = to.type as? any PlaysEncoderPriming.Type else { return false }
            return player.playsEncoderPriming(input: edge.to.port, parameters: to.parameters)
        }
        let node: any Node
        do {
            node = try spec.type.init(context: context)
        } catch {
            throw GraphError(error, node: spec.id)
        }
        // What feeds a node downstream: the nearest description upstream.
        descriptions[spec.id] = node.mediaDescription ?? inputDescriptions.values.first
        return (node, context)
    }

    private func build(_ node: any Node, spec: Graph.NodeSpec, context: NodeContext, in pipeline: Pipeline,
                       failures: NodeFailures) throws(GraphError) -> ExposedPorts {
        if let elementNode = node as? any ElementNode {
            let builder = pipeline.builder(for: context, failures: failures)
            do {
                try elementNode.build(in: builder)
            } catch {
                throw GraphError(error, node: spec.id)
            }
            return ExposedPorts(inputs: builder.exposedInputs, outputs: builder.exposedOutputs)
        }
        if let processing = node as? any ProcessingNode {
            return try ProcessingNodeHost(pipeline: pipeline, failures: failures).host(processing, context: context)
        }
        throw GraphError(.invalidGraph, at: "nodes.\(spec.id).type", "\(spec.descriptor.type) is neither an ElementNode nor a ProcessingNode", node: spec.id)
    }

    /// Every edge: a direct link where the policy allows, else a bounded queue (behind a tee when
    /// one output feeds several inputs).
    private func link(_ policy: EdgePolicy, ports: [String: ExposedPorts], in pipeline: Pipeline) throws(GraphError) {
        var byOutput: [PortRef: [Graph.Edge]] = [:]
        for e in graph.edges { byOutput[e.from, default: []].append(e) }
        let stats = pipeline.statistics
        for (from, edges) in byOutput.sorted(by: { $0.key.description < $1.key.description }) {
            guard let source = ports[from.node]?.outputs[from.port] else { continue }  // checked when built
            func input(_ e: Graph.Edge) -> UnsafeMutablePointer<GstPad>? { ports[e.to.node]?.inputs[e.to.port] }
            if edges.count == 1, let e = edges.first, !policy.needsQueue(e), let sink = input(e) {
                // The same buffers leave the output and enter the input: one counter serves both,
                // kept by the input's Swift node where it has one, else by a probe on the output.
                stats.share(countOf: sink, with: source)
                stats.addDirectEdge(e, source: source)
                try connect(source, sink, "\(e.to)")
                continue
            }
            var tee: UnsafeMutablePointer<GstElement>?
            if edges.count > 1 {
                let t = try pipeline.makeElement("tee", name: "(tee)\(from)", node: from.node)
                try pipeline.set(t, "allow-not-linked", "true")
                try connect(source, try staticPad(t, "sink"), "\(from)", releasingSink: true)
                tee = t
            }
            for e in edges {
                guard let sink = input(e) else { continue }
                let q = try pipeline.makeElement("queue", name: "(edge)\(e.from)->\(e.to)", node: e.to.node)
                try pipeline.set(q, "max-size-buffers", String(e.capacity.buffers ?? 0))
                try pipeline.set(q, "max-size-bytes", String(e.capacity.bytes ?? 0))
                try pipeline.set(q, "max-size-time", String(e.capacity.seconds.map { UInt64($0 * 1e9) } ?? 0))
                // Out of a live capture source only (never source.app): a full queue lets its oldest
                // buffer go, and the statistics count each one (what enters less what leaves).
                let leaky = policy.isLeaky(e)
                if leaky { try pipeline.set(q, "leaky", "downstream") }
                let qsrc = try staticPad(q, "src"), qsink = try staticPad(q, "sink")
                defer {
                    gst_object_unref(UnsafeMutableRawPointer(qsrc))
                    gst_object_unref(UnsafeMutableRawPointer(qsink))
                }
                stats.share(countOf: sink, with: qsrc)
                stats.addQueuedEdge(e, queue: q, source: qsrc, sink: qsink, leaky: leaky)
                if let tee {
                    guard let teePad = gst_element_request_pad_simple(tee, "src_%u") else {
                        throw GraphError(.runFailed, "the fan-out of \(e.from) gave no output pad")
                    }
                    gst_object_unref(UnsafeMutableRawPointer(teePad))  // the tee keeps its request pads
                    try connect(teePad, try staticPad(q, "sink"), "\(e.from)", releasingSink: true)
                } else {
                    try connect(source, try staticPad(q, "sink"), "\(e.from)", releasingSink: true)
                }
                try connect(qsrc, sink, "\(e.to)")
            }
        }
    }

    /// Outputs a node exposes but the graph leaves unconnected are discarded, not left unlinked.
    private func discardUnconnectedOutputs(_ ports: [String: ExposedPorts], in pipeline: Pipeline) throws(GraphError) {
        for (id, exposed) in ports {
            let connected = Set(graph.edges(from: id).map(\.from.port))
            for (port, pad) in exposed.outputs where !connected.contains(port) {
                let sink = try pipeline.makeElement("fakesink", name: "(unused)\(id).\(port)", node: id)
                try pipeline.set(sink, "sync", "false")
                try pipeline.set(sink, "async", "false")
                try connect(pad, try staticPad(sink, "sink"), "\(id).\(port)", releasingSink: true)
            }
        }
    }

    private func staticPad(_ element: UnsafeMutablePointer<GstElement>, _ name: String) throws(GraphError) -> UnsafeMutablePointer<GstPad> {
        guard let pad = gst_element_get_static_pad(element, name) else {
            throw GraphError(.runFailed, "an internal element has no pad \"\(name)\"")
        }
        return pad
    }

    /// Links two pads; `releasingSink` drops our reference to the sink pad afterwards.
    private func connect(_ src: UnsafeMutablePointer<GstPad>, _ sink: UnsafeMutablePointer<GstPad>, _ what: String,
                         releasingSink: Bool = false) throws(GraphError) {
        defer { if releasingSink { gst_object_unref(UnsafeMutableRawPointer(sink)) } }
        let result = gst_pad_link(src, sink)
        guard result == GST_PAD_LINK_OK else {
            throw GraphError(.runFailed, "cannot connect \(what) (GStreamer link result \(result.rawValue))")
        }
    }
}
