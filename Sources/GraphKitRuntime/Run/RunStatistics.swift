import CGStreamer
import CGraphKitGlue
import Glibc
import GraphKitCore
import MediaContainers

/// What flowed where during a run: buffers and bytes per node and per edge, how deep each queue
/// got, what each display showed, and every buffer the graph dropped. Counters live in C memory
/// that the counting probes and queue signals write from streaming threads; this object owns
/// that memory and frees it after the pipeline is gone.
///
/// A graph drops buffers in two places only, both by design and both counted: the edges leaving
/// a live capture source (``LiveNode``), whose queue lets its oldest buffer go when full rather
/// than hold the source back, and a display (`sink.preview`), which shows what it can. A
/// dropping edge counts what enters its queue and what leaves it; what entered, did not leave
/// and was not still held when the pipeline stopped was dropped (exact for a run whose streams
/// ended; within the buffers in flight for one stopped midway).
///
/// One counter per pad, shared by everything that sees the same buffers there: a node's output,
/// the edge leaving it and, on a direct link, the input it feeds. It is kept by a probe, or by
/// the Swift node whose transform already sees those buffers (each probe on a pad is a
/// hook-list walk for every buffer).
final class RunStatistics: @unchecked Sendable {
    // @unchecked: the counters are C memory (unsafe pointers) written by probes on streaming threads
    // with C atomics (gk_pad_counter_read); the tables of them are filled on the compiler's thread
    // before the pipeline starts (GStreamer's state change orders that before any probe), and read
    // after; the displays' readings and the queues' last levels are behind `readingsLock` (a
    // Mutex of nothing, guarding this object's fields: a Mutex cannot hold the displays' unsafe
    // pointers without sending them).
    private struct EdgeEntry {
        var edge: Graph.Edge
        var queue: UnsafeMutablePointer<GstElement>?
        var stats: UnsafeMutablePointer<GkEdgeStats>
        /// What left the edge (its queue's output, or the producer's on a direct link).
        var counter: UnsafeMutablePointer<GkPadCounter>
        /// What entered a dropping edge's queue; nil for an edge that never drops.
        var entering: UnsafeMutablePointer<GkPadCounter>?
    }

    private let callbacks: CallbackRegistry
    private var padCounters: [UnsafeMutablePointer<GstPad>: UnsafeMutablePointer<GkPadCounter>] = [:]
    private var nodeInputs: [String: [UnsafeMutablePointer<GkPadCounter>]] = [:]
    private var nodeOutputs: [String: [UnsafeMutablePointer<GkPadCounter>]] = [:]
    private var edges: [EdgeEntry] = []
    /// The counters of a run on the container path (no pads), freed with this object.
    private var storedCounters: [UnsafeMutablePointer<GkPadCounter>] = []
    private var displays: [Display] = []
    /// Guards the displays' readings and the dropping queues' last levels, taken on the thread
    /// that stops the pipeline.
    private let readingsLock = Guarded(())
    /// Buffers each dropping queue (by index in `edges`) still held as the pipeline stopped:
    /// flushed with the run, not dropped by it.
    private var heldAtStop: [Int: Int] = [:]

    /// A video sink that shows a node's frames in a window (``BinBuilder/display(_:title:)``).
    private struct Display {
        var node: String
        /// Referenced until this object goes: the sink is asked for its counts as the run stops.
        var sink: UnsafeMutablePointer<GstElement>
        var guardState: UnsafeMutablePointer<GkDisplay>
        var title: UnsafeMutablePointer<CChar>?
        /// The sink's count of buffers it rendered, read as the pipeline stops (GStreamer resets it
        /// in NULL); nil until then.
        var rendered: Int?
    }

    init(callbacks: CallbackRegistry) { self.callbacks = callbacks }

    deinit {
        for c in Set(padCounters.values) { c.deallocate() }
        for c in storedCounters { c.deallocate() }
        for e in edges { e.stats.deallocate() }
        for d in displays {
            d.guardState.deallocate()
            free(d.title)
            gst_object_unref(UnsafeMutableRawPointer(d.sink))
        }
    }

    // MARK: Building (the compiler's thread, before the run starts)

    /// A counter for a pad where a Swift node's probe counts the buffers itself.
    func counter(keptAt pad: UnsafeMutablePointer<GstPad>) -> UnsafeMutablePointer<GkPadCounter> {
        let c = Self.newCounter()
        padCounters[pad] = c
        return c
    }

    /// A counter at zero, nothing seen; freed by deinit.
    private static func newCounter() -> UnsafeMutablePointer<GkPadCounter> {
        let c = UnsafeMutablePointer<GkPadCounter>.allocate(capacity: 1)
        c.initialize(to: GkPadCounter(buffers: 0, bytes: 0, start_ns: -1, end_ns: -1))
        return c
    }

    /// The counter of the buffers that pass a pad, with a probe only where nothing counts them.
    func count(_ pad: UnsafeMutablePointer<GstPad>) -> UnsafeMutablePointer<GkPadCounter> {
        if let c = padCounters[pad] { return c }
        let c = counter(keptAt: pad)
        callbacks.adopt(probe: gk_pad_count(pad, c), on: pad)
        return c
    }

    /// Makes `pad` report the counter that `input` already has (a Swift node counting what
    /// arrives at its input, fed from `pad`), unless the pad has its own.
    func share(countOf input: UnsafeMutablePointer<GstPad>, with pad: UnsafeMutablePointer<GstPad>) {
        if let counter = padCounters[input], padCounters[pad] == nil { padCounters[pad] = counter }
    }

    /// An edge linked directly: its buffers are those leaving `source`.
    func addDirectEdge(_ edge: Graph.Edge, source: UnsafeMutablePointer<GstPad>) {
        let counter = count(source)
        nodeInputs[edge.to.node, default: []].append(counter)
        edges.append(EdgeEntry(edge: edge, queue: nil, stats: Self.newEdgeStats(), counter: counter, entering: nil))
    }

    /// An edge through `queue`: its buffers are those leaving the queue (`source`). A queue that
    /// drops when full (`leaky`) also counts what enters it (at `sink`), so that its drops are
    /// counted exactly.
    func addQueuedEdge(_ edge: Graph.Edge, queue: UnsafeMutablePointer<GstElement>, source: UnsafeMutablePointer<GstPad>,
                       sink: UnsafeMutablePointer<GstPad>, leaky: Bool) {
        let stats = Self.newEdgeStats()
        callbacks.adopt(signal: gk_queue_watch(queue, stats), on: UnsafeMutableRawPointer(queue))
        let counter = count(source)
        nodeInputs[edge.to.node, default: []].append(counter)
        edges.append(EdgeEntry(edge: edge, queue: queue, stats: stats, counter: counter, entering: leaky ? count(sink) : nil))
    }

    /// An edge of a run on the container path (``ContainerPath``): one counter is what leaves its
    /// source's output, crosses it and enters its sink's input, as on a direct link.
    func addStoredEdge(_ edge: Graph.Edge) -> StoredCounter {
        let c = Self.newCounter()
        storedCounters.append(c)
        nodeInputs[edge.to.node, default: []].append(c)
        nodeOutputs[edge.from.node, default: []].append(c)
        edges.append(EdgeEntry(edge: edge, queue: nil, stats: Self.newEdgeStats(), counter: c, entering: nil))
        return StoredCounter(counter: c)
    }

    /// A counter the container path's thread adds to (with atomics, as a pad's probe does).
    struct StoredCounter: @unchecked Sendable {
        // @unchecked: C memory written only through gk_pad_counter_add's atomics, and freed by
        // the statistics after the run's thread has been joined.
        fileprivate let counter: UnsafeMutablePointer<GkPadCounter>

        func add(_ sample: SampleBuffer) {
            let nanoseconds = { (t: MediaTime?) -> gint64 in
                guard let t, t.isFinite else { return -1 }
                return gint64(Int64(saturating: (t.seconds * 1e9).rounded()))
            }
            gk_pad_counter_add(counter, gint64(sample.byteCount), nanoseconds(sample.presentationTime), nanoseconds(sample.duration))
        }

        /// Bytes with no time: a file's, read for a demuxer.
        func add(bytes: Int) { gk_pad_counter_add(counter, gint64(bytes), -1, -1) }
    }

    /// Counts what leaves each of a node's outputs.
    func countOutputs(of node: String, _ pads: [UnsafeMutablePointer<GstPad>]) {
        nodeOutputs[node] = pads.map(count)
    }

    /// Makes `sink` a display of `node`: the guard on `feeding` (the pad linked to the sink) keeps
    /// the sink's errors from its producers and gives it the window's title, and the sink's
    /// counts become the node's frames shown and dropped.
    func addDisplay(node: String, sink: UnsafeMutablePointer<GstElement>, feeding: UnsafeMutablePointer<GstPad>, title: String?) {
        let state = UnsafeMutablePointer<GkDisplay>.allocate(capacity: 1)
        let copy = title.flatMap { strdup($0) }
        state.initialize(to: GkDisplay(failed: 0, title: copy.map { UnsafePointer($0) }, title_sent: 0))
        callbacks.adopt(probe: gk_pad_guard_display(feeding, state), on: feeding)
        gst_object_ref(UnsafeMutableRawPointer(sink))
        readingsLock.withLock { _ in displays.append(Display(node: node, sink: sink, guardState: state, title: copy)) }
    }

    /// The node whose display `object` is, if it is one.
    func node(ofDisplay object: UnsafeMutablePointer<GstObject>?) -> String? {
        guard let object else { return nil }
        let raw = UnsafeMutableRawPointer(object)
        return readingsLock.withLock { _ in displays.first { UnsafeMutableRawPointer($0.sink) == raw }?.node }
    }

    /// Reads, once, what the elements know only while they run: what each display sink
    /// counted (GStreamer resets the counts when a sink stops), and what each dropping queue
    /// still holds (flushed as it stops: not a drop). Called as the pipeline stops.
    func readBeforeStopping() {
        readingsLock.withLock { _ in
            for i in displays.indices where displays[i].rendered == nil {
                displays[i].rendered = max(0, Int(gk_base_sink_rendered(displays[i].sink)))
            }
            for (i, e) in edges.enumerated() where e.entering != nil && heldAtStop[i] == nil {
                guard let queue = e.queue, let text = gk_object_get_as_string(UnsafeMutableRawPointer(queue), "current-level-buffers") else { continue }
                heldAtStop[i] = Int(String(cString: text)) ?? 0
                g_free(text)
            }
        }
    }

    /// Buffers a dropping edge let go: what entered its queue, less what left it and what it
    /// still held as the pipeline stopped. 0 for an edge that never drops.
    private func drops(_ i: Int) -> Int {
        guard let entering = edges[i].entering else { return 0 }
        let held = readingsLock.withLock { _ in heldAtStop[i] ?? 0 }
        return max(0, Int(gk_pad_counter_read(entering).buffers) - Int(gk_pad_counter_read(edges[i].counter).buffers) - held)
    }

    /// A display's frames shown (rendered, less the renders that failed because its window was
    /// gone), once read; nil for a node with no display.
    private func shown(by node: String) -> Int? {
        return readingsLock.withLock { _ in
            let mine = displays.filter { $0.node == node }
            guard !mine.isEmpty else { return nil }
            return mine.reduce(0) { total, d in
                let failed = Int(gk_display_failed(d.guardState))
                return total + max(0, (d.rendered ?? 0) - failed)
            }
        }
    }

    private static func newEdgeStats() -> UnsafeMutablePointer<GkEdgeStats> {
        let stats = UnsafeMutablePointer<GkEdgeStats>.allocate(capacity: 1)
        stats.initialize(to: GkEdgeStats())
        return stats
    }

    // MARK: Reading (any thread; counters are written with atomics)

    /// Records how deep each queue is now (called every few milliseconds while the run lasts).
    func sampleQueues() {
        for e in edges { if let q = e.queue { gk_queue_sample(q, e.stats) } }
    }

    /// Buffers that have reached `nodes` (the final ones), or that a final node with no input
    /// produced, so far.
    func buffers(reaching nodes: [String]) -> Int {
        nodes.reduce(0) { sum, id in
            let inputs = nodeInputs[id] ?? []
            return (inputs.isEmpty ? nodeOutputs[id] ?? [] : inputs).reduce(sum) { $0 + Int(gk_pad_counter_read($1).buffers) }
        }
    }

    /// Media seconds that reached `nodes` (the final ones): from the first timestamp each input
    /// saw, since encoders may offset theirs (gkx264enc, as x264enc, by 1000 h). A final node
    /// with no input (one that reads its own file and writes its own: analysis.thumbnails) counts
    /// what it produces.
    func mediaSeconds(reaching nodes: [String]) -> Double {
        var best = 0
        for id in nodes {
            let inputs = nodeInputs[id] ?? []
            for c in (inputs.isEmpty ? nodeOutputs[id] ?? [] : inputs).map({ gk_pad_counter_read($0) }) where c.start_ns >= 0 {
                best = max(best, c.end_ns - min(c.start_ns, c.end_ns))
            }
        }
        return Double(best) / 1e9
    }

    func nodeStatistics(_ node: Graph.NodeSpec, gaps: [StreamGap] = []) -> NodeStatistics {
        let inputs = (nodeInputs[node.id] ?? []).map { gk_pad_counter_read($0) }, outputs = (nodeOutputs[node.id] ?? []).map { gk_pad_counter_read($0) }
        let buffersIn = inputs.reduce(0) { $0 + Int($1.buffers) }
        let shown = shown(by: node.id)
        // What the node let go: a display's frames not shown, a live source's drops at its edges.
        let notShown = shown.map { max(0, buffersIn - $0) }
        let dropping = edges.indices.filter { edges[$0].entering != nil && edges[$0].edge.from.node == node.id }
        let atEdges = dropping.isEmpty ? nil : dropping.reduce(0) { $0 + drops($1) }
        return NodeStatistics(id: node.id, type: node.descriptor.type,
                              buffersIn: buffersIn,
                              buffersOut: outputs.reduce(0) { $0 + Int($1.buffers) },
                              bytesIn: inputs.reduce(0) { $0 + Int($1.bytes) },
                              bytesOut: outputs.reduce(0) { $0 + Int($1.bytes) },
                              shown: shown, dropped: notShown == nil && atEdges == nil ? nil : (notShown ?? 0) + (atEdges ?? 0),
                              gaps: gaps.isEmpty ? nil : gaps)
    }

    func edgeStatistics() -> [EdgeStatistics] {
        edges.indices.sorted { edges[$0].edge.index < edges[$1].edge.index }.map { i in
            let e = edges[i]
            let counter = gk_pad_counter_read(e.counter), stats = gk_edge_stats_read(e.stats)
            return EdgeStatistics(from: e.edge.from.description, to: e.edge.to.description, capacity: e.edge.capacity,
                                  buffers: Int(counter.buffers), maxBuffers: Int(stats.max_buffers),
                                  maxBytes: Int(stats.max_bytes), maxSeconds: Double(stats.max_time_ns) / 1e9,
                                  waits: Int(stats.waits), drops: drops(i), queued: e.queue != nil)
        }
    }
}
