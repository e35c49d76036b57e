import GraphKitCore
import Glibc

/// What lets a capture session promise that no delegate callback starts after `stopRunning`
/// returns: every callback passes through ``deliver(_:)``, which runs it only while the gate is
/// open; ``close()`` shuts it and waits (at most a second) for callbacks already inside to end,
/// except one running on the closing thread itself (stopRunning called from a delegate).
final class CaptureGate: Sendable {
    struct State: Sendable {
        var open = false
        /// Threads inside a callback now, by pthread id.
        var inside: [UInt] = []
    }
    private let state = Condition(State())

    func open() { state.withLock { $0.open = true } }

    var isOpen: Bool { state.withLock { $0.open } }

    private static var currentThread: UInt { UInt(pthread_self()) }

    /// Runs `body` if the gate is open; false if it was closed.
    @discardableResult
    func deliver(_ body: () -> Void) -> Bool {
        let me = Self.currentThread
        let entered = state.withLock { s in
            guard s.open else { return false }
            s.inside.append(me)
            return true
        }
        guard entered else { return false }
        body()
        state.withLock(wakingWaiters: true) { s in
            if let i = s.inside.firstIndex(of: me) { s.inside.remove(at: i) }
        }
        return true
    }

    /// Shuts the gate; returns when no callback but the caller's own is inside, or after a second.
    func close() {
        let me = Self.currentThread
        state.withLock { $0.open = false }
        state.wait(until: { s in s.inside.allSatisfy { $0 == me } }, atMost: 1) { _ in }
    }
}
