import GraphKitCore
import GraphKitRuntime

/// `source.srt`: an MPEG-TS stream received over SRT (`srtsrc`), as caller, listener or
/// rendezvous (`SRTSettings`), for `demux` (its streams as sent, no re-encoding: SRT → MP4 or
/// HLS) or `decode`, as `source.file` gives a file's bytes.
///
/// The stream ends when the peer closes the connection (or the run is stopped): a caller whose
/// listener ends the stream after sending ends the run's input as a file's end does (end of
/// stream, every output complete), not as a failure. A caller whose peer never answers fails
/// after SRT's connect timeout (3 s), naming the URL; a listener waits for its caller until the
/// run is stopped. Its bytes pass on as they arrive: nothing is dropped here (a live capture's
/// edge drops frames, a byte stream cannot lose bytes without damage).
///
/// Reconnection (`reconnect`, a caller or a listener; 0, the default, is off): when the peer
/// goes away after the stream began, the run stays alive up to `reconnect` seconds for it to come
/// back, a caller calling it again (SRT's connect timeout apart each time), a listener taking the
/// next caller on the same address (srtsrc's `keep-listening`), and the stream resumes when it
/// does. Nothing is made up for the gap: times keep running, so a recording has the gap in its
/// times, and the first bytes after it are marked discontinuous (the demuxer starts afresh
/// there). A stretch of a second or more without bytes is a gap; each is in the run's report
/// under the node (`NodeStatistics.gaps`: its start, seconds from the stream's first bytes, and
/// its length). A peer that is not back within `reconnect` seconds ends the stream as a peer
/// that closes it does: end of stream, the recording kept and complete, the last gap reported as
/// not resumed — what a recorder's user expects of a camera that went away for good. A peer
/// that never answered at all fails the run as without `reconnect`, within the connect timeout.
///
/// Example:
/// ```json
/// "in": { "type": "source.srt", "params": { "url": "srt://127.0.0.1:9000", "mode": "listener" } }
/// ```
public final class SRTSourceNode: ElementNode, ExplainsFailures, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "source.srt",
        category: .source,
        summary: "Receives an MPEG-TS stream over SRT (caller, listener or rendezvous)",
        outputs: [PortDescriptor("out", .container, help: "the MPEG-TS bytes as received, for demux (passthrough) or decode")],
        parameters: SRTSettings.parameters + [reconnect],
        rules: SRTSettings.rules + [
            .when(.given(reconnect), require: !.equals(SRTSettings.mode, .rendezvous),
                  because: "a caller calls its peer again and a listener takes its next caller; a rendezvous does not reconnect"),
        ],
        unboundedWhen: .given(SRTSettings.url),
        example: #"{ "type": "source.srt", "params": { "url": "srt://127.0.0.1:9000", "mode": "listener" } }"#
    )

    public static let reconnect = Parameter<Int>("reconnect", 0...86_400, default: 0,
        help: "seconds the run waits for a peer that went away to come back (a caller calls again, a listener takes the next caller); 0: its leaving ends the stream")

    /// Seconds without bytes that make a gap.
    static let gapThreshold = 1.0
    /// The most of one PES (a frame) a peer may send before the next starts (issue 73, class
    /// 3): a demuxer holds a PES until then, so one started and continued for ever filled memory.
    static let largestUnit = 32 << 20
    /// SRT's connect timeout (SRTO_CONNTIMEO), within which a caller's first peer must answer.
    static let connectTimeout = 3.0

    let context: NodeContext
    let settings: SRTSettings
    let reconnectSeconds: Int
    private let watch = Condition(Watch())
    private let watchdog = Guarded<JoinableThread?>(nil)
    private let parts = Guarded<(source: Element, fail: @Sendable (GraphError, Element) -> Void)?>(nil)

    /// What the streaming thread and the watchdog share.
    struct Watch: Sendable {
        /// When the watch began (the run about to play), then when the last bytes arrived.
        var started: ContinuousClock.Instant?
        var lastArrival: ContinuousClock.Instant?
        /// When the stream's first bytes arrived.
        var firstArrival: ContinuousClock.Instant?
        var gaps: [StreamGap] = []
        /// The peer's leaving was taken as the stream's end (an error said so, or the wait ran out).
        var ended = false
        /// The run stopped: the watchdog leaves.
        var stopped = false
    }

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        settings = try SRTSettings(context: context)
        reconnectSeconds = context.parameters[Self.reconnect]
    }

    public var mediaDescription: String? { settings.description }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let source = try bin.make("srtsrc", name: "srtsrc")
        try settings.configure(source, reconnecting: reconnectSeconds > 0)
        try bin.expose(output: "out", source)
        source.boundTransportStreamUnits(Self.largestUnit, message: "\(settings.description)'s peer sent more than "
            + "\(Self.largestUnit >> 20) MiB of one MPEG-TS stream's unit (a PES) without starting the next: "
            + "a demuxer would hold it all; source.srt passes at most \(Self.largestUnit >> 20) MiB a unit")
        parts.withLock { $0 = (source, bin.nodeFailure()) }
        // srtsrc times its buffers from SRT's packet times, which after a new connection do not
        // follow on from the old one's (seen going back): gaps are measured on the wall clock.
        source.onEachBuffer(leaving: "src") { [watch] _ in
            let now = ContinuousClock.now
            return watch.withLock { w in
                defer { w.lastArrival = now }
                guard let last = w.lastArrival, let first = w.firstArrival else { w.firstArrival = now; return false }
                let silence = (now - last).inSeconds
                guard silence >= Self.gapThreshold else { return false }
                w.gaps.append(StreamGap(start: (last - first).inSeconds, seconds: silence, resumed: true))
                return true
            }
        }
    }

    public func prepare() throws(GraphError) {
        guard reconnectSeconds > 0 else { return }
        watch.withLock { $0.started = .now }
        let thread = JoinableThread(name: "srt reconnect") { [weak self] in
            while let node = self, node.keepWatching() {}
        }
        watchdog.withLock { $0 = thread }
    }

    /// One step of the watchdog (a caller with `reconnect`): fails the run when no first peer
    /// answered within the connect timeout, ends the stream when the peer has been gone longer
    /// than `reconnect`. False once there is nothing more to watch.
    private func keepWatching() -> Bool {
        enum Step { case wait, fail, end(silence: Double), leave }
        let step: Step = watch.wait(until: { $0.stopped }, atMost: 0.1) { w in
            guard !w.stopped, !w.ended, let started = w.started else { return .leave }
            let now = ContinuousClock.now
            guard let last = w.lastArrival else {
                // A listener waits for its first caller until the run is stopped.
                return settings.mode == .caller && (now - started).inSeconds >= Self.connectTimeout ? .fail : .wait
            }
            let silence = (now - last).inSeconds
            guard silence >= Double(reconnectSeconds) else { return .wait }
            w.ended = true
            w.gaps.append(StreamGap(start: (last - (w.firstArrival ?? last)).inSeconds, seconds: silence, resumed: false))
            return .end(silence: silence)
        }
        guard let (source, fail) = parts.withLock({ $0 }) else { return false }
        switch step {
        case .wait:
            return true
        case .leave:
            return false
        case .fail:
            fail(GraphError(.runFailed, "\(settings.description) could not be reached: no peer answered within SRT's connect timeout (3 s)"), source)
            return false
        case .end:
            source.endStream()
            return false
        }
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        watch.withLock(wakingWaiters: true) { $0.stopped = true }
        watchdog.withLock { $0 }?.join()
    }

    public var gaps: [StreamGap] { watch.withLock { $0.gaps } }

    /// A caller's read failing after bytes arrived is its peer closing the connection (srtsrc
    /// says "Could not read from resource", then its base class "Internal data stream error"):
    /// the stream's end. A failure before any bytes is a failure (a refusal, no peer).
    public func failureEndsStream(_ message: String, debug: String?) -> Bool {
        guard settings.mode != .listener else { return false }
        return watch.withLock { w in
            guard w.lastArrival != nil else { return false }
            if message.contains("Could not read from resource") || (w.ended && message.contains("Internal data stream error")) {
                w.ended = true
                return true
            }
            return false
        }
    }

    public func explainFailure(_ message: String, debug: String?, location: String) -> GraphError? {
        settings.explain(message, debug: debug, node: context.id, at: location)
    }

}
