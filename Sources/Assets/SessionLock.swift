import GraphKitCore
import Synchronization

/// The one lock of a writer session (``AssetWriter`` and its inputs): a ``Guarded`` that, in a
/// debug build, counts how often it is taken, so that a test can hold the writer to its budget
/// (at most two acquisitions per appended sample on the steady path: one to admit and shape the
/// sample, one to note that it went in). A release build has the `Guarded` and nothing else.
struct SessionLock<Value>: ~Copyable, Sendable {
    private let guarded: Guarded<Value>
    #if DEBUG
    private let taken = Atomic<Int>(0)
    #endif

    init(_ initialValue: consuming sending Value) {
        guarded = Guarded(initialValue)
    }

    /// Runs `body` on the value with the lock held.
    borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if DEBUG
        taken.add(1, ordering: .relaxed)
        #endif
        return try guarded.withLock(body)
    }

    #if DEBUG
    /// How many times the lock has been taken (debug builds only).
    var acquisitions: Int { taken.load(ordering: .relaxed) }
    #endif
}
