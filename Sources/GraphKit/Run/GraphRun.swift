import CGStreamer
import CGraphKitGlue
import Foundation

/// One run of a validated graph: compiled into a single GStreamer pipeline whose elements are
/// named after node ids, so every bus error maps back to a node.
///
/// ```
///  GraphRun(graph)   instantiate nodes, build their bins, bound every edge with a queue
///  start()           prepare nodes (check files), set the pipeline playing, watch the bus
///  stop()            end of stream from every source: files finalize (AVAssetWriter's
///                    finishWriting, gst-launch-1.0 -e)
///  cancel()          abandon: outputs removed (cancelWriting)
///  wait()            the RunReport, once the pipeline stopped and nodes finished
/// ```
///
/// The bus is watched on a dedicated thread, never on the Swift concurrency pool.
public final class GraphRun: @unchecked Sendable {
    public let graph: Graph
    let pipeline: UnsafeMutablePointer<GstElement>
    private(set) var nodes: [(spec: Graph.NodeSpec, node: any Node)] = []
    private var counters: [String: (inputs: [UnsafeMutablePointer<GkPadCounter>], outputs: [UnsafeMutablePointer<GkPadCounter>])] = [:]
    /// One counter per pad, shared by everything that sees the same buffers there: a node's
    /// output, the edge leaving it and, on a direct link, the input it feeds. Kept by a probe, or
    /// by the Swift node whose transform already sees those buffers.
    private var padCounters: [UnsafeMutablePointer<GstPad>: UnsafeMutablePointer<GkPadCounter>] = [:]
    /// Per edge: its queue (nil for a pulled container stream), statistics and counter.
    private var edgeProbes: [(edge: Graph.Edge, queue: UnsafeMutablePointer<GstElement>?, stats: UnsafeMutablePointer<GkEdgeStats>, counter: UnsafeMutablePointer<GkPadCounter>, leaky: Bool)] = []
    private var processingContexts: [ProcessingContext] = []

    private let condition = NSCondition()
    private var started = false
    private var finishedReport: RunReport?
    private var stopRequested = false
    private var cancelRequested = false
    private var startTime = ContinuousClock.now
    private var missingPlugin: String?

    /// Builds the pipeline. Throws a GraphError naming the node at fault (a missing plugin is 69).
    public init(_ graph: Graph) throws {
        GStreamer.initialize()
        self.graph = graph
        pipeline = gst_pipeline_new(graph.name ?? "graph")!
        gst_object_ref_sink(UnsafeMutableRawPointer(pipeline))
        do {
            try build()
        } catch {
            teardown()
            throw error
        }
    }

    deinit {
        teardown()
    }

    private func teardown() {
        gst_element_set_state(pipeline, GST_STATE_NULL)
        nodes.removeAll()
        processingContexts.removeAll()
        gst_object_unref(UnsafeMutableRawPointer(pipeline))
        counters.removeAll()
        for c in Set(padCounters.values) { c.deallocate() }
        padCounters.removeAll()
        for e in edgeProbes { e.stats.deallocate() }
        edgeProbes.removeAll()
    }

    private var pipelineBin: UnsafeMutablePointer<GstBin> { UnsafeMutableRawPointer(pipeline).assumingMemoryBound(to: GstBin.self) }

    // MARK: Building

    private func build() throws {
        var exposed: [String: (inputs: [String: UnsafeMutablePointer<GstPad>], outputs: [String: UnsafeMutablePointer<GstPad>])] = [:]
        var descriptions: [String: String] = [:]
        for spec in graph.nodes {
            let into = graph.edges(into: spec.id)
            var inputDescriptions: [String: String] = [:]
            for e in into { if let d = descriptions[e.from.node] { inputDescriptions[e.to.port] = d } }
            let context = NodeContext(id: spec.id, parameters: spec.parameters,
                                      connectedInputs: Set(into.map(\.to.port)),
                                      connectedOutputs: Set(graph.edges(from: spec.id).map(\.from.port)),
                                      inputDescriptions: inputDescriptions)
            let node = try spec.type.init(context: context)
            // What feeds a node downstream: the nearest description upstream.
            descriptions[spec.id] = node.mediaDescription ?? inputDescriptions.values.first

            var inputs: [String: UnsafeMutablePointer<GstPad>] = [:]
            var outputs: [String: UnsafeMutablePointer<GstPad>] = [:]
            if let elementNode = node as? any ElementNode {
                let builder = BinBuilder(context: context, pipeline: pipeline)
                try elementNode.build(in: builder)
                inputs = builder.exposedInputs
                outputs = builder.exposedOutputs
            } else if let processing = node as? any ProcessingNode {
                (inputs, outputs) = try buildProcessing(processing, context: context)
            } else {
                throw GraphError(.runFailed, at: "node \"\(spec.id)\"", "\(spec.descriptor.type) is neither an ElementNode nor a ProcessingNode", node: spec.id)
            }
            for port in context.connectedInputs where inputs[port] == nil {
                throw GraphError(.runFailed, at: "node \"\(spec.id)\"", "\(spec.descriptor.type) did not expose its input \"\(port)\"", node: spec.id)
            }
            for port in context.connectedOutputs where outputs[port] == nil {
                throw GraphError(.runFailed, at: "node \"\(spec.id)\"", "\(spec.descriptor.type) did not expose its output \"\(port)\"", node: spec.id)
            }
            // Counted once the edges are made (below): an output may share its counter.
            counters[spec.id] = ([], [])
            exposed[spec.id] = (inputs, outputs)
            nodes.append((spec, node))
        }

        // Edges: a bounded queue where one is needed (needsQueue), a direct link elsewhere, and a
        // tee where one output feeds several inputs.
        let liveNodes = Set(nodes.filter { ($0.node as? any LiveNode)?.isLive == true }.map(\.spec.id))
        var byOutput: [PortRef: [Graph.Edge]] = [:]
        for e in graph.edges { byOutput[e.from, default: []].append(e) }
        for (from, edges) in byOutput.sorted(by: { $0.key.description < $1.key.description }) {
            let source = exposed[from.node]!.outputs[from.port]!
            if edges.count == 1, !needsQueue(edges[0], live: liveNodes) {
                let e = edges[0]
                let stats = UnsafeMutablePointer<GkEdgeStats>.allocate(capacity: 1)
                stats.initialize(to: GkEdgeStats())
                // The same buffers leave the output and enter the input: one counter serves both,
                // kept by the input's Swift node where it has one, else by a probe on the output.
                share(padCounters[exposed[e.to.node]!.inputs[e.to.port]!], with: source)
                let counter = count(source)
                counters[e.to.node]!.inputs.append(counter)
                edgeProbes.append((e, nil, stats, counter, false))
                try link(source, exposed[e.to.node]!.inputs[e.to.port]!, owned: false, what: "\(e.to)")
                continue
            }
            var tee: UnsafeMutablePointer<GstElement>?
            if edges.count > 1 {
                let t = try makeElement("tee", name: "(tee)\(from)")
                try set(t, "allow-not-linked", "true")
                try link(source, gst_element_get_static_pad(t, "sink")!, owned: true, what: "\(from)")
                tee = t
            }
            for e in edges {
                let q = try makeElement("queue", name: "(edge)\(e.from)->\(e.to)")
                try set(q, "max-size-buffers", String(e.capacity.buffers ?? 0))
                try set(q, "max-size-bytes", String(e.capacity.bytes ?? 0))
                try set(q, "max-size-time", String(e.capacity.seconds.map { UInt64($0 * 1e9) } ?? 0))
                let leaky = liveNodes.contains(e.from.node)
                if leaky { try set(q, "leaky", "downstream") }
                let stats = UnsafeMutablePointer<GkEdgeStats>.allocate(capacity: 1)
                stats.initialize(to: GkEdgeStats())
                gk_queue_watch(q, stats)
                let qsrc = gst_element_get_static_pad(q, "src")!
                share(padCounters[exposed[e.to.node]!.inputs[e.to.port]!], with: qsrc)
                let counter = count(qsrc)
                counters[e.to.node]!.inputs.append(counter)
                edgeProbes.append((e, q, stats, counter, leaky))
                if let tee {
                    // The tee keeps its request pads; we hold no reference to them.
                    let teePad = gst_element_request_pad_simple(tee, "src_%u")!
                    gst_object_unref(UnsafeMutableRawPointer(teePad))
                    try link(teePad, gst_element_get_static_pad(q, "sink")!, owned: true, what: "\(e.from)")
                } else {
                    try link(source, gst_element_get_static_pad(q, "sink")!, owned: true, what: "\(e.from)")
                }
                try link(qsrc, exposed[e.to.node]!.inputs[e.to.port]!, owned: false, what: "\(e.to)")
                gst_object_unref(UnsafeMutableRawPointer(qsrc))
            }
        }

        for (id, pads) in exposed { counters[id]!.outputs = pads.outputs.values.map(count) }

        // Outputs a node exposes but the graph leaves unconnected are discarded, not left
        // unlinked (an unlinked pad would stop the stream).
        for (id, pads) in exposed {
            let connected = Set(graph.edges(from: id).map(\.from.port))
            for (port, pad) in pads.outputs where !connected.contains(port) {
                let sink = try makeElement("fakesink", name: "(unused)\(id).\(port)")
                try set(sink, "sync", "false")
                try set(sink, "async", "false")
                try link(pad, gst_element_get_static_pad(sink, "sink")!, owned: true, what: "\(id).\(port)")
            }
        }
    }

    /// Whether an edge runs through a bounded queue on its own thread, or links directly (holds
    /// nothing: the producer waits while the consumer takes each buffer, like `!` in
    /// gst-launch-1.0). A queue where a thread or a drop policy is needed: the graph gave the
    /// edge a capacity; it leaves a live source; it is one branch of a fan-out or leaves a node
    /// with several outputs; or it joins a node with several inputs (a muxer interleaving
    /// streams) fed by a streaming thread that also feeds another of those inputs, where the
    /// muxer waiting on one input would stall the other. Streams from separate sources already
    /// have a thread each and join directly, as in `gst-launch-1.0 … ! mux. … ! mux.`. A file's
    /// bytes always go straight to their demuxer, which pulls them in large blocks and seeks.
    func needsQueue(_ e: Graph.Edge, live: Set<String>) -> Bool {
        if isContainer(e) { return false }
        if needsOwnQueue(e, live: live) { return true }
        let joined = graph.edges(into: e.to.node).filter { $0.to.port != e.to.port }
        guard !joined.isEmpty else { return false }
        let mine = threads(feeding: e, live: live)
        return joined.contains { !threads(feeding: $0, live: live).isDisjoint(with: mine) }
    }

    private func isContainer(_ e: Graph.Edge) -> Bool {
        graph.node(e.from.node)!.descriptor.output(e.from.port)?.formats == .container
    }

    /// The queue rules that depend on the edge alone, not on what it joins.
    private func needsOwnQueue(_ e: Graph.Edge, live: Set<String>) -> Bool {
        if isContainer(e) { return false }
        if e.capacity != .default || live.contains(e.from.node) { return true }
        if graph.edges(from: e.from.node).filter({ $0.from == e.from }).count > 1 { return true }
        return Set(graph.edges(from: e.from.node).map(\.from.port)).count > 1
    }

    /// The streaming threads that may push buffers along an edge: its own queue's, or else
    /// those of everything upstream as far as a queue or a source (each source has a thread).
    /// Several inputs of one node count as every thread that feeds them: conservative, so a
    /// join downstream of another join gets its queues.
    private func threads(feeding e: Graph.Edge, live: Set<String>) -> Set<String> {
        if needsOwnQueue(e, live: live) { return ["queue \(e.from)->\(e.to)"] }
        let inputs = graph.edges(into: e.from.node)
        if inputs.isEmpty { return ["source \(e.from.node)"] }
        return inputs.reduce(into: Set<String>()) { $0.formUnion(threads(feeding: $1, live: live)) }
    }

    /// Makes `pad` report a counter that something else already keeps (a Swift node counting
    /// what arrives at its input, fed from `pad` by a direct link or a queue), unless the pad
    /// has its own.
    private func share(_ counter: UnsafeMutablePointer<GkPadCounter>?, with pad: UnsafeMutablePointer<GstPad>) {
        if let counter, padCounters[pad] == nil { padCounters[pad] = counter }
    }

    /// A counter for a pad where a Swift node's probe counts the buffers itself.
    private func counter(keptAt pad: UnsafeMutablePointer<GstPad>) -> UnsafeMutablePointer<GkPadCounter> {
        let c = UnsafeMutablePointer<GkPadCounter>.allocate(capacity: 1)
        c.initialize(to: GkPadCounter())
        padCounters[pad] = c
        return c
    }

    /// The counter of the buffers that pass a pad: one per pad, however many statistics read it,
    /// and a probe only where no Swift node counts them already (each probe on a pad is a
    /// hook-list walk for every buffer).
    private func count(_ pad: UnsafeMutablePointer<GstPad>) -> UnsafeMutablePointer<GkPadCounter> {
        if let c = padCounters[pad] { return c }
        let c = counter(keptAt: pad)
        gk_pad_count(pad, c)
        return c
    }

    private func makeElement(_ factory: String, name: String) throws -> UnsafeMutablePointer<GstElement> {
        guard let e = gst_element_factory_make(factory, name) else {
            throw GraphError(.missingPlugin, "GStreamer element \"\(factory)\" is not installed; install the Debian package \(GStreamer.debianPackage(forElement: factory))")
        }
        gst_bin_add(pipelineBin, e)
        return e
    }

    private func set(_ element: UnsafeMutablePointer<GstElement>, _ property: String, _ value: String) throws {
        if gk_object_set_from_string(UnsafeMutableRawPointer(element), property, value) != 0 {
            throw GraphError(.runFailed, "cannot set \(property)=\(value) on an internal element")
        }
    }

    private func link(_ src: UnsafeMutablePointer<GstPad>, _ sink: UnsafeMutablePointer<GstPad>, owned: Bool, what: String) throws {
        defer { if owned { gst_object_unref(UnsafeMutableRawPointer(sink)) } }
        let result = gst_pad_link(src, sink)
        guard result == GST_PAD_LINK_OK else {
            throw GraphError(.runFailed, at: what, "cannot link (GStreamer pad link result \(result.rawValue))")
        }
    }

    // MARK: Swift processing nodes

    final class ProcessingContext: @unchecked Sendable {
        let node: any ProcessingNode
        let id: String
        let element: UnsafeMutablePointer<GstElement>
        let host: ProcessingHost
        /// The input ends in the node (at a fakesink): every buffer goes on to the fakesink,
        /// kept or not, so that the input's counter, on the same pad, sees it.
        let endsHere: Bool
        var format: MediaFormat?
        var failed = false
        init(node: any ProcessingNode, id: String, element: UnsafeMutablePointer<GstElement>, host: ProcessingHost, endsHere: Bool) {
            self.node = node
            self.id = id
            self.element = element
            self.host = host
            self.endsHere = endsHere
        }
        func fail(_ error: Error) {
            failed = true
            let message = (error as? GraphError)?.message ?? "\(error)"
            gk_element_post_error(element, 3, Int32(GST_STREAM_ERROR_FAILED.rawValue), message, nil)
        }
    }

    private func buildProcessing(_ node: any ProcessingNode, context: NodeContext)
        throws -> ([String: UnsafeMutablePointer<GstPad>], [String: UnsafeMutablePointer<GstPad>])
    {
        let builder = BinBuilder(context: context, pipeline: pipeline)
        // An `out` of the input's kind passes buffers on, through an identity whose output pad
        // the node transforms. Otherwise the input ends in the node, at a fakesink whose input
        // pad it watches (one element fewer per buffer); an `out` of another kind (peaks from
        // PCM) is then fed by what the node emits.
        let d = type(of: node).descriptor
        let passesThrough = d.output("out").map { out in d.input("in").map { out.formats.intersects($0.formats) } ?? false } ?? false
        var output: MediaInput?
        let entry: Element
        let watched: UnsafeMutablePointer<GstPad>
        if passesThrough {
            entry = try builder.make("identity", name: "process", ["silent": "true"])
            try builder.expose(output: "out", entry)
            watched = gst_element_get_static_pad(entry.raw, "src")!
        } else {
            entry = try builder.make("fakesink", name: "consumed", ["sync": "false", "async": "false"])
            watched = gst_element_get_static_pad(entry.raw, "sink")!
            if context.connectedOutputs.contains("out") {
                let src = try builder.make("appsrc", name: "emit", [
                    "format": "time", "is-live": "false", "max-bytes": "0", "max-buffers": "0", "block": "false",
                ])
                output = MediaInput(appsrc: src.raw, nodeID: context.id)
                try builder.expose(output: "out", src)
            }
        }
        try builder.expose(input: "in", entry)
        let inputPad = gst_element_get_static_pad(entry.raw, "sink")!
        let host = ProcessingHost(inputPad: inputPad, output: output)
        gst_object_unref(UnsafeMutableRawPointer(inputPad))  // the element keeps it; the pointer stays valid
        node.attach(host)
        let pc = ProcessingContext(node: node, id: context.id, element: entry.raw, host: host, endsHere: !passesThrough)
        processingContexts.append(pc)
        defer { gst_object_unref(UnsafeMutableRawPointer(watched)) }
        // The probe counts too: every buffer arriving at the node's input (an identity passes on
        // what it receives, so its output pad sees the same ones), and what a passing node sends
        // on from its output.
        gk_pad_add_counted_transform(watched, { ctx, buffer in
            let pc = Unmanaged<ProcessingContext>.fromOpaque(ctx!).takeUnretainedValue()
            var sample = SampleBuffer(owning: buffer!, format: pc.format)
            if pc.failed { return nil }
            do {
                guard try pc.node.process(&sample) || pc.endsHere else { return nil }
                return sample.retainedBuffer()
            } catch {
                pc.fail(error)
                return nil
            }
        }, { ctx, kind, caps in
            let pc = Unmanaged<ProcessingContext>.fromOpaque(ctx!).takeUnretainedValue()
            do {
                if kind == 0, let caps, let format = GStreamer.format(from: caps) {
                    pc.format = format
                    try pc.node.formatDidChange(to: format)
                } else if kind == 1 {
                    if !pc.failed { try pc.node.endOfStream() }
                    pc.host.finishOutput()
                }
            } catch {
                pc.fail(error)
            }
        }, Unmanaged.passRetained(pc).toOpaque(), { ctx in
            Unmanaged<ProcessingContext>.fromOpaque(ctx!).release()
        }, counter(keptAt: inputPad), passesThrough ? counter(keptAt: watched) : nil)
        return (builder.exposedInputs, builder.exposedOutputs)
    }

    // MARK: Access for code

    /// The node instance with this id.
    public func node(_ id: String) -> (any Node)? { nodes.first { $0.spec.id == id }?.node }

    /// The push endpoint of a `source.app` node.
    public func input(_ id: String) throws -> MediaInput {
        guard let n = node(id) as? AppSourceNode else {
            throw GraphError(.usage, "no source.app node \"\(id)\" in the graph")
        }
        return n.input
    }

    /// The pull endpoint of a `sink.app` node.
    public func output(_ id: String) throws -> MediaOutput {
        guard let n = node(id) as? AppSinkNode else {
            throw GraphError(.usage, "no sink.app node \"\(id)\" in the graph")
        }
        return n.output
    }

    // MARK: Running

    /// Prepares every node and starts the pipeline. Problems found before anything plays
    /// (an unreadable input, an output folder that cannot be made) throw here.
    public func start() throws {
        condition.lock()
        guard !started else { condition.unlock(); return }
        started = true
        condition.unlock()
        do {
            for (_, node) in nodes { try node.prepare() }
        } catch {
            // Nothing played: let the nodes that did prepare clean up, and end the run here.
            let e = error as? GraphError ?? GraphError(.runFailed, "\(error)")
            for (_, node) in nodes { try? node.finish(.failed) }
            condition.lock()
            finishedReport = makeReport(status: .failed, wall: 0, error: e)
            condition.broadcast()
            condition.unlock()
            throw e
        }
        // An append the graph refuses because the run failed reports that failure, as
        // AVAssetWriter's error does, and not just the refusal.
        for (_, node) in nodes {
            (node as? AppSourceNode)?.input.reportRefusals { [weak self] in self?.failure(waitingUpTo: 2) }
        }
        startTime = .now
        let result = gst_element_set_state(pipeline, GST_STATE_PLAYING)
        let thread = Thread { [self] in watchBus(startFailed: result == GST_STATE_CHANGE_FAILURE) }
        thread.name = "graphkit-bus"
        thread.start()
    }

    /// Ends the run gracefully: every source sends end of stream, so every muxer writes its
    /// index and every file is complete. The run's status becomes `stopped`.
    public func stop() {
        condition.lock()
        let already = stopRequested
        stopRequested = true
        condition.unlock()
        if !already { gk_send_eos(pipeline) }
    }

    /// Abandons the run: the pipeline stops at once and sinks remove what they wrote.
    public func cancel() {
        condition.lock()
        cancelRequested = true
        condition.unlock()
    }

    /// Blocks until the run is over and returns its report. Call from your own thread, not
    /// from a Swift concurrency task (use `report()` there).
    public func wait() -> RunReport {
        report(waitingUntil: nil)!
    }

    /// The run's error once it has ended, waiting up to `timeout` seconds for the end: nil if it
    /// ended without one, or has not ended by then.
    func failure(waitingUpTo timeout: Double) -> GraphError? {
        report(waitingUntil: Date().addingTimeInterval(timeout))?.error
    }

    /// The report once the run has ended, waiting for the end until `deadline` (nil: for ever).
    private func report(waitingUntil deadline: Date?) -> RunReport? {
        condition.lock()
        defer { condition.unlock() }
        while finishedReport == nil {
            if let deadline {
                if !condition.wait(until: deadline) { break }
            } else {
                condition.wait()
            }
        }
        return finishedReport
    }

    /// The report, once the run is over, without blocking a concurrency thread.
    public func report() async -> RunReport {
        await withCheckedContinuation { continuation in
            let t = Thread { continuation.resume(returning: self.wait()) }
            t.start()
        }
    }

    /// Starts, waits, and returns the report; throws the run's error if it failed.
    @discardableResult
    public func run() throws -> RunReport {
        try start()
        let report = wait()
        if let error = report.error { throw error }
        return report
    }

    /// Where the run is: media seconds that reached the final nodes, and the total when known.
    public var progress: (position: Double, duration: Double?) {
        let position = mediaPosition()
        var duration = nodes.compactMap { $0.node.expectedDuration?.seconds }.max()
        if duration == nil {
            var d: gint64 = 0
            if gst_element_query_duration(pipeline, GST_FORMAT_TIME, &d) != 0, d > 0 { duration = Double(d) / 1e9 }
        }
        return (position, duration)
    }

    public var isFinished: Bool {
        condition.lock()
        defer { condition.unlock() }
        return finishedReport != nil
    }

    private func mediaPosition() -> Double {
        // The final nodes are those with no connected outputs.
        let finals = nodes.filter { graph.edges(from: $0.spec.id).isEmpty }.map(\.spec.id)
        // From the first timestamp each input saw: encoders may offset theirs (x264enc by 1000 h).
        var best = 0
        for id in finals {
            for c in counters[id]?.inputs ?? [] where c.pointee.start_ns >= 0 {
                best = max(best, c.pointee.end_ns - min(c.pointee.start_ns, c.pointee.end_ns))
            }
        }
        return Double(best) / 1e9
    }

    private func watchBus(startFailed: Bool) {
        let bus = gst_element_get_bus(pipeline)!
        defer { gst_object_unref(UnsafeMutableRawPointer(bus)) }
        var status: RunStatus = .completed
        var error: GraphError?
        let wanted = GST_MESSAGE_ERROR.rawValue | GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ELEMENT.rawValue
        let idleSince = startFailed ? ContinuousClock.now : nil
        loop: while true {
            condition.lock()
            let cancelled = cancelRequested
            condition.unlock()
            if cancelled { status = .cancelled; break }
            if let msg = gst_bus_timed_pop_filtered(bus, 20_000_000, GstMessageType(rawValue: wanted)) {
                defer { gk_message_unref(msg) }
                switch msg.pointee.type {
                case GST_MESSAGE_EOS:
                    // Read now, not before the wait: the stop may have come while waiting.
                    condition.lock()
                    status = stopRequested ? .stopped : .completed
                    condition.unlock()
                    break loop
                case GST_MESSAGE_ERROR:
                    error = translate(error: msg)
                    status = .failed
                    break loop
                case GST_MESSAGE_ELEMENT:
                    if gst_is_missing_plugin_message(msg) != 0, let d = gst_missing_plugin_message_get_description(msg) {
                        missingPlugin = String(cString: d)
                        g_free(d)
                    }
                default: break
                }
            } else if let since = idleSince, ContinuousClock.now - since > .seconds(1) {
                error = GraphError(.runFailed, "the pipeline failed to start")
                status = .failed
                break
            }
            sampleQueues()
        }
        if status == .completed || status == .stopped { sampleQueues() }
        gst_element_set_state(pipeline, GST_STATE_NULL)
        let wall = (ContinuousClock.now - startTime)
        // Sinks finalize (rename) or clean up by how the run ended.
        var finishError: GraphError?
        for (spec, node) in nodes {
            do {
                try node.finish(status)
            } catch {
                let e = error as? GraphError ?? GraphError(.runFailed, at: "node \"\(spec.id)\"", "\(error)", node: spec.id)
                if finishError == nil { finishError = e }
            }
        }
        if error == nil, let e = finishError {
            error = e
            status = .failed
        }
        if status == .cancelled, error == nil {
            error = GraphError(.cancelled, "the run was cancelled")
        }
        let report = makeReport(status: status, wall: Double(wall.components.seconds) + Double(wall.components.attoseconds) / 1e18, error: error)
        condition.lock()
        finishedReport = report
        condition.broadcast()
        condition.unlock()
    }

    private func sampleQueues() {
        for e in edgeProbes { if let q = e.queue { gk_queue_sample(q, e.stats) } }
    }

    private func translate(error msg: UnsafeMutablePointer<GstMessage>) -> GraphError {
        var gerror: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_error(msg, &gerror, &debug)
        defer {
            if gerror != nil { g_error_free(gerror) }
            g_free(debug)
        }
        let text = gerror.map { String(cString: $0.pointee.message) } ?? "unknown error"
        let debugText = debug.map { String(cString: $0) }
        let domain = gk_error_domain(gerror)
        let code = gerror?.pointee.code ?? 0
        let nodeID = owningNode(of: msg.pointee.src)

        var errorCode = GraphError.Code.runFailed
        switch (domain, code) {
        case (0, Int32(GST_CORE_ERROR_MISSING_PLUGIN.rawValue)), (3, Int32(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue)):
            errorCode = .missingPlugin
        case (2, Int32(GST_RESOURCE_ERROR_OPEN_WRITE.rawValue)), (2, Int32(GST_RESOURCE_ERROR_OPEN_READ_WRITE.rawValue)),
             (2, Int32(GST_RESOURCE_ERROR_WRITE.rawValue)), (2, Int32(GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue)):
            errorCode = .outputUnwritable
        default: break
        }
        var message = text
        if errorCode == .missingPlugin, let missing = missingPlugin {
            message += " Missing: \(missing); install the GStreamer plugin package that provides it (gstreamer1.0-plugins-good, -bad, -ugly or gstreamer1.0-libav)."
        }
        guard let nodeID, let entry = nodes.first(where: { $0.spec.id == nodeID }) else {
            return GraphError(errorCode, message, cause: debugText)
        }
        var reading = ""
        if let d = entry.node.mediaDescription ?? graph.edges(into: nodeID).compactMap({ e in self.describe(e.from.node) }).first {
            reading = ", reading \(d)"
        }
        return GraphError(errorCode, at: "node \"\(nodeID)\" (\(entry.spec.descriptor.type)\(reading))", message, node: nodeID, cause: debugText)
    }

    private func describe(_ id: String) -> String? {
        guard let n = nodes.first(where: { $0.spec.id == id }) else { return nil }
        return n.node.mediaDescription ?? graph.edges(into: id).compactMap { describe($0.from.node) }.first
    }

    /// The node a GStreamer object belongs to: walking up to the pipeline's child, a node's
    /// element (`<node id>:<name>`) or the queue of an edge into the node (`(edge)a.out->b.in`).
    private func owningNode(of object: UnsafeMutablePointer<GstObject>?) -> String? {
        var current = object
        while let o = current {
            let parent = o.pointee.parent
            if parent == UnsafeMutableRawPointer(pipeline).assumingMemoryBound(to: GstObject.self) {
                let name = String(cString: o.pointee.name)
                if name.hasPrefix("(edge)"), let arrow = name.range(of: "->") {
                    return PortRef(name[arrow.upperBound...])?.node
                }
                guard let colon = name.firstIndex(of: ":") else { return nil }
                let id = String(name[..<colon])
                return nodes.contains { $0.spec.id == id } ? id : nil
            }
            current = parent
        }
        return nil
    }

    private func makeReport(status: RunStatus, wall: Double, error: GraphError?) -> RunReport {
        let nodeStats = nodes.map { (spec, _) -> NodeStatistics in
            let c = counters[spec.id] ?? ([], [])
            return NodeStatistics(id: spec.id, type: spec.descriptor.type,
                                  buffersIn: c.inputs.reduce(0) { $0 + Int($1.pointee.buffers) },
                                  buffersOut: c.outputs.reduce(0) { $0 + Int($1.pointee.buffers) },
                                  bytesIn: c.inputs.reduce(0) { $0 + Int($1.pointee.bytes) },
                                  bytesOut: c.outputs.reduce(0) { $0 + Int($1.pointee.bytes) })
        }
        let edgeStats = edgeProbes.sorted { $0.edge.index < $1.edge.index }.map { e in
            EdgeStatistics(from: e.edge.from.description, to: e.edge.to.description, capacity: e.edge.capacity,
                           buffers: Int(e.counter.pointee.buffers), maxBuffers: Int(e.stats.pointee.max_buffers),
                           maxBytes: Int(e.stats.pointee.max_bytes), maxSeconds: Double(e.stats.pointee.max_time_ns) / 1e9,
                           waits: Int(e.stats.pointee.waits), drops: e.leaky ? Int(e.stats.pointee.waits) : 0,
                           queued: e.queue != nil)
        }
        return RunReport(status: status, wallSeconds: wall, mediaSeconds: mediaPosition(), nodes: nodeStats,
                         edges: edgeStats, outputs: nodes.compactMap { $0.node.output }, error: error)
    }
}

/// A node that may produce in real time from a clock (capture). Edges leaving a live node drop
/// the oldest buffer when full, and count it, rather than make the source wait.
public protocol LiveNode: Node {
    var isLive: Bool { get }
}
