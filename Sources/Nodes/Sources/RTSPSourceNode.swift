import FoundationEssentials
import GraphKitCore
import GraphKitRuntime

/// `source.rtsp`: an IP camera's or a media server's stream over RTSP (`rtspsrc`), its
/// compressed samples as they were sent, not decoded: H.264 or HEVC video and AAC or Opus audio,
/// each depayloaded and parsed (`rtph264depay ! h264parse`, `rtpmp4gdepay ! aacparse`…) into the
/// form `demux` gives a file's tracks. So `source.rtsp → sink.mp4` or `→ sink.hls` records a
/// camera without re-encoding, and `→ decode`-like nodes take it as they take `demux`'s outputs.
///
/// - Transport: `tcp` (RTP interleaved in the RTSP connection, what NVRs use: nothing lost to
///   a firewall or to UDP drops), `udp`, or `auto` (UDP first, then TCP).
/// - Credentials: in the URL (`rtsp://user:password@host/…`, percent-encoded) or as `user` and
///   `password`, not both. They are handed to `rtspsrc` apart from the URL (its `user-id` and
///   `user-pw`), so no message, log, statistic or GStreamer text can quote them: the URL is shown
///   without them. A server that refuses them fails the run (70) saying so (401).
/// - Time: samples keep the server's times (RTP's, audio and video lined up by its RTCP sender
///   reports; the jitter buffer in `rtspsrc`'s `buffer-mode` synced, not slaved to this
///   machine's clock), from zero, so audio and video keep their relative times as served.
/// - TLS: `rtsps://` (RTSP and its interleaved RTP inside one TLS connection, so `transport` is
///   `tcp`). The server's certificate is checked against the system's authorities, or only those
///   in `certificateAuthority` (a PEM file: a camera's own authority, or its self-signed
///   certificate); one not trusted, or not for the URL's host, fails the run (70) saying which.
/// - The run ends when the server ends the stream (RTCP BYE) or the run is stopped (SIGINT: end
///   of stream from here, every file finalized). A server that does not answer within `timeout`
///   fails the run (70), naming the URL without its credentials.
/// - A camera that hangs: over TCP, `rtspsrc` waits for packets for ever (its timeouts cover
///   requests, and it keeps the session alive). So this node watches the stream itself: a server
///   asked to play (PLAY sent) that sends nothing within `timeout` fails the run (70, nothing written);
///   one that stops sending for `timeout` seconds mid-stream ends the stream there, as a server
///   that closes it does (every file complete), with the stall in the run's report as a gap not
///   resumed (`NodeStatistics.gaps`).
/// - `reconnect` (seconds; 0, the default, is off): a camera that goes away after its stream began
///   (its server ends the stream, closes the connection, or sends nothing for `timeout`) does not
///   end the run. The session is replaced by a new one (a new `rtspsrc` and depayloaders: no
///   parser carries a reordered frame across the gap) a second after each attempt that failed
///   (`timeout` seconds after one that neither failed nor sent) until one sends, up to
///   `reconnect` seconds; meanwhile `gkflowguard` holds the old session's end of stream before the
///   outputs, so what they feed goes on. Each outage is a gap in the report; a camera not back in
///   time ends the stream there (the gap not resumed), as without `reconnect`.
///
/// Example:
/// ```json
/// "camera": { "type": "source.rtsp", "params": { "url": "rtsp://127.0.0.1:8554/stream", "transport": "tcp" } }
/// ```
public final class RTSPSourceNode: ElementNode, ExplainsFailures, StopAware, Sendable {
    public enum Transport: String, ParameterEnum { case tcp, udp, auto }

    public static let descriptor = NodeDescriptor(
        type: "source.rtsp",
        category: .source,
        summary: "Receives an RTSP stream (an IP camera) as sent: H.264 or HEVC video and AAC or Opus audio, not decoded",
        outputs: [
            PortDescriptor("audio", audioFormats, presence: .sometimes, help: "the stream's first audio track, as sent: AAC or Opus"),
            PortDescriptor("video", videoFormats, presence: .sometimes, help: "the stream's first video track, as sent: H.264 or HEVC"),
        ],
        parameters: [url, transport, latency, timeout, user, password, certificateAuthority, reconnect],
        rules: [.allOrNone(user, password)],
        unboundedWhen: .given(url),
        example: #"{ "type": "source.rtsp", "params": { "url": "rtsp://127.0.0.1:8554/stream", "transport": "tcp" } }"#
    )

    static let audioFormats = FormatSet([.aac, .audio(.opus)])
    static let videoFormats = FormatSet([.h264, .video(.hevc)])

    public static let url = RequiredParameter<String>("url", format: StringFormat(
        pattern: #"^rtsps?://([^/?#@\s]+@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:[0-9]{1,5})?(/[^\s#]*)?$"#, minLength: 1,
        expected: "rtsp://[USER:PASSWORD@]HOST[:PORT]/PATH, or rtsps:// (TLS)", shown: .url),
        help: "the stream; user and password in it are never shown")
    public static let transport = Parameter<Transport>("transport", default: .tcp,
        help: "tcp: RTP inside the RTSP connection (what NVRs use); udp: RTP over UDP; auto: UDP, then TCP when no UDP arrives")
    public static let latency = Parameter<Int>("latency", 0...10_000, default: 200,
        help: "milliseconds the jitter buffer holds packets to reorder them and resend lost ones")
    public static let timeout = NetworkEndpoint.connectTimeout(default: 10,
        help: "seconds to wait for the server to answer (and, over UDP, for the first packets) before the run fails")
    public static let user = OptionalParameter<String>("user", format: StringFormat(minLength: 1, expected: "a user name", shown: .hidden),
        help: "the user, when not in the URL; never shown")
    public static let password = OptionalParameter<String>("password", format: StringFormat(expected: "a password", shown: .hidden),
        help: "the password, when not in the URL; never shown")
    public static let reconnect = Parameter<Int>("reconnect", 0...86_400, default: 0,
        help: "seconds the run waits for a camera that went away (ended the stream, closed the connection, or sent nothing for timeout) to come back, asking it again a second after each failed attempt; 0: the stream ends there")
    public static let certificateAuthority = OptionalParameter<String>("certificateAuthority", format: .path,
        help: "rtsps:// only: a PEM file of the authorities (or the self-signed certificate) to trust for the server's certificate, instead of the system's")

    let context: NodeContext
    let endpoint: NetworkEndpoint
    /// The URL rtspsrc is given: without user information (the credentials go apart).
    let location: String
    let credentials: (user: String, password: String)?
    /// Whether the URL is rtsps:// (TLS).
    let tls: Bool
    /// What was wrong with the certificate the server presented, once refused.
    let refusedCertificate = Guarded<String?>(nil)
    let watch = Guarded(Watch())
    /// The session now running: its rtspsrc, what was made for its tracks, the tracks taken.
    struct Session {
        var number = 0
        var source: Element?
        var chain: [Element] = []
        var audio = false, video = false
        /// The requests sent before PLAY, by method: bounded (``mostRequests``). After it,
        /// OPTIONS or GET_PARAMETER keep the session alive for as long as it plays.
        var requests: [String: Int] = [:]
        var played = false
        /// The process's sockets to the server's port before this session connected, and its
        /// own, found at each request it sends before PLAY (``PeerSockets``).
        var socketsBefore: Set<Int32> = []
        var sockets: Set<Int32> = []
        /// Its connection was cut (``cutConnection()``): one rtspsrc makes again is cut too.
        var cut = false
    }
    /// The server's TCP port: the URL's, or RTSP's (554) or RTSPS's (322).
    var serverPort: Int { endpoint.port ?? (tls ? 322 : 554) }
    /// The most requests of a method one session sends before it plays: OPTIONS once, and again
    /// after each redirect (rtspsrc follows every redirect: a server redirecting to itself had
    /// 71,585 DESCRIBEs in a minute); DESCRIBE again after each, and for a password (rtspsrc
    /// tries its ways of sending one: 9 DESCRIBEs before it says a password was refused); SETUP
    /// once a track (an SDP of 1,000 m-lines had 366,260 SETUPs and never a PLAY). A camera has
    /// a few tracks.
    static let mostRequests = ["OPTIONS": 8, "DESCRIBE": 32, "SETUP": 16]
    let session = Guarded(Session())
    /// Where each port's track is linked: its caps filter, or with `reconnect` the guard before it
    /// (which holds a session's end); and the node's builder, for the sessions made later.
    let targets = Guarded<[String: Element]>([:])
    let builder = Guarded<BinBuilder?>(nil)
    let watchdog = ConnectionWatchdog()
    /// The outputs' caps filters, once built: where a stalled stream is ended.
    let outputFilters = Guarded<[Element]>([])

    /// What the streaming threads and the watchdog share.
    struct Watch: Sendable {
        /// When rtspsrc asked the server to play.
        var playing: ContinuousClock.Instant?
        /// Before PLAY: when the first session sent its first request, and its last request.
        var asked: ContinuousClock.Instant?
        var lastRequest = ""
        var firstArrival: ContinuousClock.Instant?
        var lastArrival: ContinuousClock.Instant?
        var gaps: [StreamGap] = []
        /// reconnect: the last arrival before the camera went away (nil: it has not), when the
        /// session now running was started, whether an error said it failed, whether the run stops.
        var lost: ContinuousClock.Instant?
        var attempt: ContinuousClock.Instant?
        var failed = false
        var stopping = false

        /// Reports the outage from the last packet before it (`from`) to `to`.
        mutating func noteGap(from lost: ContinuousClock.Instant, to end: ContinuousClock.Instant, resumed: Bool) {
            gaps.append(StreamGap(start: (lost - (firstArrival ?? lost)).inSeconds, seconds: (end - lost).inSeconds, resumed: resumed))
        }
    }

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let p = context.parameters
        let url = try p.value(Self.url)
        endpoint = try NetworkEndpoint(url, context: context)
        tls = url.hasPrefix("rtsps://")
        let scheme = tls ? "rtsps://" : "rtsp://"
        if tls, p[Self.transport] != .tcp {
            throw GraphError(.invalidGraph, at: context.location(parameter: "transport"),
                             "rtsps:// carries the stream inside its TLS connection: transport must be tcp (RTP over UDP would go unencrypted)", node: context.id)
        }
        if let authority = p[Self.certificateAuthority] {
            guard tls else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "certificateAuthority"),
                                 "certificateAuthority is for an rtsps:// URL (TLS); \(endpoint.shown) is not one", node: context.id)
            }
            guard FileManager.default.isReadableFile(atPath: authority) else {
                throw GraphError(.inputUnreadable, at: context.location(parameter: "certificateAuthority"), "cannot read \"\(authority)\"", node: context.id)
            }
        }
        let rest = url.dropFirst(scheme.count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        if let at = rest[..<authorityEnd].lastIndex(of: "@") {
            guard p[Self.user] == nil else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "user"),
                                 "credentials are given twice: in url and as user and password; keep one", node: context.id)
            }
            let info = rest[..<at]
            let colon = info.firstIndex(of: ":") ?? info.endIndex
            guard let user = Self.percentDecoded(info[..<colon]),
                  let password = Self.percentDecoded(colon < info.endIndex ? info[info.index(after: colon)...] : "") else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "url"),
                                 "the user or password in \(endpoint.shown) has a malformed %-escape", node: context.id)
            }
            credentials = (user, password)
            location = scheme + rest[rest.index(after: at)...]
        } else {
            credentials = p[Self.user].map { ($0, p[Self.password] ?? "") }
            location = url
        }
    }

    public var mediaDescription: String? { "the RTSP stream \"\(endpoint.shown)\"" }

    public func build(in bin: BinBuilder) throws(GraphError) {
        var made: [String: Element] = [:], linkTo: [String: Element] = [:]
        for port in Self.descriptor.outputs where context.connectedOutputs.contains(port.name) {
            let filter = try bin.make("capsfilter", name: port.name, ["caps": DemuxNode.outputCaps(port.formats)])
            try bin.expose(output: port.name, filter)
            made[port.name] = filter
            linkTo[port.name] = filter
            if context.parameters[Self.reconnect] > 0 {
                // (What the outputs answer goes upstream as it is: only the end is held.)
            let guardElement = try bin.make("gkflowguard", name: port.name + "-guard", ["hold-eos": true, "swallow-errors": false])
                try bin.link(guardElement, filter)
                linkTo[port.name] = guardElement
            }
            filter.onEachBuffer { [self] _, _ in
                let now = ContinuousClock.now
                watch.withLock { w in
                    if w.firstArrival == nil { w.firstArrival = now }
                    w.lastArrival = now
                }
            }
        }
        outputFilters.withLock { $0 = Array(made.values) }
        targets.withLock { $0 = linkTo }
        builder.withLock { $0 = bin }
        let source = try startSession(in: bin, number: 0)
        watchdog.watch(made.values.first ?? source, failing: bin.nodeFailure())
    }

    /// Makes session `number`'s rtspsrc (the first is built with the pipeline; a later one is
    /// brought to its state), whose tracks are depayloaded and parsed into ``targets``.
    func startSession(in bin: BinBuilder, number: Int) throws(GraphError) -> Element {
        let p = context.parameters
        let microseconds = UInt64(p[Self.timeout]) * 1_000_000
        let source = try bin.make("rtspsrc", name: number == 0 ? "rtspsrc" : "rtspsrc\(number)", [
            "location": location,
            "protocols": p[Self.transport] == .tcp ? "tcp" : p[Self.transport] == .udp ? "udp" : "udp+tcp",
            "latency": p[Self.latency],
            "tcp-timeout": microseconds,
            "timeout": microseconds,
            // The server's own times (RTP's, lined up by its RTCP sender reports), not slaved to
            // this machine's clock: rtspsrc's default ("auto", which slaves them) moved the sound
            // up to 210 ms from its pictures within 4 s of a recording. ("none" kept them too,
            // but an HLS package of the stream came out in 2 segments where there were 3 and
            // lost frames: 96 to 99 of 100.)
            "buffer-mode": "synced",
        ])
        // What the jitter buffer may queue before it passes anything on: a flood before the
        // stream is linked piled up there at a GB a second (the latency's worth of a 100 Mb/s
        // stream on top, for a buffer that waits out its latency first).
        let queued = Self.largestVideoFrame + p[Self.latency] * 12_500
        source.boundJitterBuffers(queued, message: "the RTSP server \"\(endpoint.shown)\" sent more than \(queued >> 20) MiB "
            + "of packets before any could be passed on (a flood): source.rtsp queues at most \(queued >> 20) MiB") { [weak self] in
            // Weakly: the element holds this, and the node holds the element.
            self?.cutConnection()
        }
        let before = PeerSockets.connected(toPort: serverPort)
        session.withLock { $0 = Session(number: number, source: source, socketsBefore: before) }
        if let credentials {
            try source.set("user-id", credentials.user)
            try source.set("user-pw", credentials.password)
        }
        if tls {
            if let authority = p[Self.certificateAuthority] {
                do throws(GraphError) {
                    try source.trustCertificates(at: authority)
                } catch {
                    throw GraphError(.inputUnreadable, at: context.location(parameter: "certificateAuthority"),
                                     "\"\(authority)\" holds no certificate that can be read: \(error.message)", node: context.id)
                }
            }
            source.onCertificateRefused { [self] problems in refusedCertificate.withLock { $0 = problems } }
        }
        source.onRTSPRequest { [self] method in
            watch.withLock { w in
                if w.asked == nil { w.asked = .now }
                w.lastRequest = method
                if method == "PLAY", w.playing == nil { w.playing = .now }
            }
            // This session's connections are found again at each request before PLAY, and after
            // a cut: rtspsrc connects again when its server closes the connection while it awaits
            // a reply, and sends again (gst_rtspsrc_try_send, once). A cut connection so made
            // again was read for ever (a header line a second) and the run could not end: one
            // found after a cut is cut at once.
            let looks = session.withLock { s in s.number == number && (!s.played || s.cut) }
            let found = looks ? PeerSockets.connected(toPort: serverPort) : []
            let (sent, again) = session.withLock { s -> (Int, Set<Int32>) in
                guard s.number == number else { return (0, []) }
                s.sockets.formUnion(found.subtracting(s.socketsBefore))
                let again = s.cut ? s.sockets : []
                guard !s.played else { return (0, again) }
                if method == "PLAY" { s.played = true }
                s.requests[method, default: 0] += 1
                return (s.requests[method, default: 0], again)
            }
            if !again.isEmpty { PeerSockets.shutDown(again, port: serverPort) }
            if let most = Self.mostRequests[method], sent == most + 1 {
                source.postError("the RTSP server \"\(endpoint.shown)\" had to be sent \(sent) \(method) requests before it would play the stream, "
                                 + (method == "SETUP" ? "one a track, more than the \(most) tracks source.rtsp sets up: its description (SDP) is not a camera's"
                                                      : "more than \(most): it redirects or refuses over and over"))
            }
        }
        let taken = Set(targets.withLock { $0 }.keys)
        source.onRTSPStreamSelect { [endpoint] media, rate in
            // A clock rate of 0 (rtpmap H264/0) reached GStreamer's time scaling as a divisor (a
            // CRITICAL a packet) and the run failed saying the track "could not be linked". (A
            // video rtpmap without a rate is given 90 kHz by GStreamer; one still without a rate
            // is refused the same way.) A track no output takes is left out; one that an output
            // takes fails the run.
            if let rate, rate > 0 { return true }
            if taken.contains(media) {
                source.postError("the RTSP server \"\(endpoint.shown)\" describes its \(media) "
                                 + (rate.map { "with an RTP clock rate of \($0)" } ?? "without an RTP clock rate")
                                 + " (its SDP's rtpmap): a stream's times are counted in its clock rate, which must be above 0")
            }
            return false
        }
        let outputs = targets.withLock { $0 }
        let stream = mediaDescription ?? "the RTSP stream"
        /// Records elements made for this session's tracks; a session replaced meanwhile has them
        /// removed at once instead (false).
        @Sendable func keep(_ elements: [Element]) -> Bool {
            let current = session.withLock { s in
                guard s.number == number else { return false }
                s.chain += elements
                return true
            }
            if !current { for element in elements { bin.remove(element) } }
            return current
        }
        source.onPadAdded { [self] (pad: Pad) in
            let kind = pad.capsField("media")
            let output: Element? = session.withLock { s in
                guard s.number == number else { return nil }
                if kind == "audio", !s.audio, let audio = outputs["audio"] { s.audio = true; return audio }
                if kind == "video", !s.video, let video = outputs["video"] { s.video = true; return video }
                return nil
            }
            guard let output, let kind else {
                // A track no output takes (a second one, a camera's metadata) ends in a sink of its
                // own, which goes with its session.
                if let sink = bin.discard(pad) { _ = keep([sink]) }
                return
            }
            let encoding = pad.capsField("encoding-name")?.uppercased() ?? "unknown"
            guard let route = Self.routes[encoding] else {
                return source.postError("\(stream)'s \(kind) is \(encoding), which source.rtsp does not pass: it passes "
                                        + "\(kind == "audio" ? "AAC (MPEG4-GENERIC, MP4A-LATM) or Opus" : "H.264 or HEVC")")
            }
            let taken = DemuxNode.Codec.all(kind).filter { output.downstreamTakes($0.caps) != false }
            guard taken.contains(route.codec) else {
                return source.postError("\(stream)'s \(kind) is \(route.codec.rawValue), which what \(context.id).\(kind) feeds does not take "
                                        + "(it takes \(DemuxNode.list(taken))): \(DemuxNode.advice(route.codec))")
            }
            do throws(GraphError) {
                let chain = try route.elements.map { factory throws(GraphError) in try bin.make(factory) }
                guard keep(chain) else { return }
                if let depayloader = chain.first {
                    let limit = kind == "video" ? Self.largestVideoFrame : Self.largestAudioFrame
                    depayloader.boundHeldBytes(limit, message: "the RTSP server \"\(endpoint.shown)\" sent more than "
                        + "\(limit >> 20) MiB of one \(route.codec.rawValue) \(kind) frame without ending it: "
                        + "source.rtsp holds at most \(limit >> 20) MiB of a frame's fragments") { [weak self] in
                        // The peer is cut off at once: what it sends until the run stops would
                        // pile up in the jitter buffer (a flood on loopback is a GB a second).
                        self?.cutConnection()
                    }
                }
                for (a, b) in zip(chain, chain.dropFirst() + [output]) { try bin.link(a, b) }
                for element in chain.reversed() { element.syncStateWithParent() }
                if let first = chain.first, !pad.link(to: first) { source.postError("\(stream)'s \(kind) (\(route.codec.rawValue)) could not be linked") }
            } catch {
                source.postError(error.message)
            }
        }
        source.onNoMorePads { [self] in
            let s = session.withLock { $0 }
            guard s.number == number else { return }
            if outputs["video"] != nil, !s.video { source.postError("\(stream) has no video track") }
            else if outputs["audio"] != nil, !s.audio { source.postError("\(stream) has no audio track") }
        }
        if number > 0 { source.syncStateWithParent() }
        return source
    }

    /// This session's sockets to the server, found again when none was at its first request
    /// (a connection still being made then is not yet connected to the server's port: seen
    /// once in four runs, and such a run could not be cut, or counted, and never ended).
    func sessionSockets() -> Set<Int32> {
        let (known, before) = session.withLock { ($0.sockets, $0.socketsBefore) }
        guard known.isEmpty else { return known }
        let found = PeerSockets.connected(toPort: serverPort).subtracting(before)
        session.withLock { if $0.sockets.isEmpty { $0.sockets = found } }
        return found
    }

    /// Shuts this session's connection to the server down: a read waiting on it returns. A
    /// connection rtspsrc makes again afterwards is shut down as it sends its request.
    func cutConnection() {
        session.withLock { $0.cut = true }
        PeerSockets.shutDown(sessionSockets(), port: serverPort)
    }

    /// Takes the session now running out of the pipeline, its rtspsrc first (whose threads make
    /// its tracks' elements), then what was made for its tracks; its number.
    @discardableResult
    func endSession() -> Int {
        guard let bin = builder.withLock({ $0 }) else { return 0 }
        let source = session.withLock { $0.source }
        if let source { bin.remove(source) }
        let old = session.withLock { s in
            defer { (s.source, s.chain) = (nil, []) }
            return s
        }
        for element in old.chain { bin.remove(element) }
        return old.number
    }

    /// Lets the outputs' ends go, and ends each output's stream from its guard.
    func endHeldStreams(_ guards: [Element]) {
        for g in guards {
            try? g.set("hold-eos", false)
            g.endStream(leaving: "src")
        }
    }

    /// With `reconnect`: the run stops, so a session's end goes through again; while the camera
    /// is away (no session sending), the outputs' streams are ended here.
    public func runWillStop() {
        guard context.parameters[Self.reconnect] > 0 else { return }
        let lost = watch.withLock { w in
            w.stopping = true
            guard let lost = w.lost else { return false }
            // The outage the stop ends: a gap it did not come back from.
            w.noteGap(from: lost, to: .now, resumed: false)
            return true
        }
        let guards = Array(targets.withLock { $0 }.values)
        if lost {
            // The attempt under way (if any) goes; what the outputs feed ends here.
            watchdog.stop()
            endSession()
            endHeldStreams(guards)
        } else {
            // An end held meanwhile is sent on as the hold is let go (gkflowguard).
            for g in guards { try? g.set("hold-eos", false) }
        }
    }

    /// The run ends: the watch stops before the pipeline does. A session whose server never sent
    /// a packet has its connection cut first: rtspsrc may be inside a read its server never ends
    /// (a reply it awaits that never comes), which the pipeline's stop waits on with rtspsrc's
    /// lock held; a run failed by rtspsrc's own error (a description it cannot use) then never
    /// ended (fuzz-rtsp). There is no stream to tear down.
    public func runWillEnd() {
        let silent = watch.withLock { w in
            w.stopping = true
            return w.firstArrival == nil
        }
        watchdog.stop()
        if silent { cutConnection() }
    }

    /// With `reconnect`, once the stream began: rtspsrc's failures to read or to connect are the
    /// camera going away, which the watch handles; while it is away, so is whatever a new
    /// session's rtspsrc posts (a camera rebooting answers 404 or 503 for a while), and whatever
    /// follows a failure taken so, but for a refused password and this node's own findings (a
    /// codec it does not pass).
    public func failureIsRecovered(_ message: String, debug: String?) -> Bool {
        guard context.parameters[Self.reconnect] > 0 else { return false }
        let text = NetworkEndpoint.text(message, debug: debug)
        let connection = ["Could not read from resource", "Could not open resource", "Could not connect", "Failed to connect", "Could not write to resource"]
            .contains(where: text.contains)
        let own = message.hasPrefix("the RTSP") || message.contains("source.rtsp does not pass") || message.contains("does not take")
            || message.contains("could not be linked") || text.contains("Unauthorized")
        return watch.withLock { w in
            // Once one failure was taken as the camera going away, what follows from it before
            // the watch sees it gone (the base class's "Internal data stream error", posted after
            // rtspsrc's own, on a busy machine before the watch's next look) is that too.
            guard w.firstArrival != nil, !w.stopping, !own, connection || w.lost != nil || w.failed else { return false }
            w.failed = true
            return true
        }
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) { watchdog.stop() }

    public var gaps: [StreamGap] { watch.withLock { $0.gaps } }

    /// The most of one frame's fragments a depayloader holds for a peer (issue 73, class 3): a
    /// server that starts a frame (an H.264 FU-A, an AAC access unit split over packets) and
    /// never ends it filled memory at the network's speed. An 8K intra frame stays well under.
    static let largestVideoFrame = 32 << 20, largestAudioFrame = 1 << 20
    /// The most a server may send before PLAY: its replies (an SDP of the tracks) are a few
    /// kilobytes; one claiming a `Content-Length` of 2 GB was read into memory.
    static let mostBeforePlay = 4 << 20

    /// How each RTP encoding (SDP's name) becomes the samples an output carries. RTP carries
    /// presentation times only: a video stream with B-frames gets its decode times from them
    /// and its reorder depth (`h264timestamper`, `h265timestamper`), as an MP4 needs them (without
    /// them the muxer saw times go back).
    static let routes: [String: (codec: DemuxNode.Codec, elements: [String])] = [
        "H264": (.h264, ["rtph264depay", "h264parse", "h264timestamper"]),
        "H265": (.hevc, ["rtph265depay", "h265parse", "h265timestamper"]),
        "MPEG4-GENERIC": (.aac, ["rtpmp4gdepay", "aacparse"]),
        "MP4A-LATM": (.aac, ["rtpmp4adepay", "aacparse"]),
        "OPUS": (.opus, ["rtpopusdepay", "opusparse"]),
    ]
}
