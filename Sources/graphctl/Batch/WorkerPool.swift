import FoundationEssentials
import Glibc
import GraphKit

/// Runs a batch's inputs on `jobs` worker processes at once, each slot on a thread of its own
/// that hands its worker one input at a time and waits for the reply.
///
/// A worker runs input after input in one process, so process and GStreamer start-up are paid
/// once per worker, not per input (`--runs-per-worker` bounds that). A worker that dies on an
/// input (a crash) costs that input only: it is recorded as crashed and the slot starts a new
/// worker. An input still running after `timeout` seconds has its worker killed, and is
/// recorded as timed out. Either way its temporary files are removed: nothing is left
/// half-written, and nothing under an output's final name, since only a finished run renames.
final class WorkerPool: Sendable {
    struct Configuration {
        /// argv for a worker: the executable, `batch-worker`, the graph and fixed options.
        var workerArguments: [String]
        var executable: String
        /// The graph file's bytes, sent to each worker as it starts (``WorkerStart``).
        var graph: [UInt8]
        var jobs: Int
        /// Seconds an input may run; nil for no limit.
        var timeout: Double?
        /// Inputs a worker runs before it is replaced by a new one; 0 for no limit.
        var runsPerWorker: Int
    }

    private let configuration: Configuration
    private let work: [PlannedInput]
    /// Called on each slot's thread as its input ends (from several at once).
    private let ended: @Sendable (InputResult) -> Void
    private struct State {
        var next = 0
        var stopping = false
        var cancelling = false
        /// Each slot's worker, while one is running an input (for cancel()).
        var running: [Int: pid_t] = [:]
    }
    private let state = Guarded(State())

    init(_ configuration: Configuration, work: [PlannedInput], ended: @escaping @Sendable (InputResult) -> Void) {
        self.configuration = configuration
        self.work = work
        self.ended = ended
    }

    /// Runs every input (or until stopped) and returns when every slot has ended.
    func run() {
        let slots = max(1, min(configuration.jobs, work.count))
        let threads = (0..<slots).map { slot in startThread { [self] in runSlot(slot) } }
        for t in threads { pthread_join(t, nil) }
    }

    /// No input starts from now on; those running finish.
    func stop() {
        state.withLock { $0.stopping = true }
    }

    /// No input starts, and those running are killed (and recorded as cancelled).
    func cancel() {
        let pids = state.withLock {
            $0.stopping = true
            $0.cancelling = true
            return Array($0.running.values)
        }
        for pid in pids { kill(pid, SIGKILL) }
    }

    /// The inputs that were never started because the batch stopped.
    var notStarted: ArraySlice<PlannedInput> {
        work[state.withLock { $0.next }...]
    }

    private func take() -> PlannedInput? {
        guard let taken = state.withLock({ state -> Int? in
            guard !state.stopping, state.next < work.count else { return nil }
            state.next += 1
            return state.next - 1
        }) else { return nil }
        return work[taken]
    }

    private func runSlot(_ slot: Int) {
        var worker: WorkerProcess?
        var runs = 0
        while let item = take() {
            let started = ContinuousClock.now
            if worker == nil {
                do {
                    let started = try WorkerProcess(executable: configuration.executable, arguments: configuration.workerArguments)
                    // A worker that cannot take the graph has died: the job's send below finds it so.
                    _ = started.send(WorkerLine.encode(WorkerStart(graph: Data(configuration.graph))))
                    worker = started
                    runs = 0
                } catch {
                    ended(result(item, .failed, exitCode: error.code.exitStatus, since: started,
                                 error: "\"\(item.input.path)\": \(error.message)"))
                    continue
                }
            }
            guard let current = worker else { continue }
            let cancelled = state.withLock {
                $0.running[slot] = current.pid
                return $0.cancelling
            }
            if cancelled { current.kill(); worker = nil; ended(result(item, .cancelled, exitCode: 130, since: started, error: nil)); break }

            let outcome: WorkerProcess.Outcome
            if current.send(WorkerLine.encode(WorkerJob(index: item.input.index, overrides: item.overrides, input: item.input))) {
                let deadline = configuration.timeout.map { started + .milliseconds(Int64($0 * 1000)) }
                outcome = current.awaitReply(until: deadline)
            } else {
                outcome = .ended(current.kill())
            }
            let wasCancelled = state.withLock {
                $0.running[slot] = nil
                return $0.cancelling
            }

            switch outcome {
            case .reply(let line):
                guard let reply = WorkerLine.decode(WorkerReply.self, line), reply.index == item.input.index else {
                    current.kill()
                    worker = nil
                    item.removePartials()
                    ended(result(item, .crashed, exitCode: GraphError.Code.runFailed.exitStatus, since: started,
                                 error: "\"\(item.input.path)\": the worker process answered something that is not a reply"))
                    continue
                }
                if reply.exitCode == 0 {
                    ended(result(item, .completed, exitCode: 0, since: started, error: nil, outputs: reply.outputs))
                } else {
                    ended(result(item, .failed, exitCode: reply.exitCode, since: started,
                                 error: Self.message(for: item.input, reply.messages)))
                }
                runs += 1
                if configuration.runsPerWorker > 0, runs >= configuration.runsPerWorker {
                    current.finish()
                    worker = nil
                }
            case .ended(let status):
                worker = nil
                item.removePartials()
                if wasCancelled {
                    ended(result(item, .cancelled, exitCode: GraphError.Code.cancelled.exitStatus, since: started, error: nil))
                } else {
                    var message = "\"\(item.input.path)\": the worker process running it \(describeWaitStatus(status))"
                    if let last = current.lastErrorLine { message += "; it said: \(last)" }
                    ended(result(item, .crashed, exitCode: GraphError.Code.runFailed.exitStatus, since: started, error: message))
                }
            case .timedOut:
                current.kill()
                worker = nil
                item.removePartials()
                ended(result(item, .timedOut, exitCode: GraphError.Code.runFailed.exitStatus, since: started,
                             error: "\"\(item.input.path)\": did not finish within \(fixed(configuration.timeout ?? 0, 1)) s (--timeout); stopped"))
            }
        }
        worker?.finish()
    }

    /// The run's error, led by the input's path unless the messages name it already.
    static func message(for input: BatchInput, _ messages: [String]) -> String {
        let text = messages.isEmpty ? "the run failed" : messages.joined(separator: "; ")
        return text.contains(input.path) ? text : "\"\(input.path)\": \(text)"
    }

    /// How `item` ended; `outputs`, the files its run reported written (what a summary lists).
    private func result(_ item: PlannedInput, _ status: InputResult.Status, exitCode: Int32,
                        since started: ContinuousClock.Instant, error: String?, outputs: [String] = []) -> InputResult {
        InputResult(input: item.input.path, index: item.input.index, status: status, exitCode: exitCode,
                    wallSeconds: (ContinuousClock.now - started).inSeconds, error: error, outputs: outputs)
    }
}

/// Starts `body` on a new thread (a plain pthread: a slot blocks in poll(2) for as long as its
/// input runs, which Dispatch's and Swift concurrency's pools are not for).
func startThread(_ body: @escaping () -> Void) -> pthread_t {
    final class Box { let body: () -> Void; init(_ b: @escaping () -> Void) { body = b } }
    let context = Unmanaged.passRetained(Box(body)).toOpaque()
    var thread = pthread_t()
    let status = pthread_create(&thread, nil, { raw in
        Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
        return nil
    }, context)
    precondition(status == 0, "pthread_create failed: \(status)")
    return thread
}
