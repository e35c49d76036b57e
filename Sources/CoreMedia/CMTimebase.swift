@_spi(Engine) import GraphKitCore

// CoreMedia's timebases, and a CMTime as a dictionary (how times travel in attachments and
// property lists).

/// A time line that runs from a clock at a rate, as CoreMedia's `CMTimebase`: set a time and a
/// rate, and its time moves with the clock that much faster (0 stops it, negative runs back).
public final class CMTimebase: Sendable {
    let clock: CMClock
    private struct Anchor {
        var clockTime: CMTime
        var time = CMTime.zero
        var rate = 0.0
    }
    private let anchor: Guarded<Anchor>

    init(clock: CMClock) {
        self.clock = clock
        anchor = Guarded(Anchor(clockTime: clock.time))
    }

    /// Now on this time line.
    public var time: CMTime {
        let now = clock.time
        return anchor.withLock { Self.time(of: $0, at: now) }
    }

    public var rate: Float64 { anchor.withLock { $0.rate } }

    /// Where `a`'s line is at clock time `now`.
    private static func time(of a: Anchor, at now: CMTime) -> CMTime {
        guard a.rate != 0 else { return a.time }
        return CMTimeAdd(a.time, CMTimeMultiplyByFloat64(CMTimeSubtract(now, a.clockTime), multiplier: a.rate))
    }

    /// Re-anchors at the clock's now: at `time` (else where the line is), at `rate` from here.
    fileprivate func set(time: CMTime? = nil, rate: Double? = nil) {
        let now = clock.time
        anchor.withLock { a in
            a.time = time ?? Self.time(of: a, at: now)
            a.clockTime = now
            if let rate { a.rate = rate }
        }
    }
}

public let kCMTimebaseError_InvalidParameter: OSStatus = -12748

/// A timebase on `sourceClock` (the host clock here), stopped (rate 0) at time 0.
@discardableResult
public func CMTimebaseCreateWithSourceClock(allocator: CFAllocator?, sourceClock: CMClock, timebaseOut: UnsafeMutablePointer<CMTimebase?>) -> OSStatus {
    timebaseOut.pointee = CMTimebase(clock: sourceClock)
    return OSStatus(noErr)
}

/// Sets the timebase's time now; it moves on from there at its rate. An invalid or indefinite
/// time is `kCMTimebaseError_InvalidParameter`.
@discardableResult
public func CMTimebaseSetTime(_ timebase: CMTimebase, time: CMTime) -> OSStatus {
    guard time.isNumeric else { return kCMTimebaseError_InvalidParameter }
    timebase.set(time: time)
    return OSStatus(noErr)
}

/// Sets the rate from now on (its time goes on from where it is). A rate that is not finite is
/// `kCMTimebaseError_InvalidParameter`.
@discardableResult
public func CMTimebaseSetRate(_ timebase: CMTimebase, rate: Float64) -> OSStatus {
    guard rate.isFinite else { return kCMTimebaseError_InvalidParameter }
    timebase.set(rate: rate)
    return OSStatus(noErr)
}

public func CMTimebaseGetTime(_ timebase: CMTimebase) -> CMTime { timebase.time }
public func CMTimebaseGetRate(_ timebase: CMTimebase) -> Float64 { timebase.rate }
/// Now on a timebase, as `CMSyncGetTime` reads a clock or a timebase.
public func CMSyncGetTime(_ clockOrTimebase: CMTimebase) -> CMTime { clockOrTimebase.time }

// MARK: CMTime as a dictionary

public let kCMTimeValueKey: CFString = "value"
public let kCMTimeScaleKey: CFString = "timescale"
public let kCMTimeEpochKey: CFString = "epoch"
public let kCMTimeFlagsKey: CFString = "flags"

/// `time` as a dictionary of its four fields (Apple's keys).
public func CMTimeCopyAsDictionary(_ time: CMTime, allocator: CFAllocator?) -> CFDictionary? {
    [kCMTimeValueKey: time.value, kCMTimeScaleKey: time.timescale, kCMTimeEpochKey: time.epoch, kCMTimeFlagsKey: time.flags.rawValue]
}

/// The time a dictionary of ``CMTimeCopyAsDictionary(_:allocator:)``'s holds; invalid when a field
/// is missing or not a number.
public func CMTimeMakeFromDictionary(_ dictionaryRepresentation: CFDictionary?) -> CMTime {
    guard let d = dictionaryRepresentation, let value = settingsInteger(d[kCMTimeValueKey]).flatMap(Int64.init(exactly:)),
          let scale = settingsInteger(d[kCMTimeScaleKey]).flatMap(Int32.init(exactly:)),
          let flags = settingsInteger(d[kCMTimeFlagsKey]).flatMap(UInt32.init(exactly:)) else { return .invalid }
    var t = CMTime(value: value, timescale: scale)
    t.flags = CMTimeFlags(rawValue: flags)
    t.epoch = settingsInteger(d[kCMTimeEpochKey]).flatMap(Int64.init(exactly:)) ?? 0
    return t
}
