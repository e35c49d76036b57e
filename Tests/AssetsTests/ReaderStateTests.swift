@testable import Assets
import GraphKit
import Testing
import TestSupport

/// AssetReader's state (``ReaderState``) on its own: each status, and what copyNextSampleBuffer()
/// does in it (pull the graph's next sample, or return nil at once).
@Suite(.media) struct ReaderStateTests {
    @Test func whatAPullDoesInEachState() throws {
        var s = ReaderState()
        #expect(refusal { try s.startReading() }.contains("add an output"))
        let audio = s.add(), video = s.add()
        #expect(s.pull(output: audio) == .end)  // unknown: nothing to pull yet
        try s.startReading()
        #expect(s.status == .unknown && s.pull(output: audio) == .end)
        #expect(refusal { try s.checkAdding() }.contains("outputs are added before startReading()"))
        let goesOn = s.started()
        #expect(goesOn)
        #expect(s.status == .reading && s.pull(output: audio) == .pull && s.pull(output: video) == .pull)
        #expect(refusal { try s.startReading() }.contains("called already"))
        let allEnded = s.outputEnded(video)
        #expect(!allEnded)
        #expect(s.pull(output: video) == .end && s.pull(output: audio) == .pull)
        // The run completes (every stream at its end): what the audio output holds is still given.
        s.runEnded(.completed, error: nil)
        #expect(s.status == .completed && s.pull(output: audio) == .pull)
        let stopsTheRun = s.outputEnded(audio)
        #expect(!stopsTheRun)  // complete already: nothing left to stop
        #expect(s.pull(output: audio) == .end && s.endError == nil)
    }

    /// The last output to end completes reading, while the run may still decode (past the time
    /// range): the reader stops it.
    @Test func theLastOutputToEndCompletesReading() throws {
        var s = ReaderState()
        let a = s.add(), b = s.add()
        try s.startReading()
        _ = s.started()
        let firstEnded = s.outputEnded(a)
        #expect(!firstEnded)
        let again = s.outputEnded(a)
        #expect(!again)  // once
        let lastEnded = s.outputEnded(b)
        #expect(lastEnded)
        #expect(s.status == .completed)
    }

    /// Cancelled or failed: every pull returns nil at once, whatever the graph still holds, and a
    /// loop over samples throws why.
    @Test func cancelledOrFailedEndsEveryPull() throws {
        var cancelled = ReaderState()
        let n = cancelled.add()
        try cancelled.startReading()
        _ = cancelled.started()
        let stops = cancelled.cancel()
        #expect(stops)
        #expect(cancelled.pull(output: n) == .end && cancelled.status == .cancelled)
        #expect(cancelled.endError?.code == .cancelled)
        let stopsAgain = cancelled.cancel()
        #expect(!stopsAgain)
        #expect(refusal { try cancelled.startReading() }.contains("reading was cancelled; make a new AssetReader"))

        var failed = ReaderState()
        let m = failed.add()
        try failed.startReading()
        _ = failed.started()
        failed.runEnded(.failed, error: GraphError(.inputUnreadable, at: "x.mp4", "cut short"))
        #expect(failed.pull(output: m) == .end && failed.status == .failed && failed.error?.message == "cut short")
        #expect(failed.endError?.message == "cut short")
    }

    /// cancelReading() while the graph starts: the start stops the run it made.
    @Test func cancelledWhileStarting() throws {
        var s = ReaderState()
        _ = s.add()
        try s.startReading()
        let stops = s.cancel()
        #expect(stops)
        let goesOn = s.started()
        #expect(!goesOn)
        #expect(s.status == .cancelled)
    }

    /// The time range is taken before reading only, and must be one.
    @Test func theTimeRange() throws {
        var s = ReaderState()
        _ = s.add()
        s.setRange(MediaTimeRange(start: .zero, duration: .zero))
        #expect(refusal { try s.startReading() }.contains("is empty or starts before 0"))
        s.setRange(MediaTimeRange(start: .zero, duration: MediaTime(value: 1, timescale: 1)))
        try s.startReading()
        s.setRange(MediaTimeRange(start: .zero, duration: MediaTime(value: 2, timescale: 1)))
        #expect(s.range?.duration == MediaTime(value: 1, timescale: 1))
    }
}
