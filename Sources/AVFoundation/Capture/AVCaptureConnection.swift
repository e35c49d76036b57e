import GraphKitCore

/// How a capture connection turns its frames, as AVFoundation's.
public enum AVCaptureVideoOrientation: Int, Sendable {
    case portrait = 1, portraitUpsideDown = 2, landscapeRight = 3, landscapeLeft = 4

    /// The rotation, clockwise, that gives this orientation from the camera's own (landscapeRight).
    var rotationAngle: CGFloat {
        switch self {
        case .landscapeRight: 0
        case .portrait: 90
        case .landscapeLeft: 180
        case .portraitUpsideDown: 270
        }
    }
}

/// An input's media flowing to an output, as AVFoundation's. For video, the orientation (or
/// rotation angle, in steps of 90°) and mirroring are applied to the frames (the engine's
/// `effect.rotate` and `effect.mirror`) from the next start of the session.
open class AVCaptureConnection: NSObject, @unchecked Sendable {
    // Unchecked: its settings are under `settings`' lock; NSObject's conformance cannot be checked.
    public let mediaType: AVMediaType
    weak var outputReference: AVCaptureOutput?
    let device: AVCaptureDevice

    struct Settings {
        var angle: CGFloat = 0
        var mirrored = false
        var automaticallyAdjustsMirroring = true
        var enabled = true
    }
    let settings = Guarded(Settings())

    init(mediaType: AVMediaType, device: AVCaptureDevice, output: AVCaptureOutput) {
        self.mediaType = mediaType
        self.device = device
        outputReference = output
        super.init()
    }

    open var output: AVCaptureOutput? { outputReference }
    open var isActive: Bool { true }
    open var isEnabled: Bool {
        get { settings.withLock { $0.enabled } }
        set { settings.withLock { $0.enabled = newValue } }
    }

    open var isVideoOrientationSupported: Bool { mediaType == .video }
    open var videoOrientation: AVCaptureVideoOrientation {
        get {
            switch settings.withLock({ $0.angle }) {
            case 90: .portrait
            case 180: .landscapeLeft
            case 270: .portraitUpsideDown
            default: .landscapeRight
            }
        }
        set { settings.withLock { $0.angle = newValue.rotationAngle } }
    }

    /// Multiples of 90° (0 is the camera's own, landscape) for video.
    open func isVideoRotationAngleSupported(_ videoRotationAngle: CGFloat) -> Bool {
        mediaType == .video && [0, 90, 180, 270].contains(videoRotationAngle)
    }
    /// Set to an angle that is not supported, it stays as it was (Apple raises an exception).
    open var videoRotationAngle: CGFloat {
        get { settings.withLock { $0.angle } }
        set { if isVideoRotationAngleSupported(newValue) { settings.withLock { $0.angle = newValue } } }
    }

    open var isVideoMirroringSupported: Bool { mediaType == .video }
    /// Mirrored left to right. Setting it has effect with `automaticallyAdjustsVideoMirroring`
    /// false, as on Apple's platforms (a Linux camera has no side to mirror by itself).
    open var isVideoMirrored: Bool {
        get { settings.withLock { $0.mirrored } }
        set { settings.withLock { if !$0.automaticallyAdjustsMirroring { $0.mirrored = newValue } } }
    }
    open var automaticallyAdjustsVideoMirroring: Bool {
        get { settings.withLock { $0.automaticallyAdjustsMirroring } }
        set { settings.withLock { $0.automaticallyAdjustsMirroring = newValue } }
    }
}
