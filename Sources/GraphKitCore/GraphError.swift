/// The one error type of GraphKit.
///
/// Every failure, from a misspelt key in a graph file to a corrupt frame in the middle of a run,
/// is a `GraphError`: a ``Code`` (which also fixes the process exit status of `graphctl`), one
/// or more ``Problem``s each with a location a user can find, and the underlying cause.
public struct GraphError: Error, Sendable, Equatable, Codable, CustomStringConvertible {
    /// What kind of failure this is. A small struct rather than an enum so it can grow.
    public struct Code: Hashable, Sendable, Codable, CustomStringConvertible {
        public let name: String
        /// The exit status `graphctl` uses for it (see GRAPH-FORMAT.md).
        public let exitStatus: Int32

        public static let usage = Code(name: "usage", exitStatus: 64)
        public static let invalidGraph = Code(name: "invalid graph", exitStatus: 65)
        public static let inputUnreadable = Code(name: "input unreadable", exitStatus: 66)
        public static let missingPlugin = Code(name: "missing plugin", exitStatus: 69)
        public static let runFailed = Code(name: "run failed", exitStatus: 70)
        public static let outputUnwritable = Code(name: "output unwritable", exitStatus: 73)
        /// A camera or microphone another program holds (EX_TEMPFAIL: try again once it is let
        /// go). `AVCaptureSession` takes it as an interruption, and tries again.
        public static let deviceBusy = Code(name: "device busy", exitStatus: 75)
        /// A GraphKit plugin cannot be used: not a plugin, built for another GraphKit or compiler,
        /// a node type that exists already, or a registration that failed (EX_CONFIG).
        public static let pluginUnusable = Code(name: "plugin unusable", exitStatus: 78)
        public static let cancelled = Code(name: "cancelled", exitStatus: 130)

        public var description: String { name }
    }

    /// One thing wrong, and where.
    public struct Problem: Sendable, Equatable, Codable, CustomStringConvertible {
        /// A path into the graph document (`nodes.enc.params.bitrate`, `edges[2].to`), an override
        /// (`--set enc.bitrate`), `line 3, column 7` for malformed JSON, or `node "enc"` at run time.
        public var location: String?
        public var message: String

        public init(_ location: String?, _ message: String) {
            self.location = location
            self.message = message
        }

        public var description: String {
            location.map { "\($0): \(message)" } ?? message
        }
    }

    public var code: Code
    public var problems: [Problem]
    /// The node at fault, when one is.
    public var node: String?
    /// The underlying cause, for example a GStreamer debug string.
    public var cause: String?

    public init(_ code: Code, _ problems: [Problem], node: String? = nil, cause: String? = nil) {
        precondition(!problems.isEmpty, "a GraphError names at least one problem")
        self.code = code
        self.problems = problems
        self.node = node
        self.cause = cause
    }

    public init(_ code: Code, at location: String? = nil, _ message: String, node: String? = nil, cause: String? = nil) {
        self.init(code, [Problem(location, message)], node: node, cause: cause)
    }

    /// The first problem's message.
    public var message: String { problems[0].message }

    public var description: String {
        problems.map(\.description).joined(separator: "\n")
    }
}

extension GraphError {
    /// `error` as a GraphError of `node`: a GraphError keeps its code and location (and gains the
    /// node when it names none); anything else is a run failure located at the node.
    public init(_ error: any Error, node: String) {
        if var e = error as? GraphError {
            if e.node == nil { e.node = node }
            self = e
        } else {
            self.init(.runFailed, at: "node \"\(node)\"", "\(error)", node: node)
        }
    }
}
