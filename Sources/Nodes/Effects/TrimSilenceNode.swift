import GraphKitCore
import GraphKitRuntime

/// `effect.trimSilence`: removes the silence at the start and at the end of a stream, as podcast
/// and audiobook tools do (ffmpeg's `silenceremove` with `start_periods` and `stop_periods`),
/// keeping every pause in between. A frame is silent when every channel is under `threshold`
/// (``SilenceRule``, the rule of `analysis.silence`).
///
/// - The start: silent frames are dropped as they come, all but the last `padding` seconds of
///   the quiet start.
/// - Between sounds: a quiet stretch is held until sound returns, then sent whole. It is held
///   in at most ``memoryLimit`` bytes of memory, the rest in a temporary file with no name
///   (``HeldAudio``), so an hour of near-silence costs disk, not memory.
/// - The end: the quiet stretch going on when the stream ends is dropped, all but its first
///   `padding` seconds.
/// - `ends` trims both ends, or only the `start` or the `end`; a quiet start or end shorter than
///   `minimumDuration` is kept whole.
/// - An input with no sound at all (at least `minimumDuration` long) fails the run (70): trimming
///   would leave nothing. One shorter passes whole.
///
/// The output keeps the input's format (16-bit or float PCM, any rate and channel count); its
/// times run on from the first buffer's time, without a gap, a frame at a time (the first kept
/// frame takes the input's start time). `json` writes a ``SilenceTrimReport``.
///
/// Example:
/// ```json
/// "trim": { "type": "effect.trimSilence", "params": { "threshold": -50, "padding": 0.25, "json": "out/trim.json" } }
/// ```
public final class TrimSilenceNode: ProcessingNode, Sendable {
    /// The node sends its own buffers (a quiet stretch after it is decided); the input's are dropped.
    public static let bufferFlow = BufferFlow.passThrough

    /// The same declaration as `analysis.silence`'s: one range, one default, one meaning.
    public static let threshold = SilenceNode.threshold
    public static let padding = Parameter<Double>("padding", 0...10, default: 0.1,
                                                  help: "seconds of the silence kept at each trimmed end (next to the sound)")
    public static let minimumDuration = Parameter<Double>("minimumDuration", 0...86_400, default: 0,
                                                          help: "seconds: a quiet start or end shorter than this is kept whole")
    public static let ends = Parameter<TrimmedEnds>("ends", default: .both, help: "which ends are trimmed")
    public static let json = OptionalParameter<String>("json", format: .path, writesFile: true,
                                                       help: "write what was trimmed (seconds at the start, at the end, kept) here as JSON")

    public static let descriptor = NodeDescriptor(
        type: "effect.trimSilence",
        category: .effect,
        summary: "Removes the silence at the start and the end of the sound (level under a threshold), keeping pauses between sounds, sample-exactly",
        inputs: [PortDescriptor("in", .pcm(), help: "PCM audio")],
        outputs: [PortDescriptor("out", .pcm(), carries: .input("in"), help: "the same PCM without its quiet start and end")],
        parameters: [threshold, padding, minimumDuration, ends, json],
        example: #"{ "type": "effect.trimSilence", "params": { "threshold": -50, "padding": 0.25, "json": "out/trim.json" } }"#
    )

    /// The most bytes of a quiet stretch held in memory; the rest goes to a temporary file.
    public static let memoryLimit = 8 << 20

    let context: NodeContext
    let file: ReportFile?
    let memoryLimit: Int
    private struct State {
        var host: ProcessingHost?
        var trimmer: SilenceTrimmer?
        var start: MediaTime?
        var report: SilenceTrimReport?
    }
    private let state = Guarded(State())

    public convenience init(context: NodeContext) throws(GraphError) {
        try self.init(context: context, memoryLimit: Self.memoryLimit)
    }

    init(context: NodeContext, memoryLimit: Int) throws(GraphError) {
        self.context = context
        self.memoryLimit = memoryLimit
        file = ReportFile(Self.json, of: context)
    }

    /// What the node did, once its input has ended (nil before, or if no audio came).
    public var report: SilenceTrimReport? { state.withLock { $0.report } }

    /// The most bytes of quiet held at once in memory, and in the temporary file.
    public var mostHeld: (memory: Int, disk: Int) {
        state.withLock { s in (s.trimmer?.held.mostInMemory ?? 0, s.trimmer?.held.mostOnDisk ?? 0) }
    }

    public func attach(_ host: ProcessingHost) { state.withLock { $0.host = host } }

    public func prepare() throws(GraphError) { try file?.prepare() }

    public var outputs: [OutputReport] { file.map { [$0.report] } ?? [] }

    public func finish(_ outcome: RunStatus) throws(GraphError) { try file?.finish(outcome) }

    /// A seek: what came before it (a run's preroll, before an export's range) is forgotten, and
    /// the stream starts over, its quiet start trimmed again from the first buffer after it.
    public func streamWasFlushed() {
        state.withLock { s in
            guard let format = s.trimmer?.format else { return }
            s.trimmer = makeTrimmer(format)
            s.start = nil
        }
    }

    private func makeTrimmer(_ pcm: MediaFormat.PCMFormat) -> SilenceTrimmer {
        let p = context.parameters
        return SilenceTrimmer(format: pcm, rule: SilenceRule(thresholdDB: p[Self.threshold]), ends: p[Self.ends],
                              padding: p[Self.padding], minimumDuration: p[Self.minimumDuration],
                              memoryLimit: memoryLimit, node: context.id)
    }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        guard case .pcm(let pcm) = format else {
            throw GraphError(.runFailed, "effect.trimSilence takes PCM audio, got \(format)", node: context.id)
        }
        try state.withLock { (s) throws(GraphError) in
            if let old = s.trimmer?.format {
                guard old == pcm else {
                    throw GraphError(.runFailed, "the audio format changed mid-stream (\(MediaFormat.pcm(old)) to \(format))", node: context.id)
                }
                return
            }
            s.trimmer = makeTrimmer(pcm)
        }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        let (host, start) = try state.withLock { (s) throws(GraphError) in
            guard s.trimmer != nil else { throw GraphError(.runFailed, "PCM arrived before its format", node: context.id) }
            if s.start == nil { s.start = buffer.presentationTime ?? .zero }
            return (s.host, s.start ?? .zero)
        }
        // The trimmer leaves the lock while it sends (a send may wait on downstream), and is moved,
        // not copied: what it holds in memory is not duplicated.
        var trimmer = try taken()
        defer { state.withLock { $0.trimmer = trimmer } }
        let format = trimmer.format
        try buffer.withUnsafeBytes { (bytes) throws(GraphError) in
            try trimmer.add(bytes) { (out, at) throws(GraphError) in try send(out, at: at, from: start, format, host) }
        }
        return false
    }

    public func endOfStream() throws(GraphError) {
        guard state.withLock({ $0.trimmer != nil }) else { return }
        let (host, start) = state.withLock { s in (s.host, s.start ?? .zero) }
        var trimmer = try taken()
        defer { state.withLock { $0.trimmer = trimmer } }
        let format = trimmer.format
        try trimmer.finish { (out, at) throws(GraphError) in try send(out, at: at, from: start, format, host) }
        let report = trimmer.report(padding: context.parameters[Self.padding], minimumDuration: context.parameters[Self.minimumDuration])
        state.withLock { $0.report = report }
        try file?.write(report)
    }

    private func taken() throws(GraphError) -> SilenceTrimmer {
        guard let trimmer = state.withLock({ s in defer { s.trimmer = nil }; return s.trimmer }) else {
            throw GraphError(.runFailed, "PCM arrived before its format", node: context.id)
        }
        return trimmer
    }

    /// Sends `bytes` as the kept frames from index `at` on: timed on from the input's start.
    private func send(_ bytes: UnsafeRawBufferPointer, at: Int, from start: MediaTime, _ format: MediaFormat.PCMFormat,
                      _ host: ProcessingHost?) throws(GraphError) -> Bool {
        guard let host else { return true }
        let rate = Int32(clamping: format.sampleRate)
        let frames = bytes.count / format.bytesPerFrame
        let out = SampleBuffer(format: .pcm(format), bytes: bytes, presentationTime: start + MediaTime(value: Int64(at), timescale: rate),
                               duration: MediaTime(value: Int64(frames), timescale: rate))
        return try host.emit(out)
    }
}
