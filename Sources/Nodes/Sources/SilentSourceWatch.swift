import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import Synchronization

/// Watches a live source that can go quiet without telling anyone: `pipewiresrc` waits for ever
/// when its node goes away, and up to 30 s, inside its state change, when nothing links it (no
/// session manager). Started in `prepare`, stopped in `finish`.
///
/// - No first buffer within ``firstLimit`` seconds fails the run, naming the device, and wakes
///   the source out of its wait, so that the run ends then.
/// - No buffer for ``gapLimit`` seconds after some ends the stream (what was captured is kept,
///   complete, as `source.srt` does when its peer is gone for good) with a warning naming it.
/// - A run cancelled before the first buffer wakes the source the same way (``runWillCancel()``),
///   so that a signal stops it at once.
final class SilentSourceWatch: Sendable {
    static let firstLimit = 5.0
    static let gapLimit = 3.0

    /// CLOCK_MONOTONIC nanoseconds of the last buffer, 0 before the first: written by the
    /// streaming thread for each buffer, without a lock.
    private let lastBuffer = Stamp()
    private let started = Stamp()
    private let stopped = Condition(false)
    private let thread = Guarded<JoinableThread?>(nil)
    private let parts = Guarded<(source: Element, fail: @Sendable (GraphError, Element) -> Void)?>(nil)
    let description: String

    /// `description`: the device as messages name it (`camera "pipewire:cam"`).
    init(_ description: String) { self.description = description }

    static func now() -> Int64 {
        var t = timespec()
        clock_gettime(CLOCK_MONOTONIC, &t)
        return Int64(t.tv_sec) * 1_000_000_000 + Int64(t.tv_nsec)
    }

    /// Counts the buffers leaving `source`.
    func watch(_ source: Element, in bin: BinBuilder) {
        parts.withLock { $0 = (source, bin.nodeFailure()) }
        source.onEachBuffer(leaving: "src") { [lastBuffer] _ in
            lastBuffer.value.store(Self.now(), ordering: .relaxed)
            return false
        }
    }

    func start() {
        started.value.store(Self.now(), ordering: .relaxed)
        let watcher = JoinableThread(name: "silent source") { [weak self] in
            while let watch = self, watch.step() {}
        }
        thread.withLock { $0 = watcher }
    }

    func stop() {
        stopped.withLock(wakingWaiters: true) { $0 = true }
        thread.withLock { $0 }?.join()
    }

    /// The run is cancelled: a source still waiting for its first buffer is woken (it then fails
    /// its state change, which the cancel ends anyway).
    func runWillCancel() {
        guard lastBuffer.value.load(ordering: .relaxed) == 0, let (source, _) = parts.withLock({ $0 }) else { return }
        source.interruptWaiting()
    }

    /// One look; false once there is nothing more to watch.
    private func step() -> Bool {
        if stopped.wait(until: { $0 }, atMost: 0.1, then: { $0 }) { return false }
        // Built after prepare started the watch: nothing to act on yet means keep watching.
        guard let (source, fail) = parts.withLock({ $0 }) else { return true }
        let now = Self.now(), last = lastBuffer.value.load(ordering: .relaxed)
        if last == 0 {
            guard Double(now - started.value.load(ordering: .relaxed)) / 1e9 >= Self.firstLimit else { return true }
            fail(GraphError(.runFailed, "\(description) sent nothing within \(Int(Self.firstLimit)) s: nothing linked it "
                            + "(is PipeWire's session manager, WirePlumber, running?) or it is not producing"), source)
            // pipewiresrc waits up to 30 s for its stream to start, in its state change: the run
            // could not end before that returns.
            source.interruptWaiting()
            return false
        }
        let quiet = Double(now - last) / 1e9
        guard quiet >= Self.gapLimit else { return true }
        source.postWarning("\(description) sent nothing for \(Int(quiet.rounded())) s: it went away; its stream ends here")
        source.endStream()
        return false
    }
}

/// A time shared with a streaming thread's callback.
private final class Stamp: Sendable {
    let value = Atomic<Int64>(0)
}

/// A count shared by a streaming thread's callbacks (a duration's gate).
final class SharedCount: Sendable {
    private let value = Atomic(0)
    /// Adds `n` and returns the count before.
    func add(_ n: Int) -> Int { value.add(n, ordering: .relaxed).oldValue }
}
