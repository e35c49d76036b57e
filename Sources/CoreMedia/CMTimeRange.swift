import GraphKitCore

/// A stretch of time, as CoreMedia's: `start` for `duration`.
public struct CMTimeRange: Sendable {
    public var start: CMTime
    public var duration: CMTime

    /// An invalid range (both times invalid), as the C struct's zero initializer.
    public init() {
        start = .invalid
        duration = .invalid
    }

    public init(start: CMTime, duration: CMTime) {
        self.start = start
        self.duration = duration
    }

    /// `CMTimeRangeFromTimeToTime(start:end:)`.
    public init(start: CMTime, end: CMTime) {
        self.init(start: start, duration: CMTimeSubtract(end, start))
    }

    public static let zero = CMTimeRange(start: .zero, duration: .zero)
    public static let invalid = CMTimeRange()

    /// `CMTimeRangeGetEnd`: start + duration; invalid for an invalid range.
    public var end: CMTime { CMTimeRangeGetEnd(self) }
    /// Both times valid, and the duration a non-negative duration (epoch 0), as CMTIMERANGE_IS_VALID.
    public var isValid: Bool { CMTIMERANGE_IS_VALID(self) }
    public var isIndefinite: Bool { CMTIMERANGE_IS_INDEFINITE(self) }
    public var isEmpty: Bool { CMTIMERANGE_IS_EMPTY(self) }

    public func containsTime(_ time: CMTime) -> Bool { CMTimeRangeContainsTime(self, time: time) }
    public func containsTimeRange(_ range: CMTimeRange) -> Bool { CMTimeRangeContainsTimeRange(self, otherRange: range) }
    public func intersection(_ otherRange: CMTimeRange) -> CMTimeRange { CMTimeRangeGetIntersection(self, otherRange: otherRange) }
    public func union(_ otherRange: CMTimeRange) -> CMTimeRange { CMTimeRangeGetUnion(self, otherRange: otherRange) }
}

public let kCMTimeRangeZero = CMTimeRange.zero
public let kCMTimeRangeInvalid = CMTimeRange.invalid

public func CMTimeRangeMake(start: CMTime, duration: CMTime) -> CMTimeRange { CMTimeRange(start: start, duration: duration) }
public func CMTimeRangeFromTimeToTime(start: CMTime, end: CMTime) -> CMTimeRange { CMTimeRange(start: start, end: end) }

public func CMTIMERANGE_IS_VALID(_ range: CMTimeRange) -> Bool {
    range.start.isValid && range.duration.isValid && range.duration.epoch == 0 && range.duration.value >= 0
}
public func CMTIMERANGE_IS_INVALID(_ range: CMTimeRange) -> Bool { !CMTIMERANGE_IS_VALID(range) }
public func CMTIMERANGE_IS_INDEFINITE(_ range: CMTimeRange) -> Bool {
    CMTIMERANGE_IS_VALID(range) && (range.start.isIndefinite || range.duration.isIndefinite)
}
public func CMTIMERANGE_IS_EMPTY(_ range: CMTimeRange) -> Bool {
    CMTIMERANGE_IS_VALID(range) && CMTimeCompare(range.duration, .zero) == 0
}

public func CMTimeRangeGetEnd(_ range: CMTimeRange) -> CMTime {
    CMTIMERANGE_IS_VALID(range) ? CMTimeAdd(range.start, range.duration) : .invalid
}

/// Whether `time` is in `[start, end)`: the start is in, the end is not.
public func CMTimeRangeContainsTime(_ range: CMTimeRange, time: CMTime) -> Bool {
    CMTIMERANGE_IS_VALID(range) && time.isValid
        && CMTimeCompare(time, range.start) >= 0 && CMTimeCompare(time, range.end) < 0
}

public func CMTimeRangeContainsTimeRange(_ range: CMTimeRange, otherRange: CMTimeRange) -> Bool {
    CMTIMERANGE_IS_VALID(range) && CMTIMERANGE_IS_VALID(otherRange)
        && CMTimeCompare(otherRange.start, range.start) >= 0 && CMTimeCompare(otherRange.end, range.end) <= 0
}

/// The overlap; an empty range (at the later start) when they do not overlap.
public func CMTimeRangeGetIntersection(_ range: CMTimeRange, otherRange: CMTimeRange) -> CMTimeRange {
    guard CMTIMERANGE_IS_VALID(range), CMTIMERANGE_IS_VALID(otherRange) else { return .invalid }
    let start = CMTimeMaximum(range.start, otherRange.start)
    let end = CMTimeMinimum(range.end, otherRange.end)
    return CMTimeCompare(end, start) <= 0 ? CMTimeRange(start: start, duration: .zero) : CMTimeRange(start: start, end: end)
}

/// The smallest range holding both.
public func CMTimeRangeGetUnion(_ range: CMTimeRange, otherRange: CMTimeRange) -> CMTimeRange {
    guard CMTIMERANGE_IS_VALID(range), CMTIMERANGE_IS_VALID(otherRange) else { return .invalid }
    return CMTimeRange(start: CMTimeMinimum(range.start, otherRange.start), end: CMTimeMaximum(range.end, otherRange.end))
}

public func CMTimeRangeEqual(_ range1: CMTimeRange, _ range2: CMTimeRange) -> Bool {
    CMTimeCompare(range1.start, range2.start) == 0 && CMTimeCompare(range1.duration, range2.duration) == 0
}

extension CMTimeRange: Equatable {
    public static func == (range1: CMTimeRange, range2: CMTimeRange) -> Bool { CMTimeRangeEqual(range1, range2) }
}

extension CMTimeRange {
    /// GraphKit's range, for a numeric start and a numeric or infinite duration.
    package var mediaTimeRange: MediaTimeRange? {
        guard let s = start.mediaTime, let d = duration.mediaTime else { return nil }
        return MediaTimeRange(start: s, duration: d)
    }

    package init(_ r: MediaTimeRange) { self.init(start: CMTime(r.start), duration: CMTime(r.duration)) }
}
