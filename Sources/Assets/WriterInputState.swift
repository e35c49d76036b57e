import Dispatch
@_spi(Engine) import GraphKitCore
import GraphKitRuntime

/// An ``AssetWriterInput``'s own state: whether it belongs to a writer, writes, or is finished;
/// its request block until it can be handed on; and how samples become the file's (the first
/// sample's format, a first frame held until the second says the rate, the session's zero). A
/// value with no lock and no graph: the input keeps one under its `Mutex` and performs what the
/// transitions return. The writer's own state (``WriterState``) says whether appends are taken.
struct WriterInputState: Sendable {
    private enum Stage {
        case detached
        /// Added to a writer that has not started writing.
        case added
        /// Writing: its graph input is there.
        case writing
        /// markAsFinished(), finishWriting(), or writing ended: no more samples.
        case finished
    }

    /// A block given to requestMediaDataWhenReady(on:using:), until the input can call it.
    struct Request: Sendable {
        let queue: DispatchQueue
        let block: @Sendable () -> Void
    }

    let name: String
    private var stage = Stage.detached
    private var sessionStarted = false
    private var request: Request?
    var expectsMediaDataInRealTime = false
    /// The first sample's format: every later one must have it (a frame's rate aside).
    private var format: MediaFormat?
    /// The first video frame, held until the second says the frame rate (or the last one before
    /// the session), with its time on the session's clock: below 0 for a frame before the
    /// session, which a buffer's own (unsigned) timing cannot hold.
    private var held: (frame: SampleBuffer, time: MediaTime)?
    private var frameRate: FrameRate?

    init(name: String) {
        self.name = name
    }

    var belongsToAWriter: Bool { stage != .detached }
    var isFinished: Bool { stage == .finished }
    var isWriting: Bool { stage == .writing }

    /// add(_:) took this input.
    mutating func attach() throws(GraphError) {
        guard stage == .detached else { throw GraphError(.usage, at: name, "this input belongs to a writer already") }
        stage = .added
    }

    // MARK: Request blocks

    /// requestMediaDataWhenReady(on:using:): the block to hand to the graph input now, if writing
    /// and the session have started; else it waits for both.
    mutating func requestRegistered(_ request: Request) -> Request? {
        guard stage != .finished else { return nil }
        self.request = request
        return handOn()
    }

    /// Writing started: the graph input is there.
    mutating func writingStarted(sessionStarted: Bool) -> Request? {
        guard stage == .added else { return nil }
        stage = .writing
        self.sessionStarted = self.sessionStarted || sessionStarted
        return handOn()
    }

    /// The writer's session started.
    mutating func sessionDidStart() -> Request? {
        sessionStarted = true
        return handOn()
    }

    /// The block, taken once, when writing and the session have started: before both, every
    /// append it made would fail.
    private mutating func handOn() -> Request? {
        guard stage == .writing, sessionStarted else { return nil }
        defer { request = nil }
        return request
    }

    // MARK: The end

    /// markAsFinished(): nil if it was finished already; else whether to end the graph input's
    /// stream (it writes), with the held first frame to push before it, if any.
    mutating func markAsFinished() -> (endStream: Bool, lastFrame: SampleBuffer?)? {
        guard stage != .finished else { return nil }
        let wrote = stage == .writing
        stage = .finished
        request = nil
        defer { held = nil }
        // A frame before the session with none after it is never shown.
        let shown = held.flatMap { $0.time < .zero ? nil : $0.frame }
        return (wrote, wrote ? shown.map(Self.frameOfItsOwn) : nil)
    }

    /// Writing ended or is ending (cancelled, failed): nothing held is written.
    mutating func close() {
        stage = .finished
        request = nil
        held = nil
    }

    /// A movie of one frame: no second frame said the rate; it shows for one frame of the default
    /// rate (a picture with no duration is a movie of length 0, which players and ffmpeg treat as
    /// empty).
    private static func frameOfItsOwn(_ held: SampleBuffer) -> SampleBuffer {
        guard held.duration.map({ $0 <= .zero }) ?? true, case .rawVideo(let v)? = held.format else { return held }
        var frame = held
        let rate = defaultFrameRate
        frame.format = .rawVideo(.init(pixelFormat: v.pixelFormat, width: v.width, height: v.height, frameRate: rate))
        frame.stampTiming(presentationTime: held.presentationTime, duration: frameDuration(rate))
        return frame
    }

    /// The rate a movie of one frame states, and the duration its frame shows for: what
    /// AVFoundation's templates and most cameras use.
    static let defaultFrameRate = FrameRate(30)

    // MARK: Samples

    /// Throws, saying why, when this input cannot take a sample of `format` now.
    func check(_ format: MediaFormat) throws(GraphError) {
        switch stage {
        case .finished: throw GraphError(.usage, at: name, "append after markAsFinished(); this input takes no more samples")
        case .detached, .added: throw GraphError(.usage, at: name, "call startWriting() before appending")
        case .writing: break
        }
        if let first = self.format, !Self.sameStream(first, format) {
            throw GraphError(.usage, at: name,
                             "the sample is \(format); this input's first sample was \(first): a writer input takes one format (convert before appending)")
        }
    }

    /// What to push for `buffer`, admitted in time order as `stamp`, with the session starting at
    /// `session`: nothing (held, or before the session), the buffer on the session's clock, or the
    /// held first frame and this one.
    mutating func shape(_ buffer: SampleBuffer, _ sampleFormat: MediaFormat, stamp: AppendOrder.Stamp, session: MediaTime) -> [SampleBuffer] {
        if format == nil { format = sampleFormat }
        let pts = stamp.start
        var b = buffer
        switch sampleFormat {
        case .pcm(let f):
            return Self.fromSession(b, f, pts: pts, session: session).map { [$0] } ?? []
        case .rawVideo(let v):
            let time = pts - session
            guard time >= .zero else {
                // Before the session: the last such frame shows from the session's start until
                // the next frame, as the edit list AVFoundation writes shows it (capture's first
                // frame, a few milliseconds before the first sound that started the session).
                // It is held until that next frame; earlier ones are left out.
                guard frameRate == nil else { return [] }
                b.duration = nil
                held = (b, time)
                return []
            }
            if let rate = frameRate {
                // Shown until the next frame, which is not here yet: as long as the spacing
                // before it (so the last frame lasts as long as the one before).
                let given = buffer.duration.flatMap { $0 > .zero ? $0 : nil }
                b.format = .rawVideo(.init(pixelFormat: v.pixelFormat, width: v.width, height: v.height, frameRate: rate))
                b.stampTiming(presentationTime: time, duration: given ?? stamp.spacing ?? Self.frameDuration(rate))
                return [b]
            }
            if let before = held, before.time < .zero, time == .zero {
                held = nil  // the frame before the session ends where it starts: left out
            }
            guard let (first, heldTime) = held.map({ ($0.frame, $0.time) }) else {
                // Held with timing of its own (a copy of the buffer's metadata when the app
                // still holds the frame): stamping in place would give the app's pixel buffer
                // this time, and the next append of that same buffer (a still shown for
                // several frames) would restamp the held frame with its own time.
                b.presentationTime = time
                b.duration = nil
                held = (b, time)
                return []
            }
            held = nil
            var shownFirst = first
            let rate = Self.frameRate(between: heldTime, and: time)
            frameRate = rate
            for i in [0, 1] {
                var frame = i == 0 ? shownFirst : b
                guard case .rawVideo(let fv)? = frame.format else { continue }
                frame.format = .rawVideo(.init(pixelFormat: fv.pixelFormat, width: fv.width, height: fv.height, frameRate: rate))
                if i == 0, heldTime < .zero {
                    frame.stampTiming(presentationTime: .zero, duration: time)  // from the session's start
                } else {
                    frame.stampTiming(presentationTime: i == 0 ? heldTime : time, duration: Self.frameDuration(rate))
                }
                if i == 0 { shownFirst = frame } else { b = frame }
            }
            return [shownFirst, b]
        default:
            return [b]
        }
    }

    /// Two formats of one stream: equal, a video frame's rate aside (the writer sets it).
    private static func sameStream(_ a: MediaFormat, _ b: MediaFormat) -> Bool {
        if case .rawVideo(let x) = a, case .rawVideo(let y) = b {
            return x.pixelFormat == y.pixelFormat && x.width == y.width && x.height == y.height
        }
        return a == b
    }

    /// The PCM buffer on the session's clock, its samples before the session cut off; nil when
    /// it ends before the session starts.
    private static func fromSession(_ buffer: SampleBuffer, _ f: MediaFormat.PCMFormat, pts: MediaTime, session: MediaTime) -> SampleBuffer? {
        let frames = buffer.frameCount
        let rate = Int32(clamping: f.sampleRate)
        if pts >= session {
            var b = buffer
            b.stampTiming(presentationTime: pts - session, duration: MediaTime(value: Int64(frames), timescale: rate))
            return b
        }
        let skip = Int((session - pts).converted(to: rate).value)
        guard skip < frames else { return nil }
        let kept = buffer.withUnsafeBytes { Array($0[(skip * f.bytesPerFrame)...]) }
        return SampleBuffer(format: buffer.format, bytes: kept, presentationTime: .zero,
                            duration: MediaTime(value: Int64(frames - skip), timescale: rate))
    }

    /// The rate of frames `a` and `b` apart: the common NTSC rates and whole rates exactly,
    /// others as the nearest thousandth of a frame per second.
    static func frameRate(between a: MediaTime, and b: MediaTime) -> FrameRate {
        let seconds = (b - a).seconds
        guard seconds > 0 else { return FrameRate(0, 1) }
        let fps = 1 / seconds
        for (n, d) in [(24_000, 1001), (30_000, 1001), (60_000, 1001), (120_000, 1001)] where abs(fps - Double(n) / Double(d)) < 0.001 {
            return FrameRate(n, d)
        }
        if abs(fps - fps.rounded()) < 0.001 { return FrameRate(Int(fps.rounded())) }
        return FrameRate(Int((fps * 1000).rounded()), 1000)
    }

    static func frameDuration(_ rate: FrameRate) -> MediaTime? {
        guard rate.numerator > 0 else { return nil }
        return MediaTime(value: Int64(rate.denominator), timescale: Int32(clamping: rate.numerator))
    }
}
