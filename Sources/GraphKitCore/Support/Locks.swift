#if canImport(Glibc)
import Glibc
#endif

/// A mutex for state that GStreamer's streaming threads and the run's own share (a node's
/// counters, its status). GraphKit's own, so neither the engine nor a node needs Foundation
/// (whose ICU costs every process 7 MB of memory).
///
/// Kept beside `Mutex` for the code that locks a region rather than a value: the nodes and
/// GStreamer wrappers of other targets, and RunStatistics, whose guarded tables hold unsafe
/// pointers a Mutex cannot take without sending them. New code uses `Mutex`.
public final class Lock: @unchecked Sendable {
    // @unchecked: a pthread mutex behind an unsafe pointer, which the compiler cannot see into.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    public init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    public func lock() { pthread_mutex_lock(mutex) }
    public func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the lock held.
    public func withLock<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock()
        defer { unlock() }
        return try body()
    }

    fileprivate var raw: UnsafeMutablePointer<pthread_mutex_t> { mutex }
}

/// State shared by threads, with a condition variable to sleep on until it changes: `Mutex` with
/// a wait. The state is reached only inside `withLock` and `wait`, so a type that keeps its shared
/// `var`s in one is checked Sendable by the compiler. Waits with a deadline use the monotonic
/// clock (a change of the wall clock does not move them).
package final class Condition<State: Sendable>: @unchecked Sendable {
    // @unchecked: a pthread mutex and condition variable behind unsafe pointers (Mutex has no
    // condition to wait on); `state` is read and written only with the mutex held.
    private let mutex = Lock()
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    package init(_ initial: State) {
        state = initial
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
    }

    /// Runs `body` on the state with the lock held; with `wakingWaiters`, every waiter then
    /// looks at the state again.
    package func withLock<T, E: Error>(wakingWaiters: Bool = false, _ body: (inout State) throws(E) -> T) throws(E) -> T {
        mutex.lock()
        defer {
            if wakingWaiters { pthread_cond_broadcast(condition) }
            mutex.unlock()
        }
        return try body(&state)
    }

    /// Sleeps until `done(state)` holds, or `seconds` have passed (nil: no limit), then runs
    /// `body` on the state with the lock still held.
    package func wait<T>(until done: (State) -> Bool, atMost seconds: Double? = nil, then body: (inout State) -> T) -> T {
        mutex.lock()
        defer { mutex.unlock() }
        if let seconds {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let total = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + max(0, seconds)
            var deadline = timespec(tv_sec: Int(total), tv_nsec: Int((total - total.rounded(.down)) * 1e9))
            while !done(state) {
                if pthread_cond_timedwait(condition, mutex.raw, &deadline) == ETIMEDOUT { break }
            }
        } else {
            while !done(state) { pthread_cond_wait(condition, mutex.raw) }
        }
        return body(&state)
    }
}
