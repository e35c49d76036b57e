import Dispatch
@_spi(Engine) import GraphKitCore
@_spi(Engine) import GraphKitRuntime
import MediaContainers

/// One track of an ``AssetWriter``: what app code appends samples to, like `AVAssetWriterInput`.
///
/// Audio inputs take PCM (`SampleBuffer`s of `.pcm` format), video inputs raw frames (or use an
/// ``AssetWriterInputPixelBufferAdaptor``). Backpressure is AVFoundation's: append while
/// ``isReadyForMoreMediaData``, or let ``requestMediaDataWhenReady(on:using:)`` call you, or
/// call an `append`, which waits (blocking or suspending) while the encoder is behind.
///
/// Each append is checked: the input's media type, the same format as the first sample, a byte
/// count that fits the format, and a presentation time not earlier than the previous one (the
/// graph input's checks, ``AppendOrder``'s rule for a track). A mistake throws a `usage` error
/// naming the input and saying what to do. When writing ends for any reason, a waiting append
/// wakes and throws the writer's error.
///
/// Its own state is a value, ``WriterInputState``, under a `Mutex` with its graph input; whether
/// appends are taken at all is the writer's (``WriterState``), which it asks once per append.
public final class AssetWriterInput: Sendable {
    public let mediaType: MediaType
    public let outputSettings: any OutputSettings

    private struct Locked {
        var state: WriterInputState
        weak var writer: AssetWriter?
        /// The graph input, once writing has started.
        var media: MediaInput?
        var transform = DisplayMatrix.identity
    }

    private let locked: Guarded<Locked>

    public init(mediaType: MediaType, outputSettings: some OutputSettings) {
        self.mediaType = mediaType
        self.outputSettings = outputSettings
        locked = Guarded(Locked(state: WriterInputState(name: "\(mediaType.rawValue) input")))
    }

    /// Whether samples come from a real-time source (a camera, a microphone), as in AVFoundation:
    /// readiness is then worked out for real time, ready again as soon as one more sample fits
    /// (not once the input has emptied), so that a source which drops what it cannot hand over
    /// (`alwaysDiscardsLateVideoFrames`) drops as few as it can. It never changes what happens to
    /// a sample `append` accepted: every one is written. Set it before writing starts.
    public var expectsMediaDataInRealTime: Bool {
        get { locked.withLock { $0.state.expectsMediaDataInRealTime } }
        set { locked.withLock { $0.state.expectsMediaDataInRealTime = newValue } }
    }

    /// How a video track is meant to be shown (`AVAssetWriterInput.transform`): written into the
    /// file as the track's display matrix, which players and ``AssetTrack/preferredTransform``
    /// read; the frames are stored as appended. A portrait recording from a sensor that
    /// delivers landscape frames sets a quarter turn, `DisplayMatrix(a: 0, b: 1, c: -1, d: 0,
    /// tx: 0, ty: 0)`. Set it before writing starts; an audio input's is not used.
    public var transform: DisplayMatrix {
        get { locked.withLock { $0.transform } }
        set { locked.withLock { $0.transform = newValue } }
    }

    /// Whether the encoder can take another sample now. False before writing starts, once the
    /// input is finished, and once writing has ended.
    public var isReadyForMoreMediaData: Bool {
        let (media, writer) = locked.withLock { l in l.state.isFinished ? (nil, nil) : (l.media, l.writer) }
        guard let media, let writer, writer.takesSamples else { return false }
        return media.isReadyForMoreMediaData
    }

    /// Calls `block` on `queue` whenever the input is ready for more, until it is finished or
    /// writing ends; the block appends while ``isReadyForMoreMediaData`` holds. May be called
    /// before writing starts: the calls begin once writing has started and the session with it
    /// (``AssetWriter/startSession(atSourceTime:)``), before which every append would fail.
    public func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        let (request, media, writer) = locked.withLock { l in
            (l.state.requestRegistered(.init(queue: queue, block: block)), l.media, l.writer)
        }
        writer?.note(.requested, from: self)
        if let request, let media { media.requestMediaDataWhenReady(on: request.queue, using: request.block) }
    }

    /// Appends a sample, blocking the calling thread while the encoder is behind. From a Swift
    /// concurrency task, `await` the async `append`.
    @available(*, noasync, message: "blocks the thread; use await append(_:)")
    public func append(_ sampleBuffer: SampleBuffer) throws(GraphError) {
        let (writer, session) = try begin()
        var reached: MediaTime?
        defer { writer.note(.appendEnds(reached: reached), from: self) }
        let (media, push, stamp) = try shape(sampleBuffer, session: session)
        do {
            for b in push { try media.appendAdmittedWaiting(b) { writer.note(.appendWaits, from: self) } }
            writer.appended(push.last?.presentationTime, to: self)
        } catch {
            guard let (reason, run) = writer.writingEnded(for: self) else { throw error }
            _ = run?.wait()
            throw reason
        }
        reached = stamp?.reached
    }

    /// Appends a sample, suspending while the encoder is behind.
    public func append(_ sampleBuffer: SampleBuffer) async throws(GraphError) {
        let (writer, session) = try begin()
        var reached: MediaTime?
        defer { writer.note(.appendEnds(reached: reached), from: self) }
        let (media, push, stamp) = try shape(sampleBuffer, session: session)
        do {
            for b in push { try await media.appendAdmitted(b) { writer.note(.appendWaits, from: self) } }
            writer.appended(push.last?.presentationTime, to: self)
        } catch {
            guard let (reason, run) = writer.writingEnded(for: self) else { throw error }
            _ = await run?.report()
            throw reason
        }
        reached = stamp?.reached
    }

    /// Ends this track: no more samples. ``AssetWriter/finishWriting()`` finishes every input
    /// that is not finished yet.
    public func markAsFinished() {
        let (finish, media, writer) = locked.withLock { l in (l.state.markAsFinished(), l.media, l.writer) }
        guard let finish else { return }
        writer?.note(.finished, from: self)
        guard finish.endStream, let media else { return }
        if let frame = finish.lastFrame { try? media.appendAdmittedImmediately(frame) }
        media.markAsFinished()
    }

    // MARK: For the writer

    var name: String { "\(mediaType.rawValue) input" }
    var nodeID: String { mediaType.rawValue }

    var candidate: WriterState.Candidate {
        WriterState.Candidate(name: name, mediaType: mediaType, settings: outputSettings,
                              belongsToAWriter: locked.withLock { $0.state.belongsToAWriter })
    }

    func attach(to writer: AssetWriter) throws(GraphError) {
        try locked.withLock { l throws(GraphError) in
            try l.state.attach()
            l.writer = writer
        }
    }

    /// Writing started: `media` is this input's end of the graph.
    func start(with media: MediaInput, sessionStarted: Bool) {
        let request = locked.withLock { l in
            l.media = media
            return l.state.writingStarted(sessionStarted: sessionStarted)
        }
        if let request { media.requestMediaDataWhenReady(on: request.queue, using: request.block) }
    }

    /// The writer's session started: a block waiting in requestMediaDataWhenReady is handed to
    /// the graph input, which calls it whenever it is ready.
    func sessionDidStart() {
        let (request, media) = locked.withLock { l in (l.state.sessionDidStart(), l.media) }
        if let request, let media { media.requestMediaDataWhenReady(on: request.queue, using: request.block) }
    }

    func finishForWriter() { markAsFinished() }

    /// Writing ended or is ending (cancelled, failed): this input is ready no more, its
    /// request block is called no more, and a waiting append wakes and throws `error`.
    func close(because error: GraphError) {
        let media = locked.withLock { l in
            l.state.close()
            return l.media
        }
        media?.close(because: error)
    }

    var writerForAdaptor: AssetWriter? { locked.withLock { $0.writer } }

    // MARK: Checks

    /// The writer, and the session's start, for an append that may go on; the writer has
    /// counted the append as begun (the caller notes its end).
    private func begin() throws(GraphError) -> (AssetWriter, MediaTime) {
        let (writer, added) = locked.withLock { ($0.writer, $0.state.belongsToAWriter) }
        guard let writer else {
            if added {
                throw GraphError(.usage, at: name,
                                 "this input's AssetWriter is gone: nothing held it, so it was released (and its writing cancelled); hold the writer until finishWriting() returns")
            }
            throw GraphError(.usage, at: name, "add this input to an AssetWriter (add(_:)) and start writing before appending")
        }
        return (writer, try writer.beginAppend(for: self))
    }

    /// Checks `buffer` and returns what to push now (nothing: held, or before the session; the
    /// buffer on the session's clock; or the held first frame and this one), with where it is
    /// in time order.
    private func shape(_ buffer: SampleBuffer, session: MediaTime) throws(GraphError) -> (MediaInput, [SampleBuffer], AppendOrder.Stamp?) {
        guard let format = buffer.format else {
            throw GraphError(.usage, at: name, "the sample has no format; give it one (.pcm for audio, .rawVideo for video)")
        }
        let passthrough = outputSettings is PassthroughSettings
        switch (mediaType, format) {
        case (.audio, .aac) where passthrough, (.video, .h264) where passthrough: break
        case _ where passthrough:
            throw GraphError(.usage, at: name, "this input writes samples as they are: it takes \(mediaType == .audio ? "AAC" : "H.264") samples (as a reader's .stored output gives them); this one is \(format)")
        case (.audio, .pcm), (.video, .rawVideo): break
        case (.audio, _):
            throw GraphError(.usage, at: name, "an audio input takes PCM samples; this one is \(format)")
        case (.video, _):
            throw GraphError(.usage, at: name, "a video input takes raw frames; this one is \(format) (use AssetWriterInputPixelBufferAdaptor for pixel buffers)")
        }
        guard buffer.presentationTime != nil else {
            throw GraphError(.usage, at: name, "the sample has no presentation time; set presentationTime (or append through the adaptor, with a time)")
        }
        return try locked.withLock { l throws(GraphError) in
            try l.state.check(format)
            guard let media = l.media else { throw GraphError(.usage, at: name, "call startWriting() before appending") }
            // The graph input's checks, and the time order of a track, on the times the app gave
            // (before anything is held or cut to the session).
            if passthrough {
                // Encoded samples go in decode order (B-frames' presentation times go back and
                // forth) and are written whole, on the session's clock.
                guard let stamp = try media.admit(buffer, format: format, rule: .notEarlier, at: name) else { return (media, [buffer], nil) }
                var shaped = l.state.shape(buffer, format, stamp: stamp, session: session)
                if session > .zero {
                    for i in shaped.indices {
                        shaped[i].presentationTime = shaped[i].presentationTime.map { $0 - session }
                        shaped[i].decodeTime = shaped[i].decodeTime.map { $0 - session }
                    }
                }
                return (media, shaped, stamp)
            }
            guard let stamp = try media.admit(buffer, format: format, rule: .track, at: name) else { return (media, [buffer], nil) }
            return (media, l.state.shape(buffer, format, stamp: stamp, session: session), stamp)
        }
    }
}
