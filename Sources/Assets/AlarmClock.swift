import Dispatch

/// Where an ``AssetWriter``'s time comes from: the instant now, and a call at a later one. The
/// writer's rules (``WriterState``, ``StallWatch``) take instants as arguments; this is all their
/// driver needs of time, so a test can give the writer a virtual clock whose `advance` runs the
/// alarms that fall due on the advancing call (as swift-nio's `EmbeddedEventLoop.advanceTime(by:)`
/// does), and drive ten seconds of waiting in microseconds, deterministically.
///
/// Why not `Clock` and a sleeping task: what moves a writer is GStreamer's threads, not a tree of
/// tasks, so a test clock that resumes sleeping tasks (swift-clocks' `TestClock`) cannot tell the
/// test when the writer has acted on an alarm; here the alarm has run when `advance` returns.
package protocol AlarmClock: Sendable {
    /// The instant now, on the continuous clock's scale.
    var now: ContinuousClock.Instant { get }
    /// Calls `action` once, at `deadline` or soon after, on a thread of the clock's own (never
    /// the caller's).
    func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void)
}

/// The machine's monotonic clock, alarms on a global dispatch queue.
package struct SystemAlarmClock: AlarmClock {
    package init() {}

    package var now: ContinuousClock.Instant { .now }

    package func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) {
        let c = max(.zero, now.duration(to: deadline)).components
        let nanoseconds = Int(c.seconds) * 1_000_000_000 + Int(c.attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds), execute: action)
    }
}
