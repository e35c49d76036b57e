import GraphKitCore

/// A capture device as a session's input, as AVFoundation's.
open class AVCaptureDeviceInput: AVCaptureInput, @unchecked Sendable {
    // Unchecked: immutable once made (see AVCaptureInput).
    public let device: AVCaptureDevice

    /// Never throws here: devices are opened when the session starts (a failure then is the
    /// session's `.AVCaptureSessionRuntimeError`).
    public init(device: AVCaptureDevice) throws {
        self.device = device
        super.init()
    }

    override var mediaType: AVMediaType { device.kind }
}
