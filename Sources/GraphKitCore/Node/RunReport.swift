/// What a run did: how it ended, how long it took, and what flowed where.
public struct RunReport: Sendable, Codable {
    public var status: RunStatus
    /// Wall-clock seconds from start to stop.
    public var wallSeconds: Double
    /// Media seconds that reached the graph's final nodes.
    public var mediaSeconds: Double
    public var nodes: [NodeStatistics]
    public var edges: [EdgeStatistics]
    /// What each sink wrote.
    public var outputs: [OutputReport]
    public var error: GraphError?

    /// Media seconds per wall second.
    public var speed: Double { wallSeconds > 0 ? mediaSeconds / wallSeconds : 0 }

    /// The engine makes reports (GraphKitRuntime).
    package init(status: RunStatus, wallSeconds: Double, mediaSeconds: Double, nodes: [NodeStatistics],
                 edges: [EdgeStatistics], outputs: [OutputReport], error: GraphError?) {
        self.status = status
        self.wallSeconds = wallSeconds
        self.mediaSeconds = mediaSeconds
        self.nodes = nodes
        self.edges = edges
        self.outputs = outputs
        self.error = error
    }

    /// Every place the run let buffers go rather than make a producer wait, with how many: each
    /// edge of a live capture source that was full, and each display that did not show every
    /// frame. Nothing else drops to keep up; in particular nothing code appended (`source.app`).
    /// Empty when nothing was dropped.
    public var drops: [DropSite] {
        var sites = edges.filter { $0.drops > 0 }.map {
            DropSite(node: String($0.from.prefix { $0 != "." }), edge: "\($0.from) -> \($0.to)", buffers: $0.drops, reason: .liveSourceAhead)
        }
        for n in nodes where n.shown != nil && (n.dropped ?? 0) > 0 {
            sites.append(DropSite(node: n.id, edge: nil, buffers: n.dropped ?? 0, reason: .displayBusy))
        }
        return sites
    }

    /// Every interruption of a live source the run went on through (``NodeStatistics/gaps``),
    /// with its node, in the order the nodes are listed. Empty when no peer went away.
    public var gaps: [(node: String, gap: StreamGap)] {
        nodes.flatMap { n in (n.gaps ?? []).map { (n.id, $0) } }
    }

    /// Buffers dropped anywhere in the run (the sum of ``drops``): 0 when every buffer produced
    /// reached where the graph sends it.
    public var droppedBuffers: Int { drops.reduce(0) { $0 + $1.buffers } }
}

/// A place where a run dropped buffers, and how many (see ``RunReport/drops``).
public struct DropSite: Sendable, Codable, Equatable {
    public enum Reason: String, Sendable, Codable {
        /// A live capture source's edge was full: what it feeds did not keep up with the source's
        /// clock, and the oldest buffer waiting was let go (`alwaysDiscardsLateVideoFrames`).
        /// Those buffers are missing from what the graph wrote.
        case liveSourceAhead
        /// A display (`sink.preview`) did not show them: busy with an earlier frame, late, or
        /// closed. What the graph records beside it has them.
        case displayBusy
    }

    /// The node whose policy dropped them: the live source, or the display.
    public var node: String
    /// The edge, as `from -> to`, for a live source's drops; nil for a display's.
    public var edge: String?
    public var buffers: Int
    public var reason: Reason

    public init(node: String, edge: String?, buffers: Int, reason: Reason) {
        self.node = node
        self.edge = edge
        self.buffers = buffers
        self.reason = reason
    }
}

public struct NodeStatistics: Sendable, Codable {
    public var id: String
    public var type: String
    public var buffersIn: Int
    public var buffersOut: Int
    public var bytesIn: Int
    public var bytesOut: Int
    /// Frames a display node put in its window (`sink.preview`); absent for other nodes.
    public var shown: Int?
    /// Buffers the node let go rather than make the graph wait: a display's frames not shown
    /// (dropped while its window was still busy with an earlier one, late, or arriving after the
    /// window was closed); a live capture source's buffers dropped at its full edges (the sum of
    /// those edges' `drops`). Absent for nodes that never drop.
    public var dropped: Int?
    /// Where a live source's stream was interrupted and the run went on (`source.srt` with
    /// `reconnect`): absent for nodes that were never interrupted.
    public var gaps: [StreamGap]?

    package init(id: String, type: String, buffersIn: Int, buffersOut: Int, bytesIn: Int, bytesOut: Int,
                 shown: Int? = nil, dropped: Int? = nil, gaps: [StreamGap]? = nil) {
        self.id = id
        self.type = type
        self.buffersIn = buffersIn
        self.buffersOut = buffersOut
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
        self.shown = shown
        self.dropped = dropped
        self.gaps = gaps
    }
}

/// A stretch of a live stream in which nothing arrived because the peer was gone (`source.srt`
/// with `reconnect`): when it began and how long it lasted, in wall-clock seconds from the
/// stream's first bytes. What a recording holds has the gap in its times.
public struct StreamGap: Sendable, Codable, Equatable {
    /// Seconds from the stream's first bytes to the last bytes before the gap.
    public var start: Double
    /// Seconds without bytes: until the first bytes after it, or until the node gave up waiting.
    public var seconds: Double
    /// Whether the peer came back; false for a final gap that ended the stream.
    public var resumed: Bool

    public init(start: Double, seconds: Double, resumed: Bool) {
        self.start = start
        self.seconds = seconds
        self.resumed = resumed
    }
}

public struct EdgeStatistics: Sendable, Codable {
    public var from: String
    public var to: String
    public var capacity: EdgeCapacity
    /// Buffers that passed.
    public var buffers: Int
    /// The deepest the connection was seen, in each unit.
    public var maxBuffers: Int
    public var maxBytes: Int
    public var maxSeconds: Double
    /// Times the connection was full: its producer waited (offline) or dropped (live).
    public var waits: Int
    /// Buffers dropped because the connection was full: what entered it, less what left it and
    /// what it still held when the run stopped. Only an edge leaving a live capture source drops;
    /// every other edge makes its producer wait, and reports 0.
    public var drops: Int
    /// Whether the edge ran through a bounded queue on its own thread; false for a direct link,
    /// which holds no buffer (see GraphRun's edge policy).
    public var queued: Bool

    package init(from: String, to: String, capacity: EdgeCapacity, buffers: Int, maxBuffers: Int, maxBytes: Int,
                 maxSeconds: Double, waits: Int, drops: Int, queued: Bool) {
        self.from = from
        self.to = to
        self.capacity = capacity
        self.buffers = buffers
        self.maxBuffers = maxBuffers
        self.maxBytes = maxBytes
        self.maxSeconds = maxSeconds
        self.waits = waits
        self.drops = drops
        self.queued = queued
    }
}
