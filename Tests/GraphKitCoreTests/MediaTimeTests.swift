import Testing
@testable import GraphKitCore
import GraphKit

@Suite struct MediaTimeTests {
    @Test func samplesConvertExactlyToNanoseconds() {
        #expect(MediaTime(value: 44_100, timescale: 44_100).nanoseconds == 1_000_000_000)
        // 1 frame at 44.1 kHz = 22675.736... ns, rounded to nearest.
        #expect(MediaTime(value: 1, timescale: 44_100).nanoseconds == 22_676)
        // 30000/1001 fps: frame 1001 starts at exactly 33.3666... s
        #expect(MediaTime(value: 1001 * 1001, timescale: 30_000).nanoseconds == 33_400_033_333)
    }

    @Test func comparesAcrossTimescales() {
        let a = MediaTime(value: 1, timescale: 3)
        let b = MediaTime(value: 333_333_333, timescale: 1_000_000_000)
        #expect(b < a)
        #expect(MediaTime(value: 2, timescale: 4) == MediaTime(value: 1, timescale: 2))
        #expect(Set([MediaTime(value: 2, timescale: 4), MediaTime(value: 1, timescale: 2)]).count == 1)
    }

    @Test func addsAndSubtracts() {
        let sum = MediaTime(value: 1024, timescale: 44_100) + MediaTime(value: 1024, timescale: 44_100)
        #expect(sum == MediaTime(value: 2048, timescale: 44_100))
        #expect(sum.timescale == 44_100)
        #expect((MediaTime(value: 1, timescale: 1) - MediaTime(value: 1, timescale: 2)).seconds == 0.5)
    }

    @Test func rescalesWithoutOverflow() {
        // 10 hours at 1 GHz in a 90 kHz timescale.
        let t = MediaTime(value: 36_000 * 1_000_000_000, timescale: 1_000_000_000).converted(to: 90_000)
        #expect(t.value == 36_000 * 90_000)
        #expect(MediaTime.rescale(-3, from: 2, to: 1) == -2)
    }

    /// AVFoundation's "to the end" is a range whose duration is `.positiveInfinity`, made from
    /// `CMTime(seconds: .infinity)`; seconds past what a timescale counts, and sums past it,
    /// saturate instead of trapping. A negative time has no GStreamer stamp: 0.
    @Test func infinitiesAndOverflowSaturate() {
        #expect(MediaTime(seconds: .infinity) == .positiveInfinity)
        #expect(MediaTime(seconds: -.infinity) == .negativeInfinity)
        #expect(MediaTime(seconds: 1e300, preferredTimescale: 44_100) == .positiveInfinity)
        #expect(!MediaTime.positiveInfinity.isFinite && MediaTime(seconds: 3).isFinite)
        let range = MediaTimeRange(start: MediaTime(seconds: 2), duration: MediaTime(seconds: .infinity))
        #expect(range.end == .positiveInfinity)
        #expect(range.contains(MediaTime(value: 1_000_000, timescale: 1)))
        #expect(!range.contains(MediaTime(seconds: 1)))
        #expect(MediaTime(value: .max - 1, timescale: 1) + MediaTime(value: 5, timescale: 1) == .positiveInfinity)
        #expect(MediaTime(value: -1024, timescale: 44_100).nanoseconds == 0)
        #expect(MediaTime.positiveInfinity > MediaTime(value: .max - 1, timescale: 1))
    }
}
