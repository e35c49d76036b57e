@_exported import CoreVideo
import GraphKitCore

// CoreMedia's time: a rational number with flags for the times that are not numbers, with
// CoreMedia's rules for each of them (CMTime.h, Apple's documentation of each function). The
// arithmetic is exact (128-bit intermediates) and rounds only where CoreMedia says it does.

public typealias CMTimeValue = Int64
public typealias CMTimeScale = Int32
public typealias CMTimeEpoch = Int64

/// The largest timescale CMTimeAdd and CMTimeSubtract give a result in.
public var kCMTimeMaxTimescale: Int { 1_000_000_000 }

public struct CMTimeFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let valid = CMTimeFlags(rawValue: 1 << 0)
    public static let hasBeenRounded = CMTimeFlags(rawValue: 1 << 1)
    public static let positiveInfinity = CMTimeFlags(rawValue: 1 << 2)
    public static let negativeInfinity = CMTimeFlags(rawValue: 1 << 3)
    public static let indefinite = CMTimeFlags(rawValue: 1 << 4)
    public static let impliedValueFlagsMask: CMTimeFlags = [.positiveInfinity, .negativeInfinity, .indefinite]
}

/// How a value is rounded when a time changes timescale.
public enum CMTimeRoundingMethod: UInt32, Sendable {
    /// Toward zero if the fraction is under 0.5, else away from zero (the default).
    case roundHalfAwayFromZero = 1
    /// Toward zero.
    case roundTowardZero = 2
    /// Away from zero.
    case roundAwayFromZero = 3
    /// Toward zero to a smaller timescale, away from zero to a larger one; a negative time is
    /// never rounded to 0, but to -1/newTimescale.
    case quickTime = 4
    case roundTowardPositiveInfinity = 5
    case roundTowardNegativeInfinity = 6

    public static var `default`: CMTimeRoundingMethod { .roundHalfAwayFromZero }
}

/// A time, as CoreMedia's: `value / timescale` seconds, or invalid, indefinite, or an infinity.
public struct CMTime: Sendable {
    public var value: CMTimeValue
    public var timescale: CMTimeScale
    public var flags: CMTimeFlags
    public var epoch: CMTimeEpoch

    /// An invalid time (all fields zero), as the C struct's zero initializer.
    public init() {
        value = 0
        timescale = 0
        flags = []
        epoch = 0
    }

    public init(value: CMTimeValue, timescale: CMTimeScale, flags: CMTimeFlags, epoch: CMTimeEpoch) {
        self.value = value
        self.timescale = timescale
        self.flags = flags
        self.epoch = epoch
    }

    /// A valid time of `value / timescale` seconds, epoch 0 (`CMTimeMake`).
    public init(value: CMTimeValue, timescale: CMTimeScale) {
        self.init(value: value, timescale: timescale, flags: .valid, epoch: 0)
    }

    /// `CMTimeMakeWithSeconds(seconds, preferredTimescale:)`.
    public init(seconds: Double, preferredTimescale: CMTimeScale) {
        self = CMTimeMakeWithSeconds(seconds, preferredTimescale: preferredTimescale)
    }

    public static let zero = CMTime(value: 0, timescale: 1)
    public static let invalid = CMTime()
    public static let indefinite = CMTime(value: 0, timescale: 0, flags: [.valid, .indefinite], epoch: 0)
    public static let positiveInfinity = CMTime(value: 0, timescale: 0, flags: [.valid, .positiveInfinity], epoch: 0)
    public static let negativeInfinity = CMTime(value: 0, timescale: 0, flags: [.valid, .negativeInfinity], epoch: 0)

    public var isValid: Bool { flags.contains(.valid) }
    public var isIndefinite: Bool { isValid && flags.contains(.indefinite) }
    public var isPositiveInfinity: Bool { isValid && flags.contains(.positiveInfinity) }
    public var isNegativeInfinity: Bool { isValid && flags.contains(.negativeInfinity) }
    /// Valid, and neither indefinite nor infinite.
    public var isNumeric: Bool { flags.intersection([.valid, .impliedValueFlagsMask]) == .valid }
    public var hasBeenRounded: Bool { isNumeric && flags.contains(.hasBeenRounded) }
    /// `CMTimeGetSeconds`: NaN for an invalid or indefinite time, ±infinity for the infinities.
    public var seconds: Double { CMTimeGetSeconds(self) }

    public func convertScale(_ newTimescale: Int32, method: CMTimeRoundingMethod) -> CMTime {
        CMTimeConvertScale(self, timescale: newTimescale, method: method)
    }

    // MARK: Kinds, for the rules below

    enum Kind: Int { case negativeInfinity = 0, numeric, indefinite, positiveInfinity, invalid }

    /// A time marked valid with a timescale of 0 or less has no number: it counts as invalid.
    var kind: Kind {
        guard isValid else { return .invalid }
        if flags.contains(.positiveInfinity) { return .positiveInfinity }
        if flags.contains(.negativeInfinity) { return .negativeInfinity }
        if flags.contains(.indefinite) { return .indefinite }
        return timescale > 0 ? .numeric : .invalid
    }

    var rounded: Bool { flags.contains(.hasBeenRounded) }
}

public let kCMTimeZero = CMTime.zero
public let kCMTimeInvalid = CMTime.invalid
public let kCMTimeIndefinite = CMTime.indefinite
public let kCMTimePositiveInfinity = CMTime.positiveInfinity
public let kCMTimeNegativeInfinity = CMTime.negativeInfinity

public func CMTimeMake(value: Int64, timescale: Int32) -> CMTime { CMTime(value: value, timescale: timescale) }

public func CMTimeMakeWithEpoch(value: Int64, timescale: Int32, epoch: Int64) -> CMTime {
    CMTime(value: value, timescale: timescale, flags: .valid, epoch: epoch)
}

public func CMTIME_IS_VALID(_ time: CMTime) -> Bool { time.isValid }
public func CMTIME_IS_INVALID(_ time: CMTime) -> Bool { !time.isValid }
public func CMTIME_IS_POSITIVEINFINITY(_ time: CMTime) -> Bool { time.isPositiveInfinity }
public func CMTIME_IS_NEGATIVEINFINITY(_ time: CMTime) -> Bool { time.isNegativeInfinity }
public func CMTIME_IS_INDEFINITE(_ time: CMTime) -> Bool { time.isIndefinite }
public func CMTIME_IS_NUMERIC(_ time: CMTime) -> Bool { time.isNumeric }
public func CMTIME_HAS_BEEN_ROUNDED(_ time: CMTime) -> Bool { time.hasBeenRounded }

// MARK: Exact rational results

/// `numerator / denominator` (denominator > 0) rounded by `method` to an integer; `quickTime`
/// is given as the direction it resolves to.
private func divide(_ n: Int128, _ d: Int128, _ method: CMTimeRoundingMethod) -> (Int128, rounded: Bool) {
    let (q, r) = n.quotientAndRemainder(dividingBy: d)  // truncates toward zero
    if r == 0 { return (q, false) }
    let away = n < 0 ? q - 1 : q + 1
    switch method {
    case .roundTowardZero, .quickTime: return (q, true)
    case .roundAwayFromZero: return (away, true)
    case .roundHalfAwayFromZero: return (r.magnitude * 2 >= d.magnitude ? away : q, true)
    case .roundTowardPositiveInfinity: return (n > 0 ? away : q, true)
    case .roundTowardNegativeInfinity: return (n < 0 ? away : q, true)
    }
}

/// The time `n / d` seconds (d > 0) in `timescale`, rounded by default, the timescale halved
/// while the value overflows, an infinity once it overflows at timescale 1 (CMTimeAdd,
/// CMTimeMultiply…). Never traps: a product past 128 bits is taken through `Double` (rounded).
private func makeTime(_ n: Int128, _ d: Int128, timescale: Int32, epoch: Int64, rounded: Bool) -> CMTime {
    var ts = timescale
    var wasRounded = rounded
    while true {
        let (scaled, overflow) = n.multipliedReportingOverflow(by: Int128(ts))
        let v: Int128?, r: Bool
        if overflow {
            let exact = Double(n) / Double(d) * Double(ts)
            let x = exact.rounded(.toNearestOrAwayFromZero)
            (v, r) = (abs(x) < 0x1p63 ? Int128(Int64(x)) : nil, true)
        } else {
            (v, r) = divide(scaled, d, .default)
        }
        if let v, let value = Int64(exactly: v) {
            return CMTime(value: value, timescale: ts, flags: wasRounded || r ? [.valid, .hasBeenRounded] : .valid, epoch: epoch)
        }
        if ts == 1 { return n < 0 ? .negativeInfinity : .positiveInfinity }
        ts /= 2
        wasRounded = true
    }
}

/// The time `n / d` seconds (d > 0) exactly, where a 32-bit timescale holds it: in
/// `timescale` when it can be, else in the least common multiple of `timescale` and the
/// fraction's reduced denominator (3 s × 1/2 is 3/2, not 2 rounded). Otherwise
/// ``makeTime(_:_:timescale:epoch:rounded:)`` rounds it in `timescale`.
private func exactTime(_ n: Int128, _ d: Int128, preferring timescale: Int32, epoch: Int64, rounded: Bool) -> CMTime {
    var (x, y) = (n.magnitude, d.magnitude)
    while y != 0 { (x, y) = (y, x % y) }
    let (rn, rd) = (n / Int128(x), d / Int128(x))
    var (p, q) = (rd.magnitude, UInt128(timescale))
    while q != 0 { (p, q) = (q, p % q) }
    let (scale, overflow) = rd.multipliedReportingOverflow(by: Int128(timescale) / Int128(p))
    if !overflow, let ts = Int32(exactly: scale) {
        let (v, o) = rn.multipliedReportingOverflow(by: scale / rd)
        if !o, let value = Int64(exactly: v) {
            return CMTime(value: value, timescale: ts, flags: rounded ? [.valid, .hasBeenRounded] : .valid, epoch: epoch)
        }
    }
    return makeTime(n, d, timescale: timescale, epoch: epoch, rounded: rounded)
}

private func gcd(_ a: Int64, _ b: Int64) -> Int64 {
    var (a, b) = (a.magnitude, b.magnitude)
    while b != 0 { (a, b) = (b, a % b) }
    return Int64(a)
}

private func sum(_ lhs: CMTime, _ rhs: CMTime, subtracting: Bool) -> CMTime {
    switch (lhs.kind, rhs.kind) {
    case (.invalid, _), (_, .invalid): return .invalid
    case (.positiveInfinity, .positiveInfinity): return subtracting ? .invalid : .positiveInfinity
    case (.negativeInfinity, .negativeInfinity): return subtracting ? .invalid : .negativeInfinity
    case (.positiveInfinity, .negativeInfinity): return subtracting ? .positiveInfinity : .invalid
    case (.negativeInfinity, .positiveInfinity): return subtracting ? .negativeInfinity : .invalid
    case (.positiveInfinity, _), (.negativeInfinity, _): return lhs.kind == .positiveInfinity ? .positiveInfinity : .negativeInfinity
    case (_, .positiveInfinity): return subtracting ? .negativeInfinity : .positiveInfinity
    case (_, .negativeInfinity): return subtracting ? .positiveInfinity : .negativeInfinity
    case (.indefinite, _), (_, .indefinite): return .indefinite
    case (.numeric, .numeric): break
    }
    // Epoch 0 is a duration: it adds to a time of any epoch. Two different nonzero epochs
    // cannot be combined (an epoch's length is unknown); the difference of two times of one
    // epoch is a duration.
    let epoch: Int64
    if lhs.epoch == rhs.epoch {
        epoch = subtracting ? 0 : lhs.epoch
    } else if rhs.epoch == 0 {
        epoch = lhs.epoch
    } else if lhs.epoch == 0 && !subtracting {
        epoch = rhs.epoch
    } else {
        return .invalid
    }
    let (a, b) = (Int64(lhs.timescale), Int64(rhs.timescale))
    // One timescale stays, even above kCMTimeMaxTimescale; two give their least common
    // multiple, at most kCMTimeMaxTimescale.
    let timescale = a == b ? lhs.timescale : Int32(min(a / gcd(a, b) * b, Int64(kCMTimeMaxTimescale)))
    let r = Int128(rhs.value) * Int128(a) * (subtracting ? -1 : 1)
    let n = Int128(lhs.value) * Int128(b) + r
    return makeTime(n, Int128(a) * Int128(b), timescale: timescale, epoch: epoch, rounded: lhs.rounded || rhs.rounded)
}

/// The sum. Same timescales give that timescale (even one above `kCMTimeMaxTimescale`);
/// different ones their least common multiple, at most `kCMTimeMaxTimescale` (rounded to it, by
/// default); an overflowing value halves the
/// timescale until it fits, else gives an infinity. Invalid if either is invalid or the sum is
/// +∞ + −∞; infinite if either is; indefinite if either is; invalid for two different nonzero
/// epochs. `hasBeenRounded` is set if either was or the result is.
public func CMTimeAdd(_ lhs: CMTime, _ rhs: CMTime) -> CMTime { sum(lhs, rhs, subtracting: false) }

/// The difference, under CMTimeAdd's rules (+∞ − +∞ and −∞ − −∞ are invalid); two times of the
/// same epoch give a duration (epoch 0).
public func CMTimeSubtract(_ lhs: CMTime, _ rhs: CMTime) -> CMTime { sum(lhs, rhs, subtracting: true) }

/// `time × multiplier` in `time`'s timescale (halved while the value overflows, then an
/// infinity). Invalid stays invalid, indefinite indefinite; an infinity keeps its sign times
/// the multiplier's (× 0 gives indefinite: CoreMedia documents no number for it).
public func CMTimeMultiply(_ time: CMTime, multiplier: Int32) -> CMTime {
    CMTimeMultiplyByRatio(time, multiplier: multiplier, divisor: 1)
}

/// `time × multiplier / divisor`, its exact rational value kept where a 32-bit timescale holds
/// it (in `time`'s timescale when that can, else the least common multiple of it and the
/// result's denominator: 1 s × 1/3 is 1/3); otherwise rounded by default in `time`'s timescale,
/// halved while the value overflows, then an infinity, `hasBeenRounded` set. A divisor of 0
/// gives invalid (there is no such time); an infinity keeps its sign times the ratio's.
public func CMTimeMultiplyByRatio(_ time: CMTime, multiplier: Int32, divisor: Int32) -> CMTime {
    guard divisor != 0 else { return .invalid }
    switch time.kind {
    case .invalid: return .invalid
    case .indefinite: return .indefinite
    case .positiveInfinity, .negativeInfinity:
        if multiplier == 0 { return .indefinite }
        let positive = (time.kind == .positiveInfinity) == ((multiplier > 0) == (divisor > 0))
        return positive ? .positiveInfinity : .negativeInfinity
    case .numeric:
        let n = Int128(time.value) * Int128(multiplier) * (divisor < 0 ? -1 : 1)
        return exactTime(n, Int128(time.timescale) * Int128(divisor.magnitude), preferring: time.timescale,
                         epoch: time.epoch, rounded: time.rounded)
    }
}

/// `time × multiplier`, in `time`'s timescale doubled until it is at least 65,536, rounded by
/// default (halved while the value overflows, then an infinity). A NaN multiplier gives invalid.
public func CMTimeMultiplyByFloat64(_ time: CMTime, multiplier: Float64) -> CMTime {
    switch time.kind {
    case .invalid: return .invalid
    case .indefinite: return .indefinite
    case .positiveInfinity, .negativeInfinity:
        if multiplier.isNaN { return .invalid }
        if multiplier == 0 { return .indefinite }
        return (time.kind == .positiveInfinity) == (multiplier > 0) ? .positiveInfinity : .negativeInfinity
    case .numeric:
        if multiplier.isNaN { return .invalid }
        if multiplier.isInfinite {
            if time.value == 0 { return .indefinite }
            return (time.value > 0) == (multiplier > 0) ? .positiveInfinity : .negativeInfinity
        }
        var ts = Int64(time.timescale)
        while ts < 65536 { ts *= 2 }
        var timescale = Int32(clamping: ts)
        var rounded = time.rounded
        while true {
            let exact = Double(time.value) * multiplier * Double(timescale) / Double(time.timescale)
            let v = exact.rounded(.toNearestOrAwayFromZero)
            if abs(v) < 9.223372036854775807e18 {
                return CMTime(value: Int64(v), timescale: timescale, flags: rounded || v != exact ? [.valid, .hasBeenRounded] : .valid,
                              epoch: time.epoch)
            }
            if timescale == 1 { return v < 0 ? .negativeInfinity : .positiveInfinity }
            timescale /= 2
            rounded = true
        }
    }
}

/// -1, 0 or 1. Numeric times of different epochs order by epoch. Every time has a place, so that
/// sorting terminates: −∞ < every number < indefinite < +∞ < invalid; all invalid times are
/// equal, as are all times of one of the other kinds.
public func CMTimeCompare(_ time1: CMTime, _ time2: CMTime) -> Int32 {
    let (k1, k2) = (time1.kind, time2.kind)
    if k1 != k2 { return k1.rawValue < k2.rawValue ? -1 : 1 }
    guard k1 == .numeric else { return 0 }
    if time1.epoch != time2.epoch { return time1.epoch < time2.epoch ? -1 : 1 }
    let l = Int128(time1.value) * Int128(time2.timescale)
    let r = Int128(time2.value) * Int128(time1.timescale)
    return l < r ? -1 : (l > r ? 1 : 0)
}

/// The lesser by CMTimeCompare (so an invalid time loses to any other).
public func CMTimeMinimum(_ time1: CMTime, _ time2: CMTime) -> CMTime { CMTimeCompare(time1, time2) <= 0 ? time1 : time2 }
/// The greater by CMTimeCompare (so an invalid time wins over any other).
public func CMTimeMaximum(_ time1: CMTime, _ time2: CMTime) -> CMTime { CMTimeCompare(time1, time2) >= 0 ? time1 : time2 }

/// The magnitude: −∞ gives +∞; other non-numeric times are returned as they are.
public func CMTimeAbsoluteValue(_ time: CMTime) -> CMTime {
    switch time.kind {
    case .negativeInfinity: return .positiveInfinity
    case .numeric:
        guard time.value < 0 else { return time }
        guard time.value != .min else { return .positiveInfinity }
        var t = time
        t.value = -time.value
        return t
    default: return time
    }
}

/// Seconds: NaN for an invalid or indefinite time, ±infinity for the infinities.
public func CMTimeGetSeconds(_ time: CMTime) -> Float64 {
    switch time.kind {
    case .invalid, .indefinite: .nan
    case .positiveInfinity: .infinity
    case .negativeInfinity: -.infinity
    case .numeric: Double(time.value) / Double(time.timescale)
    }
}

/// `seconds` in `preferredTimescale` (invalid unless it is positive), rounded by default; the
/// timescale is halved while the value overflows, then the result is an infinity. NaN gives
/// invalid, ±infinity the infinity.
public func CMTimeMakeWithSeconds(_ seconds: Float64, preferredTimescale: Int32) -> CMTime {
    guard preferredTimescale > 0, !seconds.isNaN else { return .invalid }
    if seconds.isInfinite { return seconds > 0 ? .positiveInfinity : .negativeInfinity }
    var timescale = preferredTimescale
    var halved = false
    while true {
        let exact = seconds * Double(timescale)
        let v = exact.rounded(.toNearestOrAwayFromZero)
        if abs(v) < 9.223372036854775807e18 {
            return CMTime(value: Int64(v), timescale: timescale, flags: halved || v != exact ? [.valid, .hasBeenRounded] : .valid, epoch: 0)
        }
        if timescale == 1 { return v < 0 ? .negativeInfinity : .positiveInfinity }
        timescale /= 2
        halved = true
    }
}

/// `time` in `newTimescale`, rounded by `method` (`hasBeenRounded` set when it was). A
/// non-numeric time is returned as it is; a timescale of 0 or less gives invalid, a value past
/// Int64 an infinity.
public func CMTimeConvertScale(_ time: CMTime, timescale newTimescale: Int32, method: CMTimeRoundingMethod) -> CMTime {
    guard time.kind == .numeric else { return time }
    guard newTimescale > 0 else { return .invalid }
    if newTimescale == time.timescale { return time }
    var m = method
    if m == .quickTime { m = newTimescale < time.timescale ? .roundTowardZero : .roundAwayFromZero }
    let n = Int128(time.value) * Int128(newTimescale)
    var (v, rounded) = divide(n, Int128(time.timescale), m)
    if method == .quickTime, v == 0, time.value < 0 { v = -1 }
    guard let value = Int64(exactly: v) else { return v < 0 ? .negativeInfinity : .positiveInfinity }
    return CMTime(value: value, timescale: newTimescale, flags: rounded || time.rounded ? [.valid, .hasBeenRounded] : .valid, epoch: time.epoch)
}

// MARK: Swift's operators and protocols, as CoreMedia's overlay gives them

extension CMTime: Comparable, Hashable {
    /// Equal by CMTimeCompare: 1/2 == 2/4; all invalid times are equal.
    public static func == (time1: CMTime, time2: CMTime) -> Bool { CMTimeCompare(time1, time2) == 0 }
    public static func < (time1: CMTime, time2: CMTime) -> Bool { CMTimeCompare(time1, time2) < 0 }

    /// Equal times hash alike (the reduced fraction for a number; the kind otherwise).
    public func hash(into hasher: inout Hasher) {
        let k = kind
        hasher.combine(k.rawValue)
        guard k == .numeric else { return }
        let g = Swift.max(gcd(value, Int64(timescale)), 1)
        hasher.combine(epoch)
        hasher.combine(value / g)
        hasher.combine(Int64(timescale) / g)
    }

    public static func + (addend1: CMTime, addend2: CMTime) -> CMTime { CMTimeAdd(addend1, addend2) }
    public static func - (minuend: CMTime, subtrahend: CMTime) -> CMTime { CMTimeSubtract(minuend, subtrahend) }
    public static func += (time: inout CMTime, addend: CMTime) { time = time + addend }
    public static func -= (time: inout CMTime, subtrahend: CMTime) { time = time - subtrahend }
    public static func * (time: CMTime, multiplier: Int32) -> CMTime { CMTimeMultiply(time, multiplier: multiplier) }
    public static func * (multiplier: Int32, time: CMTime) -> CMTime { CMTimeMultiply(time, multiplier: multiplier) }
    public static func * (time: CMTime, multiplier: Float64) -> CMTime { CMTimeMultiplyByFloat64(time, multiplier: multiplier) }
    public static func * (multiplier: Float64, time: CMTime) -> CMTime { CMTimeMultiplyByFloat64(time, multiplier: multiplier) }
    public static func *= (time: inout CMTime, multiplier: Int32) { time = time * multiplier }
    public static func *= (time: inout CMTime, multiplier: Float64) { time = time * multiplier }
}

// MARK: GraphKit's time

extension CMTime {
    /// GraphKit's time for a numeric time (an infinity for one; nil for invalid or indefinite).
    package var mediaTime: MediaTime? {
        switch kind {
        case .numeric: MediaTime(value: value, timescale: timescale)
        case .positiveInfinity: .positiveInfinity
        case .negativeInfinity: .negativeInfinity
        case .indefinite, .invalid: nil
        }
    }

    package init(_ t: MediaTime) {
        if t == .positiveInfinity && t.value == .max { self = .positiveInfinity }
        else if t == .negativeInfinity && t.value == -.max { self = .negativeInfinity }
        else { self.init(value: t.value, timescale: t.timescale) }
    }
}

// MARK: Mapping between ranges

/// `delta × (to ÷ from)` for numeric times: exact where a 32-bit timescale holds it, else in
/// `delta`'s timescale (rounded as CoreMedia rounds, marked `.hasBeenRounded`); through seconds
/// where the exact product would pass 128 bits. Invalid when `from` is zero or any is not numeric.
private func scaled(_ delta: CMTime, by to: CMTime, over from: CMTime) -> CMTime {
    guard delta.isNumeric, to.isNumeric, from.isNumeric, from.value != 0, delta.timescale > 0, to.timescale > 0, from.timescale > 0 else {
        return .invalid
    }
    let sign: Int128 = from.value < 0 ? -1 : 1
    let (a, o1) = Int128(delta.value).multipliedReportingOverflow(by: Int128(to.value))
    let (n, o2) = a.multipliedReportingOverflow(by: Int128(from.timescale) * sign)
    let (d, o3) = (Int128(delta.timescale) * Int128(to.timescale)).multipliedReportingOverflow(by: Int128(from.value.magnitude))
    if !(o1 || o2 || o3) {
        return exactTime(n, d, preferring: delta.timescale, epoch: delta.epoch, rounded: delta.rounded)
    }
    let seconds = CMTimeGetSeconds(delta) * CMTimeGetSeconds(to) / CMTimeGetSeconds(from)
    return CMTimeMakeWithSeconds(seconds, preferredTimescale: delta.timescale)
}

/// `t` carried from `fromRange` to `toRange`: their starts and ends map to each other, other
/// times linearly, `(t − fromRange.start) × (toRange.duration ÷ fromRange.duration) +
/// toRange.start`. Invalid when either range is empty or invalid, or `t` is not in
/// `fromRange.start`'s epoch. When both durations are positive infinity, `t` is moved by the
/// difference of the starts, not scaled.
public func CMTimeMapTimeFromRangeToRange(_ t: CMTime, fromRange: CMTimeRange, toRange: CMTimeRange) -> CMTime {
    guard t.isValid, CMTIMERANGE_IS_VALID(fromRange), CMTIMERANGE_IS_VALID(toRange),
          !CMTIMERANGE_IS_EMPTY(fromRange), !CMTIMERANGE_IS_EMPTY(toRange), t.epoch == fromRange.start.epoch else {
        return .invalid
    }
    let delta = CMTimeSubtract(t, fromRange.start)
    if fromRange.duration.isPositiveInfinity && toRange.duration.isPositiveInfinity {
        return CMTimeAdd(delta, toRange.start)
    }
    guard delta.isNumeric else { return delta.isValid ? delta : .invalid }
    return CMTimeAdd(scaled(delta, by: toRange.duration, over: fromRange.duration), toRange.start)
}

/// `dur` carried from `fromRange` to `toRange`: `dur × (toRange.duration ÷ fromRange.duration)`.
/// Invalid when either range is empty or invalid; unchanged when both durations are positive
/// infinity.
public func CMTimeMapDurationFromRangeToRange(_ dur: CMTime, fromRange: CMTimeRange, toRange: CMTimeRange) -> CMTime {
    guard dur.isValid, CMTIMERANGE_IS_VALID(fromRange), CMTIMERANGE_IS_VALID(toRange),
          !CMTIMERANGE_IS_EMPTY(fromRange), !CMTIMERANGE_IS_EMPTY(toRange) else { return .invalid }
    if fromRange.duration.isPositiveInfinity && toRange.duration.isPositiveInfinity { return dur }
    guard dur.isNumeric else { return dur }
    return scaled(dur, by: toRange.duration, over: fromRange.duration)
}

/// `time` folded into `foldRange`, as a loop plays it: `foldRange.start + (time −
/// foldRange.start)` modulo the range's duration, so the result is in `[start, end)`.
/// Invalid when the range is empty or not numeric.
public func CMTimeFoldIntoRange(_ time: CMTime, foldRange: CMTimeRange) -> CMTime {
    guard time.isNumeric, foldRange.start.isNumeric, foldRange.duration.isNumeric,
          !CMTIMERANGE_IS_EMPTY(foldRange), foldRange.duration.value > 0 else { return .invalid }
    let delta = CMTimeSubtract(time, foldRange.start)
    guard delta.isNumeric else { return .invalid }
    // Both in one timescale, exactly: their least common multiple where it fits.
    let scale = Int128(delta.timescale) * Int128(foldRange.duration.timescale) / Int128(gcd(Int64(delta.timescale), Int64(foldRange.duration.timescale)))
    let d = Int128(delta.value) * (scale / Int128(delta.timescale))
    let l = Int128(foldRange.duration.value) * (scale / Int128(foldRange.duration.timescale))
    var r = d % l
    if r < 0 { r += l }
    return CMTimeAdd(makeTime(r, scale, timescale: delta.timescale, epoch: time.epoch, rounded: time.rounded), foldRange.start)
}
