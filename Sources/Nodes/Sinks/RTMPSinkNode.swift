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
/// With `reconnect` (seconds; 0, the default, is off), a server that goes away after accepting
/// the stream does not end the run: GStreamer 1.22's `rtmp2sink` cannot connect again, so the
/// node replaces it with a new one (a second after each that failed) until one is accepted, behind `gkflowguard`
/// (which takes the failed sink's errors, so the muxer goes on), and the new one is given the
/// stream from its next key frame (one is asked of the encoder). What is sent meanwhile is
/// dropped, as on any live link; each outage is a gap in the run's report; a server not back
/// within `reconnect` seconds fails the run naming it.
///
/// Example:
/// ```json
/// "out": { "type": "sink.rtmp", "params": { "url": "rtmp://127.0.0.1:1935/live/stream" } }
/// ```
public final class RTMPSinkNode: ElementNode, ExplainsFailures, StopAware, PlaysEncoderPriming, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.rtmp",
        category: .sink,
        summary: "Pushes H.264 and AAC in FLV to an RTMP or RTMPS server",
        inputs: [
            PortDescriptor("audio", FormatSet([.aac]), presence: .optional, help: "AAC audio"),
            PortDescriptor("video", FormatSet([.h264]), presence: .optional, help: "H.264 video"),
        ],
        parameters: [url, timeout, reconnect],
        requiresAnInput: true,
        example: #"{ "type": "sink.rtmp", "params": { "url": "rtmp://127.0.0.1:1935/live/stream" } }"#
    )

    public static let url = RequiredParameter<String>("url", format: StringFormat(
        pattern: #"^rtmps?://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:[0-9]{1,5})?/[^/?#@\s]+/[^?#@\s]+$"#, minLength: 1,
        expected: "rtmp://HOST[:PORT]/APP/STREAM or rtmps://… (no user or query)", shown: .urlWithoutKey),
        help: "the server, application and stream key; the key is never shown")
    public static let timeout = NetworkEndpoint.connectTimeout(default: 10)
    public static let reconnect = Parameter<Int>("reconnect", 0...86_400, default: 0,
        help: "seconds the run waits for a server that went away to come back, connecting again a second after each failed attempt (what is sent meanwhile is dropped; the stream goes on from a key frame); 0: its leaving fails the run")

    /// FLV has no edit list: the sound plays from its first sample (an AAC encoder's priming
    /// takes the place of input it leaves out; ``PlaysEncoderPriming``).
    public static func playsEncoderPriming(input: String, parameters: Parameters) -> Bool { true }

    let context: NodeContext
    /// The server, shown without the stream key (`rtmp://127.0.0.1:1935/live/…`).
    let endpoint: NetworkEndpoint
    private let watchdog = ConnectionWatchdog()
    let reconnectSeconds: Int
    /// The elements a reconnection works on, and what it knows (``keepReconnecting(_:_:)``).
    private struct Link {
        var bin: BinBuilder?
        var guardElement: Element?
        var sink: Element?
        var made = 0
        /// When the stream was first accepted (nil: not yet).
        var first: ContinuousClock.Instant?
        /// When the connection was found lost (nil: up); the last sink made since, and when;
        /// whether it failed.
        var lost: ContinuousClock.Instant?
        var attempt: ContinuousClock.Instant?
        var attemptFailed = false
        /// Whether the sink is linked in (a new one is once accepted); whether the stream ended,
        /// or the run stops; what the last failed attempt posted.
        var linked = true
        var ended = false
        var stopping = false
        var lastFailure: String?
    }
    private let link = Guarded(Link())
    private let seen = Guarded<[StreamGap]>([])
    /// What ``refusedFlood(_:)`` counts: the server's bytes at the start of the current second,
    /// the sockets to its port before the node connected (others'), and the node's own.
    private struct Received {
        var since = ContinuousClock.now
        var count = 0
        var before: Set<Int32> = []
        var own: Set<Int32> = []
    }
    private let received = Guarded(Received())
    /// The server's TCP port (the scheme's default when the URL names none).
    private var serverPort: Int { endpoint.port ?? (endpoint.url.hasPrefix("rtmps:") ? 443 : 1935) }

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let location = try context.parameters.value(Self.url)
        endpoint = try NetworkEndpoint(location, shown: RedactedURL.withoutKey(location), context: context)
        reconnectSeconds = context.parameters[Self.reconnect]
    }

    public var gaps: [StreamGap] { seen.withLock { $0 } }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let mux = try bin.make("flvmux", name: "mux", ["streamable": true])
        let sink = try bin.make("rtmp2sink", name: "rtmp2sink", ["location": endpoint.url, "timeout": context.parameters[Self.timeout]])
        let before = PeerSockets.connected(toPort: serverPort)
        received.withLock { $0.before = before }
        watchdog.watch(sink, failing: bin.nodeFailure())
        if reconnectSeconds > 0 {
            let guardElement = try bin.make("gkflowguard", name: "guard")
            try bin.link(mux, guardElement, sink)
            guardElement.onEndOfStream { [self] in link.withLock { $0.ended = true } }
            link.withLock { ($0.bin, $0.guardElement, $0.sink) = (bin, guardElement, sink) }
        } else {
            try bin.link(mux, sink)
            link.withLock { $0.sink = sink }
        }
        for port in ["audio", "video"] where context.connectedInputs.contains(port) {
            try bin.expose(input: port, requesting: port, from: mux)
        }
    }

    /// Starts the watchdog: the server must have accepted the stream within `timeout` seconds;
    /// with `reconnect`, it then watches for the connection's loss until the run ends.
    public func prepare() throws(GraphError) {
        let deadline = ContinuousClock.now + .seconds(context.parameters[Self.timeout])
        watchdog.start("rtmp publish watch", state: (deadline, ContinuousClock.Instant?.none, false)) { [weak self] parts, watch in
            guard let self else { return false }
            if refusedFlood(parts) { return false }
            if let first = watch.1 { return keepReconnecting(parts, since: first) }
            if watch.2 { return true }
            guard keepWatching(parts, until: watch.0) else {
                // Accepted (or failed for want of it): the watch goes on over what the server
                // sends, and with reconnect over the connection.
                guard let first = link.withLock({ $0.first }) else { return false }
                if reconnectSeconds > 0 { watch.1 = first } else { watch.2 = true }
                return true
            }
            return true
        }
    }

    /// One step of the watchdog: false once the stream is accepted, or the run was failed for
    /// want of it.
    private func keepWatching(_ parts: ConnectionWatchdog.Parts, until deadline: ContinuousClock.Instant) -> Bool {
        // Empty statistics (no chunk size agreed, nothing sent) until the publish is accepted.
        if Self.published(parts.element.property("stats") ?? "") {
            link.withLock { $0.first = .now }
            return false
        }
        guard ContinuousClock.now >= deadline else { return true }
        parts.fail(GraphError(.runFailed, "the RTMP server \"\(endpoint.shown)\" did not accept the stream within \(context.parameters[Self.timeout]) s "
                              + "(something took the connection, but did not answer as an RTMP server does)"), parts.element)
        return false
    }

    /// What a server may send a publisher in a second (issue 73, class 3): acknowledgements,
    /// pings and status are a few hundred bytes. rtmp2sink answers each ping and, while the
    /// server's bytes keep coming, writes nothing: a server flooding pings took 2.6 GB in 12 s
    /// (its answers held) and the stream stopped. Past this in any second, the run fails.
    static let mostReceivedASecond = 256 << 10

    /// Fails the run when the server sent more than ``mostReceivedASecond`` a second since the
    /// window began (a second, or the time since the last look when longer). What it sent is
    /// the kernel's count on the node's socket to its port, found once (again after a
    /// reconnection): rtmp2sink's own statistics wait on the connection that a flood keeps
    /// busy (measured: read every 2 s instead of every 100 ms).
    private func refusedFlood(_ parts: ConnectionWatchdog.Parts) -> Bool {
        let sink = link.withLock { $0.sink } ?? parts.element
        let now = ContinuousClock.now
        let (flooded, own): (Bool, Set<Int32>) = received.withLock { w in
            w.own = PeerSockets.stillConnected(w.own, port: serverPort)
            if w.own.isEmpty { w.own = PeerSockets.connected(toPort: serverPort).subtracting(w.before) }
            let bytes = PeerSockets.bytesReceived(w.own, port: serverPort)
            // A new connection (reconnect) counts from 0 again.
            guard bytes >= w.count else { (w.since, w.count) = (now, bytes); return (false, w.own) }
            let seconds = (now - w.since).inSeconds
            let flooded = Double(bytes - w.count) > Double(Self.mostReceivedASecond) * max(seconds, 1)
            if seconds >= 1 { (w.since, w.count) = (now, bytes) }
            return (flooded, w.own)
        }
        guard flooded else { return false }
        parts.fail(GraphError(.runFailed, "the RTMP server \"\(endpoint.shown)\" sent this publisher more than "
                              + "\(Self.mostReceivedASecond >> 10) KiB within a second (a flood: a server sends a publisher only "
                              + "acknowledgements, pings and status); the stream was stopped"), sink)
        // rtmp2sink cannot stop while the flood keeps its connection busy: it is cut.
        PeerSockets.shutDown(own, port: serverPort)
        return true
    }

    /// Whether `rtmp2sink`'s statistics (`GstRtmpConnectionStats`) say a connection is up: its
    /// peer's chunk size is set once the server has answered the connect.
    /// (The property's text is GStreamer's serialization, with `\` before `=`, `(`, `,`: read
    /// without them.)
    static func published(_ stats: String) -> Bool {
        let plain = stats.filter { $0 != "\\" }
        return plain.contains("in-chunk-size=(uint)") && !plain.contains("in-chunk-size=(uint)0,")
    }

    /// One step of the watch after the stream was first accepted (`first`), with `reconnect`:
    /// a connection found lost (``failureIsRecovered(_:debug:)``) is replaced by a new sink, one
    /// a second after each that failed (and one that neither failed nor was accepted within
    /// `timeout` seconds), up to `reconnect` seconds. A new sink connects unlinked, so a slow
    /// connect never holds the stream up; it is linked in once the server accepted it. The
    /// outage is then a gap.
    private func keepReconnecting(_ parts: ConnectionWatchdog.Parts, since first: ContinuousClock.Instant) -> Bool {
        let now = ContinuousClock.now
        let state = link.withLock { $0 }
        guard !state.stopping else { return false }
        guard let lost = state.lost, let guardElement = state.guardElement, let bin = state.bin else { return true }
        let gap = { (resumed: Bool) in
            self.seen.withLock { $0.append(StreamGap(start: (lost - first).inSeconds, seconds: (now - lost).inSeconds, resumed: resumed)) }
        }
        if state.ended {
            // The stream ended while the server was away: a sink not linked in gets its end here.
            if let sink = state.sink, !state.linked { bin.endInput(of: sink) }
            gap(false)
            link.withLock { $0.lost = nil }
            return false
        }
        if state.attempt != nil, !state.attemptFailed, !state.linked, let sink = state.sink, Self.published(sink.property("stats") ?? "") {
            do throws(GraphError) {
                // (Sound alone has no key frame to wait for: each of its packets starts anew.)
                if context.connectedInputs.contains("video") { try guardElement.set("wait-for-keyframe", true) }
                try bin.link(guardElement, sink)
            } catch {
                parts.fail(error, guardElement)
                return false
            }
            guardElement.requestKeyFrame(at: .zero)
            gap(true)
            link.withLock { ($0.lost, $0.attempt, $0.linked) = (nil, nil, true) }
            return true
        }
        guard (now - lost).inSeconds < Double(reconnectSeconds) else {
            gap(false)
            link.withLock { $0.lost = nil }
            let why = state.lastFailure.map { " (the last attempt: \($0))" } ?? ""
            parts.fail(GraphError(.runFailed, "the RTMP server \"\(endpoint.shown)\" went away and was not back within \(reconnectSeconds) s\(why)"), guardElement)
            return false
        }
        let waited = (now - (state.attempt ?? lost)).inSeconds
        let stuck = waited >= Double(context.parameters[Self.timeout])
        guard state.attempt == nil || state.attemptFailed || stuck, waited >= 1 else { return true }
        do throws(GraphError) { try replaceSink(state) } catch {
            parts.fail(error, guardElement)
            return false
        }
        return true
    }

    /// Puts a new `rtmp2sink` in the failed one's place, not linked yet: it connects by itself
    /// (`async-connect`), and ``keepReconnecting(_:since:)`` links it in once it is accepted.
    private func replaceSink(_ state: Link) throws(GraphError) {
        guard let bin = state.bin else { return }
        if let old = state.sink { bin.remove(old) }
        let made = state.made + 1
        let sink = try bin.make("rtmp2sink", name: "rtmp2sink\(made)",
                                ["location": endpoint.url, "timeout": context.parameters[Self.timeout], "async": false])
        // The attempt is known before it can fail: an error it posts at once counts against it.
        link.withLock { l in
            (l.sink, l.made, l.attempt, l.attemptFailed, l.linked) = (sink, made, .now, false, false)
        }
        sink.syncStateWithParent()
    }

    /// With `reconnect`, once the stream was accepted: the connection's loss (rtmp2sink's
    /// "Connection error") and, while the server is away, whatever a new sink posts (refused,
    /// not answering, the stream key still taken by the old session) are the node's to handle.
    /// Its own failures (the watch's: "the RTMP server …") are not.
    public func failureIsRecovered(_ message: String, debug: String?) -> Bool {
        guard reconnectSeconds > 0, !message.hasPrefix("the RTMP server \"") else { return false }
        let text = NetworkEndpoint.text(message, debug: debug)
        return link.withLock { l in
            guard l.first != nil, !l.stopping else { return false }
            if l.lost == nil {
                guard text.contains("Connection error") else { return false }
                l.lost = .now
            }
            l.attemptFailed = true
            l.lastFailure = endpoint.scrubbed(message)
            return true
        }
    }

    /// The run stops: no new connection from now on.
    public func runWillStop() { link.withLock { $0.stopping = true } }

    /// The run ends: the watch stops before the pipeline does.
    public func runWillEnd() {
        link.withLock { $0.stopping = true }
        watchdog.stop()
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        watchdog.stop()
        // A stream that ended (or was stopped) while the server was away: its last gap, not resumed.
        let (first, lost) = link.withLock { ($0.first, $0.lost) }
        if let first, let lost {
            let now = ContinuousClock.now
            seen.withLock { $0.append(StreamGap(start: (lost - first).inSeconds, seconds: (now - lost).inSeconds, resumed: false)) }
        }
    }

    public func explainFailure(_ message: String, debug: String?, location: String) -> GraphError? {
        let text = NetworkEndpoint.text(message, debug: debug)
        let shown = endpoint.shown
        let what: String
        if let refusal = Self.refusal(in: text, timeout: context.parameters[Self.timeout]) {
            what = "the RTMP server \"\(shown)\" \(endpoint.scrubbed(refusal))"
        } else {
        switch NetworkEndpoint.failure(in: text) {
        case .unreachable?: what = "the RTMP server \"\(shown)\" could not be reached (nothing answered there)"
        case .timedOut?: what = "the RTMP server \"\(shown)\" did not answer within \(context.parameters[Self.timeout]) s"
        case .unresolved?: what = "the RTMP server \"\(shown)\": its host name cannot be resolved"
        case nil: what = "the RTMP server \"\(shown)\" failed: \(endpoint.scrubbed(message))"
        }
        }
        // GStreamer's text may quote the location with its key: only the key-free form is kept.
        return endpoint.error(what, text: text, node: context.id, at: location)
    }

    /// What the server itself said when it refused the connection or the stream, or that it
    /// said nothing, from rtmp2sink's "Failed to connect: REASON" (nil where the connection
    /// itself failed: those are `NetworkEndpoint`'s). The peer's own status code and
    /// description are quoted.
    static func refusal(in text: String, timeout: Int) -> String? {
        guard let at = text.firstRange(of: "Failed to connect: ") else { return nil }
        let reason = String(text[at.upperBound...].prefix { $0 != "\n" })
        if reason.contains("timed out") {
            // The TCP connection was made ("Connection refused" comes without this prefix).
            return "took the connection but did not answer within \(timeout) s (what listens there does not speak RTMP, or is stuck)"
        }
        func field(_ name: String) -> String? {
            guard let r = reason.firstRange(of: "\"\(name)\": \"") else { return nil }
            return String(reason[r.upperBound...].prefix { $0 != "\"" }.prefix(200))
        }
        // A status the server sent (its level error): NetConnection.* refuses the connection
        // (the application, the credentials), NetStream.* the stream (its name, its key).
        if let code = field("code"), !code.isEmpty {
            let what = code.hasPrefix("NetConnection") ? "refused the connection" : "refused the stream"
            guard let description = field("description"), !description.isEmpty else { return "\(what): \"\(code)\"" }
            return "\(what): \"\(description)\" (\(code))"
        }
        if reason.contains("cmd failed") || reason.contains("no status code") || reason.contains("result") {
            return "answered with a reply that could not be read as RTMP's (\(reason.prefix(200)))"
        }
        return nil
    }
}
