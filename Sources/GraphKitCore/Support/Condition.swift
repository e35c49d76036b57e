#if canImport(Glibc)
import Glibc
#endif

/// State shared by threads, with a condition variable to sleep on until it changes: `Mutex` with
/// a wait. The state is reached only inside `withLock` and `wait`, so a type that keeps its shared
/// `var`s in one is checked Sendable by the compiler. Waits with a deadline use the monotonic
/// clock (a change of the wall clock does not move them).
package final class Condition<State: Sendable>: @unchecked Sendable {
    // @unchecked: a pthread mutex and condition variable behind unsafe pointers (Mutex has no
    // condition to wait on); `state` is read and written only with the mutex held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var state: State

    package init(_ initial: State) {
        state = initial
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on the state with the lock held; with `wakingWaiters`, every waiter then
    /// looks at the state again.
    package func withLock<T, E: Error>(wakingWaiters: Bool = false, _ body: (inout State) throws(E) -> T) throws(E) -> T {
        pthread_mutex_lock(mutex)
        defer {
            if wakingWaiters { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        return try body(&state)
    }

    /// Sleeps until `done(state)` holds, or `seconds` have passed (nil: no limit), then runs
    /// `body` on the state with the lock still held; with `wakingWaiters`, every waiter then
    /// looks at the state again. One acquisition of the lock when `done` holds at once.
    package func wait<T>(until done: (State) -> Bool, atMost seconds: Double? = nil, wakingWaiters: Bool = false,
                         then body: (inout State) -> T) -> T {
        pthread_mutex_lock(mutex)
        defer {
            if wakingWaiters { pthread_cond_broadcast(condition) }
            pthread_mutex_unlock(mutex)
        }
        if done(state) { return body(&state) }
        if let seconds {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let total = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + max(0, seconds)
            var deadline = timespec(tv_sec: Int(total), tv_nsec: Int((total - total.rounded(.down)) * 1e9))
            while !done(state) {
                if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT { break }
            }
        } else {
            while !done(state) { pthread_cond_wait(condition, mutex) }
        }
        return body(&state)
    }
}
