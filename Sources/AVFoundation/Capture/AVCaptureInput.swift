import GraphKitCore

/// Where a capture session's media comes from, as AVFoundation's abstract `AVCaptureInput`.
open class AVCaptureInput: NSObject, @unchecked Sendable {
    // Unchecked: immutable once made; NSObject's conformance cannot be checked.
    /// The media this input gives.
    var mediaType: AVMediaType { .video }
    override init() { super.init() }
}
