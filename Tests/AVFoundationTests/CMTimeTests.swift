import CoreMedia
import Testing

/// CMTime and CMTimeRange against CoreMedia's documented behaviour (CMTime.h and Apple's
/// documentation of each function), symbol by symbol.
@Suite struct CMTimeTests {
    let half = CMTimeMake(value: 1, timescale: 2)

    /// Field-by-field identity, for results whose representation CoreMedia documents.
    func same(_ a: CMTime, _ b: CMTime) -> Bool {
        a.value == b.value && a.timescale == b.timescale && a.flags == b.flags && a.epoch == b.epoch
    }

    @Test func constructorsAndConstants() {
        #expect(same(CMTimeMake(value: 3, timescale: 30), CMTime(value: 3, timescale: 30, flags: .valid, epoch: 0)))
        #expect(same(CMTimeMakeWithEpoch(value: 3, timescale: 30, epoch: 2), CMTime(value: 3, timescale: 30, flags: .valid, epoch: 2)))
        #expect(!CMTime().isValid && same(CMTime(), .invalid) && same(kCMTimeInvalid, .invalid))
        #expect(same(kCMTimeZero, CMTime(value: 0, timescale: 1)) && CMTime.zero.isNumeric)
        #expect(kCMTimeIndefinite.isIndefinite && !kCMTimeIndefinite.isNumeric && kCMTimeIndefinite.isValid)
        #expect(kCMTimePositiveInfinity.isPositiveInfinity && kCMTimeNegativeInfinity.isNegativeInfinity)
        #expect(CMTIME_IS_VALID(half) && CMTIME_IS_NUMERIC(half) && !CMTIME_IS_INVALID(half))
        #expect(CMTIME_IS_INDEFINITE(.indefinite) && CMTIME_IS_POSITIVEINFINITY(.positiveInfinity) && CMTIME_IS_NEGATIVEINFINITY(.negativeInfinity))
        #expect(kCMTimeMaxTimescale == 1_000_000_000)
        #expect(CMTimeRoundingMethod.default == .roundHalfAwayFromZero)
    }

    @Test func makeWithSeconds() {
        #expect(same(CMTimeMakeWithSeconds(0.5, preferredTimescale: 600), CMTime(value: 300, timescale: 600)))
        #expect(same(CMTime(seconds: 2.5, preferredTimescale: 10), CMTime(value: 25, timescale: 10)))
        // Rounded (half away from zero), and marked so.
        let r = CMTimeMakeWithSeconds(1.0 / 3.0, preferredTimescale: 10)
        #expect(r.value == 3 && r.timescale == 10 && r.hasBeenRounded)
        #expect(CMTimeMakeWithSeconds(-0.25, preferredTimescale: 2).value == -1)
        // A timescale that is not positive gives invalid, as Apple documents.
        #expect(!CMTimeMakeWithSeconds(1, preferredTimescale: 0).isValid)
        #expect(!CMTimeMakeWithSeconds(.nan, preferredTimescale: 600).isValid)
        #expect(CMTimeMakeWithSeconds(.infinity, preferredTimescale: 600).isPositiveInfinity)
        #expect(CMTimeMakeWithSeconds(-.infinity, preferredTimescale: 600).isNegativeInfinity)
        // Overflow halves the timescale until the value fits.
        let big = CMTimeMakeWithSeconds(1e10, preferredTimescale: 1_000_000_000)
        #expect(big.isNumeric && big.timescale < 1_000_000_000 && big.hasBeenRounded && abs(big.seconds - 1e10) < 1)
        #expect(CMTimeMakeWithSeconds(1e300, preferredTimescale: 600).isPositiveInfinity)
    }

    @Test func getSeconds() {
        #expect(CMTimeGetSeconds(half) == 0.5 && half.seconds == 0.5)
        #expect(CMTimeGetSeconds(.invalid).isNaN && CMTimeGetSeconds(.indefinite).isNaN)
        #expect(CMTimeGetSeconds(.positiveInfinity) == .infinity && CMTimeGetSeconds(.negativeInfinity) == -.infinity)
    }

    @Test func addSameAndDifferentTimescales() {
        #expect(same(CMTimeAdd(CMTimeMake(value: 1, timescale: 30), CMTimeMake(value: 2, timescale: 30)), CMTimeMake(value: 3, timescale: 30)))
        // Different timescales: their least common multiple.
        #expect(same(CMTimeAdd(CMTimeMake(value: 1, timescale: 6), CMTimeMake(value: 1, timescale: 4)), CMTimeMake(value: 5, timescale: 12)))
        // A least common multiple over kCMTimeMaxTimescale: that, rounded by default.
        let s = CMTimeAdd(CMTimeMake(value: 1, timescale: 999_999_937), CMTimeMake(value: 1, timescale: 3))
        #expect(s.timescale == 1_000_000_000 && s.hasBeenRounded && s.value == 333_333_334)
        // An operand's rounded flag carries over.
        #expect(CMTimeAdd(CMTimeMakeWithSeconds(1.0 / 3.0, preferredTimescale: 10), half).hasBeenRounded)
        #expect(same(half + half, CMTimeMake(value: 2, timescale: 2)))
    }

    @Test func addOverflowHalvesTheTimescaleThenGivesInfinity() {
        let nearMax = CMTimeMake(value: .max - 1, timescale: 1000)
        let sum = CMTimeAdd(nearMax, CMTimeMake(value: 10, timescale: 1000))
        #expect(sum.timescale == 500 && sum.hasBeenRounded && sum.value == (Int64.max - 1) / 2 + 5)
        #expect(CMTimeAdd(CMTimeMake(value: .max, timescale: 1), CMTimeMake(value: 1, timescale: 1)).isPositiveInfinity)
        #expect(CMTimeSubtract(CMTimeMake(value: .min + 1, timescale: 1), CMTimeMake(value: 5, timescale: 1)).isNegativeInfinity)
    }

    @Test func addInvalidInfiniteIndefinite() {
        let one = CMTimeMake(value: 1, timescale: 1)
        #expect(!CMTimeAdd(.invalid, one).isValid && !CMTimeAdd(one, .invalid).isValid)
        #expect(!CMTimeAdd(.invalid, .positiveInfinity).isValid)
        #expect(CMTimeAdd(.positiveInfinity, one).isPositiveInfinity && CMTimeAdd(one, .negativeInfinity).isNegativeInfinity)
        #expect(CMTimeAdd(.positiveInfinity, .positiveInfinity).isPositiveInfinity)
        #expect(CMTimeAdd(.negativeInfinity, .negativeInfinity).isNegativeInfinity)
        #expect(!CMTimeAdd(.positiveInfinity, .negativeInfinity).isValid && !CMTimeAdd(.negativeInfinity, .positiveInfinity).isValid)
        #expect(CMTimeAdd(.indefinite, one).isIndefinite && CMTimeAdd(one, .indefinite).isIndefinite)
        // An infinity wins over indefinite (infinity is checked first).
        #expect(CMTimeAdd(.indefinite, .positiveInfinity).isPositiveInfinity)
    }

    @Test func subtract() {
        let one = CMTimeMake(value: 1, timescale: 1)
        #expect(same(CMTimeSubtract(CMTimeMake(value: 1, timescale: 4), CMTimeMake(value: 1, timescale: 6)), CMTimeMake(value: 1, timescale: 12)))
        #expect(!CMTimeSubtract(.positiveInfinity, .positiveInfinity).isValid && !CMTimeSubtract(.negativeInfinity, .negativeInfinity).isValid)
        #expect(CMTimeSubtract(.positiveInfinity, .negativeInfinity).isPositiveInfinity)
        #expect(CMTimeSubtract(.negativeInfinity, .positiveInfinity).isNegativeInfinity)
        #expect(CMTimeSubtract(one, .positiveInfinity).isNegativeInfinity && CMTimeSubtract(one, .negativeInfinity).isPositiveInfinity)
        #expect(CMTimeSubtract(.indefinite, one).isIndefinite && !CMTimeSubtract(.invalid, one).isValid)
        #expect(same(one - half, CMTimeMake(value: 1, timescale: 2)))
    }

    @Test func epochs() {
        let a = CMTimeMakeWithEpoch(value: 5, timescale: 1, epoch: 1)
        let b = CMTimeMakeWithEpoch(value: 3, timescale: 1, epoch: 1)
        let other = CMTimeMakeWithEpoch(value: 3, timescale: 1, epoch: 2)
        let duration = CMTimeMake(value: 2, timescale: 1)
        // Times of different nonzero epochs cannot be combined.
        #expect(!CMTimeAdd(a, other).isValid && !CMTimeSubtract(a, other).isValid)
        // A duration (epoch 0) adds to a time of any epoch, keeping it.
        #expect(same(CMTimeAdd(a, duration), CMTimeMakeWithEpoch(value: 7, timescale: 1, epoch: 1)))
        // The difference of two times of one epoch is a duration.
        #expect(same(CMTimeSubtract(a, b), CMTimeMake(value: 2, timescale: 1)))
        // Compared, a greater epoch is later whatever the values.
        #expect(CMTimeCompare(other, a) == 1 && CMTimeCompare(a, other) == -1)
    }

    @Test func multiply() {
        #expect(same(CMTimeMultiply(CMTimeMake(value: 3, timescale: 30), multiplier: 4), CMTimeMake(value: 12, timescale: 30)))
        #expect(same(half * Int32(3), CMTimeMake(value: 3, timescale: 2)) && same(Int32(3) * half, CMTimeMake(value: 3, timescale: 2)))
        #expect(!CMTimeMultiply(.invalid, multiplier: 2).isValid)
        #expect(CMTimeMultiply(.indefinite, multiplier: 2).isIndefinite)
        #expect(CMTimeMultiply(.positiveInfinity, multiplier: -2).isNegativeInfinity)
        #expect(CMTimeMultiply(.negativeInfinity, multiplier: -2).isPositiveInfinity)
        // Overflow halves the timescale, then gives an infinity of the product's sign.
        let m = CMTimeMultiply(CMTimeMake(value: Int64.max / 2 + 1, timescale: 1000), multiplier: 2)
        #expect(m.timescale == 500 && m.hasBeenRounded)
        #expect(CMTimeMultiply(CMTimeMake(value: .max, timescale: 1), multiplier: -2).isNegativeInfinity)
        #expect(same(CMTimeMultiplyByRatio(CMTimeMake(value: 10, timescale: 30), multiplier: 3, divisor: 2), CMTimeMake(value: 15, timescale: 30)))
        #expect(!CMTimeMultiplyByRatio(half, multiplier: 1, divisor: 0).isValid)
    }

    @Test func multiplyByFloat64() {
        // The timescale is doubled until it is at least 65,536.
        let r = CMTimeMultiplyByFloat64(CMTimeMake(value: 1, timescale: 30), multiplier: 1.5)
        #expect(r.timescale == 30 * 4096 && r.value == 6144 && !r.hasBeenRounded)
        #expect(same(CMTimeMultiplyByFloat64(CMTimeMake(value: 3, timescale: 100_000), multiplier: 2), CMTimeMake(value: 6, timescale: 100_000)))
        #expect(CMTimeMultiplyByFloat64(CMTimeMake(value: 1, timescale: 3), multiplier: 1.0 / 3.0).hasBeenRounded)
        #expect(CMTimeMultiplyByFloat64(.positiveInfinity, multiplier: -0.5).isNegativeInfinity)
        #expect(CMTimeMultiplyByFloat64(.indefinite, multiplier: 2).isIndefinite)
        #expect(!CMTimeMultiplyByFloat64(.invalid, multiplier: 2).isValid)
        #expect(CMTimeMultiplyByFloat64(CMTimeMake(value: .max / 2, timescale: 1), multiplier: 1e10).isPositiveInfinity)
        #expect((half * 2.0).seconds == 1.0 && (2.0 * half).seconds == 1.0)
    }

    /// -infinity < all finite values < indefinite < +infinity < invalid; invalid equal to invalid.
    @Test func compareOrdersEveryKind() {
        let ordered: [CMTime] = [.negativeInfinity, CMTimeMake(value: -5, timescale: 1), half, CMTimeMake(value: 3, timescale: 1),
                                 .indefinite, .positiveInfinity, .invalid]
        for (i, a) in ordered.enumerated() {
            for (j, b) in ordered.enumerated() {
                #expect(CMTimeCompare(a, b) == (i < j ? -1 : i > j ? 1 : 0), "\(i) vs \(j)")
            }
        }
        #expect(CMTimeCompare(CMTimeMake(value: 1, timescale: 2), CMTimeMake(value: 2, timescale: 4)) == 0)
        #expect(CMTimeCompare(.invalid, CMTime(value: 7, timescale: 3, flags: [], epoch: 9)) == 0)
        #expect(CMTimeCompare(CMTimeMake(value: .max, timescale: 1_000_000_000), CMTimeMake(value: .max, timescale: 999_999_999)) == -1)
        // Comparable and Equatable through CMTimeCompare.
        #expect(half == CMTimeMake(value: 50, timescale: 100) && half < CMTimeMake(value: 2, timescale: 3))
        #expect(CMTime.invalid == CMTime.invalid && CMTime.positiveInfinity > CMTime.indefinite)
        #expect(ordered.shuffled().sorted().map { $0.seconds.isNaN ? "nan" : "\($0.seconds)" }
                == ordered.map { $0.seconds.isNaN ? "nan" : "\($0.seconds)" })
        #expect(Set([half, CMTimeMake(value: 2, timescale: 4), CMTimeMake(value: 1, timescale: 3)]).count == 2)
    }

    @Test func minimumMaximumAbsoluteValue() {
        let third = CMTimeMake(value: 1, timescale: 3)
        #expect(same(CMTimeMinimum(half, third), third) && same(CMTimeMaximum(half, third), half))
        // By CMTimeCompare's order, invalid is the greatest.
        #expect(same(CMTimeMinimum(.invalid, half), half) && !CMTimeMaximum(.invalid, half).isValid)
        #expect(CMTimeMaximum(.positiveInfinity, half).isPositiveInfinity && CMTimeMinimum(.negativeInfinity, half).isNegativeInfinity)
        #expect(same(CMTimeAbsoluteValue(CMTimeMake(value: -3, timescale: 4)), CMTimeMake(value: 3, timescale: 4)))
        #expect(CMTimeAbsoluteValue(.negativeInfinity).isPositiveInfinity && CMTimeAbsoluteValue(.indefinite).isIndefinite)
        #expect(!CMTimeAbsoluteValue(.invalid).isValid)
    }

    @Test func convertScaleRoundingMethods() {
        let t = CMTimeMake(value: 25, timescale: 10)    // 2.5 → timescale 1
        let n = CMTimeMake(value: -25, timescale: 10)   // -2.5
        let u = CMTimeMake(value: 21, timescale: 10)    // 2.1
        func v(_ time: CMTime, _ m: CMTimeRoundingMethod) -> Int64 { CMTimeConvertScale(time, timescale: 1, method: m).value }
        #expect(v(t, .roundHalfAwayFromZero) == 3 && v(n, .roundHalfAwayFromZero) == -3 && v(u, .roundHalfAwayFromZero) == 2)
        #expect(v(t, .roundTowardZero) == 2 && v(n, .roundTowardZero) == -2)
        #expect(v(u, .roundAwayFromZero) == 3 && v(CMTimeMake(value: -21, timescale: 10), .roundAwayFromZero) == -3)
        #expect(v(u, .roundTowardPositiveInfinity) == 3 && v(CMTimeMake(value: -21, timescale: 10), .roundTowardPositiveInfinity) == -2)
        #expect(v(u, .roundTowardNegativeInfinity) == 2 && v(CMTimeMake(value: -21, timescale: 10), .roundTowardNegativeInfinity) == -3)
        // QuickTime: toward zero to a smaller timescale, away from zero to a larger one, and a
        // negative time never rounds to 0 but to -1/newTimescale.
        #expect(v(CMTimeMake(value: 29, timescale: 10), .quickTime) == 2)
        #expect(CMTimeConvertScale(CMTimeMake(value: 1, timescale: 3), timescale: 10, method: .quickTime).value == 4)
        #expect(CMTimeConvertScale(CMTimeMake(value: -1, timescale: 1000), timescale: 10, method: .quickTime).value == -1)
        #expect(CMTimeConvertScale(CMTimeMake(value: 1, timescale: 1000), timescale: 10, method: .quickTime).value == 0)
        // Rounding is flagged; an exact conversion is not.
        #expect(CMTimeConvertScale(u, timescale: 1, method: .default).hasBeenRounded)
        #expect(!CMTimeConvertScale(t, timescale: 100, method: .default).hasBeenRounded)
        #expect(same(t.convertScale(100, method: .default), CMTimeMake(value: 250, timescale: 100)))
        // A non-numeric time stays non-numeric.
        #expect(CMTimeConvertScale(.positiveInfinity, timescale: 10, method: .default).isPositiveInfinity)
        #expect(CMTimeConvertScale(.indefinite, timescale: 10, method: .default).isIndefinite)
        #expect(!CMTimeConvertScale(.invalid, timescale: 10, method: .default).isValid)
    }

    @Test func timeRanges() {
        let r = CMTimeRangeMake(start: CMTimeMake(value: 1, timescale: 1), duration: CMTimeMake(value: 2, timescale: 1))
        #expect(CMTimeRangeGetEnd(r) == CMTimeMake(value: 3, timescale: 1) && r.end == CMTimeMake(value: 3, timescale: 1))
        // The start is in, the end is not.
        #expect(CMTimeRangeContainsTime(r, time: CMTimeMake(value: 1, timescale: 1)) && r.containsTime(CMTimeMake(value: 299, timescale: 100)))
        #expect(!r.containsTime(CMTimeMake(value: 3, timescale: 1)) && !r.containsTime(.invalid))
        #expect(r.isValid && !CMTimeRange.invalid.isValid && !CMTimeRange().isValid)
        // A negative duration, or a duration of a nonzero epoch, is not a valid range.
        #expect(!CMTimeRange(start: .zero, duration: CMTimeMake(value: -1, timescale: 1)).isValid)
        #expect(!CMTimeRange(start: .zero, duration: CMTimeMakeWithEpoch(value: 1, timescale: 1, epoch: 1)).isValid)
        #expect(CMTimeRange.zero.isEmpty && CMTimeRange(start: .zero, duration: .indefinite).isIndefinite)
        #expect(CMTimeRange(start: .zero, end: CMTimeMake(value: 3, timescale: 1)).duration == CMTimeMake(value: 3, timescale: 1))
        #expect(CMTimeRangeFromTimeToTime(start: half, end: CMTimeMake(value: 1, timescale: 1)).duration == half)
        let s = CMTimeRange(start: CMTimeMake(value: 2, timescale: 1), duration: CMTimeMake(value: 5, timescale: 1))
        #expect(r.intersection(s) == CMTimeRange(start: CMTimeMake(value: 2, timescale: 1), duration: CMTimeMake(value: 1, timescale: 1)))
        #expect(r.union(s) == CMTimeRange(start: CMTimeMake(value: 1, timescale: 1), duration: CMTimeMake(value: 6, timescale: 1)))
        #expect(s.containsTimeRange(CMTimeRange(start: CMTimeMake(value: 3, timescale: 1), duration: CMTimeMake(value: 1, timescale: 1))))
        #expect(CMTimeRange(start: .zero, duration: .positiveInfinity).containsTime(CMTimeMake(value: 1_000_000, timescale: 1)))
        #expect(CMTimeRangeEqual(r, r) && kCMTimeRangeZero == .zero && !kCMTimeRangeInvalid.isValid)
    }

    /// CMTimeMapTimeFromRangeToRange and CMTimeMapDurationFromRangeToRange, as CMTime.h states
    /// them: ends to ends, linear between and beyond, exact across timescales; invalid for an
    /// empty range or another epoch; infinite ranges offset without scaling; no trap on extremes.
    @Test func mappingBetweenRanges() {
        let sec = { (v: Int64) in CMTimeMake(value: v, timescale: 1) }
        let from = CMTimeRange(start: sec(0), duration: sec(10)), to = CMTimeRange(start: sec(100), duration: sec(20))
        #expect(CMTimeMapTimeFromRangeToRange(sec(5), fromRange: from, toRange: to) == sec(110))
        #expect(CMTimeMapTimeFromRangeToRange(sec(0), fromRange: from, toRange: to) == sec(100))
        #expect(CMTimeMapTimeFromRangeToRange(sec(10), fromRange: from, toRange: to) == sec(120))
        #expect(CMTimeMapTimeFromRangeToRange(sec(15), fromRange: from, toRange: to) == sec(130))
        // Other timescales: 1.5 s in [1 s, 3 s) onto 4 s of 44.1 kHz samples from 0: 1 s.
        let mapped = CMTimeMapTimeFromRangeToRange(CMTimeMake(value: 900, timescale: 600),
                                                   fromRange: CMTimeRange(start: sec(1), duration: sec(2)),
                                                   toRange: CMTimeRange(start: CMTimeMake(value: 0, timescale: 44_100), duration: CMTimeMake(value: 176_400, timescale: 44_100)))
        #expect(CMTimeCompare(mapped, sec(1)) == 0 && !mapped.flags.contains(.hasBeenRounded), "\(mapped)")
        // A third of a second at 30 fps onto 25 fps: rounded, and says so.
        let third = CMTimeMapTimeFromRangeToRange(CMTimeMake(value: 1, timescale: 3), fromRange: CMTimeRange(start: .zero, duration: sec(1)),
                                                  toRange: CMTimeRange(start: .zero, duration: CMTimeMake(value: 1, timescale: 1)))
        #expect(CMTimeCompare(third, CMTimeMake(value: 1, timescale: 3)) == 0)
        #expect(!CMTimeMapTimeFromRangeToRange(sec(1), fromRange: CMTimeRange(start: sec(0), duration: .zero), toRange: to).isValid)
        #expect(!CMTimeMapTimeFromRangeToRange(sec(1), fromRange: from, toRange: CMTimeRange(start: sec(0), duration: .zero)).isValid)
        #expect(!CMTimeMapTimeFromRangeToRange(CMTimeMakeWithEpoch(value: 1, timescale: 1, epoch: 2), fromRange: from, toRange: to).isValid)
        let open = CMTimeRange(start: sec(10), duration: .positiveInfinity), later = CMTimeRange(start: sec(50), duration: .positiveInfinity)
        #expect(CMTimeMapTimeFromRangeToRange(sec(12), fromRange: open, toRange: later) == sec(52))
        #expect(CMTimeMapDurationFromRangeToRange(sec(3), fromRange: from, toRange: CMTimeRange(start: sec(7), duration: sec(5))) == CMTimeMake(value: 3, timescale: 2))
        #expect(CMTimeMapDurationFromRangeToRange(sec(3), fromRange: open, toRange: later) == sec(3))
        #expect(!CMTimeMapDurationFromRangeToRange(sec(3), fromRange: from, toRange: CMTimeRange(start: sec(7), duration: .zero)).isValid)
        // Extremes: no trap, an answer or a time that says it is none.
        let huge = CMTimeMake(value: .max, timescale: 1)
        let extreme = CMTimeMapTimeFromRangeToRange(huge, fromRange: CMTimeRange(start: .zero, duration: CMTimeMake(value: 1, timescale: 1_000_000_000)),
                                                    toRange: CMTimeRange(start: .zero, duration: CMTimeMake(value: .max, timescale: 1)))
        #expect(!extreme.isNumeric || extreme.value > 0)
    }

    /// CMTimeFoldIntoRange: a loop's time, always in [start, end).
    @Test func foldingIntoARange() {
        let sec = { (v: Int64) in CMTimeMake(value: v, timescale: 1) }
        let loop = CMTimeRange(start: sec(10), duration: sec(7))
        #expect(CMTimeFoldIntoRange(sec(25), foldRange: loop) == sec(11))
        #expect(CMTimeFoldIntoRange(sec(12), foldRange: loop) == sec(12))
        #expect(CMTimeFoldIntoRange(sec(17), foldRange: loop) == sec(10))
        #expect(CMTimeFoldIntoRange(sec(3), foldRange: loop) == sec(10))
        #expect(CMTimeFoldIntoRange(sec(2), foldRange: loop) == sec(16))
        #expect(CMTimeCompare(CMTimeFoldIntoRange(CMTimeMake(value: 45, timescale: 30), foldRange: CMTimeRange(start: .zero, duration: CMTimeMake(value: 1, timescale: 2))),
                              CMTimeMake(value: 0, timescale: 1)) == 0)
        #expect(!CMTimeFoldIntoRange(sec(3), foldRange: CMTimeRange(start: sec(0), duration: .zero)).isValid)
    }

    // MARK: The documented edge cases, one a test (issue 71)

    /// CMTimeAdd: "if both operands have the same timescale, the timescale of the result is the
    /// same", above kCMTimeMaxTimescale too; different ones past it give kCMTimeMaxTimescale,
    /// rounded, then halved while the value overflows.
    @Test func addKeepsOneTimescaleAboveTheMaximumAndHalvesPastIt() {
        let tiny = CMTimeMake(value: 1, timescale: 2_000_000_000)
        #expect(same(CMTimeAdd(tiny, tiny), CMTimeMake(value: 2, timescale: 2_000_000_000)))
        #expect(same(CMTimeSubtract(tiny, tiny), CMTimeMake(value: 0, timescale: 2_000_000_000)))
        // ≈ 9.2e9 s at an LCM past the maximum: 1e9 would overflow the value, so 5e8, rounded.
        let s = CMTimeAdd(CMTimeMake(value: .max, timescale: 999_999_937), CMTimeMake(value: 1, timescale: 3))
        #expect(s.timescale == 500_000_000 && s.hasBeenRounded, "\(s)")
        #expect(abs(s.seconds - (Double(Int64.max) / 999_999_937 + 1.0 / 3)) < 1e-6 * s.seconds)
        // Past Int64 at timescale 1: the infinity of the overflow's direction.
        #expect(CMTimeAdd(CMTimeMake(value: .max, timescale: 1), CMTimeMake(value: .max, timescale: 1)).isPositiveInfinity)
        #expect(CMTimeAdd(CMTimeMake(value: .min, timescale: 1), CMTimeMake(value: -1, timescale: 1)).isNegativeInfinity)
        #expect(CMTimeSubtract(CMTimeMake(value: .max, timescale: 1), CMTimeMake(value: .min, timescale: 1)).isPositiveInfinity)
        // No rounding, no flag; a rounded operand's flag carries into an exact sum.
        #expect(!CMTimeAdd(half, half).hasBeenRounded)
        var rounded = half
        rounded.flags.insert(.hasBeenRounded)
        #expect(CMTimeAdd(rounded, .zero).hasBeenRounded && CMTimeSubtract(.zero, rounded).hasBeenRounded)
    }

    /// CMTimeMultiply: the time's timescale, halved while the product overflows, then the
    /// infinity of its sign; the operand's rounded flag carries; invalid, indefinite and the
    /// infinities as documented.
    @Test func multiplyOverflowAndNonNumericOperands() {
        let big = CMTimeMultiply(CMTimeMake(value: Int64.max / 3, timescale: 1_000), multiplier: 12)
        #expect(big.timescale == 250 && big.hasBeenRounded, "\(big)")
        #expect(CMTimeMultiply(CMTimeMake(value: .max, timescale: 7), multiplier: Int32.max).isPositiveInfinity)
        #expect(CMTimeMultiply(CMTimeMake(value: .min, timescale: 7), multiplier: Int32.max).isNegativeInfinity)
        #expect(CMTimeMultiply(CMTimeMake(value: .min, timescale: 1), multiplier: -1).isPositiveInfinity)
        #expect(same(CMTimeMultiply(CMTimeMake(value: 7, timescale: 600), multiplier: -3), CMTimeMake(value: -21, timescale: 600)))
        #expect(CMTimeMultiply(.indefinite, multiplier: 0).isIndefinite && !CMTimeMultiply(.invalid, multiplier: 0).isValid)
        #expect(CMTimeMultiply(.positiveInfinity, multiplier: 3).isPositiveInfinity)
    }

    /// CMTimeMultiplyByRatio "preserves the exact rational value, unless it causes an overflow":
    /// 1 s × 1/3 is 1/3 s, not 0 rounded; where no 32-bit timescale holds it, rounded in the
    /// time's and flagged; a value past Int64 an infinity; a zero divisor invalid.
    @Test func multiplyByRatioKeepsTheExactValue() {
        let third = CMTimeMultiplyByRatio(CMTimeMake(value: 1, timescale: 1), multiplier: 1, divisor: 3)
        #expect(same(third, CMTimeMake(value: 1, timescale: 3)))
        // In the time's own timescale when it holds the result.
        #expect(same(CMTimeMultiplyByRatio(CMTimeMake(value: 10, timescale: 30), multiplier: 3, divisor: 2), CMTimeMake(value: 15, timescale: 30)))
        #expect(same(CMTimeMultiplyByRatio(CMTimeMake(value: 1, timescale: 600), multiplier: 1, divisor: 7), CMTimeMake(value: 1, timescale: 4200)))
        #expect(same(CMTimeMultiplyByRatio(half, multiplier: 1, divisor: -2), CMTimeMake(value: -1, timescale: 4)))
        // 1/(3 × 1,000,000,007) needs a timescale past Int32: rounded in the time's (to 0).
        let fine = CMTimeMultiplyByRatio(CMTimeMake(value: 1, timescale: 1_000_000_007), multiplier: 1, divisor: 3)
        #expect(fine.timescale == 1_000_000_007 && fine.value == 0 && fine.hasBeenRounded)
        #expect(CMTimeMultiplyByRatio(CMTimeMake(value: .max, timescale: 1), multiplier: 3, divisor: 1).isPositiveInfinity)
        #expect(CMTimeMultiplyByRatio(CMTimeMake(value: .max, timescale: 1), multiplier: 3, divisor: -1).isNegativeInfinity)
        // A zero divisor has no time: invalid, whatever the time.
        for t in [half, CMTime.zero, .positiveInfinity, .negativeInfinity, .indefinite, .invalid] {
            #expect(!CMTimeMultiplyByRatio(t, multiplier: 1, divisor: 0).isValid, "\(t)")
        }
        #expect(CMTimeMultiplyByRatio(.positiveInfinity, multiplier: -1, divisor: 2).isNegativeInfinity)
        #expect(CMTimeMultiplyByRatio(.negativeInfinity, multiplier: 1, divisor: -2).isPositiveInfinity)
        #expect(CMTimeMultiplyByRatio(.indefinite, multiplier: 2, divisor: 3).isIndefinite)
        var rounded = half
        rounded.flags.insert(.hasBeenRounded)
        #expect(CMTimeMultiplyByRatio(rounded, multiplier: 2, divisor: 1).hasBeenRounded)
    }

    /// CMTimeMultiplyByFloat64: a NaN multiplier is invalid; an infinite one an infinity of the
    /// product's sign; an overflow halves the timescale, then an infinity; the operand's flag carries.
    @Test func multiplyByFloat64EdgeCases() {
        #expect(!CMTimeMultiplyByFloat64(half, multiplier: .nan).isValid)
        #expect(CMTimeMultiplyByFloat64(half, multiplier: .infinity).isPositiveInfinity)
        #expect(CMTimeMultiplyByFloat64(half, multiplier: -.infinity).isNegativeInfinity)
        let big = CMTimeMultiplyByFloat64(CMTimeMake(value: 1_000_000_000, timescale: 1), multiplier: 1e7)
        #expect(big.isNumeric && big.timescale < 65_536 && big.hasBeenRounded && big.seconds == 1e16, "\(big)")
        #expect(CMTimeMultiplyByFloat64(CMTimeMake(value: -(1 << 62), timescale: 1), multiplier: 4).isNegativeInfinity)
        var rounded = half
        rounded.flags.insert(.hasBeenRounded)
        #expect(CMTimeMultiplyByFloat64(rounded, multiplier: 2).hasBeenRounded)
    }

    /// CMTimeConvertScale: a non-numeric time "is similarly non-numeric"; rounding sets the flag;
    /// a value past Int64 the infinity of its sign; a timescale of 0 or less invalid.
    @Test func convertScaleEdgeCases() {
        #expect(CMTimeConvertScale(.positiveInfinity, timescale: 600, method: .default).isPositiveInfinity)
        #expect(CMTimeConvertScale(.indefinite, timescale: 600, method: .default).isIndefinite)
        #expect(!CMTimeConvertScale(.invalid, timescale: 600, method: .default).isValid)
        #expect(CMTimeConvertScale(CMTimeMake(value: 1, timescale: 3), timescale: 10, method: .default).hasBeenRounded)
        #expect(!CMTimeConvertScale(CMTimeMake(value: 1, timescale: 2), timescale: 10, method: .default).hasBeenRounded)
        #expect(CMTimeConvertScale(CMTimeMake(value: .max, timescale: 1), timescale: 1000, method: .default).isPositiveInfinity)
        #expect(CMTimeConvertScale(CMTimeMake(value: .min, timescale: 1), timescale: 1000, method: .roundTowardZero).isNegativeInfinity)
        #expect(!CMTimeConvertScale(half, timescale: 0, method: .default).isValid)
    }

    /// CMTIME_IS_NUMERIC: valid and none of the implied-value flags; rounding does not change it.
    @Test func numericIsValidWithNoImpliedValue() {
        var rounded = half
        rounded.flags.insert(.hasBeenRounded)
        #expect(CMTIME_IS_NUMERIC(rounded) && CMTIME_HAS_BEEN_ROUNDED(rounded) && !CMTIME_HAS_BEEN_ROUNDED(half))
        for flag in [CMTimeFlags.positiveInfinity, .negativeInfinity, .indefinite] {
            #expect(!CMTIME_IS_NUMERIC(CMTime(value: 1, timescale: 1, flags: [.valid, flag], epoch: 0)))
        }
        #expect(!CMTIME_IS_NUMERIC(CMTime(value: 1, timescale: 1, flags: [], epoch: 0)))
        #expect(!CMTIME_HAS_BEEN_ROUNDED(CMTime(value: 0, timescale: 0, flags: [.valid, .indefinite, .hasBeenRounded], epoch: 0)))
    }

    /// Infinities and indefinite in arithmetic, CMTime.h's table: +∞ + −∞ invalid, ∞ ± a number
    /// the same ∞, indefinite with a number indefinite, an infinity over indefinite.
    @Test func infiniteAndIndefiniteArithmetic() {
        let one = CMTimeMake(value: 1, timescale: 1)
        #expect(CMTimeSubtract(.indefinite, .indefinite).isIndefinite && CMTimeAdd(.indefinite, .indefinite).isIndefinite)
        #expect(CMTimeSubtract(.positiveInfinity, one).isPositiveInfinity && CMTimeSubtract(.negativeInfinity, one).isNegativeInfinity)
        #expect(CMTimeSubtract(.indefinite, .negativeInfinity).isPositiveInfinity)
        #expect(CMTimeAbsoluteValue(.negativeInfinity).isPositiveInfinity && CMTimeAbsoluteValue(.indefinite).isIndefinite)
        #expect(CMTimeAbsoluteValue(CMTimeMake(value: .min, timescale: 1)).isPositiveInfinity)
    }

    /// CMTimeClampToRange: inside unchanged, before the start the start, past the end the end;
    /// "if the CMTimeRange argument is empty, this function returns an invalid CMTime", as for an
    /// invalid time or range.
    @Test func clampToRangeAndItsEmptyRange() {
        let sec = { (v: Int64) in CMTimeMake(value: v, timescale: 1) }
        let r = CMTimeRange(start: sec(2), duration: sec(3))
        #expect(same(CMTimeClampToRange(sec(3), range: r), sec(3)))
        #expect(same(CMTimeClampToRange(sec(1), range: r), sec(2)) && same(CMTimeClampToRange(.negativeInfinity, range: r), sec(2)))
        #expect(CMTimeCompare(CMTimeClampToRange(sec(9), range: r), sec(5)) == 0)
        #expect(CMTimeCompare(CMTimeClampToRange(.positiveInfinity, range: r), sec(5)) == 0)
        #expect(!CMTimeClampToRange(sec(2), range: CMTimeRange(start: sec(2), duration: .zero)).isValid)
        #expect(!CMTimeClampToRange(sec(7), range: .zero).isValid)
        #expect(!CMTimeClampToRange(sec(1), range: .invalid).isValid && !CMTimeClampToRange(.invalid, range: r).isValid)
        let open = CMTimeRange(start: sec(2), duration: .positiveInfinity)
        #expect(same(CMTimeClampToRange(sec(1_000_000), range: open), sec(1_000_000)))
    }

    /// Union and intersection with open ranges and invalid ones: an open range's end is +∞; an
    /// invalid range gives an invalid result; ranges apart intersect in an empty range.
    @Test func unionAndIntersectionAtTheEdges() {
        let sec = { (v: Int64) in CMTimeMake(value: v, timescale: 1) }
        let open = CMTimeRange(start: sec(5), duration: .positiveInfinity), r = CMTimeRange(start: sec(0), duration: sec(10))
        #expect(open.intersection(r) == CMTimeRange(start: sec(5), duration: sec(5)))
        let u = open.union(r)
        #expect(u.start == sec(0) && u.duration.isPositiveInfinity && u.end.isPositiveInfinity)
        #expect(!r.union(.invalid).isValid && !CMTimeRange.invalid.intersection(r).isValid)
        let apart = r.intersection(CMTimeRange(start: sec(20), duration: sec(1)))
        #expect(apart.isValid && apart.isEmpty)
    }

    /// No arithmetic traps, on the extremes of every field: each result is a time (numeric within
    /// a rounding of the exact answer, or one that says it is none).
    @Test func noArithmeticTraps() {
        let values: [Int64] = [.min, .min + 1, -1, 0, 1, .max - 1, .max]
        let scales: [Int32] = [1, 3, 1_000_000_000, 1_000_000_007, .max]
        var times: [CMTime] = [.invalid, .indefinite, .positiveInfinity, .negativeInfinity, CMTime(value: 1, timescale: 0, flags: .valid, epoch: 0)]
        for v in values { for s in scales { times.append(CMTimeMake(value: v, timescale: s)) } }
        for a in times {
            for b in times {
                // Within a millionth of the operands' size (Double cannot hold their exact sum).
                let size = max(1, abs(a.seconds) + abs(b.seconds))
                for (r, exact) in [(CMTimeAdd(a, b), a.seconds + b.seconds), (CMTimeSubtract(a, b), a.seconds - b.seconds)] where r.isNumeric {
                    #expect(abs(r.seconds - exact) <= size * 1e-6, "\(a) and \(b): \(r)")
                }
                _ = CMTimeCompare(a, b)
                _ = CMTimeClampToRange(a, range: CMTimeRange(start: b, duration: a))
                _ = CMTimeMapTimeFromRangeToRange(a, fromRange: CMTimeRange(start: b, duration: a), toRange: CMTimeRange(start: a, duration: b))
                _ = CMTimeRangeGetUnion(CMTimeRange(start: a, duration: b), otherRange: CMTimeRange(start: b, duration: a))
            }
            for m: Int32 in [.min, -1, 0, 2, .max] {
                for d: Int32 in [.min, -3, 0, 1, .max] {
                    let r = CMTimeMultiplyByRatio(a, multiplier: m, divisor: d)
                    if r.isNumeric, a.isNumeric {
                        let exact = a.seconds * Double(m) / Double(d)
                        #expect(abs(r.seconds - exact) <= max(1, abs(exact)) * 1e-6, "\(a) × \(m)/\(d): \(r)")
                    }
                }
            }
            for f in [-1e300, -2.5, 0, 1e-300, 3.0, 1e300, .nan, .infinity] { _ = CMTimeMultiplyByFloat64(a, multiplier: f) }
            for s: Int32 in [.min, 0, 1, 600, .max] {
                for m in [CMTimeRoundingMethod.roundHalfAwayFromZero, .roundTowardZero, .roundAwayFromZero, .quickTime,
                          .roundTowardPositiveInfinity, .roundTowardNegativeInfinity] { _ = CMTimeConvertScale(a, timescale: s, method: m) }
            }
            _ = CMTimeAbsoluteValue(a)
            _ = a.hashValue
        }
    }
}
