import AVFoundation
import Testing

/// AVAudioTime (sample time at a rate, host time, extrapolation from an anchor) and Core Video's
/// time stamps, as Apple documents them.
@Suite struct AVAudioTimeTests {
    @Test func timesSayWhatTheyHold() {
        let samples = AVAudioTime(sampleTime: 48_000, atRate: 48_000)
        #expect(samples.isSampleTimeValid && !samples.isHostTimeValid && samples.sampleTime == 48_000 && samples.sampleRate == 48_000)
        let host = AVAudioTime(hostTime: 5_000_000_000)
        #expect(host.isHostTimeValid && !host.isSampleTimeValid && host.hostTime == 5_000_000_000)
        // Host ticks are nanoseconds here; out-of-range seconds do not trap.
        #expect(AVAudioTime.hostTime(forSeconds: 1.5) == 1_500_000_000 && AVAudioTime.seconds(forHostTime: 250_000_000) == 0.25)
        #expect(AVAudioTime.hostTime(forSeconds: -1) == 0 && AVAudioTime.hostTime(forSeconds: .nan) == 0)
        #expect(AVAudioTime.hostTime(forSeconds: 1e300) == .max)
    }

    @Test func extrapolationKeepsTheDistanceInSeconds() throws {
        let anchor = AVAudioTime(hostTime: 10_000_000_000, sampleTime: 441_000, atRate: 44_100)
        // Half a second of samples after the anchor is half a second of host time after it.
        let later = try #require(AVAudioTime(sampleTime: 463_050, atRate: 44_100).extrapolateTime(fromAnchor: anchor))
        #expect(later.isHostTimeValid && later.hostTime == 10_500_000_000 && later.sampleTime == 463_050)
        // A host time a quarter second before the anchor is 11,025 samples before it.
        let earlier = try #require(AVAudioTime(hostTime: 9_750_000_000).extrapolateTime(fromAnchor: anchor))
        #expect(earlier.isSampleTimeValid && earlier.sampleTime == 429_975 && earlier.sampleRate == 44_100)
        // At another rate the seconds still match: 48,000 samples at 48 kHz is 1 s from zero.
        let zeroAnchor = AVAudioTime(hostTime: 0, sampleTime: 0, atRate: 44_100)
        #expect(AVAudioTime(sampleTime: 48_000, atRate: 48_000).extrapolateTime(fromAnchor: zeroAnchor)?.hostTime == 1_000_000_000)
        // An anchor without both times gives nothing, nor a time before host time zero; a time
        // with both is itself.
        #expect(later.extrapolateTime(fromAnchor: anchor) === later)
        #expect(AVAudioTime(sampleTime: 1, atRate: 1).extrapolateTime(fromAnchor: AVAudioTime(hostTime: 1)) == nil)
        #expect(AVAudioTime(sampleTime: -44_100, atRate: 44_100).extrapolateTime(fromAnchor: anchor) == nil, "11 s before host time 1e10 is below zero")
    }

    @Test func timeStampsHoldTheirFields() {
        var smpte = CVSMPTETime()
        smpte.hours = 1; smpte.minutes = 2; smpte.seconds = 3; smpte.frames = 4
        var stamp = CVTimeStamp()
        stamp.videoTimeScale = 90_000
        stamp.videoTime = 180_000
        stamp.smpteTime = smpte
        stamp.flags = CVTimeStampFlags([.videoTimeValid, .hostTimeValid]).rawValue
        #expect(CVTimeStampFlags(rawValue: stamp.flags) == .videoHostTimeValid && CVTimeStampFlags.isInterlaced.rawValue == 0x3_0000)
        #expect(Double(stamp.videoTime) / Double(stamp.videoTimeScale) == 2 && stamp.smpteTime.frames == 4)
    }
}
