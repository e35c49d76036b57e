import FoundationEssentials
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// Encodes and writes samples into an MP4, MOV or M4A file, like `AVAssetWriter`.
///
/// ```swift
/// let writer = try AssetWriter(outputPath: "out/movie.mp4", fileType: .mp4)
/// let input = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 1280, height: 720))
/// let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: input)
/// try writer.add(input)
/// try writer.startWriting()
/// writer.startSession(atSourceTime: .zero)
/// for n in 0..<300 {
///     var frame = try adaptor.pixelBufferPool!.makePixelBuffer()
///     frame.withUnsafeMutableBytes { draw(n, into: $0) }
///     try adaptor.append(frame, withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
/// }
/// try await writer.finishWriting()
/// ```
///
/// Underneath it is a graph: a `source.app` per input, `encode.h264` or `encode.aac`, and one
/// `sink.mp4`, built when writing starts, with the engine's backpressure (an input is ready for
/// more while its encoder keeps up), checks and errors. Several inputs (one audio, one video)
/// are interleaved by the muxer.
///
/// The muxer interleaves by time, so one input can run ahead of another by only so much
/// (``intoTheMuxer``): appending all of one track and then the other from one loop would wait
/// for ever. The writer watches for that (``StallWatch``): an append that has waited 10 s while
/// another input, at least 5 s behind it, got nothing for as long (no append, no
/// `markAsFinished()`, no request block) fails, and the writer with it, saying how to feed both.
///
/// The writer and its inputs are one session with one owner: the writer's state, a value
/// (``WriterState``: status, session, finishing, the stall rule), each input's
/// (``WriterInputState``), the graph inputs and the run are kept together under one lock
/// (``SessionLock``). An ``AssetWriterInput`` added to it is a handle that holds no lock: each
/// of its calls is a transition of the session (WriterSession.swift), and the writer or the
/// input performs what it returns outside the lock. An appended sample takes the lock twice on
/// the steady path. Time comes from an ``AlarmClock``: the machine's, or a test's.
///
/// Where AVFoundation raises an exception for a call in the wrong state, this throws a
/// ``GraphError`` that says what to do. However writing ends (failure, ``cancelWriting()``, or
/// the writer let go while writing), nothing is left under the output's name: the file is
/// written under a temporary name and renamed only when complete.
public final class AssetWriter: Sendable {
    /// Where writing is, like `AVAssetWriter.Status`.
    public enum Status: String, Sendable {
        case unknown, writing, completed, failed, cancelled
    }

    /// The file written; empty for a writer of segments (``init(contentType:)``).
    public let outputPath: String
    public let fileType: FileType
    let clock: any AlarmClock
    /// Whether this writer gives out segments instead of writing a file.
    public let writesSegments: Bool

    /// One input's place in the session: the handle the app holds, its state (``WriterInputState``)
    /// and, once writing has started, its end of the graph.
    struct InputSlot: Sendable {
        let input: AssetWriterInput
        var state: WriterInputState
        var transform: DisplayMatrix
        var media: MediaInput?
    }

    /// A graph input to close as writing ends, with its input's name.
    typealias Closing = (media: MediaInput, name: String)

    /// The writer session: the writer's and its inputs' state, reached only through ``locked``.
    struct Locked {
        var state: WriterState
        var inputs: [InputSlot] = []
        var run: GraphRun?
        var optimizeForNetworkUse = false
        var fragmentInterval: MediaTime?
        var metadata = MediaMetadata()
        /// endSession(atSourceTime:)'s time, in the samples' clock.
        var sessionEnd: MediaTime?
        var segments = SegmentSettings()
        /// The latest presentation time appended to each input, on the session's clock.
        var appended: [String: MediaTime] = [:]
        /// The first failure a layer above reported (``fail(because:reporting:)``), as it made it.
        var reported: (any Error & Sendable)?
        /// Whether passthrough samples keep their own times (``AssetWriter/keepsSourceTimes(_:)``),
        /// decided as writing starts.
        var sourceClock = false
        /// ``AssetWriter/clockOffset``.
        var clockOffset = MediaTime.zero
        /// The last input's end of stream, held until ``AssetWriter/finishWriting()`` (with the
        /// frame it held, if any): the index is written once every stream has ended, and what
        /// finishWriting() tells the file (the session's end, where passthrough tracks start)
        /// must reach it before.
        var heldEnd: (media: MediaInput, lastFrame: SampleBuffer?)?

        /// A run that failed on its own (an encoder, a full disk) fails the writer at once.
        mutating func refresh() {
            guard let report = run?.finalReport, report.status == .failed else { return }
            state.runFailed(report.error)
        }

        /// The state once the run's end is taken in: what `status` and `error` read.
        mutating func current() -> WriterState {
            refresh()
            return state
        }

        /// Closes every input (writing ended or is ending): each is ready no more and its request
        /// block is called no more; returns the graph inputs to close, with each input's name.
        mutating func closeInputs() -> [Closing] {
            var closing: [Closing] = []
            for i in inputs.indices {
                inputs[i].state.close()
                if let media = inputs[i].media { closing.append((media, inputs[i].input.name)) }
            }
            return closing
        }
    }

    /// The session's one lock: every call on the writer or on one of its inputs is one or two
    /// transitions under it (see ``SessionLock``).
    let locked: SessionLock<Locked>

    /// A writer of `fileType` to `outputPath`. Missing folders are made when writing starts; a
    /// file already there is replaced only once the new one is complete.
    public convenience init(outputPath: String, fileType: FileType) throws(GraphError) {
        try self.init(outputPath: outputPath, fileType: fileType, clock: SystemAlarmClock())
    }

    /// A writer whose rules run on `clock` (a test's virtual one, say).
    package init(outputPath: String, fileType: FileType, clock: any AlarmClock) throws(GraphError) {
        guard !outputPath.isEmpty else {
            throw GraphError(.usage, at: "outputPath", "the output path is empty; name the file to write")
        }
        var isDirectory = false
        if FileManager.default.fileExists(atPath: outputPath, isDirectory: &isDirectory), isDirectory {
            throw GraphError(.outputUnwritable, at: outputPath, "cannot write \"\(outputPath)\": it is a folder; name a file in it")
        }
        self.outputPath = outputPath
        self.fileType = fileType
        self.clock = clock
        writesSegments = false
        locked = SessionLock(Locked(state: WriterState(fileType: fileType)))
    }

    /// A writer of segments rather than a file (`AVAssetWriter(contentType:)`): set
    /// ``outputFileTypeProfile`` before ``startWriting()``; each segment goes to ``delegate``, or
    /// to ``segments`` when there is none. Only `.mp4` is written as segments.
    public convenience init(contentType fileType: FileType) throws(GraphError) {
        try self.init(contentType: fileType, clock: SystemAlarmClock())
    }

    package convenience init(contentType fileType: FileType, clock: any AlarmClock) throws(GraphError) {
        guard fileType == .mp4 else {
            throw GraphError(.usage, at: "contentType", "segments are fragmented MP4: a writer of segments takes .mp4, not .\(fileType.rawValue)")
        }
        self.init(mp4SegmentsOn: clock)
    }

    /// A writer of MP4 segments: what ``init(contentType:)`` makes of `.mp4`, which cannot fail.
    package init(mp4SegmentsOn clock: any AlarmClock = SystemAlarmClock()) {
        outputPath = ""
        fileType = .mp4
        self.clock = clock
        writesSegments = true
        var l = Locked(state: WriterState(fileType: .mp4))
        l.segments.delivery = SegmentDelivery()
        locked = SessionLock(l)
    }

    /// Whether the index goes before the media data (`faststart`), so that playback can start
    /// before the whole file has arrived. Set it before ``startWriting()``.
    public var shouldOptimizeForNetworkUse: Bool {
        get { locked.withLock { $0.optimizeForNetworkUse } }
        set { locked.withLock { $0.optimizeForNetworkUse = newValue } }
    }

    /// Fragments of this length (`fragmentInterval` of `sink.mp4`), so that a crash keeps what
    /// was written, like `movieFragmentInterval`; nil (the default) writes one unfragmented
    /// file. Set it before ``startWriting()``.
    public var movieFragmentInterval: MediaTime? {
        get { locked.withLock { $0.fragmentInterval } }
        set { locked.withLock { $0.fragmentInterval = newValue } }
    }

    /// How much later than the app's own times the samples and the session are stamped (a layer
    /// above whose times go below 0, which a ``SampleBuffer`` cannot stamp): errors say times
    /// this much earlier than the stamps, as the app gave them. Zero by default.
    package var clockOffset: MediaTime {
        get { locked.withLock { $0.clockOffset } }
        set { locked.withLock { $0.clockOffset = newValue } }
    }

    /// The file's tags (`AVAssetWriter.metadata`), written as iTunes, AVFoundation and ffmpeg
    /// write them, by the same code as ``AssetExportSession``'s: its title, artist, album, album
    /// artist, genre, comment, date (ISO 8601) and encoder (`moov/udta/meta/ilst`), its location
    /// (ISO 6709, `udta/©xyz`), its cover (a JPEG or PNG picture, `covr`) and its chapters
    /// (Nero's `chpl`); track and disc numbers and other items are not written. Set it before
    /// ``startWriting()``; a date that is not ISO 8601, a cover that is not a JPEG or PNG picture
    /// or chapters a chpl box cannot hold fail `startWriting()`, naming the tag, as do a cover,
    /// location or chapters for a fragmented file (``movieFragmentInterval``), written as it goes.
    public var metadata: MediaMetadata {
        get { locked.withLock { $0.metadata } }
        set { locked.withLock { $0.metadata = newValue } }
    }

    public var status: Status {
        locked.withLock { $0.current().status }
    }

    /// Why writing failed, once ``status`` is `.failed`: the node, file and cause.
    public var error: GraphError? {
        locked.withLock { $0.current().error }
    }

    // MARK: Inputs

    /// Whether `input` can be added now: before writing starts, not added to a writer yet, of a
    /// media type the file type takes (an M4A holds audio only), the first of its type, and with
    /// settings its encoder takes (the ranges `encode.h264` and `encode.aac` declare).
    public func canAdd(_ input: AssetWriterInput) -> Bool {
        let candidate = input.candidate
        return locked.withLock { l in (try? l.state.check(adding: candidate)) != nil }
    }

    /// Adds an input; throws, saying why, when ``canAdd(_:)`` would say no.
    public func add(_ input: AssetWriterInput) throws(GraphError) {
        let candidate = input.candidate
        try locked.withLock { l throws(GraphError) in
            try l.state.check(adding: candidate)
            // What the app set on the input before is moved into the session, and the input
            // becomes a handle to its slot (its own lock is taken here, inside the writer's, and
            // never the other way).
            let moved = try input.attach(to: self, slot: l.inputs.count)
            try l.state.add(candidate)
            l.inputs.append(InputSlot(input: input, state: moved.state, transform: moved.transform))
        }
    }

    // MARK: Writing

    /// Builds the graph and starts it: the output's folder is made and checked here, and any
    /// problem throws (and fails the writer).
    public func startWriting() throws(GraphError) {
        let (inputs, faststart, fragments, metadata, segments) = try locked.withLock { l throws(GraphError) in
            if writesSegments { try l.segments.check() } else { try l.segments.checkUnused() }
            try l.state.startWriting()
            l.sourceClock = keepsSourceTimes(l)
            return (l.inputs, l.optimizeForNetworkUse, l.fragmentInterval, l.metadata, l.segments)
        }
        let run: GraphRun
        do {
            if !writesSegments { try metadata.checkWritable(fragmented: fragments != nil) }
            run = try GraphRun(try makeGraph(inputs, faststart: faststart, fragmentInterval: fragments, metadata: metadata))
            if writesSegments { try startSegments(segments, in: run) } else { try metadata.addExtraTags(to: run) }
            try run.start()
        } catch {
            locked.withLock { $0.state.startFailed(error) }
            throw error
        }
        let action = locked.withLock { l in
            l.run = run
            return l.state.started(at: clock.now)
        }
        switch action {
        case .cancelRun:
            run.cancel()
            _ = run.wait()
            throw GraphError(.usage, at: "AssetWriter", "writing was cancelled (cancelWriting()) while it started; make a new AssetWriter")
        case .startInputs:
            var medias: [MediaInput] = []
            do {
                for slot in inputs { medias.append(try run.input(slot.input.nodeID)) }
            } catch {
                locked.withLock { $0.state.startFailed(error) }
                run.cancel()
                throw error
            }
            // Each input gets its end of the graph; request blocks waiting for it begin.
            let requests = locked.withLock { l in
                var requests: [(MediaInput, WriterInputState.Request)] = []
                let sessionStarted = l.state.session != nil
                for i in l.inputs.indices where i < medias.count {
                    l.inputs[i].media = medias[i]
                    if let r = l.inputs[i].state.writingStarted(sessionStarted: sessionStarted) { requests.append((medias[i], r)) }
                }
                return requests
            }
            for (media, r) in requests { media.requestMediaDataWhenReady(on: r.queue, using: r.block) }
        }
    }

    private func makeGraph(_ inputs: [InputSlot], faststart: Bool, fragmentInterval: MediaTime?, metadata: MediaMetadata) throws(GraphError) -> Graph {
        for slot in inputs where slot.input.mediaType == .video && slot.transform != .identity {
            let input = slot.input
            guard slot.transform.isStorable else {
                throw GraphError(.usage, at: "\(input.name).transform",
                                 "\(slot.transform) cannot be a file's display matrix: each value must be a finite number within ±32768")
            }
            guard fragmentInterval == nil else {
                throw GraphError(.usage, at: "\(input.name).transform",
                                 "a fragmented file (movieFragmentInterval) is written as it goes, and GraphKit writes the display matrix once the file is finished: leave out one of the two")
            }
        }
        if writesSegments { return try makeSegmentGraph(inputs) }
        var b = GraphBuilder(name: "AssetWriter", description: "writes \(outputPath)")
        let container: MP4SinkNode.Container = switch fileType {
        case .mp4: .mp4
        case .mov: .mov
        case .m4a: .m4a
        }
        let file = b.add("file", MP4SinkNode.self) {
            $0[\.path] = outputPath
            $0[\.container] = container
            $0[\.faststart] = faststart
            if let fragmentInterval { $0[\.fragmentInterval] = fragmentInterval.seconds }
            if let video = inputs.first(where: { $0.input.mediaType == .video }), video.transform != .identity {
                $0[\.videoTransform] = video.transform.description
            }
            metadata.write(to: &$0)
        }
        for slot in inputs {
            let input = slot.input
            let source = b.add(input.nodeID, AppSourceNode.self) {
                $0[\.live] = slot.state.expectsMediaDataInRealTime
                if let passthrough = input.outputSettings as? PassthroughSettings {
                    $0[\.format] = passthrough.mediaType == .audio ? "audio/aac" : "video/h264"
                }
            }
            let encoded = try WriterEncoders.add(for: input.outputSettings, id: "\(input.nodeID)-encoder", at: input.name, to: &b)
            if let encoder = encoded {
                b.connect(source.output(), to: encoder.input)
                b.connect(encoder.output, to: file.input(input.mediaType.rawValue), capacity: Self.intoTheMuxer)
            } else {
                // Encoded already: straight to the muxer, which takes the samples' own caps.
                b.connect(source.output(), to: file.input(input.mediaType.rawValue), capacity: Self.intoTheMuxer)
            }
        }
        return try b.build(registry: .builtIn)
    }

    /// What each track may hold, encoded, before the muxer: the muxer interleaves by time, so
    /// it waits for the track that is behind (the video encoder holds frames to look ahead), and
    /// the other must be able to run ahead meanwhile. Ten seconds of compressed media is a few
    /// megabytes; inputs fed together, from one loop or from their own queues, never wait on
    /// each other.
    static let intoTheMuxer = EdgeCapacity(buffers: 100_000, bytes: 256 << 20, seconds: 10)

    // MARK: The stall rule

    /// Performs what the stall rule said: an alarm on the clock.
    func perform(_ action: StallWatch.Action) {
        guard case .arm(let deadline, let token) = action else { return }
        clock.schedule(at: deadline) { [weak self] in self?.alarmRang(token) }
    }

    private func alarmRang(_ token: UInt64) {
        // Which inputs have room now, asked outside the session's lock (each input has its own).
        let media = locked.withLock { l in l.inputs.map(\.media) }
        let ready = Set(media.indices.filter { media[$0]?.isReadyForMoreMediaData == true })
        let (verdict, run, closing, delivery) = locked.withLock { l -> (StallWatch.Verdict, GraphRun?, [Closing], SegmentDelivery?) in
            let verdict = l.state.alarm(token, at: clock.now, ready: ready)
            guard case .stall = verdict else { return (verdict, nil, [], nil) }
            return (verdict, l.run, l.closeInputs(), l.segments.delivery)
        }
        switch verdict {
        case .none:
            break
        case .arm(let deadline, let token):
            perform(.arm(at: deadline, token: token))
        case .stall(let error):
            // Waiting appends wake and throw it, and the run is cancelled, which removes the
            // partial file.
            for c in closing { c.media.close(because: error) }
            delivery?.close(because: error)
            run?.cancel()
        }
    }

    /// The file's time origin: samples before it are left out (audio to the sample; a video
    /// frame that begins before it and ends after it shows from it until the next frame, as
    /// AVFoundation's edit list shows it), and a sample at `atSourceTime` is at 0 in the file.
    /// A passthrough input's samples (``PassthroughSettings``) are written whole at their own
    /// times, those before the session too (a later picture may need them), and each track's
    /// edit list starts at `atSourceTime` (a track whose first sample comes later begins with an
    /// empty edit, as AVFoundation inserts one), when every input is passthrough and the file is
    /// written whole; otherwise (a fragmented file, segments, an input that encodes beside it)
    /// they are moved to the session's clock, and none may come before it.
    /// Call it once, after ``startWriting()`` and before the first append.
    public func startSession(atSourceTime: MediaTime) {
        // Request blocks begin now: before the session, every append they made would fail.
        let requests = locked.withLock { l in
            var requests: [(MediaInput, WriterInputState.Request)] = []
            guard l.state.startSession(at: atSourceTime) else { return requests }
            for i in l.inputs.indices {
                if let r = l.inputs[i].state.sessionDidStart(), let media = l.inputs[i].media { requests.append((media, r)) }
            }
            return requests
        }
        for (media, r) in requests { media.requestMediaDataWhenReady(on: r.queue, using: r.block) }
    }

    /// Where the file's presentation ends, in the samples' clock, as
    /// `AVAssetWriter.endSession(atSourceTime:)`: the file plays from the session's start to
    /// `endTime`. Samples appended that reach past it stay in the file, and every track's edit
    /// list stops at `endTime`, so players and decoders that honour edit lists (AVFoundation,
    /// ffmpeg, GraphKit's decode) stop there. Call it before ``finishWriting()``; optional, as
    /// in AVFoundation (without it the file ends with its last sample). A fragmented file
    /// (``movieFragmentInterval``), written as it goes, is not cut. Throws `usage` before
    /// ``startSession(atSourceTime:)``, or for an end that is not a time after the session's start.
    public func endSession(atSourceTime endTime: MediaTime) throws(GraphError) {
        try locked.withLock { l throws(GraphError) in
            guard let start = l.state.session else {
                throw GraphError(.usage, at: "AssetWriter", "endSession(atSourceTime:) comes after startSession(atSourceTime:)")
            }
            guard endTime.isFinite, endTime > start else {
                throw GraphError(.usage, at: "AssetWriter", "endSession(atSourceTime: \(endTime)) must be a time after the session's start, \(start)")
            }
            l.sessionEnd = endTime
        }
    }

    /// Finishes every input that is not finished yet, waits for the file to be complete, and
    /// throws if writing failed. The file is under ``outputPath`` once this returns.
    public func finishWriting() async throws(GraphError) {
        let (run, finishing, (starts, end), delivery) = try locked.withLock { l throws(GraphError) in
            l.refresh()
            try l.state.finishWriting()
            let end = l.sessionEnd.flatMap { end in l.state.session.map { end - $0 } }
            // Tracks at their own times (every input passthrough) start where the session does,
            // whether their samples begin before it (edited out) or after it (an empty edit).
            let session = l.state.session ?? .zero
            let starts = l.sourceClock ? l.inputs.map { (port: $0.input.mediaType.rawValue, at: session) } : []
            // Every input not finished yet is finished now, as markAsFinished() would.
            var finishing: [(media: MediaInput, lastFrame: SampleBuffer?)] = []
            for i in l.inputs.indices {
                if let finish = l.inputs[i].state.markAsFinished(), finish.endStream, let media = l.inputs[i].media {
                    finishing.append((media, finish.lastFrame))
                }
            }
            if let held = l.heldEnd { finishing.append(held) }
            l.heldEnd = nil
            return (l.run, finishing, (starts, end), l.segments.delivery)
        }
        let sink = run?.node("file") as? MP4SinkNode
        for s in starts { sink?.startPresentation(at: s.at, onInput: s.port) }
        if let end { sink?.endPresentation(at: end) }
        for f in finishing {
            if let frame = f.lastFrame { try? f.media.appendAdmittedImmediately(frame) }
            f.media.markAsFinished()
        }
        let report = await run?.report()
        // Segments: finished once the last has been delivered (or delivery closed: the
        // delegate threw, the writer was cancelled).
        if let delivery, report?.status == .completed || report?.status == .stopped {
            await delivery.drained()
            if let reason = delivery.closedReason {
                _ = locked.withLock { $0.state.fail(because: reason) }
            }
        }
        let error = locked.withLock { l in
            l.state.finished(report?.status ?? .failed, error: report?.error)
        }
        if let error { throw error }
    }

    /// Abandons writing: appends stop, and nothing is left under ``outputPath``. Returns once
    /// the partial file is gone (it blocks the thread meanwhile, as AVAssetWriter's does).
    ///
    /// From the moment it is called, no input is ready for more, request blocks are called no
    /// more, and waiting appends wake and throw `cancelled`.
    public func cancelWriting() {
        let (cancels, run, closing, delivery) = locked.withLock { l -> (Bool, GraphRun?, [Closing], SegmentDelivery?) in
            guard l.state.cancel() else { return (false, nil, [], nil) }
            return (true, l.run, l.closeInputs(), l.segments.delivery)
        }
        guard cancels else { return }
        // First, so that a streaming thread waiting for a slow delegate wakes and the run can stop.
        delivery?.close(because: GraphError(.cancelled, at: "AssetWriter", "writing was cancelled (cancelWriting())"))
        for c in closing { c.media.close(because: WriterState.cancelled(c.name)) }
        run?.cancel()
        _ = run?.wait()
    }
}
