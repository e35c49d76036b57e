import Dispatch
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
/// for ever. The writer watches for that: an append that has waited ``stallSeconds`` while
/// another input, at least ``stallLead`` behind it, got nothing for as long (no append, no
/// `markAsFinished()`, no request block) fails, and the writer with it, saying how to feed both.
///
/// Where AVFoundation raises an exception for a call in the wrong state, this throws a
/// ``GraphError`` that says what to do. However writing ends (failure, ``cancelWriting()``, or
/// the writer let go while writing), nothing is left under the output's name: the file is
/// written under a temporary name and renamed only when complete.
public final class AssetWriter: @unchecked Sendable {
    /// Where writing is, like `AVAssetWriter.Status`.
    public enum Status: String, Sendable {
        case unknown, writing, completed, failed, cancelled
    }

    public let outputPath: String
    public let fileType: FileType

    private let lock = Lock()
    private var inputs: [AssetWriterInput] = []
    private var run: GraphRun?
    private var state: Status = .unknown
    private var failure: GraphError?
    private var session: MediaTime?
    private var finishing = false
    private var optimizeForNetworkUse = false

    /// A writer of `fileType` to `outputPath`. Missing folders are made when writing starts; a
    /// file already there is replaced only once the new one is complete.
    public init(outputPath: String, fileType: FileType) throws(GraphError) {
        guard !outputPath.isEmpty else {
            throw GraphError(.usage, at: "outputPath", "the output path is empty; name the file to write")
        }
        var isDirectory = false
        if FileManager.default.fileExists(atPath: outputPath, isDirectory: &isDirectory), isDirectory {
            throw GraphError(.outputUnwritable, at: outputPath, "cannot write \"\(outputPath)\": it is a folder; name a file in it")
        }
        self.outputPath = outputPath
        self.fileType = fileType
    }

    /// Whether the index goes before the media data (`faststart`), so that playback can start
    /// before the whole file has arrived. Set it before ``startWriting()``.
    public var shouldOptimizeForNetworkUse: Bool {
        get { lock.withLock { optimizeForNetworkUse } }
        set { lock.withLock { optimizeForNetworkUse = newValue } }
    }

    public var status: Status {
        lock.withLock {
            refreshLocked()
            return state
        }
    }

    /// Why writing failed, once ``status`` is `.failed`: the node, file and cause.
    public var error: GraphError? {
        lock.withLock {
            refreshLocked()
            return failure
        }
    }

    /// A run that failed on its own (an encoder, a full disk) fails the writer at once.
    private func refreshLocked() {
        guard state == .writing, let report = run?.finalReport, report.status == .failed else { return }
        state = .failed
        failure = report.error
    }

    // MARK: Inputs

    /// Whether `input` can be added now: before writing starts, not added to a writer yet, of a
    /// media type the file type takes (an M4A holds audio only), and the first of its type.
    public func canAdd(_ input: AssetWriterInput) -> Bool {
        (try? check(adding: input)) != nil
    }

    /// Adds an input; throws, saying why, when ``canAdd(_:)`` would say no.
    public func add(_ input: AssetWriterInput) throws(GraphError) {
        try lock.withLock { () throws(GraphError) in
            try checkLocked(adding: input)
            try input.attach(to: self)
            inputs.append(input)
        }
    }

    private func check(adding input: AssetWriterInput) throws(GraphError) {
        try lock.withLock { () throws(GraphError) in try checkLocked(adding: input) }
    }

    private func checkLocked(adding input: AssetWriterInput) throws(GraphError) {
        guard state == .unknown else {
            throw GraphError(.usage, at: "AssetWriter", "inputs are added before startWriting(); this writer is \(state.rawValue)")
        }
        guard !input.isAttached else {
            throw GraphError(.usage, at: input.name, "this input belongs to a writer already; make a new AssetWriterInput")
        }
        guard input.outputSettings.mediaType == input.mediaType else {
            let needed = input.mediaType == .audio ? "AudioSettings" : "VideoSettings"
            throw GraphError(.usage, at: input.name, "a \(input.mediaType.rawValue) input needs \(needed), not settings for \(input.outputSettings.mediaType.rawValue)")
        }
        if fileType == .m4a, input.mediaType == .video {
            throw GraphError(.usage, at: input.name, "an M4A file holds audio only; write video to .mp4 or .mov")
        }
        guard !inputs.contains(where: { $0.mediaType == input.mediaType }) else {
            throw GraphError(.usage, at: input.name, "this writer has a \(input.mediaType.rawValue) input already; a file here holds one audio and one video track")
        }
        if let settings = input.outputSettings as? VideoSettings {
            guard (2...7680).contains(settings.width), (2...4320).contains(settings.height),
                  settings.width % 2 == 0, settings.height % 2 == 0 else {
                throw GraphError(.usage, at: input.name,
                                 "VideoSettings \(settings.width)x\(settings.height) cannot be encoded: H.264 here needs an even width from 2 to 7680 and an even height from 2 to 4320")
            }
            if let rate = settings.averageBitRate, !(10_000...200_000_000).contains(rate) {
                throw GraphError(.usage, at: input.name, "averageBitRate \(rate) is out of range (10000 to 200000000 bits per second)")
            }
            if let interval = settings.keyframeInterval, !(1...1000).contains(interval) {
                throw GraphError(.usage, at: input.name, "keyframeInterval \(interval) is out of range (1 to 1000 frames)")
            }
        }
        if let settings = input.outputSettings as? AudioSettings {
            guard (8_000...96_000).contains(settings.sampleRate) else {
                throw GraphError(.usage, at: input.name, "AudioSettings sampleRate \(settings.sampleRate) cannot be encoded to AAC: choose 8000 to 96000 Hz")
            }
            guard (1...6).contains(settings.channels) else {
                throw GraphError(.usage, at: input.name, "AudioSettings channels \(settings.channels) cannot be encoded to AAC here: choose 1 to 6")
            }
            if let rate = settings.bitRate, !(8_000...512_000).contains(rate) {
                throw GraphError(.usage, at: input.name, "bitRate \(rate) is out of range (8000 to 512000 bits per second)")
            }
        }
    }

    // MARK: Writing

    /// Builds the graph and starts it: the output's folder is made and checked here, and any
    /// problem throws (and fails the writer).
    public func startWriting() throws(GraphError) {
        let inputs: [AssetWriterInput]
        let faststart: Bool
        (inputs, faststart) = try lock.withLock { () throws(GraphError) in
            switch state {
            case .unknown: break
            case .cancelled: throw GraphError(.usage, at: "AssetWriter", "writing was cancelled; make a new AssetWriter")
            default: throw GraphError(.usage, at: "AssetWriter", "startWriting() was called already")
            }
            guard !self.inputs.isEmpty else {
                throw GraphError(.usage, at: "AssetWriter", "add an input (add(_:)) before startWriting()")
            }
            return (self.inputs, optimizeForNetworkUse)
        }
        do {
            let graph = try makeGraph(inputs, faststart: faststart)
            let run = try GraphRun(graph)
            try run.start()
            lock.withLock {
                self.run = run
                state = .writing
            }
            for input in inputs { try input.start(with: try run.input(input.nodeID)) }
            if inputs.count > 1 { watchForStalls() }
        } catch {
            lock.withLock {
                state = .failed
                failure = error
            }
            run?.cancel()
            throw error
        }
    }

    private func makeGraph(_ inputs: [AssetWriterInput], faststart: Bool) throws(GraphError) -> Graph {
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
        }
        for input in inputs {
            let source = b.add(input.nodeID, AppSourceNode.self) {
                $0[\.live] = input.expectsMediaDataInRealTime
            }
            switch input.outputSettings {
            case let video as VideoSettings:
                let encoder = b.add("\(input.nodeID)-encoder", H264EncoderNode.self) {
                    $0[\.width] = video.width
                    $0[\.height] = video.height
                    if let rate = video.averageBitRate { $0[\.bitrate] = .value(rate) }
                    if let interval = video.keyframeInterval { $0[\.keyframeInterval] = interval }
                }
                b.connect(source.output(), to: encoder.input())
                b.connect(encoder.output(), to: file.input("video"), capacity: Self.intoTheMuxer)
            case let audio as AudioSettings:
                let encoder = b.add("\(input.nodeID)-encoder", AACEncoderNode.self) {
                    $0[\.sampleRate] = audio.sampleRate
                    $0[\.channels] = audio.channels
                    if let rate = audio.bitRate { $0[\.bitrate] = rate }
                }
                b.connect(source.output(), to: encoder.input())
                b.connect(encoder.output(), to: file.input("audio"), capacity: Self.intoTheMuxer)
            default:
                throw GraphError(.usage, at: input.name, "\(type(of: input.outputSettings)) are not settings GraphKit can encode with; use VideoSettings or AudioSettings")
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

    // MARK: An append that nothing can unblock

    /// How long an append waits, with another input idle for as long, before the writer says
    /// it cannot go on. A producer that feeds an input at all, however slowly (a live source,
    /// a slow decoder, a loop that appends each track in turn), does so far more often; a
    /// pause this long while the other input is stuck is a stall, or close enough to one.
    static let stallSeconds: Double = 10
    /// How far ahead (media seconds) the waiting input must be of the idle one: the muxer holds
    /// 10 s (``intoTheMuxer``) before it makes an input wait, so an input that waits for an idle
    /// one is about that far ahead; one that waits for its own slow encoder need not be.
    static let stallLead: Double = 5

    /// Looks once a second, while writing, for an append that waits on an input nobody feeds.
    private func watchForStalls() {
        DispatchQueue.global().asyncAfter(deadline: .now() + 1) { [weak self] in
            if self?.checkForStall() == false { self?.watchForStalls() }
        }
    }

    /// Fails the writer if an append waits on an input nobody feeds; whether writing is over.
    private func checkForStall() -> Bool {
        let (inputs, session, writing) = lock.withLock { (self.inputs, self.session, state == .writing && !finishing) }
        guard writing else { return true }
        guard let error = Self.stall(among: inputs.map(\.activity), session: session ?? .zero, now: .now) else { return false }
        fail(because: error)
        return true
    }

    /// The error for an append that waits on an input nobody feeds, if one does.
    static func stall(among inputs: [AssetWriterInput.Activity], session: MediaTime, now: ContinuousClock.Instant) -> GraphError? {
        let bound = Duration.milliseconds(Int64(stallSeconds * 1000))
        for waiting in inputs {
            guard let since = waiting.appendingSince, since.duration(to: now) >= bound else { continue }
            let ahead = waiting.reached ?? session
            for idle in inputs where idle.input !== waiting.input {
                guard !idle.finished, idle.appendingSince == nil, !idle.requested,
                      idle.lastActivity.duration(to: now) >= bound else { continue }
                let behind = idle.reached ?? session
                guard (ahead - behind).seconds >= stallLead else { continue }
                let w = waiting.input.name, i = idle.input.name
                let idleAt = idle.reached == nil ? "has no samples" : "is at \(seconds(behind))"
                return GraphError(.usage, at: w,
                    "an append to the \(w) waited \(Int(stallSeconds)) s for room that only the \(i) can make: the file interleaves "
                    + "its tracks, the \(w) is at \(seconds(ahead)) and the \(i) \(idleAt), and nothing was appended to the \(i) "
                    + "meanwhile (appending all of one track before the other from one loop waits for ever). Interleave the appends "
                    + "(each track up to about the same time), append to each input from its own task or with "
                    + "requestMediaDataWhenReady(on:using:), or call markAsFinished() on the \(i) if it has no more samples")
            }
        }
        return nil
    }

    private static func seconds(_ t: MediaTime) -> String {
        "\((t.seconds * 10).rounded() / 10) s"
    }

    /// Fails writing with `error`: waiting appends wake and throw it, and nothing is left at
    /// ``outputPath`` (the run is cancelled, which removes the partial file).
    private func fail(because error: GraphError) {
        let (run, inputs): (GraphRun?, [AssetWriterInput]) = lock.withLock {
            guard state == .writing, !finishing else { return (nil, []) }
            state = .failed
            failure = error
            return (self.run, self.inputs)
        }
        guard let run else { return }
        for input in inputs { input.close(because: error) }
        run.cancel()
    }

    /// Waits until the run has ended, and with it the partial file has gone: for an append that
    /// is about to throw why writing ended, so that a program that stops on the error leaves
    /// nothing beside the target.
    func waitUntilRunEnded() {
        if let run = lock.withLock({ self.run }) { _ = run.wait() }
    }

    func runEnded() async {
        if let run = lock.withLock({ self.run }) { _ = await run.report() }
    }

    /// The file's time origin: samples before it are left out (audio to the sample), and a
    /// sample at `atSourceTime` is at 0 in the file. Call it once, after ``startWriting()`` and
    /// before the first append.
    public func startSession(atSourceTime: MediaTime) {
        let inputs: [AssetWriterInput] = lock.withLock {
            guard session == nil else { return [] }
            session = atSourceTime
            return self.inputs
        }
        // Request blocks begin now: before the session, every append they made would fail.
        for input in inputs { input.beginRequests() }
    }

    var sessionStart: MediaTime? { lock.withLock { session } }

    /// Whether inputs take samples: writing, and neither finishing nor ended.
    var takesSamples: Bool {
        lock.withLock {
            refreshLocked()
            return state == .writing && !finishing
        }
    }

    /// Why writing ended, as an append that was waiting should throw it: the writer's error if
    /// it failed, that it was cancelled; nil while writing.
    func endedReason(for input: AssetWriterInput) -> GraphError? {
        lock.withLock {
            refreshLocked()
            switch state {
            case .failed: return failure
            case .cancelled: return Self.cancelled(input)
            default: return nil
            }
        }
    }

    private static func cancelled(_ input: AssetWriterInput) -> GraphError {
        GraphError(.cancelled, at: input.name, "writing was cancelled (cancelWriting()); this input takes no more samples")
    }

    /// Why an input cannot take samples now, or nil when it can.
    func refusal(for input: AssetWriterInput) -> GraphError? {
        lock.withLock {
            refreshLocked()
            switch state {
            case .unknown:
                return GraphError(.usage, at: input.name, "call startWriting() (and startSession(atSourceTime:)) before appending")
            case .writing where finishing:
                return GraphError(.usage, at: input.name, "finishWriting() was called; this input takes no more samples")
            case .writing:
                return session == nil ? GraphError(.usage, at: input.name, "call startSession(atSourceTime:) before appending") : nil
            case .completed:
                return GraphError(.usage, at: input.name, "the file is written (finishWriting() completed); this input takes no more samples")
            case .cancelled:
                return Self.cancelled(input)
            case .failed:
                return failure ?? GraphError(.runFailed, at: input.name, "writing failed")
            }
        }
    }

    /// Finishes every input that is not finished yet, waits for the file to be complete, and
    /// throws if writing failed. The file is under ``outputPath`` once this returns.
    public func finishWriting() async throws(GraphError) {
        let (run, inputs) = try lock.withLock { () throws(GraphError) -> (GraphRun, [AssetWriterInput]) in
            refreshLocked()
            switch state {
            case .unknown: throw GraphError(.usage, at: "AssetWriter", "call startWriting() before finishWriting()")
            case .cancelled: throw GraphError(.usage, at: "AssetWriter", "writing was cancelled (cancelWriting()); there is nothing to finish")
            case .completed: throw GraphError(.usage, at: "AssetWriter", "finishWriting() was called already; the file is written")
            case .failed: throw failure ?? GraphError(.runFailed, at: "AssetWriter", "writing failed")
            case .writing:
                guard !finishing, let run = self.run else {
                    throw GraphError(.usage, at: "AssetWriter", "finishWriting() was called already")
                }
                finishing = true
                return (run, self.inputs)
            }
        }
        for input in inputs { input.finishForWriter() }
        let report = await run.report()
        let error: GraphError? = lock.withLock {
            switch report.status {
            case .completed, .stopped:
                state = .completed
            case .cancelled:
                state = .cancelled
                failure = report.error
            case .failed:
                state = .failed
                failure = report.error
            }
            return state == .completed ? nil : failure
        }
        if let error { throw error }
    }

    /// Abandons writing: appends stop, and nothing is left under ``outputPath``. Returns once
    /// the partial file is gone (it blocks the thread meanwhile, as AVAssetWriter's does).
    ///
    /// From the moment it is called, no input is ready for more, request blocks are called no
    /// more, and waiting appends wake and throw `cancelled`.
    public func cancelWriting() {
        guard let run = beginCancelling() else { return }
        _ = run.wait()
    }

    /// Marks the writer cancelled, closes its inputs and cancels the run: the run to wait for,
    /// if one was going.
    private func beginCancelling() -> GraphRun? {
        let (run, inputs): (GraphRun?, [AssetWriterInput]) = lock.withLock {
            guard state == .unknown || state == .writing else { return (nil, []) }
            state = .cancelled
            return (self.run, self.inputs)
        }
        for input in inputs { input.close(because: Self.cancelled(input)) }
        run?.cancel()
        return run
    }
}
