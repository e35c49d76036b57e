import AVFoundation
import Testing

/// CMTimebase on the host clock, CMTime as a dictionary, CoreFoundation type IDs, the host clock
/// of Core Video, and sample buffers made for pixel buffers, as CoreMedia documents them.
@Suite struct CMTimebaseTests {
    @Test func aTimebaseRunsAtItsRateFromWhereItWasSet() throws {
        var made: CMTimebase?
        #expect(CMTimebaseCreateWithSourceClock(allocator: nil, sourceClock: CMClockGetHostTimeClock(), timebaseOut: &made) == noErr)
        let timebase = try #require(made)
        #expect(CMTimebaseGetRate(timebase) == 0 && CMTimebaseGetTime(timebase) == .zero, "made stopped at 0")
        #expect(CMTimebaseSetTime(timebase, time: CMTime(value: 10, timescale: 1)) == noErr)
        #expect(CMTimebaseGetTime(timebase) == CMTime(value: 10, timescale: 1), "stopped: it stays where set")
        #expect(CMTimebaseSetRate(timebase, rate: 2) == noErr)
        let clockBefore = CMClockGetHostTimeClock().time
        usleep(50_000)
        let moved = CMTimeGetSeconds(CMSyncGetTime(timebase)) - 10
        let clockMoved = CMTimeGetSeconds(CMClockGetHostTimeClock().time - clockBefore)
        #expect(moved > 0.09 && moved <= 2 * clockMoved + 0.001, "at rate 2 it moves twice the clock's \(clockMoved) s: \(moved)")
        #expect(CMTimebaseSetRate(timebase, rate: 0) == noErr)
        let stopped = CMTimebaseGetTime(timebase)
        usleep(10_000)
        #expect(CMTimebaseGetTime(timebase) == stopped)
        #expect(CMTimebaseSetTime(timebase, time: .invalid) == kCMTimebaseError_InvalidParameter)
        #expect(CMTimebaseSetRate(timebase, rate: .nan) == kCMTimebaseError_InvalidParameter)
    }

    @Test func aTimeRoundTripsThroughItsDictionary() throws {
        let time = CMTime(value: 1001, timescale: 30_000)
        let dictionary = try #require(CMTimeCopyAsDictionary(time, allocator: nil))
        #expect(dictionary[kCMTimeValueKey] as? Int64 == 1001 && dictionary[kCMTimeScaleKey] as? Int32 == 30_000)
        let back = CMTimeMakeFromDictionary(dictionary)
        #expect(back == time && back.flags == time.flags)
        #expect(CMTimeMakeFromDictionary(CMTimeCopyAsDictionary(.positiveInfinity, allocator: nil)) == .positiveInfinity)
        #expect(!CMTimeMakeFromDictionary([kCMTimeValueKey: "one"]).isValid)
        #expect(!CMTimeMakeFromDictionary(nil).isValid)
    }

    @Test func typesAndTheHostClock() throws {
        var pb: CVPixelBuffer?
        #expect(CVPixelBufferCreate(nil, 16, 16, kCVPixelFormatType_32BGRA, nil, &pb) == kCVReturnSuccess)
        let pixels = try #require(pb)
        #expect(CFGetTypeID(pixels) == CVPixelBufferGetTypeID())
        var format: CMVideoFormatDescription?
        #expect(CMVideoFormatDescriptionCreateForImageBuffer(allocator: nil, imageBuffer: pixels, formatDescriptionOut: &format) == noErr)
        var timing = CMSampleTimingInfo(duration: CMTime(value: 1, timescale: 30), presentationTimeStamp: CMTime(value: 3, timescale: 30), decodeTimeStamp: .invalid)
        var sample: CMSampleBuffer?
        var asked = 0
        let status = CMSampleBufferCreateForImageBuffer(allocator: nil, imageBuffer: pixels, dataReady: false,
                                                        makeDataReadyCallback: { _, _ in asked += 1; return OSStatus(noErr) }, refcon: nil,
                                                        formatDescription: try #require(format), sampleTiming: &timing, sampleBufferOut: &sample)
        #expect(status == noErr && asked == 1)
        let buffer = try #require(sample)
        #expect(CFGetTypeID(buffer) == CMSampleBufferGetTypeID() && CMSampleBufferGetTypeID() != CVPixelBufferGetTypeID())
        #expect(buffer.presentationTimeStamp == CMTime(value: 3, timescale: 30) && buffer.imageBuffer === pixels && buffer.dataBuffer == nil)
        #expect(CFGetTypeID("text") == 0)
        #expect(!CMSampleTimingInfo.invalid.presentationTimeStamp.isValid && !kCMTimingInfoInvalid.duration.isValid)
        // A refusing callback's error is the call's.
        #expect(CMSampleBufferCreateForImageBuffer(allocator: nil, imageBuffer: pixels, dataReady: false, makeDataReadyCallback: { _, _ in -1 },
                                                   refcon: nil, formatDescription: try #require(format), sampleTiming: &timing, sampleBufferOut: &sample) == -1)
        // Core Video's host clock is CoreMedia's.
        let a = CVGetCurrentHostTime()
        let b = CMClockConvertHostTimeToSystemUnits(CMClockGetTime(CMClockGetHostTimeClock()))
        let c = CVGetCurrentHostTime()
        #expect(a <= b && b <= c)
    }
}
