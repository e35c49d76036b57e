import GraphKitCore
import GraphKitRuntime

/// A camera or microphone, as AVFoundation's: PipeWire's cameras and microphones, libcamera's and
/// V4L2's cameras, PulseAudio's and ALSA's microphones, as `graphctl devices` lists them (looked
/// for once a process; the `uniqueID` is the name that lists), and the built-in test camera
/// (a moving pattern) and test microphone (a 440 Hz tone), which are always there, after the
/// hardware, so programs and tests run on machines with none (`AVCaptureDevice(uniqueID:)` with
/// ``testCameraID`` or ``testMicrophoneID`` picks them whatever else there is).
///
/// Linux cameras have no side: their position is `.unspecified`, and they answer a request for
/// any position and for `.builtInWideAngleCamera` or `.external`; microphones answer
/// `.microphone` and `.builtInMicrophone`. Access is always granted (`.authorized`): Linux asks
/// through the device's file permissions, which opening it checks.
open class AVCaptureDevice: NSObject, @unchecked Sendable {
    // Unchecked: the active format and frame durations are under `state`'s lock; the rest is
    // set once when made. NSObject's conformance cannot be checked by the compiler.

    public struct DeviceType: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public static let builtInWideAngleCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInWideAngleCamera")
        public static let builtInUltraWideCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInUltraWideCamera")
        public static let builtInTelephotoCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInTelephotoCamera")
        public static let builtInDualCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInDualCamera")
        public static let builtInDualWideCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInDualWideCamera")
        public static let builtInTripleCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInTripleCamera")
        public static let builtInTrueDepthCamera = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInTrueDepthCamera")
        public static let continuityCamera = DeviceType(rawValue: "AVCaptureDeviceTypeContinuityCamera")
        public static let deskViewCamera = DeviceType(rawValue: "AVCaptureDeviceTypeDeskViewCamera")
        public static let external = DeviceType(rawValue: "AVCaptureDeviceTypeExternal")
        public static let externalUnknown = DeviceType(rawValue: "AVCaptureDeviceTypeExternalUnknown")
        public static let microphone = DeviceType(rawValue: "AVCaptureDeviceTypeMicrophone")
        public static let builtInMicrophone = DeviceType(rawValue: "AVCaptureDeviceTypeBuiltInMicrophone")
    }

    public enum Position: Int, Sendable {
        case unspecified = 0, back = 1, front = 2
    }

    /// The test camera's `uniqueID`.
    public static let testCameraID = "graphkit-test-camera"
    /// The test microphone's `uniqueID`.
    public static let testMicrophoneID = "graphkit-test-microphone"

    public let uniqueID: String
    public let localizedName: String
    public let modelID: String
    public let manufacturer: String
    public let deviceType: DeviceType
    public let position: Position
    public let formats: [Format]
    let kind: AVMediaType
    /// What the capture node's `device` parameter takes: "test", a V4L2 path, "pipewire:…",
    /// "libcamera:…", "pulse:…", "alsa:…".
    let engineDevice: String

    struct State {
        var activeFormat: Format
        var minFrameDuration: CMTime
        var maxFrameDuration: CMTime
        var locked = false
    }
    let state: Guarded<State>

    init(uniqueID: String, name: String, kind: AVMediaType, engineDevice: String, deviceType: DeviceType) {
        self.uniqueID = uniqueID
        localizedName = name
        modelID = engineDevice == "test" ? "GraphKit test device" : engineDevice
        manufacturer = engineDevice == "test" ? "GraphKit" : ""
        self.kind = kind
        self.engineDevice = engineDevice
        self.deviceType = deviceType
        position = .unspecified
        formats = kind == .video ? Format.cameraFormats : Format.microphoneFormats
        // 1280x720 at 30 fps, as a camera starts; a microphone's one format.
        let active = formats.first { $0.dimensions.width == 1280 } ?? formats[0]
        state = Guarded(State(activeFormat: active, minFrameDuration: CMTime(value: 1, timescale: 30), maxFrameDuration: CMTime(value: 1, timescale: 30)))
        super.init()
    }

    // MARK: Finding devices

    /// The devices there are: the hardware first, then the test devices.
    static let all: [AVCaptureDevice] = {
        var devices: [AVCaptureDevice] = []
        for d in GStreamer.captureDevices() {
            let video = d.kind == .camera
            devices.append(AVCaptureDevice(uniqueID: d.device, name: d.name, kind: video ? .video : .audio, engineDevice: d.device,
                                           deviceType: video ? .builtInWideAngleCamera : .microphone))
        }
        devices.append(AVCaptureDevice(uniqueID: testCameraID, name: "GraphKit Test Camera", kind: .video, engineDevice: "test",
                                       deviceType: .builtInWideAngleCamera))
        devices.append(AVCaptureDevice(uniqueID: testMicrophoneID, name: "GraphKit Test Microphone", kind: .audio, engineDevice: "test",
                                       deviceType: .microphone))
        return devices
    }()

    /// The first camera (`.video`) or microphone (`.audio`); nil for other media.
    open class func `default`(for mediaType: AVMediaType) -> AVCaptureDevice? {
        all.first { $0.kind == mediaType }
    }

    /// The first device of `deviceType` for `mediaType` (any, when nil) at `position`.
    open class func `default`(_ deviceType: DeviceType, for mediaType: AVMediaType?, position: Position) -> AVCaptureDevice? {
        all.first { $0.matches(types: [deviceType], mediaType: mediaType, position: position) }
    }

    /// Every device of `mediaType` (deprecated by Apple for `DiscoverySession`).
    open class func devices(for mediaType: AVMediaType) -> [AVCaptureDevice] { all.filter { $0.kind == mediaType } }
    open class func devices() -> [AVCaptureDevice] { all }

    /// The device of `deviceUniqueID`; a V4L2 camera's is its device path (`/dev/video0`), and
    /// the path of a V4L2 device the device monitor did not list (a camera plugged in after the
    /// first look, a node under another name) is taken as a camera too. Anything else is nil.
    public convenience init?(uniqueID deviceUniqueID: String) {
        if let d = Self.all.first(where: { $0.uniqueID == deviceUniqueID }) {
            self.init(uniqueID: d.uniqueID, name: d.localizedName, kind: d.kind, engineDevice: d.engineDevice, deviceType: d.deviceType)
            return
        }
        guard Self.isVideoForLinuxDevice(deviceUniqueID) else { return nil }
        self.init(uniqueID: deviceUniqueID, name: deviceUniqueID, kind: .video, engineDevice: deviceUniqueID, deviceType: .external)
    }

    /// Whether `path` is a V4L2 character device (major number 81, as the kernel gives them).
    static func isVideoForLinuxDevice(_ path: String) -> Bool {
        var info = stat()
        guard path.hasPrefix("/"), stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFCHR else { return false }
        // glibc's major(): bits 8-19 and 32-43 of the device number.
        let rdev = UInt64(info.st_rdev)
        return ((rdev >> 8) & 0xfff) | ((rdev >> 32) & ~UInt64(0xfff)) == 81
    }

    func matches(types: [DeviceType], mediaType: AVMediaType?, position: Position) -> Bool {
        if let mediaType, mediaType != kind { return false }
        guard position == .unspecified || self.position == .unspecified || self.position == position else { return false }
        let aliases: [DeviceType] = kind == .video ? [.builtInWideAngleCamera, .external, .externalUnknown] : [.microphone, .builtInMicrophone]
        return types.contains { aliases.contains($0) }
    }

    open func hasMediaType(_ mediaType: AVMediaType) -> Bool { mediaType == kind }
    open var isConnected: Bool { true }
    open var isSuspended: Bool { false }

    // MARK: Configuration

    /// The format capture uses when the session's preset is `.inputPriority`, `.high` or `.photo`
    /// (Apple switches the preset to `.inputPriority` when it is set; the size is the same here).
    /// A format that is not one of ``formats`` is refused (kept as it was).
    open var activeFormat: Format {
        get { state.withLock { $0.activeFormat } }
        set {
            guard formats.contains(newValue) else { return }
            state.withLock { $0.activeFormat = newValue }
        }
    }

    /// The shortest frame duration, 1/fps: the frame rate capture asks for. A duration outside the
    /// active format's ranges (or invalid) goes back to the default, 1/30 s.
    open var activeVideoMinFrameDuration: CMTime {
        get { state.withLock { $0.minFrameDuration } }
        set { state.withLock { $0.minFrameDuration = Self.supported(newValue, in: $0.activeFormat) } }
    }
    open var activeVideoMaxFrameDuration: CMTime {
        get { state.withLock { $0.maxFrameDuration } }
        set { state.withLock { $0.maxFrameDuration = Self.supported(newValue, in: $0.activeFormat) } }
    }

    static func supported(_ duration: CMTime, in format: Format) -> CMTime {
        guard duration.isNumeric, duration.seconds > 0,
              format.videoSupportedFrameRateRanges.contains(where: { (($0.minFrameRate - 0.01)...($0.maxFrameRate + 0.01)).contains(1 / duration.seconds) })
        else { return CMTime(value: 1, timescale: 30) }
        return duration
    }

    /// Frames per second capture asks for.
    var framesPerSecond: Int { max(1, Int((1 / activeVideoMinFrameDuration.seconds).rounded())) }

    /// Always succeeds here: one process holds a device's configuration (nothing else to lock against).
    open func lockForConfiguration() throws { state.withLock { $0.locked = true } }
    open func unlockForConfiguration() { state.withLock { $0.locked = false } }

    // MARK: Authorization

    /// `.authorized` for audio and video: Linux grants access by the device file's permissions.
    open class func authorizationStatus(for mediaType: AVMediaType) -> AVAuthorizationStatus { .authorized }
    open class func requestAccess(for mediaType: AVMediaType, completionHandler handler: @escaping @Sendable (Bool) -> Void) {
        DispatchQueue.global().async { handler(true) }
    }
    open class func requestAccess(for mediaType: AVMediaType) async -> Bool { true }
}

/// Whether the app may capture a kind of media.
public enum AVAuthorizationStatus: Int, Sendable {
    case notDetermined = 0, restricted = 1, denied = 2, authorized = 3
}

extension AVCaptureDevice {
    /// Devices of given types, media and position (`AVCaptureDevice.DiscoverySession`).
    open class DiscoverySession: NSObject, @unchecked Sendable {
        // Unchecked: immutable once made; NSObject's conformance cannot be checked.
        public let devices: [AVCaptureDevice]
        public init(deviceTypes: [DeviceType], mediaType: AVMediaType?, position: Position) {
            devices = AVCaptureDevice.all.filter { $0.matches(types: deviceTypes, mediaType: mediaType, position: position) }
            super.init()
        }
    }
}
