import GraphKitCore
import MediaContainers
/// Which edges of a graph run through a bounded queue on a thread of their own, and which link
/// directly (hold nothing: the producer waits while the consumer takes each buffer, like `!`
/// in gst-launch-1.0). Decided from the graph alone, before any element exists.
///
/// A queue where a thread or a drop policy is needed: the graph gave the edge a capacity; it
/// leaves a live capture source (``LiveNode``: the one place a graph drops buffers rather than
/// wait, each drop counted); it is one branch of a fan-out or leaves a node with several outputs;
/// or it joins a node with several inputs (a muxer interleaving streams) fed by a streaming
/// thread that also feeds another of those inputs, where the muxer waiting on one input would
/// stall the other. Streams from separate sources already have a thread each and join directly,
/// as in `gst-launch-1.0 … ! mux. … ! mux.`. A file's bytes always go straight to their
/// demuxer, which pulls them in large blocks and seeks.
struct EdgePolicy {
    let graph: Graph
    /// The nodes that capture in real time (their edges drop instead of waiting): ``LiveNode``s
    /// that say they are live. `source.app` is never one, whatever its `live`.
    let live: Set<String>

    func needsQueue(_ e: Graph.Edge) -> Bool {
        if isContainer(e) { return false }
        if needsOwnQueue(e) { return true }
        let joined = graph.edges(into: e.to.node).filter { $0.to.port != e.to.port }
        guard !joined.isEmpty else { return false }
        let mine = threads(feeding: e)
        return joined.contains { !threads(feeding: $0).isDisjoint(with: mine) }
    }

    /// Whether a full queue on this edge drops its oldest buffer (out of a live source).
    func isLeaky(_ e: Graph.Edge) -> Bool { live.contains(e.from.node) }

    func isContainer(_ e: Graph.Edge) -> Bool {
        graph.node(e.from.node)?.descriptor.output(e.from.port)?.formats == .container
    }

    /// The queue rules that depend on the edge alone, not on what it joins.
    private func needsOwnQueue(_ e: Graph.Edge) -> Bool {
        if isContainer(e) { return false }
        if e.capacity != .default || live.contains(e.from.node) { return true }
        let leaving = graph.edges(from: e.from.node)
        if leaving.filter({ $0.from == e.from }).count > 1 { return true }
        return Set(leaving.map(\.from.port)).count > 1
    }

    /// The streaming threads that may push buffers along an edge: its own queue's, or else
    /// those of everything upstream as far as a queue or a source (each source has a thread).
    /// Several inputs of one node count as every thread that feeds them: conservative, so a
    /// join downstream of another join gets its queues.
    private func threads(feeding e: Graph.Edge) -> Set<String> {
        if needsOwnQueue(e) { return ["queue \(e.from)->\(e.to)"] }
        let inputs = graph.edges(into: e.from.node)
        if inputs.isEmpty { return ["source \(e.from.node)"] }
        return inputs.reduce(into: Set<String>()) { $0.formUnion(threads(feeding: $1)) }
    }
}
