import GraphKitCore

/// What the network nodes (`source.srt`, `sink.srt`, `sink.rtmp`, `source.rtsp`) share, in one
/// place: a URL's host and port read once (the port's range checked at the node's `url`
/// parameter), the form messages name it by (``shown``: never its credentials), the connect
/// `timeout` parameter, and how their elements' common failures (nothing answered, no answer in
/// time, a host that cannot be resolved) read in the graph's terms, GStreamer's own text kept as
/// the cause with every URL in it scrubbed.
struct NetworkEndpoint: Sendable {
    /// The URL as given, credentials included: for the element only, never for a message.
    let url: String
    /// How messages name it: without user information, secret query items, or whatever else
    /// the node hides (an RTMP stream key).
    let shown: String
    let host: String
    /// The URL's port; nil when it names none (the scheme's default applies).
    let port: Int?

    /// Reads `url` (`scheme://[user[:password]@]HOST[:PORT][/…]`, HOST a name, an IPv4 address
    /// or `[IPv6]`), which the parameter's format has checked; a port outside 1…65535 is refused
    /// at the node's `url` parameter, naming the URL as `shown` (``RedactedURL`` by default).
    init(_ url: String, shown: String? = nil, context: NodeContext) throws(GraphError) {
        self.url = url
        self.shown = shown ?? RedactedURL.text(url)
        let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        var authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        var host = authority, port: Int?
        if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
            host = authority[..<colon]
            guard let p = Int(authority[authority.index(after: colon)...]), (1...65535).contains(p) else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "url"), "\(self.shown) has no port from 1 to 65535", node: context.id)
            }
            port = p
        }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        self.host = String(host)
        self.port = port
    }

    /// The `timeout` parameter of a node that connects: seconds to wait for the peer to answer.
    static func connectTimeout(default seconds: Int, help: String = "seconds to wait for the server to answer before the run fails") -> Parameter<Int> {
        Parameter<Int>("timeout", 1...300, default: seconds, help: help)
    }

    /// The failures every network element may post, whatever its protocol.
    enum Failure: Sendable {
        /// Nothing answered there (connection refused, no route).
        case unreachable
        /// Something took the connection and did not answer in time.
        case timedOut
        /// The host name cannot be resolved.
        case unresolved
    }

    /// GStreamer's message and debug text of an element's failure, as one text.
    static func text(_ message: String, debug: String?) -> String {
        [message, debug ?? ""].joined(separator: "\n")
    }

    /// Which of the common failures `text` (``text(_:debug:)``) says, nil for another.
    static func failure(in text: String) -> Failure? {
        if text.contains("resolve") || text.contains("Failed to parse host") || text.contains("Name or service not known") { return .unresolved }
        if text.contains("Connection refused") || text.contains("Could not connect") || text.contains("Failed to connect") { return .unreachable }
        if text.contains("timed out") || text.contains("Timeout") || text.contains("timeout") { return .timedOut }
        return nil
    }

    /// The run's error (70) saying `what`, with GStreamer's `text` as the cause: every URL in it
    /// scrubbed, and this one, should GStreamer quote it, replaced by ``shown``.
    func error(_ what: String, text: String, node: String, at location: String) -> GraphError {
        GraphError(.runFailed, at: location, what, node: node, cause: scrubbed(text))
    }

    /// `text` without this URL's credentials or anything else ``shown`` hides.
    func scrubbed(_ text: String) -> String {
        RedactedURL.scrub(text.replacing(url, with: shown))
    }
}
