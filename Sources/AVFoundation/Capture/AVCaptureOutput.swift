import GraphKitCore

/// Where a capture session's media goes, as AVFoundation's abstract `AVCaptureOutput`.
open class AVCaptureOutput: NSObject, @unchecked Sendable {
    // Unchecked: its connections are under `linked`'s lock; NSObject's conformance cannot be checked.
    let linked = Guarded<[AVCaptureConnection]>([])

    override init() { super.init() }

    /// The media kinds this output takes.
    var acceptedMediaTypes: [AVMediaType] { [] }

    /// The connections from the session's inputs to this output.
    open var connections: [AVCaptureConnection] { linked.withLock { $0 } }

    /// The connection carrying `mediaType`, when the output is in a session with such an input.
    open func connection(with mediaType: AVMediaType) -> AVCaptureConnection? {
        connections.first { $0.mediaType == mediaType }
    }

    /// A sample from the session's capture thread: what the output does with it (deliver it to a
    /// delegate, write it). Called on one thread per media kind, in time order.
    func receive(_ sample: CMSampleBuffer, from connection: AVCaptureConnection) {}

    /// The session is starting (true) or has stopped (false); called on the caller's thread of
    /// startRunning/stopRunning.
    func sessionDidChange(running: Bool) {}
}
