import CGraphKitGlue
import GraphKitCore
import Logging
import MediaContainers
import Synchronization

/// How a graph runs, decided when it is compiled (``GraphRun/plan``, and `graphctl dot`).
public enum RunPlan: String, Sendable, Equatable, CaseIterable {
    /// One GStreamer pipeline: GStreamer schedules, decodes, encodes, converts.
    case pipeline
    /// No pipeline: a graph whose job needs no decoding (a join or trim as stored,
    /// `source.concat → sink.mp4`; a remux of an MP4 or MOV, `source.file → demux → sink.mp4`)
    /// is run by the container library, each sample read from its file's index and written by
    /// the MP4 writer on one thread of the run's own, as `ffmpeg -c copy` copies packets.
    case containerPath

    /// The plan `graph` gets: the container path when every node can run on it (see
    /// ``ContainerPath``), else the pipeline. A graph with `demux` is decided by its file: it is
    /// opened and its index read here (an MP4 or MOV whose tracks the writer copies exactly).
    public init(for graph: Graph) { self = Self.decided(for: graph).plan }

    /// The plan `graph` gets (``init(for:)``), and, when a graph whose nodes all could run on
    /// the container path runs as a pipeline, why: what `graphctl dot` shows and a run logs.
    public static func decided(for graph: Graph) -> (plan: RunPlan, declined: String?) {
        guard ContainerPath.fits(graph) else { return (.pipeline, nil) }
        guard graph.nodes.contains(where: { $0.type is any StoredSampleDemuxer.Type }) else { return (.containerPath, nil) }
        do throws(GraphError) {
            let nodes = try PipelineCompiler(graph: graph).makeNodes()
            let streams = try ContainerPath.demuxersRead(graph: graph, nodes: nodes).reduce(into: [:]) { all, r in all.merge(r.streams) { a, _ in a } }
            try ContainerPath.checkSinksTake(streams, graph: graph, nodes: nodes)
            return (.containerPath, nil)
        } catch {
            return (.pipeline, error.description)
        }
    }
}

/// A stream of stored (compressed) samples, read by the container library: what an edge carries
/// on the container path.
package struct StoredStream: Sendable {
    /// The stream's sample entry, as an MP4 writes it.
    package var format: MP4TrackFormat
    /// Sample `n` (from 0, in decode order), with its times and flags; `.end` after the last.
    /// Called on the run's thread, in order; it may block on a file's read only.
    package var sample: @Sendable (Int) -> SampleSource.Next

    package init(format: MP4TrackFormat, sample: @escaping @Sendable (Int) -> SampleSource.Next) {
        self.format = format
        self.sample = sample
    }
}

/// A source node that can give its outputs as stored streams, with no pipeline.
package protocol StoredSampleSource: Node {
    /// Its connected outputs' streams, read when the graph is compiled (instead of `build`), and
    /// what it would have posted as warnings. Throws as `build` would.
    func storedStreams() throws(GraphError) -> (streams: [String: StoredStream], warnings: [String])
}

/// A source of a file's bytes (`source.file`), whose file a ``StoredSampleDemuxer`` after it
/// reads itself on the container path.
package protocol StoredFileSource: Node {
    /// The file, opened for reading (once, read through this descriptor, which the node closes
    /// when it finishes), and its path as the graph gives it. Throws why not, when it is not a
    /// regular file that opens (the graph then runs as a pipeline, which says what is wrong).
    func openForStoredReading() throws(GraphError) -> (file: FileBytes, name: String)
}

/// A node that splits a file's bytes into stored streams (`demux`) and, on the container path,
/// reads them from the file's index itself.
package protocol StoredSampleDemuxer: Node {
    /// Its connected outputs' streams, read from `file` (`name`, its path, in messages); nil when the
    /// container path cannot give them exactly as the pipeline's demuxer would be asked to (not an
    /// MP4 or MOV, a codec or edit the writer does not copy, a track missing): the graph then
    /// runs as a pipeline, which reads it or says what is wrong with it.
    func storedStreams(reading file: FileBytes, name: String) -> [String: StoredStream]?
}

/// A sink node that can write stored streams, with no pipeline. Called, in order, on one thread:
/// ``configureStored(_:)`` when the graph is compiled (instead of `build`), `prepare`, then the
/// samples of every input in decode order across them, each input's end, and `finish`.
package protocol StoredSampleSink: Node {
    /// Whether it takes what each connected input will carry as stored; false runs the graph as
    /// a pipeline (which says why it does not, as a stream's caps are refused).
    func takesStored(_ inputs: [String: MP4TrackFormat]) -> Bool
    /// What each connected input will carry.
    func configureStored(_ inputs: [String: MP4TrackFormat]) throws(GraphError)
    /// One sample of input `port`; false when the input takes no more (a length limit reached):
    /// it is then ended.
    func writeStored(_ sample: SampleBuffer, port: String) throws(GraphError) -> Bool
    /// Input `port` has no more samples (its stream's end, or the run was stopped).
    func endStored(port: String) throws(GraphError)
}

extension StoredSampleSink {
    package func takesStored(_ inputs: [String: MP4TrackFormat]) -> Bool { true }
}

/// A graph run by the container library: every edge a stored stream from a
/// ``StoredSampleSource`` to a ``StoredSampleSink``, its samples merged in decode order and
/// written on the run's own thread. Cancelled or stopped between two samples: within one read
/// and one write.
final class ContainerPath: Sendable {
    /// One edge: its stream, where it goes, and its count in the run's statistics.
    private struct Link: Sendable {
        var edge: Graph.Edge
        var stream: StoredStream
        var sink: any StoredSampleSink
        var counter: RunStatistics.StoredCounter
        /// The file's edge into the demuxer the stream comes from: its bytes are counted there too.
        var file: RunStatistics.StoredCounter?
    }

    private let links: [Link]
    private let warnings: [(node: String, text: String)]
    /// For the places errors name.
    private let graph: Graph
    private let nodes: [(spec: Graph.NodeSpec, node: any Node)]
    /// Where the copy is, and what was asked of it.
    private enum Phase: Int, AtomicRepresentable {
        /// No sample written yet: a stop cancels, as a pipeline not yet playing is cancelled.
        case starting
        case copying
        /// Every input ends where it is, and the files complete.
        case stopAsked
        case cancelAsked
    }
    private let phase = Atomic(Phase.starting)

    /// Whether every node of `graph` can run on the container path, by their kinds: each a stored
    /// source or sink, or a file source feeding a demuxer alone; each edge from a source or
    /// demuxer to a sink, or from the file to its demuxer; each output feeding one input. (A
    /// demuxer's file decides the rest: ``demuxersRead(graph:nodes:)``.)
    static func fits(_ graph: Graph) -> Bool {
        guard !graph.nodes.isEmpty, !graph.edges.isEmpty else { return false }
        func ids(_ kind: (any Node.Type) -> Bool) -> Set<String> { Set(graph.nodes.filter { kind($0.type) }.map(\.id)) }
        let sources = ids { $0 is any StoredSampleSource.Type }, sinks = ids { $0 is any StoredSampleSink.Type }
        let demuxers = ids { $0 is any StoredSampleDemuxer.Type }, files = ids { $0 is any StoredFileSource.Type }
        guard sources.count + sinks.count + demuxers.count + files.count == graph.nodes.count,
              sources.union(sinks).union(demuxers).union(files).count == graph.nodes.count else { return false }
        var fed = Set<PortRef>()
        for e in graph.edges {
            let fits = files.contains(e.from.node) ? demuxers.contains(e.to.node) : sources.union(demuxers).contains(e.from.node) && sinks.contains(e.to.node)
            guard fits, fed.insert(e.from).inserted else { return false }
        }
        // Each demuxer fed by one file, which feeds nothing else, and feeding a sink.
        return demuxers.allSatisfy { d in
            let into = graph.edges(into: d)
            return into.count == 1 && graph.edges(from: into[0].from.node).count == 1 && !graph.edges(from: d).isEmpty
        }
    }

    /// Each demuxer's streams, read from its file (the demuxer's id and output → stream), and the
    /// file's edge into it. Throws why not, when one cannot give them on the container path (the
    /// graph then runs as a pipeline: a reason, not the run's failure).
    static func demuxersRead(graph: Graph, nodes: [(spec: Graph.NodeSpec, node: any Node)]) throws(GraphError)
        -> [(streams: [PortRef: StoredStream], fileEdge: Graph.Edge)] {
        var read: [(streams: [PortRef: StoredStream], fileEdge: Graph.Edge)] = []
        for (spec, node) in nodes {
            guard let demuxer = node as? any StoredSampleDemuxer else { continue }
            let at = "node \"\(spec.id)\" (\(spec.descriptor.type))"
            guard let edge = graph.edges(into: spec.id).first,
                  let source = nodes.first(where: { $0.spec.id == edge.from.node })?.node as? any StoredFileSource else {
                throw GraphError(.invalidGraph, at: at, "it is not fed by a file", node: spec.id)
            }
            let (file, name) = try source.openForStoredReading()
            guard let given = demuxer.storedStreams(reading: file, name: name) else {
                throw GraphError(.inputUnreadable, at: "\(at) reading \"\(name)\"",
                                 "not a whole MP4 or MOV whose connected tracks the MP4 writer copies exactly", node: spec.id)
            }
            var streams: [PortRef: StoredStream] = [:]
            for (port, stream) in given { streams[PortRef(node: spec.id, port: port)] = stream }
            read.append((streams, edge))
        }
        return read
    }

    /// Throws, naming the sink and what it was given, when a sink does not take its inputs'
    /// `streams` as stored.
    static func checkSinksTake(_ streams: [PortRef: StoredStream], graph: Graph, nodes: [(spec: Graph.NodeSpec, node: any Node)]) throws(GraphError) {
        for (spec, node) in nodes {
            guard let sink = node as? any StoredSampleSink else { continue }
            var formats: [String: MP4TrackFormat] = [:]
            for e in graph.edges(into: spec.id) { formats[e.to.port] = streams[e.from]?.format }
            guard !sink.takesStored(formats) else { continue }
            let given = formats.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.codecName)" }.joined(separator: ", ")
            throw GraphError(.invalidGraph, at: "node \"\(spec.id)\" (\(spec.descriptor.type))", "it does not take \(given) as stored", node: spec.id)
        }
    }

    /// Reads every source's streams and tells every sink what its inputs carry; nil, and why in
    /// `declined`, when a demuxer's file cannot be read on the container path or a sink does not
    /// take what it gives (the graph then runs as a pipeline).
    /// Throws, naming the node, what their `build` would have thrown.
    init?(graph: Graph, nodes: [(spec: Graph.NodeSpec, node: any Node)], statistics: RunStatistics, declined: inout String?) throws(GraphError) {
        let demuxed: [(streams: [PortRef: StoredStream], fileEdge: Graph.Edge)]
        do throws(GraphError) {
            demuxed = try Self.demuxersRead(graph: graph, nodes: nodes)
        } catch {
            declined = error.description
            return nil
        }
        var streams: [PortRef: StoredStream] = [:]
        var fileCounters: [String: RunStatistics.StoredCounter] = [:]
        for (given, edge) in demuxed {
            streams.merge(given) { a, _ in a }
            fileCounters[edge.to.node] = statistics.addStoredEdge(edge)
        }
        var warnings: [(String, String)] = []
        for (spec, node) in nodes {
            guard let source = node as? any StoredSampleSource else { continue }
            do {
                let (given, said) = try source.storedStreams()
                for (port, stream) in given { streams[PortRef(node: spec.id, port: port)] = stream }
                warnings += said.map { (spec.id, $0) }
            } catch {
                throw GraphError(error, node: spec.id)
            }
        }
        do throws(GraphError) {
            try Self.checkSinksTake(streams, graph: graph, nodes: nodes)
        } catch {
            declined = error.description
            return nil
        }
        var links: [Link] = []
        for (spec, node) in nodes {
            guard let sink = node as? any StoredSampleSink else { continue }
            var formats: [String: MP4TrackFormat] = [:]
            for e in graph.edges(into: spec.id) {
                guard let stream = streams[e.from] else {
                    throw GraphError(.runFailed, at: "node \"\(e.from.node)\"", "\(e.from) gave no stream", node: e.from.node)
                }
                formats[e.to.port] = stream.format
                links.append(Link(edge: e, stream: stream, sink: sink, counter: statistics.addStoredEdge(e), file: fileCounters[e.from.node]))
            }
            do {
                try sink.configureStored(formats)
            } catch {
                throw GraphError(error, node: spec.id)
            }
        }
        self.links = links
        self.warnings = warnings
        self.graph = graph
        self.nodes = nodes
    }

    /// Asks the copy to end where it is, its files complete; false when it has written nothing yet
    /// (then cancel it: a stop before any sample leaves nothing to complete).
    func requestStop() -> Bool {
        let (done, now) = phase.compareExchange(expected: .copying, desired: .stopAsked, ordering: .relaxed)
        return done || now == .stopAsked
    }

    func requestCancel() { phase.store(.cancelAsked, ordering: .relaxed) }

    /// Runs the copy to its end, a stop, a cancel or a failure (on the run's thread).
    func run(logger: Logger) -> BusWatcher.Outcome {
        for (node, text) in warnings { logger.warning("\(text)", metadata: ["node": .string(node)]) }
        var next = Array(repeating: 0, count: links.count)
        var pending: [SampleBuffer?] = Array(repeating: nil, count: links.count)
        var open = Array(repeating: true, count: links.count)
        var wrote = false
        func end(_ i: Int) throws(GraphError) {
            open[i] = false
            pending[i] = nil
            do { try links[i].sink.endStored(port: links[i].edge.to.port) } catch { throw GraphError(error, node: links[i].edge.to.node) }
        }
        do throws(GraphError) {
            while true {
                switch phase.load(ordering: .relaxed) {
                case .starting, .copying: break
                case .stopAsked:
                    for i in links.indices where open[i] { try end(i) }
                    return .endOfStream
                case .cancelAsked: return .cancelled
                }
                // Each open input's next sample, then the earliest of them in decode time.
                var earliest: (index: Int, time: MediaTime)?
                for i in links.indices where open[i] {
                    if pending[i] == nil {
                        switch links[i].stream.sample(next[i]) {
                        case .sample(let s):
                            pending[i] = s
                            next[i] += 1
                        case .end:
                            try end(i)
                            continue
                        case .failed(let message):
                            let id = links[i].edge.from.node
                            throw GraphError(.runFailed, at: BusWatcher.location(of: id, graph: graph, nodes: nodes), message, node: id)
                        }
                    }
                    guard let s = pending[i] else { continue }
                    let time = s.decodeTime ?? s.presentationTime ?? .zero
                    if earliest.map({ time < $0.time }) ?? true { earliest = (i, time) }
                }
                guard let (i, _) = earliest, let sample = pending[i] else { return .endOfStream }
                pending[i] = nil
                links[i].counter.add(sample)
                links[i].file?.add(bytes: sample.byteCount)
                let more: Bool
                do { more = try links[i].sink.writeStored(sample, port: links[i].edge.to.port) } catch { throw GraphError(error, node: links[i].edge.to.node) }
                if !more { try end(i) }
                if !wrote {
                    // Something is written: from now on a stop completes the files.
                    wrote = true
                    _ = phase.compareExchange(expected: .starting, desired: .copying, ordering: .relaxed)
                }
            }
        } catch {
            return .failed(error)
        }
    }
}
