/// A rational media time, `value / timescale` seconds, like `CMTime`.
///
/// Exact for audio sample counts (timescale = sample rate) and frame rates (timescale = fps
/// numerator). Converts to GStreamer's nanoseconds only at the engine boundary.
public struct MediaTime: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var value: Int64
    public var timescale: Int32

    public static let zero = MediaTime(value: 0, timescale: 1)
    /// The nanosecond timescale GStreamer uses.
    public static let nanosecondTimescale: Int32 = 1_000_000_000

    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime timescale must be positive")
        self.value = value
        self.timescale = timescale
    }

    public init(seconds: Double, preferredTimescale: Int32 = 1_000_000_000) {
        self.init(value: Int64((seconds * Double(preferredTimescale)).rounded()), timescale: preferredTimescale)
    }

    public init(nanoseconds: UInt64) {
        self.init(value: Int64(clamping: nanoseconds), timescale: Self.nanosecondTimescale)
    }

    public var seconds: Double { Double(value) / Double(timescale) }

    /// Nanoseconds, rounded to nearest (what GStreamer timestamps hold).
    public var nanoseconds: UInt64 {
        precondition(value >= 0, "negative MediaTime has no GStreamer timestamp")
        return UInt64(Self.rescale(value, from: Int64(timescale), to: 1_000_000_000))
    }

    /// This time in another timescale, rounded to nearest.
    public func converted(to newTimescale: Int32) -> MediaTime {
        MediaTime(value: Self.rescale(value, from: Int64(timescale), to: Int64(newTimescale)), timescale: newTimescale)
    }

    /// `value * to / from`, rounded half away from zero, without intermediate overflow.
    static func rescale(_ value: Int64, from: Int64, to: Int64) -> Int64 {
        if from == to { return value }
        let (hi, lo) = value.magnitude.multipliedFullWidth(by: UInt64(to))
        let (q, r) = UInt64(from).dividingFullWidth((hi, lo))
        let rounded = r >= (UInt64(from) + 1) / 2 ? q + 1 : q
        let magnitude = Int64(clamping: rounded)
        return value < 0 ? -magnitude : magnitude
    }

    public static func + (a: MediaTime, b: MediaTime) -> MediaTime {
        if a.timescale == b.timescale { return MediaTime(value: a.value + b.value, timescale: a.timescale) }
        let ts = max(a.timescale, b.timescale)
        return MediaTime(value: a.converted(to: ts).value + b.converted(to: ts).value, timescale: ts)
    }

    public static func - (a: MediaTime, b: MediaTime) -> MediaTime {
        a + MediaTime(value: -b.value, timescale: b.timescale)
    }

    public static func < (a: MediaTime, b: MediaTime) -> Bool {
        // Cross-multiplication in 128 bits: exact for any two timescales.
        let l = a.value.multipliedFullWidth(by: Int64(b.timescale))
        let r = b.value.multipliedFullWidth(by: Int64(a.timescale))
        return l.high != r.high ? l.high < r.high : l.low < r.low
    }

    public static func == (a: MediaTime, b: MediaTime) -> Bool {
        !(a < b) && !(b < a)
    }

    public func hash(into hasher: inout Hasher) {
        // Equal times in different timescales must hash alike: hash the reduced fraction.
        var g = Self.gcd(value.magnitude, UInt64(timescale))
        if g == 0 { g = 1 }
        hasher.combine(value / Int64(g))
        hasher.combine(Int64(timescale) / Int64(g))
    }

    static func gcd(_ a: UInt64, _ b: UInt64) -> UInt64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }

    public var description: String {
        "\(value)/\(timescale) (\(seconds) s)"
    }
}
