import Dispatch
@_spi(Engine) import GraphKitCore
@_spi(Engine) import GraphKitRuntime

/// One track of an ``AssetWriter``: what app code appends samples to, like `AVAssetWriterInput`.
///
/// Audio inputs take PCM (`SampleBuffer`s of `.pcm` format), video inputs raw frames (or use an
/// ``AssetWriterInputPixelBufferAdaptor``). Backpressure is AVFoundation's: append while
/// ``isReadyForMoreMediaData``, or let ``requestMediaDataWhenReady(on:using:)`` call you, or
/// call an `append`, which waits (blocking or suspending) while the encoder is behind.
///
/// Each append is checked: the input's media type, the same format as the first sample, a byte
/// count that fits the format, and a presentation time not earlier than the previous one. A
/// mistake throws a `usage` error naming the input and saying what to do. When writing ends
/// for any reason, a waiting append wakes and throws the writer's error.
public final class AssetWriterInput: @unchecked Sendable {
    public let mediaType: MediaType
    public let outputSettings: any OutputSettings

    private let lock = Lock()
    private weak var writer: AssetWriter?
    private var attached = false
    private var realTime = false
    private var media: MediaInput?
    private var pendingRequest: (queue: DispatchQueue, block: @Sendable () -> Void)?
    private var finished = false
    /// The first sample's format: every later one must have it (a frame's rate aside).
    private var format: MediaFormat?
    /// The first video frame, held until the second says the frame rate.
    private var heldFrame: SampleBuffer?
    private var frameRate: FrameRate?
    /// The last sample appended, on the source clock (set once the graph took it).
    private var last: Timing?
    /// How far appends have got on the source clock: the end of the last audio buffer, or the
    /// last frame's time. For the writer's watch on an append that cannot go on (see
    /// ``AssetWriter``).
    private var reached: MediaTime? { last?.reached }
    /// When the append calls now in progress began (nil: none is), and when anything last
    /// happened on this input (an append began or ended, a request, markAsFinished()).
    private var appendingSince: ContinuousClock.Instant?
    private var appendsInProgress = 0
    private var lastActivity = ContinuousClock.now
    private var requested = false

    public init(mediaType: MediaType, outputSettings: some OutputSettings) {
        self.mediaType = mediaType
        self.outputSettings = outputSettings
    }

    /// Whether samples come from a real-time source (a camera, a microphone), as in AVFoundation:
    /// readiness is then worked out for real time, ready again as soon as one more sample fits
    /// (not once the input has emptied), so that a source which drops what it cannot hand over
    /// (`alwaysDiscardsLateVideoFrames`) drops as few as it can. It never changes what happens to
    /// a sample `append` accepted: every one is written. Set it before writing starts.
    public var expectsMediaDataInRealTime: Bool {
        get { lock.withLock { realTime } }
        set { lock.withLock { realTime = newValue } }
    }

    /// Whether the encoder can take another sample now. False before writing starts, once the
    /// input is finished, and once writing has ended.
    public var isReadyForMoreMediaData: Bool {
        let (media, writer) = lock.withLock { finished ? (nil, nil) : (self.media, self.writer) }
        guard let media, let writer, writer.takesSamples else { return false }
        return media.isReadyForMoreMediaData
    }

    /// Calls `block` on `queue` whenever the input is ready for more, until it is finished or
    /// writing ends; the block appends while ``isReadyForMoreMediaData`` holds. May be called
    /// before writing starts: the calls begin once writing has started and the session with it
    /// (``AssetWriter/startSession(atSourceTime:)``), before which every append would fail.
    public func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        lock.withLock {
            requested = true
            lastActivity = .now
            pendingRequest = (queue, block)
        }
        // Handed on here if writing and the session have started, else by whichever of them
        // comes last (beginRequests takes the block once, so a race hands it on once).
        if lock.withLock({ self.writer })?.sessionStart != nil { beginRequests() }
    }

    /// Appends a sample, blocking the calling thread while the encoder is behind. From a Swift
    /// concurrency task, `await` the async `append`.
    @available(*, noasync, message: "blocks the thread; use await append(_:)")
    public func append(_ sampleBuffer: SampleBuffer) throws(GraphError) {
        let (media, ready, timing) = try prepare(sampleBuffer)
        appendBegins()
        defer { appendEnds() }
        do {
            for b in ready { try media.appendWaiting(b) }
        } catch {
            guard let (writer, reason) = writersReason(for: error) else { throw error }
            writer.waitUntilRunEnded()
            throw reason
        }
        lock.withLock { last = timing }
    }

    /// Appends a sample, suspending while the encoder is behind.
    public func append(_ sampleBuffer: SampleBuffer) async throws(GraphError) {
        let (media, ready, timing) = try prepare(sampleBuffer)
        appendBegins()
        defer { appendEnds() }
        do {
            for b in ready { try await media.append(b) }
        } catch {
            guard let (writer, reason) = writersReason(for: error) else { throw error }
            await writer.runEnded()
            throw reason
        }
        lock.withLock { last = timing }
    }

    private func appendBegins() {
        lock.withLock {
            if appendsInProgress == 0 { appendingSince = .now }
            appendsInProgress += 1
            lastActivity = .now
        }
    }

    private func appendEnds() {
        lock.withLock {
            appendsInProgress -= 1
            if appendsInProgress == 0 { appendingSince = nil }
            lastActivity = .now
        }
    }

    /// A waiting append woken because writing ended throws why it ended, as the writer says it
    /// (failed, with its error; cancelled), rather than the run's own account of it, once the
    /// run has ended (see ``AssetWriter/waitUntilRunEnded()``); nil while writing goes on.
    private func writersReason(for error: GraphError) -> (AssetWriter, GraphError)? {
        guard let writer = lock.withLock({ self.writer }), let reason = writer.endedReason(for: self) else { return nil }
        return (writer, reason)
    }

    /// Ends this track: no more samples. ``AssetWriter/finishWriting()`` finishes every input
    /// that is not finished yet.
    public func markAsFinished() {
        let (media, held): (MediaInput?, SampleBuffer?) = lock.withLock {
            guard !finished else { return (nil, nil) }
            finished = true
            lastActivity = .now
            let held = heldFrame
            heldFrame = nil
            return (self.media, held)
        }
        if let media {
            // A movie of one frame: no second frame said the rate; it shows for one frame of
            // the default rate (a picture with no duration is a movie of length 0, which players
            // and ffmpeg treat as empty).
            if var held {
                if held.duration == nil || held.duration! <= .zero,
                   case .rawVideo(let v)? = held.format {
                    let rate = Self.defaultFrameRate
                    held.format = .rawVideo(.init(pixelFormat: v.pixelFormat, width: v.width, height: v.height, frameRate: rate))
                    held.stampTiming(presentationTime: held.presentationTime, duration: Self.frameDuration(rate))
                }
                try? media.appendImmediately(held)
            }
            media.markAsFinished()
        }
    }

    /// The rate a movie of one frame states, and the duration its frame shows for: what
    /// AVFoundation's templates and most cameras use.
    static let defaultFrameRate = FrameRate(30)

    // MARK: For the writer

    var name: String { "\(mediaType.rawValue) input" }
    var nodeID: String { mediaType.rawValue }
    var isAttached: Bool { lock.withLock { attached } }

    func attach(to writer: AssetWriter) throws(GraphError) {
        try lock.withLock { () throws(GraphError) in
            guard !attached else { throw GraphError(.usage, at: name, "this input belongs to a writer already") }
            attached = true
            self.writer = writer
        }
    }

    func start(with media: MediaInput) throws(GraphError) {
        lock.withLock { self.media = media }
        if lock.withLock({ self.writer })?.sessionStart != nil { beginRequests() }
    }

    /// Writing and the session have started: a block waiting in requestMediaDataWhenReady is
    /// handed to the input, which calls it whenever it is ready.
    func beginRequests() {
        let (media, request): (MediaInput?, (queue: DispatchQueue, block: @Sendable () -> Void)?) = lock.withLock {
            guard let media = self.media, !finished else { return (nil, nil) }
            defer { pendingRequest = nil }
            return (media, pendingRequest)
        }
        if let media, let request { media.requestMediaDataWhenReady(on: request.queue, using: request.block) }
    }

    func finishForWriter() { markAsFinished() }

    /// Writing ended or is ending (cancelled, failed): this input is ready no more, its
    /// request block is called no more, and a waiting append wakes and throws `error`.
    func close(because error: GraphError) {
        let media = lock.withLock {
            finished = true
            heldFrame = nil
            pendingRequest = nil
            return self.media
        }
        media?.close(because: error)
    }

    /// What the writer's watch needs to know of this input (see ``AssetWriter``).
    struct Activity {
        let input: AssetWriterInput
        let finished: Bool
        let appendingSince: ContinuousClock.Instant?
        let lastActivity: ContinuousClock.Instant
        let requested: Bool
        let reached: MediaTime?
    }

    var activity: Activity {
        lock.withLock {
            Activity(input: self, finished: finished, appendingSince: appendingSince, lastActivity: lastActivity,
                     requested: requested, reached: reached)
        }
    }

    var writerForAdaptor: AssetWriter? { lock.withLock { writer } }

    // MARK: Checks

    /// Checks `buffer` and returns what to push now: nothing (held, or before the session), the
    /// buffer, or the held first frame and this one.
    private func prepare(_ buffer: SampleBuffer) throws(GraphError) -> (MediaInput, [SampleBuffer], Timing?) {
        let (writer, attached) = lock.withLock { (self.writer, self.attached) }
        guard let writer else {
            if attached {
                throw GraphError(.usage, at: name,
                                 "this input's AssetWriter is gone: nothing held it, so it was released (and its writing cancelled); hold the writer until finishWriting() returns")
            }
            throw GraphError(.usage, at: name, "add this input to an AssetWriter (add(_:)) and start writing before appending")
        }
        if let refusal = writer.refusal(for: self) { throw refusal }
        guard let session = writer.sessionStart else {
            throw GraphError(.usage, at: name, "call startSession(atSourceTime:) before appending")
        }
        guard let sampleFormat = buffer.format else {
            throw GraphError(.usage, at: name, "the sample has no format; give it one (.pcm for audio, .rawVideo for video)")
        }
        switch (mediaType, sampleFormat) {
        case (.audio, .pcm), (.video, .rawVideo): break
        case (.audio, _):
            throw GraphError(.usage, at: name, "an audio input takes PCM samples; this one is \(sampleFormat)")
        case (.video, _):
            throw GraphError(.usage, at: name, "a video input takes raw frames; this one is \(sampleFormat) (use AssetWriterInputPixelBufferAdaptor for pixel buffers)")
        }
        guard let pts = buffer.presentationTime else {
            throw GraphError(.usage, at: name, "the sample has no presentation time; set presentationTime (or append through the adaptor, with a time)")
        }
        return try lock.withLock { () throws(GraphError) -> (MediaInput, [SampleBuffer], Timing?) in
            guard !finished else { throw GraphError(.usage, at: name, "append after markAsFinished(); this input takes no more samples") }
            guard let media else { throw GraphError(.usage, at: name, "call startWriting() before appending") }
            if let format, !Self.sameStream(format, sampleFormat) {
                throw GraphError(.usage, at: name,
                                 "the sample is \(sampleFormat); this input's first sample was \(format): a writer input takes one format (convert before appending)")
            }
            let timing = try checkTiming(buffer, sampleFormat, pts: pts)
            if format == nil { format = sampleFormat }
            var b = buffer
            switch sampleFormat {
            case .pcm(let f):
                guard let trimmed = Self.fromSession(b, f, pts: pts, session: session) else { return (media, [], timing) }
                b = trimmed
                return (media, [b], timing)
            case .rawVideo(let v):
                guard pts >= session else { return (media, [], timing) }  // before the session: left out
                let time = pts - session
                if let rate = frameRate {
                    // Shown until the next frame, which is not here yet: as long as the spacing
                    // before it (so the last frame lasts as long as the one before).
                    let given = buffer.duration.flatMap { $0 > .zero ? $0 : nil }
                    b.format = .rawVideo(.init(pixelFormat: v.pixelFormat, width: v.width, height: v.height, frameRate: rate))
                    b.stampTiming(presentationTime: time, duration: given ?? timing.spacing ?? Self.frameDuration(rate))
                    return (media, [b], timing)
                }
                guard var held = heldFrame else {
                    // Held with timing of its own (a copy of the buffer's metadata when the app
                    // still holds the frame): stamping in place would give the app's pixel buffer
                    // this time, and the next append of that same buffer (a still shown for
                    // several frames) would restamp the held frame with its own time.
                    b.presentationTime = time
                    b.duration = nil
                    heldFrame = b
                    return (media, [], timing)
                }
                heldFrame = nil
                let rate = Self.frameRate(between: held.presentationTime ?? .zero, and: time)
                frameRate = rate
                for i in [0, 1] {
                    var frame = i == 0 ? held : b
                    guard case .rawVideo(let fv)? = frame.format else { continue }
                    frame.format = .rawVideo(.init(pixelFormat: fv.pixelFormat, width: fv.width, height: fv.height, frameRate: rate))
                    frame.stampTiming(presentationTime: i == 0 ? frame.presentationTime : time, duration: Self.frameDuration(rate))
                    if i == 0 { held = frame } else { b = frame }
                }
                return (media, [held, b], timing)
            default:
                return (media, [b], timing)
            }
        }
    }

    /// Where a sample is on the source clock: its start (its end too, for audio), the spacing
    /// from the frame before (video), and how far appends have got with it.
    struct Timing {
        var start: MediaTime
        var end: MediaTime?
        var spacing: MediaTime?
        var reached: MediaTime { end ?? start }
    }

    /// A sample must come after the one before: a frame at a later time than the previous
    /// frame (two frames at one time make a file whose decode times go backwards), and audio
    /// that starts where the previous buffer ended or later, give or take half a sample (times
    /// computed from seconds round). Under `lock`; the sample's timing, recorded once the graph
    /// takes the sample (a sample refused later, for its byte count say, leaves no trace).
    private func checkTiming(_ buffer: SampleBuffer, _ sampleFormat: MediaFormat, pts: MediaTime) throws(GraphError) -> Timing {
        if let last, pts < last.start {
            throw GraphError(.usage, at: name,
                             "the sample's time \(pts.seconds) s is earlier than the previous sample's \(last.start.seconds) s: append samples in time order")
        }
        switch sampleFormat {
        case .pcm(let f):
            let end = pts + MediaTime(value: Int64(buffer.frameCount), timescale: Int32(clamping: f.sampleRate))
            if let last, let lastEnd = last.end {
                let overlap = (lastEnd - pts).seconds * Double(f.sampleRate)
                guard overlap < 0.5 else {
                    throw GraphError(.usage, at: name,
                                     "the samples at \(pts.seconds) s overlap the previous buffer, which started at \(last.start.seconds) s and ends at \(lastEnd.seconds) s (\(Int(overlap.rounded())) samples in both): start each buffer where the previous one ends, or later")
                }
            }
            return Timing(start: pts, end: end)
        case .rawVideo:
            if let last, pts == last.start {
                throw GraphError(.usage, at: name,
                                 "the frame's time \(pts.seconds) s is the previous frame's time (\(last.start.seconds) s): each frame needs a later presentation time than the one before")
            }
            return Timing(start: pts, spacing: last.map { pts - $0.start })
        default:
            return Timing(start: pts)
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

    private static func frameDuration(_ rate: FrameRate) -> MediaTime? {
        guard rate.numerator > 0 else { return nil }
        return MediaTime(value: Int64(rate.denominator), timescale: Int32(clamping: rate.numerator))
    }
}
