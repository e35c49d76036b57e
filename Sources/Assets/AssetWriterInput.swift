import Dispatch
@_spi(Engine) import GraphKitCore
@_spi(Engine) import GraphKitRuntime
import MediaContainers
import Synchronization

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
/// Once added to a writer, an input is a handle: its state (``WriterInputState``) lives in the
/// writer's session, beside the writer's own (``WriterState``), under the session's one lock,
/// and each call here is one transition of that session (see ``AssetWriter``). What the app sets
/// before adding it (real time, transform, a request block) is kept in the input until
/// ``AssetWriter/add(_:)`` moves it into the session; once added, no call takes a lock of the
/// input's (the writer and slot are read with one atomic load).
public final class AssetWriterInput: Sendable {
    public let mediaType: MediaType
    public let outputSettings: any OutputSettings

    /// What the input holds before it is added: its state and transform, moved into the
    /// writer's session by add(_:) (`added`), after which every call goes to the session.
    struct Detached: Sendable {
        var state: WriterInputState
        var transform = DisplayMatrix.identity
        var added = false
    }

    private let detached: Guarded<Detached>

    /// The writer this input was added to, and its slot there; set once, by add(_:). The writer
    /// is held weakly: the app holds the writer (a writer let go cancels its writing).
    final class Attachment: Sendable {
        weak let writer: AssetWriter?
        let slot: Int

        init(writer: AssetWriter, slot: Int) {
            self.writer = writer
            self.slot = slot
        }
    }

    private let attachment = AtomicLazyReference<Attachment>()

    public init(mediaType: MediaType, outputSettings: some OutputSettings) {
        self.mediaType = mediaType
        self.outputSettings = outputSettings
        detached = Guarded(Detached(state: WriterInputState(name: "\(mediaType.rawValue) input")))
    }

    /// Whether samples come from a real-time source (a camera, a microphone), as in AVFoundation:
    /// readiness is then worked out for real time, ready again as soon as one more sample fits
    /// (not once the input has emptied), so that a source which drops what it cannot hand over
    /// (`alwaysDiscardsLateVideoFrames`) drops as few as it can. It never changes what happens to
    /// a sample `append` accepted: every one is written. Set it before writing starts.
    public var expectsMediaDataInRealTime: Bool {
        get {
            if let (writer, slot) = session, let value = writer.withSlot(slot, { $0.state.expectsMediaDataInRealTime }) { return value }
            return detached.withLock { $0.state.expectsMediaDataInRealTime }
        }
        set {
            configure { $0.state.expectsMediaDataInRealTime = newValue } added: { writer, slot in
                _ = writer.withSlot(slot) { $0.state.expectsMediaDataInRealTime = newValue }
            }
        }
    }

    /// How a video track is meant to be shown (`AVAssetWriterInput.transform`): written into the
    /// file as the track's display matrix, which players and ``AssetTrack/preferredTransform``
    /// read; the frames are stored as appended. A portrait recording from a sensor that
    /// delivers landscape frames sets a quarter turn, `DisplayMatrix(a: 0, b: 1, c: -1, d: 0,
    /// tx: 0, ty: 0)`. Set it before writing starts; an audio input's is not used.
    public var transform: DisplayMatrix {
        get {
            if let (writer, slot) = session, let value = writer.withSlot(slot, { $0.transform }) { return value }
            return detached.withLock { $0.transform }
        }
        set {
            configure { $0.transform = newValue } added: { writer, slot in _ = writer.withSlot(slot) { $0.transform = newValue } }
        }
    }

    /// Whether the encoder can take another sample now. False before writing starts, once the
    /// input is finished, and once writing has ended.
    public var isReadyForMoreMediaData: Bool {
        guard let (writer, slot) = session else { return false }
        return writer.isReady(slot)
    }

    /// Calls `block` on `queue` whenever the input is ready for more, until it is finished or
    /// writing ends; the block appends while ``isReadyForMoreMediaData`` holds. May be called
    /// before writing starts: the calls begin once writing has started and the session with it
    /// (``AssetWriter/startSession(atSourceTime:)``), before which every append would fail.
    public func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        let request = WriterInputState.Request(queue: queue, block: block)
        configure { _ = $0.state.requestRegistered(request) } added: { writer, slot in writer.request(slot, request) }
    }

    /// Appends a sample, blocking the calling thread while the encoder is behind. From a Swift
    /// concurrency task, `await` the async `append`.
    @available(*, noasync, message: "blocks the thread; use await append(_:)")
    public func append(_ sampleBuffer: SampleBuffer) throws(GraphError) {
        let (writer, slot) = try owner()
        let admitted = try writer.admit(sampleBuffer, to: slot)
        do {
            for b in admitted.push { try admitted.media.appendAdmittedWaiting(b) { writer.appendWaits(slot) } }
        } catch {
            guard let (reason, run) = writer.appendFailed(slot) else { throw error }
            _ = run?.wait()
            throw reason
        }
        writer.appended(admitted, to: slot)
    }

    /// Appends a sample, suspending while the encoder is behind.
    public func append(_ sampleBuffer: SampleBuffer) async throws(GraphError) {
        let (writer, slot) = try owner()
        let admitted = try writer.admit(sampleBuffer, to: slot)
        do {
            for b in admitted.push { try await admitted.media.appendAdmitted(b) { writer.appendWaits(slot) } }
        } catch {
            guard let (reason, run) = writer.appendFailed(slot) else { throw error }
            _ = await run?.report()
            throw reason
        }
        writer.appended(admitted, to: slot)
    }

    /// Ends this track: no more samples. ``AssetWriter/finishWriting()`` finishes every input
    /// that is not finished yet. The file is finished by finishWriting() alone: the last
    /// input's stream ends there, after what it tells the file (`endSession`'s time).
    public func markAsFinished() {
        configure { _ = $0.state.markAsFinished() } added: { writer, slot in writer.finish(slot) }
    }

    // MARK: For the writer

    var name: String { "\(mediaType.rawValue) input" }
    var nodeID: String { mediaType.rawValue }

    var candidate: WriterState.Candidate {
        WriterState.Candidate(name: name, mediaType: mediaType, settings: outputSettings,
                              belongsToAWriter: detached.withLock { $0.added || $0.state.belongsToAWriter })
    }

    /// add(_:), under the writer's lock: what was set on this input moves into the writer's
    /// session, at `slot`, and the input becomes a handle to it.
    func attach(to writer: AssetWriter, slot: Int) throws(GraphError) -> Detached {
        try detached.withLock { d throws(GraphError) in
            guard !d.added else { throw GraphError(.usage, at: name, "this input belongs to a writer already") }
            var moved = d
            try moved.state.attach()
            d.added = true
            attachment.storeIfNil(Attachment(writer: writer, slot: slot))
            return moved
        }
    }

    /// The writer it was added to, while the writer lives.
    package var writerForAdaptor: AssetWriter? { attachment.load()?.writer }

    /// Runs `added` with the writer and slot once the input is added (no lock of the input's),
    /// else `before` on what the input holds until then (under its lock, which add(_:) takes to
    /// move it: a call that races with add(_:) goes to the session).
    private func configure(_ before: (inout Detached) -> Void, added: (AssetWriter, Int) -> Void) {
        if let (writer, slot) = session { return added(writer, slot) }
        let wasAdded = detached.withLock { d in
            if !d.added { before(&d) }
            return d.added
        }
        if wasAdded, let (writer, slot) = session { added(writer, slot) }
    }

    /// The writer it was added to and its slot there; nil before add(_:), or once the writer is gone.
    private var session: (AssetWriter, Int)? {
        guard let a = attachment.load(), let writer = a.writer else { return nil }
        return (writer, a.slot)
    }

    /// The writer and the slot an append goes to, or why it cannot.
    private func owner() throws(GraphError) -> (AssetWriter, Int) {
        guard let a = attachment.load() else {
            throw GraphError(.usage, at: name, "add this input to an AssetWriter (add(_:)) and start writing before appending")
        }
        guard let writer = a.writer else {
            throw GraphError(.usage, at: name,
                             "this input's AssetWriter is gone: nothing held it, so it was released (and its writing cancelled); hold the writer until finishWriting() returns")
        }
        return (writer, a.slot)
    }
}
