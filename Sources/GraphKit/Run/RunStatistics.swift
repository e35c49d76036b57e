import CGStreamer
import CGraphKitGlue

/// What flowed where during a run: buffers and bytes per node and per edge, and how deep each
/// queue got. Counters live in C memory that the counting probes and queue signals write from
/// streaming threads; this object owns that memory and frees it after the pipeline is gone.
///
/// One counter per pad, shared by everything that sees the same buffers there: a node's output,
/// the edge leaving it and, on a direct link, the input it feeds. It is kept by a probe, or by
/// the Swift node whose transform already sees those buffers (each probe on a pad is a
/// hook-list walk for every buffer).
final class RunStatistics: @unchecked Sendable {
    private struct EdgeEntry {
        var edge: Graph.Edge
        var queue: UnsafeMutablePointer<GstElement>?
        var stats: UnsafeMutablePointer<GkEdgeStats>
        var counter: UnsafeMutablePointer<GkPadCounter>
        var leaky: Bool
    }

    private let callbacks: CallbackRegistry
    private var padCounters: [UnsafeMutablePointer<GstPad>: UnsafeMutablePointer<GkPadCounter>] = [:]
    private var nodeInputs: [String: [UnsafeMutablePointer<GkPadCounter>]] = [:]
    private var nodeOutputs: [String: [UnsafeMutablePointer<GkPadCounter>]] = [:]
    private var edges: [EdgeEntry] = []

    init(callbacks: CallbackRegistry) { self.callbacks = callbacks }

    deinit {
        for c in Set(padCounters.values) { c.deallocate() }
        for e in edges { e.stats.deallocate() }
    }

    // MARK: Building (the compiler's thread, before the run starts)

    /// A counter for a pad where a Swift node's probe counts the buffers itself.
    func counter(keptAt pad: UnsafeMutablePointer<GstPad>) -> UnsafeMutablePointer<GkPadCounter> {
        let c = UnsafeMutablePointer<GkPadCounter>.allocate(capacity: 1)
        c.initialize(to: GkPadCounter(buffers: 0, bytes: 0, start_ns: -1, end_ns: -1))
        padCounters[pad] = c
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
        edges.append(EdgeEntry(edge: edge, queue: nil, stats: Self.newEdgeStats(), counter: counter, leaky: false))
    }

    /// An edge through `queue`: its buffers are those leaving the queue.
    func addQueuedEdge(_ edge: Graph.Edge, queue: UnsafeMutablePointer<GstElement>, source: UnsafeMutablePointer<GstPad>, leaky: Bool) {
        let stats = Self.newEdgeStats()
        callbacks.adopt(signal: gk_queue_watch(queue, stats), on: UnsafeMutableRawPointer(queue))
        let counter = count(source)
        nodeInputs[edge.to.node, default: []].append(counter)
        edges.append(EdgeEntry(edge: edge, queue: queue, stats: stats, counter: counter, leaky: leaky))
    }

    /// Counts what leaves each of a node's outputs.
    func countOutputs(of node: String, _ pads: [UnsafeMutablePointer<GstPad>]) {
        nodeOutputs[node] = pads.map(count)
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

    /// Media seconds that reached `nodes` (the final ones): from the first timestamp each input
    /// saw, since encoders may offset theirs (x264enc by 1000 h).
    func mediaSeconds(reaching nodes: [String]) -> Double {
        var best = 0
        for id in nodes {
            for c in (nodeInputs[id] ?? []).map({ gk_pad_counter_read($0) }) where c.start_ns >= 0 {
                best = max(best, c.end_ns - min(c.start_ns, c.end_ns))
            }
        }
        return Double(best) / 1e9
    }

    func nodeStatistics(_ node: Graph.NodeSpec) -> NodeStatistics {
        let inputs = (nodeInputs[node.id] ?? []).map { gk_pad_counter_read($0) }, outputs = (nodeOutputs[node.id] ?? []).map { gk_pad_counter_read($0) }
        return NodeStatistics(id: node.id, type: node.descriptor.type,
                              buffersIn: inputs.reduce(0) { $0 + Int($1.buffers) },
                              buffersOut: outputs.reduce(0) { $0 + Int($1.buffers) },
                              bytesIn: inputs.reduce(0) { $0 + Int($1.bytes) },
                              bytesOut: outputs.reduce(0) { $0 + Int($1.bytes) })
    }

    func edgeStatistics() -> [EdgeStatistics] {
        edges.sorted { $0.edge.index < $1.edge.index }.map { e in
            let counter = gk_pad_counter_read(e.counter), stats = gk_edge_stats_read(e.stats)
            return EdgeStatistics(from: e.edge.from.description, to: e.edge.to.description, capacity: e.edge.capacity,
                                  buffers: Int(counter.buffers), maxBuffers: Int(stats.max_buffers),
                                  maxBytes: Int(stats.max_bytes), maxSeconds: Double(stats.max_time_ns) / 1e9,
                                  waits: Int(stats.waits), drops: e.leaky ? Int(stats.waits) : 0, queued: e.queue != nil)
        }
    }
}
