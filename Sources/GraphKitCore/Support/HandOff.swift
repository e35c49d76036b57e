/// A `CheckedContinuation` whose hand-over the ThreadSanitizer build can see: what the resuming
/// thread did before `resume` happens before what the awaiting task does after.
///
/// Swift 6.3.1's runtime tells the sanitizer about a task's jobs, but not about a continuation
/// resumed before its task has suspended (it then goes on without a job): a value made on a
/// GStreamer or dispatch thread and returned through `withCheckedContinuation` is reported as a
/// race (shown with a 15-line program). GraphKit's own continuations are these instead; in an
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
    let value = await withCheckedContinuation(isolation: isolation) { body(HandOff(continuation: $0, token: token)) }
    token.acquired()
    return value
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
    do {
        let value = try await withCheckedThrowingContinuation(isolation: isolation) { body(HandOff(continuation: $0, token: token)) }
        token.acquired()
        return value
    } catch {
        token.acquired()
        throw error
    }
    #else
    return try await withCheckedThrowingContinuation(isolation: isolation) { body(HandOff(continuation: $0)) }
    #endif
}
