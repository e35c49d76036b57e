import Glibc
import GraphKitCore
import GraphKitRuntime

/// `sink.srt`: sends encoded audio and video as MPEG-TS over SRT (`mpegtsmux ! srtsink`), as
/// caller, listener or rendezvous (`SRTSettings`): from encoders (camera → SRT) or as stored
/// (`source.file → demux → sink.srt`, `source.srt → demux → sink.srt`, no re-encoding).
///
/// - H.264 and HEVC are sent in Annex B with their parameter sets before every key frame
///   (`h264parse`/`h265parse` `config-interval=-1`), so that a receiver that joins late can start
///   at the next key frame; the parser is chosen when the stream's format arrives. AAC is sent
///   in ADTS, Opus as MPEG-TS carries it.
/// - The transport stream is cut into 1316-byte messages (`mpegtsmux alignment=7`: 7 packets of
///   188 bytes), the payload of one SRT live-mode packet. GStreamer 1.22's `srtsink` sends each
///   buffer as one message, and without this alignment an `srtsrc` on the other end received
///   nothing at all (measured: 0 buffers in 5 s; with it, every buffer).
/// - Samples are sent at their time (the sink is synchronised to the clock), so a file
///   passed through goes out at its own pace, as a live stream does.
/// - At the end of the stream the sink waits twice the latency and 250 ms (at most 2 s) before
///   it closes: SRT's live mode drops on closing what it has not delivered (no linger).
/// - A listener waits for its caller (the run waits with it, until it is stopped); a caller
///   whose peer never answers fails after SRT's connect timeout (3 s), naming the URL; a peer
///   that goes away fails the run (70), unless `reconnect` (a caller's; seconds, 0 = off) gives
///   it that long to come back: `srtsink` calls again (its `auto-reconnect`), what is sent
///   meanwhile is dropped as on any live link, each outage is a gap in the run's report, and one
///   longer than `reconnect` fails the run. A watchdog reads `srtsink`'s statistics, which hold
///   the connection's packet counts only while it is up.
///
/// Example:
/// ```json
/// "out": { "type": "sink.srt", "params": { "url": "srt://127.0.0.1:9000", "mode": "caller", "latency": 200 } }
/// ```
public final class SRTSinkNode: ElementNode, ExplainsFailures, PlaysEncoderPriming, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.srt",
        category: .sink,
        summary: "Sends encoded audio and video as MPEG-TS over SRT (caller, listener or rendezvous)",
        inputs: [
            PortDescriptor("audio", FormatSet([.aac, .audio(.opus)]), presence: .optional, help: "AAC or Opus audio"),
            PortDescriptor("video", FormatSet([.h264, .video(.hevc)]), presence: .optional, help: "H.264 or HEVC video"),
        ],
        parameters: SRTSettings.parameters + [reconnect],
        rules: SRTSettings.rules + [
            .when(.given(reconnect), require: .equals(SRTSettings.mode, .caller), because: "a caller is the end that calls its peer again"),
        ],
        requiresAnInput: true,
        example: #"{ "type": "sink.srt", "params": { "url": "srt://127.0.0.1:9000", "mode": "caller", "latency": 200 } }"#
    )

    public static let reconnect = Parameter<Int>("reconnect", 0...86_400, default: 0,
        help: "seconds the run waits for a peer that went away to come back, calling it again (what is sent meanwhile is dropped); 0: its leaving fails the run")

    /// MPEG-TS has no edit list: the sound plays from its first sample (an AAC encoder's priming
    /// takes the place of input it leaves out; ``PlaysEncoderPriming``).
    public static func playsEncoderPriming(input: String, parameters: Parameters) -> Bool { true }

    let context: NodeContext
    let settings: SRTSettings
    let reconnectSeconds: Int
    private let watchdog = ConnectionWatchdog()
    private let seen = Guarded<[StreamGap]>([])

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        settings = try SRTSettings(context: context)
        reconnectSeconds = context.parameters[Self.reconnect]
    }

    public var gaps: [StreamGap] { seen.withLock { $0 } }

    /// With `reconnect`: watches the connection (every 100 ms) until the run stops. A caller
    /// never answered within SRT's connect timeout fails the run, as without `reconnect`; a peer
    /// gone longer than `reconnect` fails it; each outage is a gap, from the last acknowledgement
    /// the peer sent to the new connection (whose counts start again from 0).
    public func prepare() throws(GraphError) {
        guard reconnectSeconds > 0 else { return }
        watchdog.start("srt sink reconnect", state: Watch(started: .now)) { [weak self] parts, watch in
            self?.keepWatching(parts, &watch) ?? false
        }
    }

    /// What the watchdog knows of the connection.
    struct Watch {
        var started: ContinuousClock.Instant
        /// When the first connection was seen up.
        var first: ContinuousClock.Instant?
        /// When the connection was last seen down (nil: up).
        var lost: ContinuousClock.Instant?
        /// The connection's counts of packets sent and acknowledgements received, and when the
        /// acknowledgements last grew.
        var sent = 0, acks = 0
        var lastAck: ContinuousClock.Instant?
    }

    /// A count in `srtsink`'s statistics (read without GStreamer's escapes): `name=(type)N`.
    static func count(_ name: String, in stats: String) -> Int? {
        guard let r = stats.firstRange(of: name + "=(") else { return nil }
        let rest = stats[r.upperBound...].drop { $0 != ")" }.dropFirst()
        return Int(rest.prefix { $0.isNumber })
    }

    private func keepWatching(_ parts: ConnectionWatchdog.Parts, _ w: inout Watch) -> Bool {
        let (sink, fail) = parts
        let now = ContinuousClock.now
        // (The statistics hold the connection's counts only while it is up.)
        let stats = (sink.property("stats") ?? "").filter { $0 != "\\" }
        if let sent = Self.count("packets-sent", in: stats), let acks = Self.count("packet-ack-received", in: stats) {
            if let first = w.first, w.lost != nil || sent < w.sent {
                // A new connection (seen down, or its counts begun again): the outage is a gap.
                let from = w.lastAck ?? w.lost ?? now
                seen.withLock { $0.append(StreamGap(start: (from - first).inSeconds, seconds: (now - from).inSeconds, resumed: true)) }
                w.acks = 0
            }
            if acks != w.acks { w.lastAck = now }
            (w.sent, w.acks, w.lost) = (sent, acks, nil)
            if w.first == nil { w.first = now }
            return true
        }
        guard let first = w.first else {
            guard (now - w.started).inSeconds >= SRTSourceNode.connectTimeout else { return true }
            fail(GraphError(.runFailed, "\(settings.description) could not be reached: no peer answered within SRT's connect timeout (3 s)"), sink)
            return false
        }
        let since = w.lost ?? now
        w.lost = since
        guard (now - since).inSeconds >= Double(reconnectSeconds) else { return true }
        let from = w.lastAck ?? since
        seen.withLock { $0.append(StreamGap(start: (from - first).inSeconds, seconds: (now - from).inSeconds, resumed: false)) }
        fail(GraphError(.runFailed, "\(settings.description): its peer went away and was not back within \(reconnectSeconds) s"), sink)
        return false
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) { watchdog.stop() }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let mux = try bin.make("mpegtsmux", name: "mux", ["alignment": 7])
        let sink = try bin.make("srtsink", name: "srtsink")
        try settings.configure(sink, reconnecting: reconnectSeconds > 0)
        watchdog.watch(sink, failing: bin.nodeFailure())
        try bin.link(mux, sink)
        // Live mode closes a socket without lingering (SRTO_LINGER 0): what SRT still holds to
        // send or resend would be lost with the last half second of the stream. At the end, the
        // sink waits twice the latency and 250 ms (2 s at most) before it closes.
        let linger = UInt32(min(2_000, 2 * context.parameters[SRTSettings.latency] + 250))
        sink.onEndOfStream { usleep(linger * 1_000) }
        try TransportStreamInputs.build(in: bin, mux: mux, connected: context.connectedInputs)
    }

    public func explainFailure(_ message: String, debug: String?, location: String) -> GraphError? {
        settings.explain(message, debug: debug, node: context.id, at: location)
    }
}

/// The inputs of a node that muxes encoded streams into MPEG-TS (`mpegtsmux`): audio as it is
/// (the muxer frames AAC as ADTS from its configuration), video through the parser its codec
/// needs, chosen when the stream's format arrives.
enum TransportStreamInputs {
    static func build(in bin: BinBuilder, mux: Element, connected: Set<String>) throws(GraphError) {
        if connected.contains("audio") {
            try bin.expose(input: "audio", requesting: "sink_%d", from: mux)
        }
        guard connected.contains("video") else { return }
        // The muxer's video pad is made now, with the audio's: a pad requested once the stream
        // flows comes after the first program table, and a demuxer then sees a second program
        // (GStreamer's decodebin exposed the audio alone, then both again).
        let entry = try bin.make("identity", name: "video", ["silent": true])
        let annexB = try bin.makeCapsFilter("video/x-h264, stream-format=(string)byte-stream, alignment=(string)au; "
                                            + "video/x-h265, stream-format=(string)byte-stream, alignment=(string)au")
        try bin.link(annexB, pad: "src", to: mux, pad: "sink_%d")
        try bin.expose(input: "video", entry)
        let fail = bin.nodeFailure()
        let routed = Guarded(false)
        entry.onInputFormat { format in
            guard !routed.withLock({ r in defer { r = true }; return r }) else { return }
            let parser: String
            switch format {
            case .h264: parser = "h264parse"
            case .video(.hevc, _, _): parser = "h265parse"
            default:
                return fail(GraphError(.runFailed, "the video input takes H.264 or HEVC, and was given \(format)"), entry)
            }
            do throws(GraphError) {
                let parse = try bin.make(parser, ["config-interval": -1])
                try bin.link(parse, annexB)
                parse.syncStateWithParent()
                if !entry.link(to: parse) { fail(GraphError(.runFailed, "the video stream could not be linked to \(parser)"), entry) }
            } catch {
                fail(error, entry)
            }
        }
    }
}
