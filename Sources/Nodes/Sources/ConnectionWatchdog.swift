import GraphKitCore
import GraphKitRuntime

/// A network node's watch over its connection: a thread that looks at the node's element every
/// 100 ms (or as often as the node asks) (`step`, given the element and how to fail the run at it, and its own state between
/// steps) until `step` says it is done or the run stops. `sink.rtmp` and `sink.srt` read their
/// element's statistics with it, which GStreamer's elements fill only while connected;
/// `source.rtsp` checks when its packets last came.
final class ConnectionWatchdog: Sendable {
    typealias Parts = (element: Element, fail: @Sendable (GraphError, Element) -> Void)
    private let parts = Guarded<Parts?>(nil)
    private let stopped = Condition(false)
    private let thread = Guarded<JoinableThread?>(nil)

    /// The element watched, once built, and the node's way to fail the run at it.
    func watch(_ element: Element, failing fail: @escaping @Sendable (GraphError, Element) -> Void) {
        parts.withLock { $0 = (element, fail) }
    }

    /// Starts watching (from the node's `prepare`): `step` runs every `interval` seconds (100
    /// ms), once the element is built, while it returns true. It should hold its node weakly.
    func start<State: Sendable>(_ name: String, state: State, every interval: Double = 0.1,
                                _ step: @escaping @Sendable (Parts, inout State) -> Bool) {
        // Weakly held: a watchdog its node let go of (never finished) ends with it.
        let made = JoinableThread(name: name) { [weak self] in
            var state = state
            while let watchdog = self, watchdog.tick(step, &state, interval) {}
        }
        thread.withLock { $0 = made }
    }

    /// Waits `interval` (or until stopped), then runs `step` once the element is built; false
    /// once stopped or `step` is done.
    private func tick<State>(_ step: (Parts, inout State) -> Bool, _ state: inout State, _ interval: Double) -> Bool {
        if stopped.wait(until: { $0 }, atMost: interval, then: { $0 }) { return false }
        guard let p = parts.withLock({ $0 }) else { return true }
        return step(p, &state)
    }

    /// Stops the watch and waits for its thread (from the node's `finish`).
    func stop() {
        stopped.withLock(wakingWaiters: true) { $0 = true }
        thread.withLock { $0 }?.join()
    }
}
