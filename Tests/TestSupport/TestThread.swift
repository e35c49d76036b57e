import Dispatch
import Foundation

/// A thread a test starts and must join: `join()` waits for the body to return and gives its
/// result, so nothing a test started outlives it, and its checks run on the test's own thread
/// (an `#expect` on a thread nobody waits for may land after the test has ended).
public final class TestThread<Result: Sendable>: @unchecked Sendable {
    private let lock = NSCondition()
    private var result: Result?
    private var waiter: CheckedContinuation<Result, Never>?

    public init(_ name: String, _ body: @escaping @Sendable () -> Result) {
        let thread = Thread { [self] in
            let r = body()
            lock.lock()
            result = r
            let waiting = waiter
            waiter = nil
            lock.broadcast()
            lock.unlock()
            waiting?.resume(returning: r)  // the last thing the thread does
        }
        thread.name = name
        thread.start()
    }

    /// Blocks until the thread's body has returned.
    public func join() -> Result {
        lock.lock()
        defer { lock.unlock() }
        while result == nil { lock.wait() }
        return result!
    }

    /// Blocks until the thread's body has returned, or `seconds` have passed: its result, or nil
    /// when the guard limit came first (the thread is stuck; the test fails rather than hang,
    /// and cannot join it).
    public func join(guardSeconds seconds: Double) -> Result? {
        let deadline = Date(timeIntervalSinceNow: seconds)
        lock.lock()
        defer { lock.unlock() }
        while result == nil, lock.wait(until: deadline) {}
        return result
    }

    /// `join(guardSeconds:)` without blocking a concurrency thread (a thread of its own waits).
    public func join(guardSeconds seconds: Double) async -> Result? {
        await TestThread<Result?>("join guard") { self.join(guardSeconds: seconds) }.join()
    }

    /// Suspends until the thread's body has returned, without blocking a concurrency thread.
    public func join() async -> Result {
        await withCheckedContinuation { c in
            lock.lock()
            if let result {
                lock.unlock()
                c.resume(returning: result)
            } else {
                waiter = c
                lock.unlock()
            }
        }
    }
}

/// Watches for a moment from a thread of its own, asking `check` every millisecond: `true` when
/// the moment came (and `check` acted on it), `false` when it can no longer come, `nil` for not
/// yet. A task on the cooperative pool could miss the moment behind other tests' blocking calls
/// (a watched export once completed, in a full suite on two cores, before the watching task ran
/// again); a thread is scheduled by the kernel.
public func watchFromThread(_ name: String, _ check: @escaping @Sendable () -> Bool?) async -> Bool {
    await TestThread(name) { () -> Bool in
        while true {
            if let answer = check() { return answer }
            usleep(1_000)
        }
    }.join()
}

/// A one-time event between threads, with a guard limit that fails the test rather than hang.
public final class TestEvent: @unchecked Sendable {
    public init() {}
    private let semaphore = DispatchSemaphore(value: 0)

    public func signal() { semaphore.signal() }

    /// Whether the event came within `seconds`: a guard, far beyond what the test needs.
    public func wait(guardSeconds seconds: Int = 120) -> Bool {
        guard semaphore.wait(timeout: .now() + .seconds(seconds)) == .success else { return false }
        semaphore.signal()  // stays signalled for later waiters
        return true
    }
}
