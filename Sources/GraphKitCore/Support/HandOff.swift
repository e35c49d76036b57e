/// A `CheckedContinuation` whose hand-over the ThreadSanitizer build can see: what the resuming
/// thread did before `resume` happens before what the awaiting task does after.
///
/// With Swift 6.3.1 on Linux, a value made on a dispatch queue and returned through
/// `withCheckedContinuation` is reported as a race (a 15-line program, the runtime's own TSan
/// hooks enabled): the runtime tells the sanitizer about a task's jobs, and the likely gap is a
/// continuation resumed before its task has suspended, which goes on without one. GraphKit's own
/// continuations are these instead (the same program with `withHandOff` reports nothing); in an
/// ordinary build they are the `CheckedContinuation` and nothing else.
@usableFromInline
package struct HandOff<T, E: Error>: Sendable {
    @usableFromInline let continuation: CheckedContinuation<T, E>
    #if GRAPHKIT_TSAN
    @usableFromInline let token: SanitizerToken

    @usableFromInline
    init(continuation: CheckedContinuation<T, E>, token: SanitizerToken) {
        self.continuation = continuation
        self.token = token
    }
    #else
    @usableFromInline
    init(continuation: CheckedContinuation<T, E>) { self.continuation = continuation }
    #endif

    @inlinable
    package func resume(returning value: sending T) {
        #if GRAPHKIT_TSAN
        token.releasing()
        #endif
        continuation.resume(returning: value)
    }

    @inlinable
    package func resume(throwing error: E) {
        #if GRAPHKIT_TSAN
        token.releasing()
        #endif
        continuation.resume(throwing: error)
    }

    @inlinable
    package func resume() where T == Void { resume(returning: ()) }
}

/// `withCheckedContinuation` with a ``HandOff``.
@inlinable
package func withHandOff<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (HandOff<T, Never>) -> Void
) async -> sending T {
    #if GRAPHKIT_TSAN
    let token = SanitizerToken()
    defer { token.acquired() }  // after the await: what the resumer did comes first
    return await withCheckedContinuation(isolation: isolation) { body(HandOff(continuation: $0, token: token)) }
    #else
    return await withCheckedContinuation(isolation: isolation) { body(HandOff(continuation: $0)) }
    #endif
}

/// `withCheckedThrowingContinuation` with a ``HandOff``.
@inlinable
package func withThrowingHandOff<T>(
    isolation: isolated (any Actor)? = #isolation,
    _ body: (HandOff<T, any Error>) -> Void
) async throws -> sending T {
    #if GRAPHKIT_TSAN
    let token = SanitizerToken()
    defer { token.acquired() }  // after the await, resumed with a value or an error
    return try await withCheckedThrowingContinuation(isolation: isolation) { body(HandOff(continuation: $0, token: token)) }
    #else
    return try await withCheckedThrowingContinuation(isolation: isolation) { body(HandOff(continuation: $0)) }
    #endif
}
