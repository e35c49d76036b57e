import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime

/// What `effect.normalize` did: the loudness it found and the loudness it gave, per EBU R128.
public struct NormalizationReport: Codable, Sendable, Equatable {
    /// `two-pass`, `live`, or `gain` (one pass at a gain given by the graph: ``NormalizeNode/gain``).
    public var mode: String
    public var targetLUFS: Double
    public var truePeakCeilingDBTP: Double
    /// The gain applied before the limiter, in dB: two-pass, the one gain; live, the last.
    public var gainDB: Double
    /// How long the limiter turned the sound down, in seconds.
    public var limitedSeconds: Double
    /// The input and the output, measured as `analysis.loudness` measures.
    public var input: LoudnessMeasurement
    public var output: LoudnessMeasurement
}

/// `effect.normalize`: loudness normalization to a target integrated loudness (LUFS) under a
/// true-peak ceiling (dBTP), as EBU R128 and the streaming platforms ask.
///
/// - `two-pass` (files): the input is measured whole (``LoudnessMeter``) while it is kept aside
///   in a temporary file with no name; at its end one gain, target − measured, is applied to it
///   all as it is read back, and ``TruePeakLimiter`` turns down only the peaks that gain would
///   push over the ceiling. The stream leaves the node after its input has ended.
/// - `live` (one pass): the sound is held for `lookAhead` seconds; the gain moves toward target −
///   the gated loudness of the last 10 s measured (which runs `lookAhead` ahead of what leaves),
///   at most 2 dB a second, within ±30 dB, the first gain set at once from the first window.
///
/// - `gain` given (one pass, measured first): the gain an earlier two-pass run of the same sound
///   reported (its ``NormalizationReport/gainDB``) is applied as the sound streams, through the
///   same limiter: ffmpeg loudnorm's second run with its first run's figures. This is how a sound
///   beside pictures or a range of a file is normalized (`graphctl export --normalize` does it):
///   nothing is held, so a muxer waiting for the sound never waits for the whole of it.
///
/// The limiter adds 5 ms of delay, the output keeps the input's format (32-bit float,
/// any rate from 4 kHz, 1 to 64 channels) and times, and a sample that is not a finite number
/// becomes silence. `json` writes a ``NormalizationReport``.
///
/// Example:
/// ```json
/// "norm": { "type": "effect.normalize", "params": { "target": -16, "truePeak": -1 } }
/// ```
public final class NormalizeNode: ProcessingNode, Sendable {
    /// The node sends its own buffers (delayed, or after the input's end); the input's are dropped.
    public static let bufferFlow = BufferFlow.passThrough

    public enum Mode: String, Sendable, CaseIterable, ParameterEnum {
        case twoPass = "two-pass", live
    }

    public static let target = Parameter<Double>("target", -70...(-5), default: -16,
                                                 help: "integrated loudness to reach, LUFS (-23 EBU R128 broadcast, -16 podcasts, -14 streaming)")
    public static let truePeak = Parameter<Double>("truePeak", -20...0, default: -1, help: "true-peak ceiling, dBTP")
    public static let mode = Parameter<Mode>("mode", default: .twoPass,
                                             help: "two-pass: measure the whole input, then one gain; live: one pass, a gain that follows")
    public static let lookAhead = Parameter<Double>("lookAhead", 0.5...10, default: 3,
                                                    help: "live: seconds held back and measured before they leave")
    /// Any gain a two-pass measurement can report: down to the loudest float sound (about
    /// +771 dBFS) brought to the quietest target, up to the quietest sound measured (−70 LUFS,
    /// BS.1770's gate) brought to the loudest. A +80 dBFS float WAV's −92 dB was refused here
    /// when `export --normalize` passed it on.
    public static let gain = OptionalParameter<Double>("gain", -850...80,
                                                       help: "dB: one pass at this gain (an earlier two-pass report's gainDB: measure first, then apply), peaks limited; not with live")
    public static let json = OptionalParameter<String>("json", format: .path, writesFile: true, help: "write the report (before, after, gain) here as JSON")

    public static let descriptor = NodeDescriptor(
        type: "effect.normalize",
        category: .effect,
        summary: "Loudness normalization (EBU R128): a target in LUFS under a true-peak ceiling, two-pass or live",
        inputs: [PortDescriptor("in", .pcm([.f32le], sampleRates: LoudnessMeter.lowestRate...768_000), help: "float PCM audio")],
        outputs: [PortDescriptor("out", .pcm([.f32le], sampleRates: LoudnessMeter.lowestRate...768_000), carries: .input("in"),
                                 help: "the same PCM at the target loudness")],
        parameters: [target, truePeak, mode, lookAhead, gain, json],
        example: #"{ "type": "effect.normalize", "params": { "target": -16, "truePeak": -1 } }"#
    )

    /// Live: how fast the gain may move (dB a second), how far (dB), over what it steers (s).
    static let liveSlew = 2.0, liveRange = 30.0, liveMemory = 10.0
    /// The limiter aims this far under the ceiling (dB), for the estimators that measure after it.
    static let margin = 0.05

    let context: NodeContext
    let settings: (target: Double, ceiling: Double, mode: Mode, lookAhead: Double, gain: Double?)
    let file: ReportFile?
    private struct State {
        var host: ProcessingHost?
        var format: MediaFormat.PCMFormat?
        var start: MediaTime?
        var before: LoudnessMeter?
        var after: LoudnessMeter?
        var limiter: TruePeakLimiter?
        var spill: SpillFile?
        var held: [[Float]] = []  // live: what waits, oldest first
        var heldFrames = 0
        var gainDB: Double?
        var emitted = 0
        var report: NormalizationReport?
        /// Why the spill file of two passes could not be made (after a flush, thrown by the next buffer).
        var spillFailure: GraphError?
    }
    private let state = Guarded(State())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let p = context.parameters
        settings = (p[Self.target], p[Self.truePeak], p[Self.mode], p[Self.lookAhead], p[Self.gain])
        if settings.gain != nil, settings.mode == .live {
            throw GraphError(.invalidGraph, at: context.location(parameter: "gain"),
                             "a gain given is applied in one pass, and live mode sets its own as it goes: give gain or mode live, not both", node: context.id)
        }
        file = ReportFile(Self.json, of: context)
    }

    /// What the node did, once its input has ended (nil before, or if no audio came).
    public var report: NormalizationReport? { state.withLock { $0.report } }

    public func attach(_ host: ProcessingHost) { state.withLock { $0.host = host } }

    public func prepare() throws(GraphError) { try file?.prepare() }

    public var outputs: [OutputReport] { file.map { [$0.report] } ?? [] }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        state.withLock { $0.spill = nil }
        try file?.finish(outcome)
    }

    /// A seek: what came before it (a run's preroll, before an export's range) is neither
    /// measured nor sent, and the times start again from the first buffer after it.
    public func streamWasFlushed() {
        state.withLock { s in
            guard let f = s.format else { return }
            s = State(host: s.host, format: f)
            begin(&s, f)
        }
    }

    /// The meters and the limiter for `f`, and the spill file of two passes.
    private func begin(_ s: inout State, _ f: MediaFormat.PCMFormat) {
        s.before = LoudnessMeter(sampleRate: f.sampleRate, channels: f.channels)
        s.after = LoudnessMeter(sampleRate: f.sampleRate, channels: f.channels)
        s.limiter = TruePeakLimiter(channels: f.channels, sampleRate: f.sampleRate, ceilingDB: settings.ceiling - Self.margin)
        s.gainDB = settings.gain
        s.spill = nil
        if settings.mode == .twoPass, settings.gain == nil {
            do { s.spill = try SpillFile(node: context.id) } catch { s.spillFailure = error }
        }
    }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        guard case .pcm(let pcm) = format, pcm.sampleFormat == .f32le else {
            throw GraphError(.runFailed, "effect.normalize takes 32-bit float PCM, got \(format)", node: context.id)
        }
        try state.withLock { (s) throws(GraphError) in
            if let old = s.format {
                guard old.sampleRate == pcm.sampleRate, old.channels == pcm.channels else {
                    throw GraphError(.runFailed, "the audio format changed mid-stream (\(old.sampleRate) Hz \(old.channels) ch to \(pcm.sampleRate) Hz \(pcm.channels) ch)",
                                     node: context.id)
                }
                return
            }
            s.format = pcm
            begin(&s, pcm)
            if let failure = s.spillFailure { throw failure }
        }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        let out = try state.withLock { (s) throws(GraphError) -> SampleBuffer? in
            guard let f = s.format else { throw GraphError(.runFailed, "PCM arrived before its format", node: context.id) }
            if let failure = s.spillFailure { throw failure }
            if s.start == nil { s.start = buffer.presentationTime ?? .zero }
            var samples: [Float] = []
            buffer.withAudioSamples(as: Float.self) { input in
                s.before?.add(input)
                samples = input.map { $0.isFinite ? $0 : 0 }
            }
            if let spill = s.spill {
                try spill.append(samples)
                return nil
            }
            var output: [Float] = []
            if let gain = settings.gain {
                let g = Self.linear(gain)
                samples.withUnsafeBufferPointer { s.limiter?.process($0, gainFrom: g, to: g, into: &output) }
                return made(&s, output)
            }
            s.held.append(samples)
            s.heldFrames += samples.count / f.channels
            while s.heldFrames - (s.held.first?.count ?? 0) / f.channels >= Int(settings.lookAhead * Double(f.sampleRate)) {
                liveStep(&s, f, into: &output)
            }
            return made(&s, output)
        }
        if let out, let host = state.withLock({ $0.host }) { try host.emit(out) }
        return false
    }

    /// Live: the oldest held chunk leaves, its gain ramped toward where the measurement points.
    private func liveStep(_ s: inout State, _ f: MediaFormat.PCMFormat, into output: inout [Float]) {
        let chunk = s.held.removeFirst()
        let frames = chunk.count / f.channels
        s.heldFrames -= frames
        let wanted = s.before?.recentLoudness(seconds: Self.liveMemory).map { max(-Self.liveRange, min(Self.liveRange, settings.target - $0)) }
        let from = s.gainDB ?? wanted ?? 0
        var to = from
        if let wanted {
            let most = Self.liveSlew * Double(frames) / Double(f.sampleRate)
            to = from + max(-most, min(most, wanted - from))
        }
        s.gainDB = to
        chunk.withUnsafeBufferPointer { s.limiter?.process($0, gainFrom: Self.linear(from), to: Self.linear(to), into: &output) }
    }

    static func linear(_ db: Double) -> Float { Float(pow(10, db / 20)) }

    /// A buffer of `samples` after those emitted so far, measured on the way out.
    private func made(_ s: inout State, _ samples: [Float]) -> SampleBuffer? {
        guard let f = s.format, !samples.isEmpty else { return nil }
        samples.withUnsafeBufferPointer { s.after?.add($0) }
        let frames = samples.count / f.channels
        let rate = Int32(clamping: f.sampleRate)
        let time = (s.start ?? .zero) + MediaTime(value: Int64(s.emitted), timescale: rate)
        s.emitted += frames
        return samples.withUnsafeBytes {
            SampleBuffer(format: .pcm(f), bytes: $0, presentationTime: time, duration: MediaTime(value: Int64(frames), timescale: rate))
        }
    }

    /// Two-pass: the gain, target − measured; where the limiter will take some of it back (the
    /// input's true peak raised by that gain passes the ceiling), trial passes over the kept input
    /// (limited and measured, nothing sent) raise it by what the output fell short, up to
    /// ``trials`` times and ``mostExtra`` dB (the secant method), keeping the gain that came closest.
    private func twoPassGain(_ spill: SpillFile, _ f: MediaFormat.PCMFormat, _ input: LoudnessMeasurement) throws(GraphError) -> Double {
        guard let integrated = input.integratedLUFS else { return 0 }  // silence stays silent
        let plain = settings.target - integrated
        guard let peak = input.truePeakDBTP, peak + plain > settings.ceiling - Self.margin else { return plain }
        var gain = plain, best = (gain: plain, miss: Double.infinity), last = (gain: 0.0, reached: integrated)
        for _ in 0..<Self.trials {
            var limiter = TruePeakLimiter(channels: f.channels, sampleRate: f.sampleRate, ceilingDB: settings.ceiling - Self.margin)
            var meter = LoudnessMeter(sampleRate: f.sampleRate, channels: f.channels)
            try readBack(spill, gainDB: gain, through: &limiter) { output in
                output.withUnsafeBufferPointer { meter.add($0) }
                return true
            }
            guard let reached = meter.measurement.integratedLUFS else { break }
            let miss = settings.target - reached
            if abs(miss) < abs(best.miss) { best = (gain, miss) }
            if abs(miss) <= 0.05 { break }
            // The secant through the last two trials (the first from no gain at all): the limiter
            // takes back a growing share of each added dB.
            let slope = (reached - last.reached) / (gain - last.gain)
            last = (gain, reached)
            gain = min(plain + Self.mostExtra, gain + miss / max(0.05, slope))
        }
        return best.gain
    }

    /// Reads the kept input back through `limiter` at `gainDB`, handing what comes out to `body`
    /// a piece at a time, the limiter's tail last; `body` returning false stops it.
    private func readBack(_ spill: SpillFile, gainDB: Double, through limiter: inout TruePeakLimiter,
                          _ body: ([Float]) throws(GraphError) -> Bool) throws(GraphError) {
        let g = Self.linear(gainDB)
        var offset = 0
        while true {
            let chunk = try spill.read(at: offset, count: 65_536)
            offset += chunk.count
            var output: [Float] = []
            if chunk.isEmpty { limiter.flush(into: &output) } else {
                chunk.withUnsafeBufferPointer { limiter.process($0, gainFrom: g, to: g, into: &output) }
            }
            guard try body(output), !chunk.isEmpty else { return }
        }
    }

    /// Trial passes at most, and the most gain they add to target − measured (dB).
    static let trials = 4, mostExtra = 12.0

    public func endOfStream() throws(GraphError) {
        guard let host = state.withLock({ $0.host }) else { return }
        if let (spill, f, input) = state.withLock({ s -> (SpillFile, MediaFormat.PCMFormat, LoudnessMeasurement)? in
            guard let spill = s.spill, let f = s.format, let before = s.before else { return nil }
            return (spill, f, before.measurement)
        }) {
            let gain = try twoPassGain(spill, f, input)
            state.withLock { $0.gainDB = gain }
            // Measuring only (the first of two runs: the gain is what was wanted): nothing to send.
            guard context.connectedOutputs.contains("out") else { return try reportAtEnd() }
            // The second pass, each piece sent before the next is read; a run that is ending takes
            // no more, and the rest is left.
            var limiter = TruePeakLimiter(channels: f.channels, sampleRate: f.sampleRate, ceilingDB: settings.ceiling - Self.margin)
            defer { state.withLock { $0.limiter = limiter } }
            try readBack(spill, gainDB: gain, through: &limiter) { (output) throws(GraphError) in
                guard let out = state.withLock({ made(&$0, output) }) else { return true }
                return try host.emit(out)
            }
        } else {
            let out = state.withLock { s -> SampleBuffer? in
                guard let f = s.format else { return nil }
                var output: [Float] = []
                while !s.held.isEmpty { liveStep(&s, f, into: &output) }
                s.limiter?.flush(into: &output)
                return made(&s, output)
            }
            if let out { try host.emit(out) }
        }
        try reportAtEnd()
    }

    /// The report, from the meters before and after (after: nothing, when nothing was sent).
    private func reportAtEnd() throws(GraphError) {
        let report = state.withLock { s -> NormalizationReport? in
            guard let before = s.before, before.framesSeen > 0, let after = s.after, let f = s.format else { return nil }
            s.report = NormalizationReport(mode: settings.gain == nil ? settings.mode.rawValue : "gain", targetLUFS: settings.target, truePeakCeilingDBTP: settings.ceiling,
                                           gainDB: LoudnessMeter.rounded(s.gainDB ?? 0),
                                           limitedSeconds: Double(s.limiter?.limitedFrames ?? 0) / Double(f.sampleRate),
                                           input: before.measurement, output: after.measurement)
            return s.report
        }
        if let report { try file?.write(report) }
    }
}
