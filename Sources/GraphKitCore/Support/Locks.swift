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

/// A condition variable with its own lock, on the monotonic clock (a wait with a deadline is not
/// moved by a change of the wall clock).
package final class Condition: @unchecked Sendable {
    // @unchecked: a pthread condition variable and its mutex (Mutex has no condition to wait on).
    private let mutex = Lock()
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    package init() {
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

    package func lock() { mutex.lock() }
    package func unlock() { mutex.unlock() }

    /// Waits (the lock held) until signalled.
    package func wait() { pthread_cond_wait(condition, mutex.raw) }

    /// Waits (the lock held) until signalled or `seconds` have passed; false on time-out.
    @discardableResult
    package func wait(seconds: Double) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + max(0, seconds)
        var deadline = timespec(tv_sec: Int(total), tv_nsec: Int((total - total.rounded(.down)) * 1e9))
        return pthread_cond_timedwait(condition, mutex.raw, &deadline) == 0
    }

    package func broadcast() { pthread_cond_broadcast(condition) }
}
