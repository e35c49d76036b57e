import Glibc

// Times in words and on the host clock, as CoreMedia gives them: what logging and live code
// written for Apple's platforms calls beside CMTime's arithmetic.

/// `{value/timescale = seconds}` as CoreMedia writes it (`{1001/30000 = 0.033}`), with
/// `, rounded` for a rounded time; `{INVALID}`, `{+INFINITY}`, `{-INFINITY}`, `{INDEFINITE}`.
public func CMTimeCopyDescription(allocator: CFAllocator?, time: CMTime) -> CFString? {
    guard time.isValid else { return "{INVALID}" }
    if time.isPositiveInfinity { return "{+INFINITY}" }
    if time.isNegativeInfinity { return "{-INFINITY}" }
    if time.isIndefinite { return "{INDEFINITE}" }
    let seconds = time.seconds
    var text = "{\(time.value)/\(time.timescale) = \(String(format: "%.3f", seconds))"
    if time.hasBeenRounded { text += ", rounded" }
    if time.epoch != 0 { text += ", epoch \(time.epoch)" }
    return text + "}"
}

/// `{start, duration}` in ``CMTimeCopyDescription``'s words.
public func CMTimeRangeCopyDescription(allocator: CFAllocator?, range: CMTimeRange) -> CFString? {
    "{\(CMTimeCopyDescription(allocator: allocator, time: range.start) ?? ""), \(CMTimeCopyDescription(allocator: allocator, time: range.duration) ?? "")}"
}

/// Prints the time's description to standard output.
public func CMTimeShow(_ time: CMTime) { print(CMTimeCopyDescription(allocator: nil, time: time) ?? "") }

/// Prints the range's description to standard output.
public func CMTimeRangeShow(_ range: CMTimeRange) { print(CMTimeRangeCopyDescription(allocator: nil, range: range) ?? "") }

/// `time` held within `range`: its start when before it, its end when past it. Invalid for an
/// invalid time, and for an empty or invalid range (as Apple documents: an empty range holds no
/// time to clamp to).
public func CMTimeClampToRange(_ time: CMTime, range: CMTimeRange) -> CMTime {
    guard time.isValid, range.isValid, !range.isEmpty else { return .invalid }
    if CMTimeCompare(time, range.start) < 0 { return range.start }
    let end = CMTimeRangeGetEnd(range)
    return CMTimeCompare(time, end) > 0 ? end : time
}

/// A clock, as CoreMedia's. The host clock is the only one: the system's monotonic clock, in
/// nanoseconds, as `mach_absolute_time` is on Apple's platforms.
public final class CMClock: Sendable {
    init() {}
    /// Now on this clock (the Swift overlay's `CMClock.time`).
    public var time: CMTime { CMTime(value: Int64(clamping: CVGetCurrentHostTime()), timescale: 1_000_000_000) }
}

private let hostTimeClock = CMClock()

/// The host time clock: monotonic, never set back, counting from an arbitrary start (boot).
public func CMClockGetHostTimeClock() -> CMClock { hostTimeClock }

/// Now on `clock`, in nanoseconds.
public func CMClockGetTime(_ clock: CMClock) -> CMTime { clock.time }

/// Now on a clock (a timebase is not offered here), as `CMClockGetTime`.
public func CMSyncGetTime(_ clockOrTimebase: CMClock) -> CMTime { clockOrTimebase.time }

/// A host time in nanoseconds (what `mach_absolute_time`-style units are here) as a CMTime.
public func CMClockMakeHostTimeFromSystemUnits(_ hostTime: UInt64) -> CMTime {
    CMTime(value: Int64(clamping: hostTime), timescale: 1_000_000_000)
}

/// A host time as nanoseconds, the system's units here.
public func CMClockConvertHostTimeToSystemUnits(_ hostTime: CMTime) -> UInt64 {
    let ns = CMTimeConvertScale(hostTime, timescale: 1_000_000_000, method: .default)
    return ns.isNumeric && ns.value > 0 ? UInt64(ns.value) : 0
}
