@testable import GraphKitRuntime
import GraphKit
import Testing

/// The one rule for the time order of appended samples (``AppendOrder``): a graph input's
/// (`source.app`, any format) and a file track's (AssetWriterInput), with their messages.
@Suite struct AppendOrderTests {
    let pcm = MediaFormat.pcm(.init(sampleRate: 8_000, channels: 1, sampleFormat: .s16le))
    let video = MediaFormat.rawVideo(.init(pixelFormat: .bgra, width: 2, height: 2, frameRate: FrameRate(10)))

    func audio(at time: MediaTime, frames: Int = 800) -> SampleBuffer {
        SampleBuffer(format: pcm, byteCount: frames * 2, presentationTime: time)
    }

    func frame(at time: MediaTime) -> SampleBuffer {
        SampleBuffer(format: video, byteCount: 16, presentationTime: time)
    }

    func admit(_ order: inout AppendOrder, _ b: SampleBuffer, _ rule: AppendOrder.Rule) -> String? {
        do {
            if let stamp = try order.check(b, b.format!, rule: rule, at: "here") { order.record(stamp) }
            return nil
        } catch {
            #expect(error.problems[0].location == "here")
            return error.message
        }
    }

    @Test func aGraphInputTakesEqualTimesNotEarlierOnes() {
        var order = AppendOrder()
        #expect(admit(&order, audio(at: MediaTime(value: 100, timescale: 8_000)), .notEarlier) == nil)
        #expect(admit(&order, audio(at: MediaTime(value: 100, timescale: 8_000)), .notEarlier) == nil)
        #expect(admit(&order, audio(at: MediaTime(value: 99, timescale: 8_000)), .notEarlier)?
            .contains("the sample's time 0.012375 s is earlier than the previous sample's 0.0125 s: append samples in time order") == true)
        // A decode time, when there is one, is what orders (H.264 with B-frames).
        var h264 = SampleBuffer(format: .h264(width: 2, height: 2), byteCount: 4, presentationTime: MediaTime(value: 3, timescale: 10))
        h264.decodeTime = MediaTime(value: 1, timescale: 10)
        var later = h264
        later.presentationTime = MediaTime(value: 2, timescale: 10)
        later.decodeTime = MediaTime(value: 2, timescale: 10)
        var fresh = AppendOrder()
        #expect(admit(&fresh, h264, .notEarlier) == nil && admit(&fresh, later, .notEarlier) == nil)
    }

    @Test func aTrackTakesEachFrameLaterAndAudioWithoutOverlap() {
        var frames = AppendOrder()
        #expect(admit(&frames, frame(at: MediaTime(value: 9, timescale: 10)), .track) == nil)
        #expect(admit(&frames, frame(at: MediaTime(value: 9, timescale: 10)), .track)?
            .contains("the frame's time 0.9 s is the previous frame's time (0.9 s)") == true)
        #expect(admit(&frames, frame(at: MediaTime(value: 8, timescale: 10)), .track)?.contains("is earlier than the previous sample's 0.9 s") == true)
        let stamp = try? frames.check(frame(at: MediaTime(value: 12, timescale: 10)), video, rule: .track, at: "here")
        #expect(stamp?.spacing == MediaTime(value: 3, timescale: 10))

        var sound = AppendOrder()
        #expect(admit(&sound, audio(at: MediaTime(value: 9, timescale: 10)), .track) == nil)  // 0.9 to 1.0 s
        #expect(admit(&sound, audio(at: MediaTime(value: 950, timescale: 1000)), .track)?
            .contains("the samples at 0.95 s overlap the previous buffer, which started at 0.9 s and ends at 1.0 s (400 samples in both)") == true)
        #expect(admit(&sound, audio(at: MediaTime(seconds: 1.0 - 0.3 / 8_000)), .track) == nil)  // 0.3 of a sample: rounding
        #expect(sound.last?.reached == MediaTime(seconds: 1.0 - 0.3 / 8_000) + MediaTime(value: 800, timescale: 8_000))
    }
}
