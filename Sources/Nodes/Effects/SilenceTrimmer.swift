import GraphKitCore

/// What `effect.trimSilence` did, in seconds of the input's sample rate.
public struct SilenceTrimReport: Codable, Sendable, Equatable {
    /// The settings it trimmed with: dBFS, seconds, and which ends (`both`, `start`, `end`).
    public var thresholdDB: Double
    public var padding: Double
    public var minimumDuration: Double
    public var ends: String
    public var sampleRate: Int
    /// How long the input was, what was removed at its start and at its end, and what was sent
    /// (input − start − end).
    public var inputSeconds: Double
    public var trimmedStartSeconds: Double
    public var trimmedEndSeconds: Double
    public var keptSeconds: Double
}

/// Which ends of a stream `effect.trimSilence` trims.
public enum TrimmedEnds: String, Sendable, CaseIterable, ParameterEnum {
    case both, start, end
}

/// `effect.trimSilence`'s logic without a graph: interleaved PCM bytes in, the bytes to send out,
/// in order, sample-exactly. A frame is silent by ``SilenceRule``; a quiet stretch is a run of
/// silent frames.
///
/// - The quiet stretch before the first sounding frame (the start), when trimmed and at least
///   `minimumFrames` long, loses all but its last `paddingFrames`; it is dropped as it comes, so
///   no more than the padding (or the minimum, until it is reached) is held.
/// - A quiet stretch after sound is held (``HeldAudio``: bounded memory, the rest on disk) until
///   sound returns, when it is sent whole, or the stream ends: then, when the end is trimmed and
///   the stretch is at least `minimumFrames` long, only its first `paddingFrames` are sent.
/// - An input with no sounding frame, at least `minimumFrames` long, has nothing to keep: the
///   trimmer throws rather than send nothing (an empty file is seldom what anyone wanted).
struct SilenceTrimmer: Sendable {
    let format: MediaFormat.PCMFormat
    let rule: SilenceRule
    let ends: TrimmedEnds
    let paddingFrames: Int
    let minimumFrames: Int
    let node: String
    /// Held bytes are sent in pieces of at most this many frames.
    let piece: Int
    private(set) var held: HeldAudio
    /// Frames in the quiet stretch going on (at the start, those dropped too).
    private var run = 0
    private var heardSound = false
    private var stopped = false
    private(set) var frames = 0, sent = 0, trimmedStart = 0, trimmedEnd = 0

    init(format: MediaFormat.PCMFormat, rule: SilenceRule, ends: TrimmedEnds, padding: Double, minimumDuration: Double,
         memoryLimit: Int, node: String) {
        self.format = format
        self.rule = rule
        self.ends = ends
        paddingFrames = Int((padding * Double(format.sampleRate)).rounded())
        minimumFrames = Int((minimumDuration * Double(format.sampleRate)).rounded())
        self.node = node
        piece = max(1, min(65_536, memoryLimit / format.bytesPerFrame))
        held = HeldAudio(memoryLimit: memoryLimit, node: node)
    }

    /// Gets bytes to send and the index, among the frames sent, of their first; returns false
    /// once the run takes nothing more (then nothing more is sent).
    typealias Send = (UnsafeRawBufferPointer, Int) throws(GraphError) -> Bool

    var trimsStart: Bool { ends != .end }
    var trimsEnd: Bool { ends != .start }

    /// Takes interleaved frames; `send` gets what leaves, in order.
    mutating func add(_ bytes: UnsafeRawBufferPointer, send: Send) throws(GraphError) {
        let size = format.bytesPerFrame
        guard bytes.count % size == 0 else {
            throw GraphError(.runFailed, "a PCM buffer of \(bytes.count) bytes is not whole frames of \(size) bytes", node: node)
        }
        let n = bytes.count / size
        frames += n
        func part(_ from: Int, _ to: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[(from * size)..<(to * size)]) }
        guard let sound = soundingFrames(bytes) else {
            try quiet(part(0, n))
            return
        }
        try quiet(part(0, sound.lowerBound))
        // Sound: what was held is sent (the start's padding, or a pause between sounds).
        heardSound = true
        run = 0
        try sendHeld(frames: held.count / size, send)
        try forward(part(sound.lowerBound, sound.upperBound + 1), send)
        try quiet(part(sound.upperBound + 1, n))
    }

    /// The stream has ended: the quiet stretch going on is the end.
    mutating func finish(send: Send) throws(GraphError) {
        defer { try? held.removeAll() }
        guard run > 0 else { return }
        let rate = Double(format.sampleRate)
        if !heardSound && run >= minimumFrames {
            throw GraphError(.runFailed, "the input is silent throughout (\(Double(run) / rate) s, no sample at or over \(rule.thresholdDB) dBFS): "
                             + "trimming its silence leaves nothing; lower threshold, or raise minimumDuration past the input's length to pass it whole",
                             node: node)
        }
        var keep = run
        if heardSound && trimsEnd && run >= minimumFrames {
            keep = min(run, paddingFrames)
            trimmedEnd = run - keep
        }
        try sendHeld(frames: keep, send)
    }

    /// The report, with the settings it was made with.
    func report(padding: Double, minimumDuration: Double) -> SilenceTrimReport {
        let rate = Double(format.sampleRate)
        return SilenceTrimReport(thresholdDB: rule.thresholdDB, padding: padding, minimumDuration: minimumDuration, ends: ends.rawValue,
                                 sampleRate: format.sampleRate, inputSeconds: Double(frames) / rate,
                                 trimmedStartSeconds: Double(trimmedStart) / rate, trimmedEndSeconds: Double(trimmedEnd) / rate,
                                 keptSeconds: Double(sent) / rate)
    }

    private func soundingFrames(_ bytes: UnsafeRawBufferPointer) -> ClosedRange<Int>? {
        switch format.sampleFormat {
        case .s16le:
            rule.soundingFrames(in: UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: Int16.self), count: bytes.count / 2),
                                channels: format.channels)
        case .f32le:
            rule.soundingFrames(in: UnsafeBufferPointer(start: bytes.baseAddress?.assumingMemoryBound(to: Float.self), count: bytes.count / 4),
                                channels: format.channels)
        }
    }

    /// Silent frames: held; at a trimmed start, once the stretch is long enough to be trimmed,
    /// all but the last `paddingFrames` are dropped.
    private mutating func quiet(_ bytes: UnsafeRawBufferPointer) throws(GraphError) {
        guard !bytes.isEmpty else { return }
        let size = format.bytesPerFrame
        run += bytes.count / size
        try held.append(bytes)
        if !heardSound && trimsStart && run >= minimumFrames {
            let excess = held.count / size - paddingFrames
            if excess > 0 {
                try held.dropFirst(excess * size)
                trimmedStart += excess
            }
        }
    }

    /// Sends the first `frames` held, a piece at a time, and forgets the rest.
    private mutating func sendHeld(frames: Int, _ send: Send) throws(GraphError) {
        let size = format.bytesPerFrame
        var left = frames
        while left > 0 && !stopped {
            let bytes = try held.removeFirst(upTo: min(left, piece) * size)
            guard !bytes.isEmpty else { break }
            left -= bytes.count / size
            try bytes.withUnsafeBytes { b in Result { () throws(GraphError) in try forward(b, send) } }.get()
        }
        try held.removeAll()
    }

    private mutating func forward(_ bytes: UnsafeRawBufferPointer, _ send: Send) throws(GraphError) {
        guard !bytes.isEmpty, !stopped else { return }
        let first = sent
        sent += bytes.count / format.bytesPerFrame
        if try !send(bytes, first) { stopped = true }
    }
}
