@testable import MediaContainers
import Testing

/// MuxInterleave: when a file sink's input waits for the others (the rule `sink.mp4` and
/// `sink.mp4segments` share).
@Suite struct MuxInterleaveTests {
    @Test func anInputWaitsOnlyWhenItIsMoreThanTheLeadAheadOfTheSlowestRunningOne() {
        var gate = MuxInterleave(inputs: 3)
        // No one has given a sample: nothing to wait for (a camera's first picture can take seconds).
        #expect(!gate.isAhead(0, 100))
        gate.reach(1, 2.0)
        gate.reach(2, 3.0)
        // The slowest other is input 1, at 2.0.
        #expect(!gate.isAhead(0, 2.5))
        #expect(gate.isAhead(0, 2.5 + 1e-9))
        #expect(gate.slowest(besides: 0) == 2.0)
        #expect(gate.slowest(besides: 1) == 3.0)
        // Input 1 ended: input 2 (3.0) is the slowest now.
        gate.end(1)
        #expect(gate.hasEnded(1) && !gate.hasEnded(0))
        #expect(!gate.isAhead(0, 3.4))
        #expect(gate.isAhead(0, 3.6))
        // Every other one ended: nothing to wait for.
        gate.end(2)
        #expect(!gate.isAhead(0, 1_000))
        #expect(gate.slowest(besides: 0) == nil)
    }

    @Test func aWaitThatRunsOutIsAStallUntilTheOthersCatchUp() {
        var gate = MuxInterleave(inputs: 2)
        gate.reach(1, 0)
        #expect(gate.isAhead(0, 1))
        // Its wait ran out with the other still at 0: it waits no more, however slowly the other moves.
        gate.waited(0, at: 1)
        #expect(!gate.isAhead(0, 1))
        #expect(!gate.isAhead(0, 5))
        #expect(gate.isAhead(0, 5, evenAfterAStall: true))
        gate.reach(1, 0.2)
        #expect(!gate.isAhead(0, 5))
        // Once a wait ends with it no longer ahead (the other caught up), it waits again.
        gate.reach(1, 4.8)
        gate.waited(0, at: 5)
        #expect(!gate.isAhead(0, 5))
        #expect(gate.isAhead(0, 5.4))
    }

    @Test func aFlushedInputStartsAgainAsOneThatHasGivenNothing() {
        var gate = MuxInterleave(inputs: 2)
        gate.reach(0, 10)
        gate.reach(1, 3)
        gate.waited(1, at: 3)
        #expect(gate.isAhead(0, 10))
        gate.end(1)
        gate.restart(1)
        #expect(!gate.hasEnded(1) && gate.latest(1) == -.infinity)
        // Not waited for until it gives a sample again.
        #expect(!gate.isAhead(0, 10))
        gate.reach(1, 9.4)
        #expect(gate.isAhead(0, 10))
    }

    @Test func othersReachedATimeWhenEachHasPassedItEndedOrGivenNothing() {
        var gate = MuxInterleave(inputs: 3)
        #expect(gate.othersReached(5, besides: 0))
        gate.reach(1, 4.0)
        #expect(!gate.othersReached(5, besides: 0))
        gate.reach(1, 5.0 - 1e-7)
        #expect(gate.othersReached(5, besides: 0))
        gate.reach(2, 1)
        #expect(!gate.othersReached(5, besides: 0))
        gate.end(2)
        #expect(gate.othersReached(5, besides: 0))
    }

    @Test func anInputItDoesNotKnowAndTimesThatAreNotFiniteAreIgnored() {
        var gate = MuxInterleave(inputs: 1)
        gate.reach(5, 1)
        gate.end(-1)
        gate.waited(7, at: 1)
        gate.restart(3)
        gate.reach(0, .nan)
        #expect(gate.latest(0) == -.infinity && gate.latest(9) == -.infinity)
        #expect(!gate.isAhead(4, 100) && !gate.isAhead(0, .infinity))
        #expect(MuxInterleave(inputs: -2) == MuxInterleave(inputs: 0))
    }
}
