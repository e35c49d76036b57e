/// A stretch of media time, `start` for `duration`, like `CMTimeRange`.
public struct MediaTimeRange: Sendable, Hashable, CustomStringConvertible {
    public var start: MediaTime
    public var duration: MediaTime

    public init(start: MediaTime, duration: MediaTime) {
        self.start = start
        self.duration = duration
    }

    public init(start: MediaTime, end: MediaTime) {
        self.init(start: start, duration: end - start)
    }

    public var end: MediaTime { start + duration }

    public func contains(_ time: MediaTime) -> Bool { time >= start && time < end }

    public var description: String { "\(start.seconds) s for \(duration.seconds) s" }
}
