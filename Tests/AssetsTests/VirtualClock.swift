@testable import Assets
import GraphKitCore

/// An ``AlarmClock`` whose time moves only when a test moves it, for the writer's rules on
/// virtual time (swift-nio's `EmbeddedEventLoop` in spirit): ``advance(to:)`` rings every alarm
/// that falls due, in order, on the advancing call, so when it returns the writer has acted; and
/// ``nextAlarm()`` lets a test wait, without sleeping, until the writer sets one (which GStreamer's
/// threads make it do, not the test).
final class VirtualClock: AlarmClock {
    typealias Instant = ContinuousClock.Instant

    private struct Alarm {
        let at: Instant
        let order: Int
        let action: @Sendable () -> Void
    }

    private struct State {
        var now: Instant
        var alarms: [Alarm] = []
        var set = 0
        var rung = 0
        var waiting: [CheckedContinuation<Instant?, Never>] = []
        var stopped = false

        var earliest: Alarm? { alarms.min { ($0.at, $0.order) < ($1.at, $1.order) } }
    }

    private let state: Guarded<State>

    init(startingAt start: Instant = .now) {
        state = Guarded(State(now: start))
    }

    var now: Instant { state.withLock { $0.now } }

    /// How many alarms were set, and how many rang.
    var alarms: (set: Int, rung: Int) { state.withLock { ($0.set, $0.rung) } }

    func schedule(at deadline: Instant, _ action: @escaping @Sendable () -> Void) {
        let (woken, earliest) = state.withLock { s in
            s.set += 1
            s.alarms.append(Alarm(at: deadline, order: s.set, action: action))
            defer { s.waiting.removeAll() }
            return (s.waiting, s.earliest?.at)
        }
        woken.forEach { $0.resume(returning: earliest) }
    }

    /// Waits until an alarm is set and has not rung; its deadline (the earliest). Nil once
    /// ``stop()`` was called, with no alarm left.
    func nextAlarm() async -> Instant? {
        await withCheckedContinuation { (c: CheckedContinuation<Instant?, Never>) in
            let ready: Instant?? = state.withLock { s in
                if let earliest = s.earliest { return .some(earliest.at) }
                if s.stopped { return .some(nil) }
                s.waiting.append(c)
                return .none
            }
            if case .some(let at) = ready { c.resume(returning: at) }
        }
    }

    /// No alarm will come (what sets them has ended): ``nextAlarm()`` returns nil.
    func stop() {
        let woken = state.withLock { s in
            s.stopped = true
            defer { s.waiting.removeAll() }
            return s.waiting
        }
        woken.forEach { $0.resume(returning: nil) }
    }

    /// Moves time to `deadline`, ringing on this call each alarm that falls due, in order (an
    /// alarm set by one that rings rings too, if it falls due).
    func advance(to deadline: Instant) {
        while true {
            let due: Alarm? = state.withLock { s in
                guard let next = s.earliest, next.at <= deadline else {
                    s.now = max(s.now, deadline)
                    return nil
                }
                s.alarms.removeAll { $0.order == next.order }
                s.now = max(s.now, next.at)
                s.rung += 1
                return next
            }
            guard let due else { return }
            due.action()
        }
    }

    func advance(by duration: Duration) {
        advance(to: now + duration)
    }
}
