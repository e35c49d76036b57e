#if GRAPHKIT_TSAN
import Glibc
#endif
import Synchronization

/// A value reached only with its lock held: Swift's `Mutex`, which the ThreadSanitizer build can
/// see.
///
/// On Linux, `Synchronization.Mutex` takes and releases its lock with atomics and futex calls
/// inside the (uninstrumented) Swift runtime, so ThreadSanitizer sees neither: every access made
/// under `withLock` by two threads is reported as a race (a two-thread program appending under
/// `withLock` is enough, Swift 6.3.1). GraphKit's own code keeps shared state in `Guarded`
/// instead. In an ordinary build it is the `Mutex` and nothing else (`withLock` inlines to the
/// `Mutex`'s); in the build `scripts/test-sanitize.sh thread` makes (`-DGRAPHKIT_TSAN`), the
/// critical section also tells the sanitizer what the lock does: acquire on entry, release on
/// exit, on an address that is this lock's alone.
///
/// A node's author may use either: a `Mutex` is as correct, only invisible to the sanitizer.
public struct Guarded<Value: ~Copyable>: ~Copyable {
    @usableFromInline let mutex: Mutex<Value>
    #if GRAPHKIT_TSAN
    /// The sanitizer's name for this lock: an object of its own, so the address is stable and
    /// no other lock's.
    @usableFromInline let token = SanitizerToken()
    #endif

    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` on the value with the lock held, as `Mutex.withLock` does.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if GRAPHKIT_TSAN
        let token = self.token
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            token.acquired()
            defer { token.releasing() }
            return try body(&value)
        }
        #else
        return try mutex.withLock(body)
        #endif
    }
}

extension Guarded: Sendable where Value: ~Copyable {}

#if GRAPHKIT_TSAN
/// One lock's identity for ThreadSanitizer: `__tsan_acquire` and `__tsan_release` on its
/// address, which the sanitizer's runtime provides in this build (found with dlsym, so that no
/// declaration of them is needed by the modules that inline `withLock`).
public final class SanitizerToken: Sendable {
    public typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void
    @usableFromInline static let acquire = annotation("__tsan_acquire")
    @usableFromInline static let release = annotation("__tsan_release")

    @inlinable public init() {}

    private static func annotation(_ name: String) -> Annotation? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }  // RTLD_DEFAULT
        return unsafeBitCast(symbol, to: Annotation.self)
    }

    @inlinable func acquired() { Self.acquire?(Unmanaged.passUnretained(self).toOpaque()) }
    @inlinable func releasing() { Self.release?(Unmanaged.passUnretained(self).toOpaque()) }
}
#endif
