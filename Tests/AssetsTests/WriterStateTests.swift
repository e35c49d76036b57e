@testable import Assets
import GraphKit
import Nodes
import Testing
import TestSupport

/// AssetWriter's state (``WriterState``) on its own: every status, what each call does or says
/// in it, and the stall rule while writing. No graph, no clock: instants are arguments.
@Suite(.media) struct WriterStateTests {
    let t0 = ContinuousClock.now

    func audio(_ settings: any OutputSettings = AudioSettings(sampleRate: 8_000, channels: 1), belongs: Bool = false) -> WriterState.Candidate {
        .init(name: "audio input", mediaType: .audio, settings: settings, belongsToAWriter: belongs)
    }

    func video(_ settings: VideoSettings = VideoSettings(width: 64, height: 48)) -> WriterState.Candidate {
        .init(name: "video input", mediaType: .video, settings: settings, belongsToAWriter: false)
    }

    /// unknown → writing → completed, and what an append is told at each step.
    @Test func fromUnknownToCompleted() throws {
        var s = WriterState(fileType: .m4a)
        #expect(s.status == .unknown)
        #expect(refusal { try s.startWriting() }.contains("add an input"))
        #expect(refusal { _ = try s.admission(for: "audio input") }.contains("call startWriting() (and startSession(atSourceTime:)) before appending"))
        #expect(refusal { try s.finishWriting() }.contains("call startWriting() before finishWriting()"))
        try s.add(audio())
        try s.startWriting()
        #expect(s.status == .unknown)  // starting: the graph is being built
        #expect(refusal { try s.startWriting() }.contains("called already"))
        #expect(refusal { try s.add(audio()) }.contains("inputs are added before startWriting(); this writer is unknown"))
        let start = s.started(at: t0)
        #expect(start == .startInputs(sessionStarted: false))
        #expect(s.status == .writing && s.takesSamples)
        #expect(refusal { try s.add(audio()) }.contains("this writer is writing"))
        #expect(refusal { _ = try s.admission(for: "audio input") }.contains("call startSession(atSourceTime:) before appending"))
        let first = s.startSession(at: MediaTime(value: 1, timescale: 2))
        #expect(first)
        let second = s.startSession(at: .zero)
        #expect(!second)  // once
        #expect(try s.admission(for: "audio input") == MediaTime(value: 1, timescale: 2))
        try s.finishWriting()
        #expect(!s.takesSamples && s.status == .writing)
        #expect(refusal { _ = try s.admission(for: "audio input") }.contains("finishWriting() was called; this input takes no more samples"))
        #expect(refusal { try s.finishWriting() }.contains("finishWriting() was called already"))
        let thrown = s.finished(.completed, error: nil)
        #expect(thrown == nil)
        #expect(s.status == .completed && s.error == nil)
        #expect(refusal { _ = try s.admission(for: "audio input") }.contains("the file is written"))
        #expect(refusal { try s.finishWriting() }.contains("the file is written"))
        let cancels = s.cancel()
        #expect(!cancels)  // nothing left to cancel
    }

    /// A session started before writing counts once writing starts: request blocks begin then.
    @Test func aSessionBeforeWritingStartsWithIt() throws {
        var s = WriterState(fileType: .m4a)
        try s.add(audio())
        let set = s.startSession(at: .zero)
        #expect(set)
        try s.startWriting()
        let start = s.started(at: t0)
        #expect(start == .startInputs(sessionStarted: true))
    }

    /// cancelWriting() while the graph starts: the start cancels the run it made.
    @Test func cancelledWhileStarting() throws {
        var s = WriterState(fileType: .m4a)
        try s.add(audio())
        try s.startWriting()
        let cancels = s.cancel()
        #expect(cancels)
        let start = s.started(at: t0)
        #expect(start == .cancelRun)
        #expect(s.status == .cancelled)
        #expect(s.endedReason(for: "audio input")?.code == .cancelled)
        #expect(refusal { try s.startWriting() }.contains("writing was cancelled; make a new AssetWriter"))
        #expect(refusal { try s.finishWriting() }.contains("writing was cancelled (cancelWriting()); there is nothing to finish"))
        let cancelsAgain = s.cancel()
        #expect(!cancelsAgain)
    }

    /// A run that fails on its own fails the writer with its error; an append is told it.
    @Test func aRunThatFailsFailsTheWriter() throws {
        var s = WriterState(fileType: .m4a)
        try s.add(audio())
        try s.startWriting()
        _ = s.started(at: t0)
        let failure = GraphError(.runFailed, at: "node \"file\"", "disk full")
        s.runFailed(failure)
        #expect(s.status == .failed && s.error?.message == "disk full")
        #expect(refusal { _ = try s.admission(for: "audio input") } == "disk full")
        #expect(refusal { try s.finishWriting() } == "disk full")
        #expect(s.endedReason(for: "audio input")?.message == "disk full")
    }

    /// A writer of video (input 0) and audio (input 1), writing since t0, its session at 0;
    /// `before` is what the video input said before writing started.
    func writingAV(before: StallWatch.Event? = nil) throws -> WriterState {
        var s = WriterState(fileType: .mp4)
        try s.add(video())
        try s.add(audio())
        if let before { _ = s.note(before, input: 0, at: t0) }
        try s.startWriting()
        _ = s.started(at: t0)
        _ = s.startSession(at: .zero)
        return s
    }

    /// Input `index` gets 10 s in, and its next append waits: what the stall rule says.
    func waitTenSecondsAhead(_ s: inout WriterState, input index: Int) -> StallWatch.Action {
        _ = s.note(.appendBegins, input: index, at: t0)
        _ = s.note(.appendEnds(reached: MediaTime(value: 10, timescale: 1)), input: index, at: t0)
        _ = s.note(.appendBegins, input: index, at: t0)
        return s.note(.appendWaits, input: index, at: t0)
    }

    /// A failure a layer above reports (Apple's names, where AVFoundation raises an exception)
    /// fails the writer from unknown or writing, and asks for the run to be stopped; once the
    /// writer is over, the first ending stays.
    @Test func aFailureReportedFromAboveFailsTheWriterOnce() throws {
        let refused = GraphError(.usage, at: "AVAssetWriter", "cannot add the video input")
        var before = WriterState(fileType: .mp4)
        let failed = before.failByCaller(refused)
        #expect(failed)
        #expect(before.status == .failed && before.error == refused)
        #expect(refusal { try before.startWriting() }.contains("called already"))
        let later = GraphError(.usage, at: "AVAssetWriter", "a later mistake")
        let again = before.failByCaller(later)
        #expect(!again)
        #expect(before.error == refused)

        var writing = WriterState(fileType: .m4a)
        try writing.add(audio())
        try writing.startWriting()
        _ = writing.started(at: t0)
        let stops = writing.failByCaller(refused)
        #expect(stops)
        #expect(!writing.takesSamples)
        #expect(refusal { _ = try writing.admission(for: "audio input") }.contains("cannot add the video input"))

        var cancelled = WriterState(fileType: .m4a)
        let cancels = cancelled.cancel()
        let failsAfter = cancelled.failByCaller(refused)
        #expect(cancels && !failsAfter)
        #expect(cancelled.status == .cancelled)
    }

    /// The stall rule runs while writing, fails the writer when it finds a stall, and stops once
    /// finishing (finishWriting() ends every input itself).
    @Test func theStallRuleFailsTheWriterWhileWriting() throws {
        for finishing in [false, true] {
            var s = try writingAV()
            guard case .arm(let at, let token) = waitTenSecondsAhead(&s, input: 0) else {
                Issue.record("no alarm")
                return
            }
            if finishing { try s.finishWriting() }
            let verdict = s.alarm(token, at: at)
            if finishing {
                guard case .none = verdict else { Issue.record("a stall while finishing"); return }
                #expect(s.status == .writing)
            } else {
                guard case .stall(let error) = verdict else { Issue.record("no stall"); return }
                #expect(s.status == .failed && s.error?.message == error.message)
                let after = s.note(.appendEnds(reached: nil), input: 0, at: at)
                #expect(after == .none)
            }
        }
    }

    /// A request block registered before writing starts (as AVFoundation allows), or an input
    /// finished before it, feeds or ends that input: it is never the idle one an append waits on.
    @Test func whatInputsSaidBeforeWritingCounts() throws {
        for event in [StallWatch.Event.requested, .finished] {
            var s = try writingAV(before: event)
            let waits = waitTenSecondsAhead(&s, input: 1)
            #expect(waits == .none, "\(event): \(waits)")
        }
    }

    /// Inputs a file cannot take, and settings outside what the encoders declare: the ranges are
    /// the nodes' own (`encode.h264`, `encode.aac`), quoted from their declarations.
    @Test func settingsAreCheckedAgainstTheEncodersDeclarations() throws {
        var m4a = WriterState(fileType: .m4a)
        #expect(refusal { try m4a.add(video()) }.contains("an M4A file holds audio only"))
        #expect(refusal { try m4a.add(audio(belongs: true)) }.contains("belongs to a writer already"))
        #expect(refusal { try m4a.add(audio(VideoSettings(width: 64, height: 48))) }.contains("needs AudioSettings"))
        try m4a.add(audio())
        #expect(refusal { try m4a.add(audio()) }.contains("has a audio input already"))

        guard case .integer(let widths) = H264EncoderNode.width.descriptor.kind,
              case .integer(let heights) = H264EncoderNode.height.descriptor.kind,
              case .integer(let rates) = AACEncoderNode.sampleRate.descriptor.kind,
              case .integer(let channels) = AACEncoderNode.channels.descriptor.kind,
              case .integer(let bits) = H264EncoderNode.bitrate.descriptor.kind else {
            Issue.record("the encoders' parameters are not integer ranges")
            return
        }
        #expect(H264EncoderNode.width.descriptor.multipleOf == 2)
        let mp4 = WriterState(fileType: .mp4)
        #expect(refusal { try mp4.check(adding: video(VideoSettings(width: widths.upperBound, height: heights.upperBound))) } == "no error")
        #expect(refusal { try mp4.check(adding: video(VideoSettings(width: widths.lowerBound + 1, height: 48))) }
            .contains("needs an even width from \(widths.lowerBound) to \(widths.upperBound) and an even height from \(heights.lowerBound) to \(heights.upperBound)"))
        #expect(refusal { try mp4.check(adding: video(VideoSettings(width: 64, height: heights.upperBound + 2))) }.contains("cannot be encoded"))
        #expect(refusal { try mp4.check(adding: video(VideoSettings(width: 64, height: 48, averageBitRate: bits.lowerBound - 1))) }
            .contains("out of range (\(bits.lowerBound) to \(bits.upperBound) bits per second)"))
        #expect(refusal { try mp4.check(adding: video(VideoSettings(width: 64, height: 48, keyframeInterval: 0))) }.contains("keyframeInterval 0 is out of range"))
        #expect(refusal { try mp4.check(adding: audio(AudioSettings(sampleRate: rates.upperBound + 1, channels: 1))) }
            .contains("cannot be encoded to AAC: choose \(rates.lowerBound) to \(rates.upperBound) Hz"))
        #expect(refusal { try mp4.check(adding: audio(AudioSettings(sampleRate: 48_000, channels: channels.upperBound + 1))) }
            .contains("choose \(channels.lowerBound) to \(channels.upperBound)"))
        #expect(refusal { try mp4.check(adding: audio(AudioSettings(sampleRate: 48_000, channels: 2, bitRate: 1))) }.contains("bitRate 1 is out of range"))
    }
}
