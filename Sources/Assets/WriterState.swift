import GraphKitCore

/// An ``AssetWriter``'s state: its status (unknown, writing, completed, failed, cancelled, as
/// `AVAssetWriter.Status`), its inputs' media types, the session, whether it is finishing, and
/// the stall rule (``StallWatch``). A value with no clock, no lock and no graph: each call the
/// writer takes is a `mutating` transition that throws, naming the state, when the call is wrong
/// in it, or returns what the writer must do. The writer keeps one under its `Mutex` and performs
/// the actions (builds and starts the graph, hands inputs their samples' ends, cancels the run).
struct WriterState: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// What writing holds: whether finishWriting() was called.
    private struct Writing: Sendable {
        var finishing = false
    }

    /// What a writer input is, to decide whether it can be added.
    struct Candidate {
        let name: String
        let mediaType: MediaType
        let settings: any OutputSettings
        let belongsToAWriter: Bool
    }

    let fileType: FileType
    private var state = Lifecycle<Writing>.unknown
    /// The inputs' names and media types, in the order they were added.
    private(set) var inputs: [(name: String, mediaType: MediaType)] = []
    /// The file's time origin, once startSession(atSourceTime:) was called (before or after
    /// startWriting(), as the app likes; appends wait for both).
    private(set) var session: MediaTime?
    /// The stall rule: it hears of the inputs from the start (a request block registered before
    /// writing counts), and rules while writing and not finishing.
    private var watch = StallWatch()

    init(fileType: FileType) {
        self.fileType = fileType
    }

    var status: AssetWriter.Status { state.status() }
    var error: GraphError? { state.error }

    // MARK: Inputs

    /// Throws, saying why, when `input` cannot be added now.
    func check(adding input: Candidate) throws(GraphError) {
        guard case .unknown = state else {
            throw GraphError(.usage, at: "AssetWriter", "inputs are added before startWriting(); this writer is \(status.rawValue)")
        }
        guard !input.belongsToAWriter else {
            throw GraphError(.usage, at: input.name, "this input belongs to a writer already; make a new AssetWriterInput")
        }
        guard input.settings.mediaType == input.mediaType else {
            let needed = input.mediaType == .audio ? "AudioSettings" : "VideoSettings"
            throw GraphError(.usage, at: input.name, "a \(input.mediaType.rawValue) input needs \(needed), not settings for \(input.settings.mediaType.rawValue)")
        }
        if fileType == .m4a, input.mediaType == .video {
            throw GraphError(.usage, at: input.name, "an M4A file holds audio only; write video to .mp4 or .mov")
        }
        guard !inputs.contains(where: { $0.mediaType == input.mediaType }) else {
            throw GraphError(.usage, at: input.name, "this writer has a \(input.mediaType.rawValue) input already; a file here holds one audio and one video track")
        }
        if let problem = EncoderLimits.problem(with: input.settings, fileType: fileType) {
            throw GraphError(.usage, at: input.name, problem)
        }
    }

    mutating func add(_ input: Candidate) throws(GraphError) {
        try check(adding: input)
        inputs.append((input.name, input.mediaType))
        watch.add(input.name)
    }

    // MARK: Writing

    /// startWriting(): the writer builds and starts its graph next.
    mutating func startWriting() throws(GraphError) {
        switch state {
        case .unknown: break
        case .cancelled: throw GraphError(.usage, at: "AssetWriter", "writing was cancelled; make a new AssetWriter")
        default: throw GraphError(.usage, at: "AssetWriter", "startWriting() was called already")
        }
        guard !inputs.isEmpty else {
            throw GraphError(.usage, at: "AssetWriter", "add an input (add(_:)) before startWriting()")
        }
        state = .starting
    }

    enum StartAction: Equatable {
        /// Hand each input its end of the graph; begin request blocks if the session has started.
        case startInputs(sessionStarted: Bool)
        /// cancelWriting() came while the graph was starting: cancel the run.
        case cancelRun
    }

    /// The graph runs, since `now`.
    mutating func started(at now: Instant) -> StartAction {
        guard case .starting = state else { return .cancelRun }
        state = .running(Writing())
        watch.start(at: now)
        return .startInputs(sessionStarted: session != nil)
    }

    /// Building or starting the graph failed (or handing the inputs their ends did).
    mutating func startFailed(_ error: GraphError) {
        switch state {
        case .starting, .running: state = .failed(error)
        default: break
        }
    }

    /// startSession(atSourceTime:): whether this call set it (a second call does nothing), so that
    /// request blocks begin.
    mutating func startSession(at time: MediaTime) -> Bool {
        guard session == nil else { return false }
        session = time
        return true
    }

    /// The run failed on its own (an encoder, a full disk): the writer fails with it.
    mutating func runFailed(_ error: GraphError?) {
        guard case .running = state else { return }
        state = .failed(error ?? GraphError(.runFailed, at: "AssetWriter", "writing failed"))
    }

    /// Whether inputs take samples: writing, and neither finishing nor ended.
    var takesSamples: Bool {
        guard case .running(let writing) = state else { return false }
        return !writing.finishing
    }

    /// An input may append: the session's start, or why it cannot, naming the state.
    func admission(for input: String) throws(GraphError) -> MediaTime {
        switch state {
        case .unknown, .starting:
            throw GraphError(.usage, at: input, "call startWriting() (and startSession(atSourceTime:)) before appending")
        case .running(let writing) where writing.finishing:
            throw GraphError(.usage, at: input, "finishWriting() was called; this input takes no more samples")
        case .running:
            guard let session else { throw GraphError(.usage, at: input, "call startSession(atSourceTime:) before appending") }
            return session
        case .completed:
            throw GraphError(.usage, at: input, "the file is written (finishWriting() completed); this input takes no more samples")
        case .cancelled:
            throw Self.cancelled(input)
        case .failed(let error):
            throw error
        }
    }

    /// Why writing ended, as an append that was waiting should throw it: the writer's error if
    /// it failed, that it was cancelled; nil while writing (or once complete).
    func endedReason(for input: String) -> GraphError? {
        switch state {
        case .failed(let error): error
        case .cancelled: Self.cancelled(input)
        default: nil
        }
    }

    static func cancelled(_ input: String) -> GraphError {
        GraphError(.cancelled, at: input, "writing was cancelled (cancelWriting()); this input takes no more samples")
    }

    /// finishWriting(): every input is finished next, and the run's end awaited.
    mutating func finishWriting() throws(GraphError) {
        switch state {
        case .unknown, .starting: throw GraphError(.usage, at: "AssetWriter", "call startWriting() before finishWriting()")
        case .cancelled: throw GraphError(.usage, at: "AssetWriter", "writing was cancelled (cancelWriting()); there is nothing to finish")
        case .completed: throw GraphError(.usage, at: "AssetWriter", "finishWriting() was called already; the file is written")
        case .failed(let error): throw error
        case .running(let writing) where writing.finishing: throw GraphError(.usage, at: "AssetWriter", "finishWriting() was called already")
        case .running:
            state = .running(Writing(finishing: true))
        }
    }

    /// The run ended after finishWriting(): the error finishWriting() throws, or nil once the
    /// file is complete.
    mutating func finished(_ status: RunStatus, error: GraphError?) -> GraphError? {
        guard case .running = state else { return self.error ?? error }
        switch status {
        case .completed, .stopped:
            state = .completed
            return nil
        case .cancelled:
            state = .cancelled
            return error ?? Self.cancelled("AssetWriter")
        case .failed:
            let error = error ?? GraphError(.runFailed, at: "AssetWriter", "writing failed")
            state = .failed(error)
            return error
        }
    }

    /// cancelWriting(): whether there is anything to stop (inputs to close, a run to cancel).
    mutating func cancel() -> Bool { state.cancel() }

    /// Fails writing with `error` (a stall): whether it was writing and not finishing, so that
    /// its inputs are closed and the run cancelled.
    mutating func fail(because error: GraphError) -> Bool {
        guard takesSamples else { return false }
        state = .failed(error)
        return true
    }

    /// A layer above fails the writer (Apple's names, where AVFoundation raises an exception):
    /// whether it was going (not yet written, failed or cancelled), so that its inputs are closed
    /// and the run, if any, cancelled.
    mutating func failByCaller(_ error: GraphError) -> Bool {
        switch state {
        case .unknown, .starting, .running:
            state = .failed(error)
            return true
        case .completed, .failed, .cancelled:
            return false
        }
    }

    // MARK: The stall rule, while writing

    /// Something happened on input `index` at `now` (see ``StallWatch``).
    mutating func note(_ event: StallWatch.Event, input index: Int, at now: Instant) -> StallWatch.Action {
        let action = watch.note(event, input: index, at: now, session: session ?? .zero)
        guard case .running(let writing) = state, !writing.finishing else { return .none }
        return action
    }

    /// The stall rule's alarm `token` rang at `now`: fails writing if an append waits on an input
    /// nobody feeds (the verdict's error), or says when to look again; `ready`: the inputs with
    /// room now (``StallWatch/alarm(_:at:session:ready:)``).
    mutating func alarm(_ token: UInt64, at now: Instant, ready: Set<Int> = []) -> StallWatch.Verdict {
        guard case .running(let writing) = state, !writing.finishing else { return .none }
        let verdict = watch.alarm(token, at: now, session: session ?? .zero, ready: ready)
        if case .stall(let error) = verdict { _ = fail(because: error) }
        return verdict
    }
}
