@testable import Assets
import GraphKit
import Testing

/// The writer's stall rule (``StallWatch``) driven with virtual instants: ten-second waits and an
/// hour of a slow producer in microseconds, no graph, no clock.
@Suite struct StallWatchTests {
    typealias Instant = ContinuousClock.Instant
    let t0 = ContinuousClock.now
    let video = 0, audio = 1

    func seconds(_ s: Double) -> MediaTime { MediaTime(seconds: s, preferredTimescale: 1000) }
    func at(_ s: Double) -> Instant { t0 + .milliseconds(Int64(s * 1000)) }

    func watch() -> StallWatch { StallWatch(inputs: ["video input", "audio input"], since: t0) }

    /// Appends a sample to `input` that takes it to `reached`, at `time`.
    func appended(_ w: inout StallWatch, _ input: Int, reaching reached: Double, at time: Double) {
        let begins = w.note(.appendBegins, input: input, at: at(time), session: .zero)
        #expect(begins == .none)
        _ = w.note(.appendEnds(reached: seconds(reached)), input: input, at: at(time), session: .zero)
    }

    /// The alarm the last action set.
    func token(_ action: StallWatch.Action, sourceLocation: SourceLocation = #_sourceLocation) -> (at: Instant, token: UInt64)? {
        guard case .arm(let at, let token) = action else {
            Issue.record("no alarm set: \(action)", sourceLocation: sourceLocation)
            return nil
        }
        return (at, token)
    }

    /// The video 9 s in waits; the audio has nothing and gets nothing: an alarm 10 s after the
    /// wait began, and when it rings, the stall, naming both inputs and where each is.
    @Test func anAppendWaitingOnAnIdleInputIsAStallAfterTenSeconds() throws {
        var w = watch()
        appended(&w, video, reaching: 9, at: 0.5)
        let begins = w.note(.appendBegins, input: video, at: at(1), session: .zero)
        #expect(begins == .none)
        let alarm = try #require(token(w.note(.appendWaits, input: video, at: at(1), session: .zero)))
        #expect(alarm.at == at(11))
        guard case .stall(let error) = w.alarm(alarm.token, at: alarm.at, session: .zero) else {
            Issue.record("no stall")
            return
        }
        #expect(error.problems[0].location == "video input")
        for fragment in ["waited 10 s", "the video input is at 9.0 s and the audio input has no samples", "markAsFinished() on the audio input"] {
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    /// An append whose input has room when the alarm rings waits for its thread, not for room (a
    /// busy machine's task pool had not resumed it: the suite on 2 cores under `stress` saw 10 s):
    /// no stall, and its wait counts again from then. Still waiting without room 10 s later, it is.
    @Test func anAppendWhoseInputHasRoomIsNoStall() throws {
        var w = watch()
        appended(&w, video, reaching: 9, at: 0.5)
        _ = w.note(.appendBegins, input: video, at: at(1), session: .zero)
        let alarm = try #require(token(w.note(.appendWaits, input: video, at: at(1), session: .zero)))
        guard case .arm(let again, let next) = w.alarm(alarm.token, at: alarm.at, session: .zero, ready: [video]) else {
            Issue.record("an input with room stalled, or no alarm was set again")
            return
        }
        #expect(again == at(21))
        guard case .stall = w.alarm(next, at: again, session: .zero) else {
            Issue.record("no stall once the room had gone")
            return
        }
    }

    /// A wait for its own encoder (less than 5 s ahead) sets no alarm: it is no stall however long.
    @Test func aWaitLessThanFiveSecondsAheadIsNoStall() {
        var w = watch()
        appended(&w, video, reaching: 4.9, at: 0)
        _ = w.note(.appendBegins, input: video, at: at(0), session: .zero)
        let waits = w.note(.appendWaits, input: video, at: at(0), session: .zero)
        #expect(waits == .none)
        // The session's start is where an input with nothing is: 3 s in, the video is 1.9 s ahead.
        var late = watch()
        _ = late.note(.appendBegins, input: video, at: at(0), session: seconds(3))
        _ = late.note(.appendEnds(reached: seconds(7.9)), input: video, at: at(0), session: seconds(3))
        _ = late.note(.appendBegins, input: video, at: at(0), session: seconds(3))
        #expect(late.note(.appendWaits, input: video, at: at(0), session: seconds(3)) == .none)
    }

    /// An hour of virtual time: the video waits 10 s ahead of the audio throughout (each of the
    /// audio's samples lets one more frame in, and the next waits), and the audio gets 0.1 s every
    /// 9.9 s. Each alarm finds the audio fed within the last 10 s; none is a stall.
    @Test func anInputFedSlowlyIsNeverAStall() {
        var w = watch()
        var alarm: (at: Instant, token: UInt64)?
        func take(_ action: StallWatch.Action) {
            if case .arm(let at, let token) = action { alarm = (at, token) }
        }
        appended(&w, video, reaching: 10, at: 0)
        _ = w.note(.appendBegins, input: video, at: at(0), session: .zero)
        take(w.note(.appendWaits, input: video, at: at(0), session: .zero))
        var now = 0.0, audioReached = 0.0, rung = 0
        while now < 3600 {
            let next = now + 9.9
            while let a = alarm, a.at <= at(next) {
                alarm = nil
                rung += 1
                switch w.alarm(a.token, at: a.at, session: .zero) {
                case .stall(let error): Issue.record("at \(now) s: \(error.message)"); return
                case .arm(let at, let token): alarm = (at, token)
                case .none: break
                }
            }
            now = next
            audioReached += 0.1
            appended(&w, audio, reaching: audioReached, at: now)
            // The muxer takes a frame; the next append waits again.
            take(w.note(.appendEnds(reached: seconds(audioReached + 10)), input: video, at: at(now), session: .zero))
            take(w.note(.appendBegins, input: video, at: at(now), session: .zero))
            take(w.note(.appendWaits, input: video, at: at(now), session: .zero))
        }
        #expect(rung > 300, "\(rung) alarms in an hour")
    }

    /// An input fed by a request block, or finished, is never the idle one.
    @Test func aRequestBlockOrAFinishedInputIsNotIdle() {
        for event in [StallWatch.Event.requested, .finished] {
            var w = watch()
            _ = w.note(event, input: audio, at: at(0), session: .zero)
            appended(&w, video, reaching: 10, at: 0)
            _ = w.note(.appendBegins, input: video, at: at(0), session: .zero)
            let waits = w.note(.appendWaits, input: video, at: at(0), session: .zero)
            #expect(waits == .none, "\(event)")
        }
    }

    /// An alarm rings after the wait it was set for ended: nothing; after another was set for
    /// sooner: nothing either (the sooner one looks).
    @Test func aStaleAlarmDoesNothing() throws {
        var w = watch()
        appended(&w, video, reaching: 10, at: 0)
        _ = w.note(.appendBegins, input: video, at: at(0), session: .zero)
        let first = try #require(token(w.note(.appendWaits, input: video, at: at(0), session: .zero)))
        _ = w.note(.appendEnds(reached: seconds(10.1)), input: video, at: at(1), session: .zero)
        guard case .none = w.alarm(first.token, at: first.at, session: .zero) else {
            Issue.record("the wait had ended")
            return
        }
        guard case .none = w.alarm(first.token + 7, at: first.at, session: .zero) else {
            Issue.record("an alarm never set rang")
            return
        }
    }
}
