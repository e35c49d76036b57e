import GraphKitCore

/// An ``AssetReader``'s state: its status (unknown, reading, completed, failed, cancelled, as
/// `AVAssetReader.Status`), its time range, which outputs have given their last sample, and so
/// what a pull does in each state. A value with no lock and no graph: each call the reader takes
/// is a `mutating` transition that throws, naming the state, when the call is wrong in it, or
/// returns what the reader must do. The reader keeps one under its `Mutex` and performs the actions.
struct ReaderState: Sendable {
    private var state = Lifecycle<Void>.unknown
    /// Whether each output, by its number, has given its last sample.
    private var ended: [Bool] = []
    /// The part of the file to read; nil: all of it.
    private(set) var range: MediaTimeRange?

    var status: AssetReader.Status { state.status() }
    var error: GraphError? { state.error }

    var outputCount: Int { ended.count }

    /// timeRange's setter: taken before startReading() only (as AVFoundation's).
    mutating func setRange(_ range: MediaTimeRange) {
        guard case .unknown = state else { return }
        self.range = range
    }

    /// Throws, saying why, when an output cannot be added now (the output's own checks are the
    /// reader's: its track, its settings).
    func checkAdding() throws(GraphError) {
        guard case .unknown = state else {
            throw GraphError(.usage, at: "AssetReader", "outputs are added before startReading(); this reader is \(status.rawValue)")
        }
    }

    /// An output was added: its number.
    mutating func add() -> Int {
        ended.append(false)
        return ended.count - 1
    }

    /// startReading(): the reader builds and starts its graph next.
    mutating func startReading() throws(GraphError) {
        switch state {
        case .unknown: break
        case .cancelled: throw GraphError(.usage, at: "AssetReader", "reading was cancelled; make a new AssetReader")
        default: throw GraphError(.usage, at: "AssetReader", "startReading() was called already")
        }
        guard !ended.isEmpty else { throw GraphError(.usage, at: "AssetReader", "add an output (add(_:)) before startReading()") }
        if let range, range.duration <= .zero || range.start < .zero {
            throw GraphError(.usage, at: "timeRange", "the time range \(range) is empty or starts before 0")
        }
        state = .starting
    }

    /// The graph runs: whether to go on (false: cancelReading() came meanwhile; cancel the run).
    mutating func started() -> Bool {
        guard case .starting = state else { return false }
        state = .running(())
        return true
    }

    mutating func startFailed(_ error: GraphError) {
        guard case .starting = state else { return }
        state = .failed(error)
    }

    /// The run ended on its own, with `status`: reading fails with its error, or is complete.
    mutating func runEnded(_ status: RunStatus, error: GraphError?) {
        guard case .running = state else { return }
        switch status {
        case .failed: state = .failed(error ?? GraphError(.runFailed, at: "AssetReader", "reading failed"))
        case .completed, .stopped: state = .completed
        case .cancelled: break
        }
    }

    /// cancelReading(): whether there is a run to cancel (or one starting).
    mutating func cancel() -> Bool { state.cancel() }

    /// What copyNextSampleBuffer() does for output `number`.
    enum Pull: Equatable {
        /// Pull the graph's next sample (nil from it ends the output).
        case pull
        /// Return nil: before reading starts, once the output has ended, and at once once
        /// reading has failed or was cancelled (whatever the graph still holds).
        case end
    }

    func pull(output number: Int) -> Pull {
        switch state {
        case .running, .completed: ended[number] ? .end : .pull
        case .unknown, .starting, .failed, .cancelled: .end
        }
    }

    /// Output `number` has given its last sample: whether every output has, so that reading is
    /// complete and what is left of the file (past the time range) need not be decoded.
    mutating func outputEnded(_ number: Int) -> Bool {
        guard !ended[number] else { return false }
        ended[number] = true
        guard case .running = state, ended.allSatisfy({ $0 }) else { return false }
        state = .completed
        return true
    }

    /// What a loop over an output's samples throws when they end: the reader's error when reading
    /// failed or was cancelled.
    var endError: GraphError? {
        switch state {
        case .failed(let error): error
        case .cancelled: GraphError(.cancelled, at: "AssetReader", "reading was cancelled")
        default: nil
        }
    }
}
