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
    /// Buffers that reached the node and that it let go rather than make the graph wait: a
    /// display's frames not shown (dropped while its window was still busy with an earlier one,
    /// late, or arriving after the window was closed). Absent for nodes that never drop.
    public var dropped: Int?

    package init(id: String, type: String, buffersIn: Int, buffersOut: Int, bytesIn: Int, bytesOut: Int,
                 shown: Int? = nil, dropped: Int? = nil) {
        self.id = id
        self.type = type
        self.buffersIn = buffersIn
        self.buffersOut = buffersOut
        self.bytesIn = bytesIn
        self.bytesOut = bytesOut
        self.shown = shown
        self.dropped = dropped
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
    /// Buffers dropped because the connection was full (live sources only).
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
