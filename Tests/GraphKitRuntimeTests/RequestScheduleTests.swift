@testable import GraphKitRuntime
import GraphKit
import Testing

/// When a `requestMediaDataWhenReady` block is called (``RequestSchedule``), driven with virtual
/// time: hours of calls in microseconds. Issue 27: a block with nothing to append was called
/// again at once whenever it returned, 8.7 million times in 6 s.
@Suite struct RequestScheduleTests {
    typealias Instant = ContinuousClock.Instant
    let t0 = ContinuousClock.now

    func expect<T: Equatable>(_ actual: T, _ expected: T, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(actual == expected, sourceLocation: sourceLocation)
    }

    /// Runs one call of the block (which appends `appending` samples) at `now`; returns what the
    /// schedule says next.
    func call(_ s: inout RequestSchedule, _ action: RequestSchedule.Action, at now: Instant, appending: Int = 0) -> RequestSchedule.Action {
        let token: UInt64
        switch action {
        case .call(let t), .callAfter(_, let t): token = t
        case .none: Issue.record("no call was due"); return .none
        }
        expect(s.callBegins(token), true)
        for _ in 0..<appending { s.appended() }
        return s.callEnded(at: now)
    }

    /// A block with nothing to append, for ten virtual minutes: never called at once again, each
    /// pause between 1 and 50 ms, and about 20 calls a second once idle for a while.
    @Test func anIdleBlockIsCalledAfterPausesNeverInALoop() {
        var s = RequestSchedule()
        var action = s.blockRegistered(at: t0)
        #expect(action == .call(token: 1))
        var now = t0, calls = 0
        while now < t0 + .seconds(600) {
            action = call(&s, action, at: now)
            calls += 1
            guard case .callAfter(let pause, _) = action else {
                Issue.record("after a call that appended nothing: \(action)")
                return
            }
            #expect(pause >= .milliseconds(1) && pause <= .milliseconds(50))
            now += pause
        }
        #expect(calls <= 600 * 20 + 20, "\(calls) calls in 600 s")
        #expect(calls >= 600 * 20 - 20, "\(calls) calls in 600 s")
    }

    /// A camera at 60 fps whose block takes the frame waiting, if any: every frame is taken
    /// within half a frame (8.4 ms) of its arrival, before the next arrives, for a minute.
    @Test func aSixtyFrameASecondProducerIsServedWithinHalfAFrame() {
        let interval = Duration.nanoseconds(1_000_000_000 / 60)
        var s = RequestSchedule()
        var action = s.blockRegistered(at: t0)
        var now = t0, taken = 0, worst = Duration.zero
        let frames = 60 * 60
        func arrival(_ n: Int) -> Instant { t0 + interval * n + .microseconds(300) }
        while taken < frames {
            let ready = arrival(taken) <= now
            if ready { worst = max(worst, arrival(taken).duration(to: now)) }
            action = call(&s, action, at: now, appending: ready ? 1 : 0)
            if ready { taken += 1 }
            switch action {
            case .call: break
            case .callAfter(let pause, _): now += pause
            case .none: Issue.record("the block was let go"); return
            }
        }
        #expect(worst <= interval / 2, "a frame waited \(worst)")
    }

    /// Readiness rules: no call while the input is full; a call as it turns ready; a call at once
    /// when the graph takes a sample while the block waits out a pause (the pause's own call is
    /// then stale); after one that appended, at once again.
    @Test func readinessDecidesTheCalls() {
        var s = RequestSchedule()
        expect(s.readinessChanged(to: false), .none)
        expect(s.blockRegistered(at: t0), .none)  // registered while full: nothing to do yet
        expect(s.readinessChanged(to: true), .call(token: 1))
        expect(s.callBegins(1), true)
        s.appended()
        expect(s.readinessChanged(to: false), .none)  // full while the block runs
        expect(s.callEnded(at: t0), .none)  // called again when it turns ready
        expect(s.readinessChanged(to: true), .call(token: 2))
        expect(s.callBegins(2), true)
        expect(s.callEnded(at: t0 + .milliseconds(40)), .callAfter(.milliseconds(20), token: 3))
        // The graph took a sample (need-data while ready): the block is called now, not after the pause.
        expect(s.readinessChanged(to: true), .call(token: 4))
        expect(s.callBegins(3), false)  // the pause's call is stale
        expect(s.callBegins(4), true)
        s.appended()
        expect(s.callEnded(at: t0 + .milliseconds(41)), .call(token: 5))  // it appended: it may have more
        // A call that finds the input full (it filled meanwhile) runs nothing, and waits for readiness.
        expect(s.readinessChanged(to: false), .none)
        expect(s.callBegins(5), false)
        expect(s.readinessChanged(to: true), .call(token: 6))
    }

    /// A block registered again while the old one waits out a pause is called now, not after it.
    @Test func aNewBlockIsCalledAtOnce() {
        var s = RequestSchedule()
        expect(s.blockRegistered(at: t0), .call(token: 1))
        expect(s.callBegins(1), true)
        expect(s.callEnded(at: t0 + .milliseconds(20)), .callAfter(.milliseconds(10), token: 2))
        expect(s.blockRegistered(at: t0 + .milliseconds(21)), .call(token: 3))
        expect(s.callBegins(2), false)
    }

    /// Room freed while the block runs (it appended nothing, someone else did and the graph took
    /// it): called again at once, since its call saw a full input's last moments.
    @Test func roomFreedDuringACallCallsAgain() {
        var s = RequestSchedule()
        expect(s.blockRegistered(at: t0), .call(token: 1))
        expect(s.callBegins(1), true)
        expect(s.readinessChanged(to: true), .none)
        expect(s.callEnded(at: t0), .call(token: 2))
    }

    /// Once finished, the block is never called again: a call on its way does not run, and
    /// readiness no longer calls it.
    @Test func aFinishedInputCallsNoMore() {
        var s = RequestSchedule()
        expect(s.blockRegistered(at: t0), .call(token: 1))
        s.finish()
        #expect(!s.takesSamples)
        expect(s.callBegins(1), false)
        expect(s.readinessChanged(to: true), .none)
        expect(s.blockRegistered(at: t0), .none)
    }
}
