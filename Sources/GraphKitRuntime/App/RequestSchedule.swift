/// Whether a graph input is ready and finished, and when its `requestMediaDataWhenReady` block
/// is called: a value with no clock and no threads, whose transitions return what to do (time
/// comes in as an argument). ``AppInput`` keeps one under its lock and performs the actions:
/// it dispatches the block on the app's queue, now or after a pause.
///
/// AVFoundation's contract: the block appends while the input is ready and returns when it has
/// nothing more to give, and it is called again when the input can take more. So it is called:
/// - when it is registered while the input is ready, when the input turns ready (full → room),
///   and when the graph takes a sample while the block waits for its next call (room freed);
/// - at once again, when it returned having appended something and the input is still ready
///   (it may have more);
/// - after a pause, when it returned having appended nothing and the input is still ready: it
///   waits for data of its own (a camera's next frame). The pause is half the time since the
///   block last appended (or was registered), from ``shortestPause`` to ``longestPause``. So a
///   producer's sample waits at most half the gap before it: 8 ms at 60 fps, less than half a
///   frame at any steady rate (a block that takes a camera's latest frame misses none), and at
///   most 50 ms after a long silence; and a block with nothing to append is called less and
///   less often (each pause half the silence so far), down to 20 times a second, never in a
///   busy loop: its 200 calls in 10 s measured about 0.02 CPU-s (issue 27: 8.7 million calls in
///   6 s, a whole core).
///
/// Never while the input is not ready (the block would have nothing to do), and never again
/// once the input is finished or the block let go.
struct RequestSchedule: Sendable {
    enum Action: Equatable, Sendable {
        case none
        /// Call the block now (on its queue), as call `token`.
        case call(token: UInt64)
        /// Call the block after `pause`, as call `token` (stale by then if something else called it).
        case callAfter(Duration, token: UInt64)
    }

    typealias Instant = ContinuousClock.Instant

    static let shortestPause = Duration.milliseconds(1)
    static let longestPause = Duration.milliseconds(50)

    private enum Phase: Equatable {
        /// No call pending: no block, the input is not ready, or it is finished.
        case idle
        /// Call `token` is on its way, now or after a pause.
        case pending(token: UInt64, paused: Bool)
        /// The block runs; `appendsBefore` is the append count when it began, `roomFreed` whether
        /// the graph took a sample meanwhile.
        case running(appendsBefore: UInt64, roomFreed: Bool)
    }

    private(set) var isReady = true
    private(set) var isFinished = false
    private var hasBlock = false
    private var phase = Phase.idle
    private var appends: UInt64 = 0
    private var nextToken: UInt64 = 0
    /// When the block last appended (the end of that call), or was registered.
    private var idleSince: Instant?

    /// Whether a sample may be appended now: ready and not finished.
    var takesSamples: Bool { isReady && !isFinished }

    /// A block was registered (or replaced): called now if the input is ready, unless a call is
    /// about to run (which calls the new block) or running (which is followed by another).
    mutating func blockRegistered(at now: Instant) -> Action {
        guard !isFinished else { return .none }
        hasBlock = true
        idleSince = now
        switch phase {
        case .idle, .pending(_, paused: true): return isReady ? callNow() : .none
        case .pending(_, paused: false), .running: return .none
        }
    }

    /// The graph wants more (`ready`: need-data, as the input empties, or on every sample it takes
    /// from a real-time input), or has enough (enough-data).
    mutating func readinessChanged(to ready: Bool) -> Action {
        isReady = ready
        guard ready, hasBlock, !isFinished else { return .none }
        switch phase {
        case .idle:
            return callNow()
        case .pending(_, paused: true):
            return callNow()  // room freed while the block waits for its own data: it may have some now
        case .pending(_, paused: false):
            return .none
        case .running(let before, _):
            phase = .running(appendsBefore: before, roomFreed: true)
            return .none
        }
    }

    /// A sample entered the input.
    mutating func appended() { appends &+= 1 }

    /// Call `token` is due: whether to run the block now.
    mutating func callBegins(_ token: UInt64) -> Bool {
        guard case .pending(let pending, _) = phase, pending == token else { return false }  // stale
        guard hasBlock, !isFinished, isReady else {
            phase = .idle
            return false
        }
        phase = .running(appendsBefore: appends, roomFreed: false)
        return true
    }

    /// The block returned, at `now`: when to call it next.
    mutating func callEnded(at now: Instant) -> Action {
        guard case .running(let before, let roomFreed) = phase else { return .none }
        phase = .idle
        if appends != before { idleSince = now }
        guard hasBlock, !isFinished, isReady else { return .none }  // called again when it turns ready
        if appends != before || roomFreed { return callNow() }
        let idle = (idleSince ?? now).duration(to: now)
        let pause = min(max(idle / 2, Self.shortestPause), Self.longestPause)
        nextToken &+= 1
        phase = .pending(token: nextToken, paused: true)
        return .callAfter(pause, token: nextToken)
    }

    /// The input is finished (markAsFinished(), or the run ended): not ready, and the block is
    /// never called again.
    mutating func finish() {
        isFinished = true
        hasBlock = false
        phase = .idle
    }

    private mutating func callNow() -> Action {
        nextToken &+= 1
        phase = .pending(token: nextToken, paused: false)
        return .call(token: nextToken)
    }
}
