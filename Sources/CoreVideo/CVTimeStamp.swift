// CoreVideo's time stamps, as display links and video outputs hand them to code: plain values,
// laid out as CoreVideo declares them. GraphKit has no display link; code that keeps or passes
// such a value compiles and reads its fields as on Apple's platforms.

/// Which fields of a ``CVTimeStamp`` hold something.
public struct CVTimeStampFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public static let videoTimeValid = CVTimeStampFlags(rawValue: 1 << 0)
    public static let hostTimeValid = CVTimeStampFlags(rawValue: 1 << 1)
    public static let SMPTETimeValid = CVTimeStampFlags(rawValue: 1 << 2)
    public static let videoRefreshPeriodValid = CVTimeStampFlags(rawValue: 1 << 3)
    public static let rateScalarValid = CVTimeStampFlags(rawValue: 1 << 4)
    public static let topField = CVTimeStampFlags(rawValue: 1 << 16)
    public static let bottomField = CVTimeStampFlags(rawValue: 1 << 17)
    public static let videoHostTimeValid: CVTimeStampFlags = [.videoTimeValid, .hostTimeValid]
    public static let isInterlaced: CVTimeStampFlags = [.topField, .bottomField]
}

/// An SMPTE time code: hours, minutes, seconds and frames, with its counter and kind.
public struct CVSMPTETime: Sendable, Hashable {
    public var subframes: Int16
    public var subframeDivisor: Int16
    public var counter: UInt32
    public var type: UInt32
    public var flags: UInt32
    public var hours: Int16
    public var minutes: Int16
    public var seconds: Int16
    public var frames: Int16

    public init() { self.init(subframes: 0, subframeDivisor: 0, counter: 0, type: 0, flags: 0, hours: 0, minutes: 0, seconds: 0, frames: 0) }

    public init(subframes: Int16, subframeDivisor: Int16, counter: UInt32, type: UInt32, flags: UInt32,
                hours: Int16, minutes: Int16, seconds: Int16, frames: Int16) {
        self.subframes = subframes
        self.subframeDivisor = subframeDivisor
        self.counter = counter
        self.type = type
        self.flags = flags
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
        self.frames = frames
    }
}

/// A moment of video: a time in a timescale, the host time, the refresh period, the SMPTE time,
/// and flags saying which hold something (``CVTimeStampFlags``, in ``flags``).
public struct CVTimeStamp: Sendable, Hashable {
    public var version: UInt32
    public var videoTimeScale: Int32
    public var videoTime: Int64
    public var hostTime: UInt64
    public var rateScalar: Double
    public var videoRefreshPeriod: Int64
    public var smpteTime: CVSMPTETime
    public var flags: UInt64
    public var reserved: UInt64

    public init() {
        self.init(version: 0, videoTimeScale: 0, videoTime: 0, hostTime: 0, rateScalar: 0, videoRefreshPeriod: 0,
                  smpteTime: CVSMPTETime(), flags: 0, reserved: 0)
    }

    public init(version: UInt32, videoTimeScale: Int32, videoTime: Int64, hostTime: UInt64, rateScalar: Double,
                videoRefreshPeriod: Int64, smpteTime: CVSMPTETime, flags: UInt64, reserved: UInt64) {
        self.version = version
        self.videoTimeScale = videoTimeScale
        self.videoTime = videoTime
        self.hostTime = hostTime
        self.rateScalar = rateScalar
        self.videoRefreshPeriod = videoRefreshPeriod
        self.smpteTime = smpteTime
        self.flags = flags
        self.reserved = reserved
    }
}

/// The host clock now: the system's monotonic clock in nanoseconds, the units of
/// `CMClockGetHostTimeClock()`, `AVAudioTime`'s host times and ``CVTimeStamp/hostTime`` here.
public func CVGetCurrentHostTime() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// CoreFoundation's type of a pixel buffer (`CFGetTypeID(x) == CVPixelBufferGetTypeID()`).
public func CVPixelBufferGetTypeID() -> CFTypeID { 0x4356_5042 }  // 'CVPB'
