import GraphKitCore

/// Receives a video data output's frames, as AVFoundation's delegate. Both methods have default
/// implementations that do nothing (they are optional in Objective-C).
public protocol AVCaptureVideoDataOutputSampleBufferDelegate: NSObjectProtocol {
    /// A frame, as a sample buffer whose image buffer is the pixels, in the format and size asked for.
    func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection)
    /// A frame dropped because the delegate was late: its timing and format, with
    /// `kCMSampleBufferAttachmentKey_DroppedFrameReason` = `kCMSampleBufferDroppedFrameReason_FrameWasLate`.
    func captureOutput(_ output: AVCaptureOutput, didDrop sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection)
}

extension AVCaptureVideoDataOutputSampleBufferDelegate {
    public func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {}
    public func captureOutput(_ output: AVCaptureOutput, didDrop sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {}
}

/// A camera's frames handed to a delegate on its queue, as AVFoundation's.
///
/// `videoSettings` take `kCVPixelBufferPixelFormatTypeKey` with `kCVPixelFormatType_32BGRA`,
/// `kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange` ('420v', the default, as Apple's) or
/// `…FullRange` ('420f'), and optionally `kCVPixelBufferWidthKey`/`kCVPixelBufferHeightKey`
/// (else the session preset's size). Settings with another pixel format are refused (kept as
/// they were; Apple raises an exception).
///
/// Late frames: with `alwaysDiscardsLateVideoFrames` (the default), a frame captured while the
/// delegate's queue is blocked in `captureOutput(_:didOutput:from:)` is dropped, as Apple
/// documents, and reported to `captureOutput(_:didDrop:from:)`; a frame merely queued behind another
/// that has not started is not late. Without it, up to ``lateFrameAllowance`` frames wait for the
/// delegate, and only past that are frames dropped (and reported); that bound holds in both modes.
/// Drops are counted (``droppedFrameCount``, a GraphKit addition).
open class AVCaptureVideoDataOutput: AVCaptureOutput, @unchecked Sendable {
    // Unchecked: its settings and delivery state are under `state`'s lock; see AVCaptureOutput.

    /// Frames that may wait for a delegate that keeps them all (`alwaysDiscardsLateVideoFrames` false).
    public static let lateFrameAllowance = 8

    /// Unchecked Sendable: it holds the app's settings (`Any` values) and delegate, reached only
    /// under the lock, and the delegate called only on its queue.
    struct State: @unchecked Sendable {
        var settings: [String: Any] = [kCVPixelBufferPixelFormatTypeKey: kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange]
        var discardsLate = true
        var delegate: AVCaptureVideoDataOutputSampleBufferDelegate?
        var queue: DispatchQueue?
        /// Frames handed to the queue whose callback has not ended.
        var waiting = 0
        /// Whether the queue is in `captureOutput(_:didOutput:from:)` now.
        var inCallback = false
        var dropped = 0
        var delivered = 0
    }
    let state = Guarded(State())
    /// Opened while the session runs.
    let gate = CaptureGate()

    public override init() { super.init() }

    override var acceptedMediaTypes: [AVMediaType] { [.video] }

    /// The pixel formats frames can have: BGRA, '420v', '420f'.
    open var availableVideoPixelFormatTypes: [OSType] {
        [kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange, kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, kCVPixelFormatType_32BGRA]
    }
    open var availableVideoCVPixelFormatTypes: [OSType] { availableVideoPixelFormatTypes }

    open var videoSettings: [String: Any]! {
        get { state.withLock { $0.settings } }
        set {
            let settings = newValue ?? [kCVPixelBufferPixelFormatTypeKey: kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange]
            guard let code = CoreVideo.pixelFormatType(in: settings, default: kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange),
                  availableVideoPixelFormatTypes.contains(code) else { return }
            state.withLock { $0.settings = settings }
        }
    }

    /// The pixel format code frames are made in.
    var framePixelFormatType: OSType {
        CoreVideo.pixelFormatType(in: videoSettings, default: kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange) ?? kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange
    }
    /// A size the settings ask for, if any.
    var requestedSize: (width: Int, height: Int)? {
        let s = videoSettings ?? [:]
        guard let w = s[kCVPixelBufferWidthKey].flatMap(settingsInteger), let h = s[kCVPixelBufferHeightKey].flatMap(settingsInteger),
              w > 0, h > 0 else { return nil }
        return (w, h)
    }

    open var alwaysDiscardsLateVideoFrames: Bool {
        get { state.withLock { $0.discardsLate } }
        set { state.withLock { $0.discardsLate = newValue } }
    }

    /// Sets the delegate (held strongly while set, as AVFoundation holds it weakly: keep your own
    /// reference too) and the serial queue its callbacks run on. A delegate without a queue is
    /// refused (Apple raises an exception); nil clears both.
    open func setSampleBufferDelegate(_ sampleBufferDelegate: AVCaptureVideoDataOutputSampleBufferDelegate?, queue sampleBufferCallbackQueue: DispatchQueue?) {
        guard sampleBufferDelegate == nil || sampleBufferCallbackQueue != nil else { return }
        state.withLock { s in
            s.delegate = sampleBufferDelegate
            s.queue = sampleBufferDelegate == nil ? nil : sampleBufferCallbackQueue
        }
    }
    open var sampleBufferDelegate: AVCaptureVideoDataOutputSampleBufferDelegate? { state.withLock { $0.delegate } }
    open var sampleBufferCallbackQueue: DispatchQueue? { state.withLock { $0.queue } }

    /// Frames dropped since the session started (late, or past the allowance).
    public var droppedFrameCount: Int { state.withLock { $0.dropped } }

    /// Settings for an H.264 writer input at the frames' size (as the engine's `bitrate: auto`).
    open func recommendedVideoSettingsForAssetWriter(writingTo outputFileType: AVFileType) -> [String: Any]? {
        guard let size = connection(with: .video).map({ AVCaptureSession.frameSize(for: $0.device, output: self, preset: nil) }) else { return nil }
        return [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: size.width, AVVideoHeightKey: size.height]
    }

    override func sessionDidChange(running: Bool) {
        if running {
            state.withLock { s in s.waiting = 0; s.inCallback = false; s.dropped = 0; s.delivered = 0 }
            gate.open()
        } else {
            gate.close()
        }
    }

    override func receive(_ sample: CMSampleBuffer, from connection: AVCaptureConnection) {
        enum Action { case none, deliver, drop }
        let (action, delegate, queue) = state.withLock { s -> (Action, AVCaptureVideoDataOutputSampleBufferDelegate?, DispatchQueue?) in
            guard let delegate = s.delegate, let queue = s.queue else { return (.none, nil, nil) }
            if (s.discardsLate && s.inCallback) || s.waiting >= Self.lateFrameAllowance {
                s.dropped += 1
                return (.drop, delegate, queue)
            }
            s.waiting += 1
            s.delivered += 1
            return (.deliver, delegate, queue)
        }
        guard let delegate, let queue, action != .none else { return }
        // The delegate is called only on its own queue, as the caller asked.
        nonisolated(unsafe) let delegateOnQueue = delegate
        let gate = self.gate
        if action == .drop {
            CMSetAttachment(sample, key: kCMSampleBufferAttachmentKey_DroppedFrameReason, value: kCMSampleBufferDroppedFrameReason_FrameWasLate,
                            attachmentMode: kCMAttachmentMode_ShouldPropagate)
            queue.async { gate.deliver { delegateOnQueue.captureOutput(self, didDrop: sample, from: connection) } }
            return
        }
        queue.async {
            self.state.withLock { $0.inCallback = true }
            gate.deliver { delegateOnQueue.captureOutput(self, didOutput: sample, from: connection) }
            self.state.withLock { s in
                s.inCallback = false
                s.waiting -= 1
            }
        }
    }
}
