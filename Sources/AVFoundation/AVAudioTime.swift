import Foundation

/// A moment of audio, as AVFAudio's `AVAudioTime`: a sample time at a rate, a host time, or both.
///
/// The host clock here is Core Video's and Core Media's (`CVGetCurrentHostTime()`): the system's
/// monotonic clock, one tick a nanosecond as on Intel Macs. ``hostTime(forSeconds:)`` and
/// ``seconds(forHostTime:)`` convert with that unit.
open class AVAudioTime: @unchecked Sendable {
    // Unchecked: open, as AVFAudio's; every field is let.
    public let sampleTime: AVAudioFramePosition
    public let sampleRate: Double
    public let hostTime: UInt64
    public let isSampleTimeValid: Bool
    public let isHostTimeValid: Bool

    public init(hostTime: UInt64) {
        self.hostTime = hostTime
        sampleTime = 0
        sampleRate = 0
        isHostTimeValid = true
        isSampleTimeValid = false
    }

    public init(sampleTime: AVAudioFramePosition, atRate sampleRate: Double) {
        hostTime = 0
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
        isHostTimeValid = false
        isSampleTimeValid = true
    }

    public init(hostTime: UInt64, sampleTime: AVAudioFramePosition, atRate sampleRate: Double) {
        self.hostTime = hostTime
        self.sampleTime = sampleTime
        self.sampleRate = sampleRate
        isHostTimeValid = true
        isSampleTimeValid = true
    }

    /// The host ticks in `seconds` (rounded to the nearest tick; 0 for a negative or non-finite
    /// time, the most ticks for one too long to count).
    open class func hostTime(forSeconds seconds: TimeInterval) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        let ticks = (seconds * 1e9).rounded()
        return ticks >= 18_446_744_073_709_551_615 ? .max : UInt64(ticks)
    }

    /// The seconds `hostTime` ticks are.
    open class func seconds(forHostTime hostTime: UInt64) -> TimeInterval { Double(hostTime) / 1e9 }

    /// This time with what it lacks (its host time or its sample time) worked out from `anchor`,
    /// which has both: the distance from the anchor is the same in seconds on either clock, and a
    /// sample time is counted at this time's rate (the anchor's when this one has none). Nil when
    /// the anchor lacks either, or nothing of this time is valid. A time that has both is itself.
    open func extrapolateTime(fromAnchor anchorTime: AVAudioTime) -> AVAudioTime? {
        guard anchorTime.isSampleTimeValid, anchorTime.isHostTimeValid, anchorTime.sampleRate > 0 else { return nil }
        if isSampleTimeValid, isHostTimeValid { return self }
        if isSampleTimeValid {
            let rate = sampleRate > 0 ? sampleRate : anchorTime.sampleRate
            let seconds = Double(sampleTime) / rate - Double(anchorTime.sampleTime) / anchorTime.sampleRate
            let delta = Self.hostTime(forSeconds: abs(seconds))
            let host = seconds >= 0 ? anchorTime.hostTime.addingReportingOverflow(delta) : anchorTime.hostTime.subtractingReportingOverflow(delta)
            guard !host.overflow else { return nil }
            return AVAudioTime(hostTime: host.partialValue, sampleTime: sampleTime, atRate: rate)
        }
        if isHostTimeValid {
            let rate = anchorTime.sampleRate
            let seconds = hostTime >= anchorTime.hostTime ? Self.seconds(forHostTime: hostTime - anchorTime.hostTime)
                                                           : -Self.seconds(forHostTime: anchorTime.hostTime - hostTime)
            let samples = (Double(anchorTime.sampleTime) + seconds * rate).rounded()
            guard samples.magnitude < 9.0e18 else { return nil }
            return AVAudioTime(hostTime: hostTime, sampleTime: AVAudioFramePosition(samples), atRate: rate)
        }
        return nil
    }
}
