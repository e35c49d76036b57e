import GraphKitCore
import GraphKitRuntime

/// `sink.rtmp`: pushes H.264 and AAC in FLV to an RTMP server (`flvmux ! rtmp2sink`), as a
/// streaming platform or a media server (nginx-rtmp, SRS, MediaMTX) takes it: `rtmp://` or
/// `rtmps://` (TLS), `HOST[:PORT]/APP/STREAM`.
///
/// The stream key (the URL's last part) is a credential: messages name the server and the
/// application (`rtmp://127.0.0.1:1935/live/…`), never the key, and a malformed URL is refused
/// without being quoted. Samples are sent at their time (the sink follows the clock), as a live
/// stream is. A server that cannot be reached fails the run (70) naming the URL so shown, within
/// `timeout` seconds; so does one that takes the connection but has not accepted the stream
/// within `timeout` seconds of the run's start (it answers garbage, or nothing, after the TCP
/// connection: GStreamer 1.22's `rtmp2sink` would wait for it for ever). A watchdog reads
/// `rtmp2sink`'s statistics, which stay empty until the server has accepted the publish.
///
/// Example:
/// ```json
/// "out": { "type": "sink.rtmp", "params": { "url": "rtmp://127.0.0.1:1935/live/stream" } }
/// ```
public final class RTMPSinkNode: ElementNode, ExplainsFailures, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.rtmp",
        category: .sink,
        summary: "Pushes H.264 and AAC in FLV to an RTMP or RTMPS server",
        inputs: [
            PortDescriptor("audio", FormatSet([.aac]), presence: .optional, help: "AAC audio"),
            PortDescriptor("video", FormatSet([.h264]), presence: .optional, help: "H.264 video"),
        ],
        parameters: [url, timeout],
        requiresAnInput: true,
        example: #"{ "type": "sink.rtmp", "params": { "url": "rtmp://127.0.0.1:1935/live/stream" } }"#
    )

    public static let url = RequiredParameter<String>("url", format: StringFormat(
        pattern: #"^rtmps?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:[0-9]{1,5})?/[^/?#@\s]+/[^?#@\s]+$"#, minLength: 1,
        expected: "rtmp://HOST[:PORT]/APP/STREAM or rtmps://… (no user or query)", shown: .hidden),
        help: "the server, application and stream key; the key is never shown")
    public static let timeout = NetworkEndpoint.connectTimeout(default: 10)

    let context: NodeContext
    /// The server, shown without the stream key (`rtmp://127.0.0.1:1935/live/…`).
    let endpoint: NetworkEndpoint
    private let watchdog = ConnectionWatchdog()

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let location = try context.parameters.value(Self.url)
        let schemeEnd = location.hasPrefix("rtmps://") ? 8 : 7
        let parts = location.dropFirst(schemeEnd).split(separator: "/", maxSplits: 1)
        let app = parts.count > 1 ? parts[1].split(separator: "/").first.map(String.init) ?? "" : ""
        endpoint = try NetworkEndpoint(location, shown: "\(location.prefix(schemeEnd))\(parts.first ?? "")/\(app)/…", context: context)
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let mux = try bin.make("flvmux", name: "mux", ["streamable": true])
        let sink = try bin.make("rtmp2sink", name: "rtmp2sink", ["location": endpoint.url, "timeout": context.parameters[Self.timeout]])
        watchdog.watch(sink, failing: bin.nodeFailure())
        try bin.link(mux, sink)
        for port in ["audio", "video"] where context.connectedInputs.contains(port) {
            try bin.expose(input: port, requesting: port, from: mux)
        }
    }

    /// Starts the watchdog: the server must have accepted the stream within `timeout` seconds.
    public func prepare() throws(GraphError) {
        let deadline = ContinuousClock.now + .seconds(context.parameters[Self.timeout])
        watchdog.start("rtmp publish watch", state: deadline) { [weak self] parts, deadline in
            self?.keepWatching(parts, until: deadline) ?? false
        }
    }

    /// One step of the watchdog: false once the stream is accepted, or the run was failed for
    /// want of it.
    private func keepWatching(_ parts: ConnectionWatchdog.Parts, until deadline: ContinuousClock.Instant) -> Bool {
        // Empty statistics (no chunk size agreed, nothing sent) until the publish is accepted.
        if Self.published(parts.element.property("stats") ?? "") { return false }
        guard ContinuousClock.now >= deadline else { return true }
        parts.fail(GraphError(.runFailed, "the RTMP server \"\(endpoint.shown)\" did not accept the stream within \(context.parameters[Self.timeout]) s "
                              + "(something took the connection, but did not answer as an RTMP server does)"), parts.element)
        return false
    }

    /// Whether `rtmp2sink`'s statistics (`GstRtmpConnectionStats`) say a connection is up: its
    /// peer's chunk size is set once the server has answered the connect.
    /// (The property's text is GStreamer's serialization, with `\` before `=`, `(`, `,`: read
    /// without them.)
    static func published(_ stats: String) -> Bool {
        let plain = stats.filter { $0 != "\\" }
        return plain.contains("in-chunk-size=(uint)") && !plain.contains("in-chunk-size=(uint)0,")
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) { watchdog.stop() }

    public func explainFailure(_ message: String, debug: String?, location: String) -> GraphError? {
        let text = NetworkEndpoint.text(message, debug: debug)
        let shown = endpoint.shown
        let what: String
        switch NetworkEndpoint.failure(in: text) {
        case .unreachable?: what = "the RTMP server \"\(shown)\" could not be reached (nothing answered there)"
        case .timedOut?: what = "the RTMP server \"\(shown)\" did not answer within \(context.parameters[Self.timeout]) s"
        case .unresolved?: what = "the RTMP server \"\(shown)\": its host name cannot be resolved"
        case nil: what = "the RTMP server \"\(shown)\" failed: \(endpoint.scrubbed(message))"
        }
        // GStreamer's text may quote the location with its key: only the key-free form is kept.
        return endpoint.error(what, text: text, node: context.id, at: location)
    }
}
