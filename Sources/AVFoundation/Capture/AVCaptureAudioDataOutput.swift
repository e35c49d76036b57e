import GraphKitCore

/// Receives an audio data output's samples, as AVFoundation's delegate (optional in
/// Objective-C: a default that does nothing).
public protocol AVCaptureAudioDataOutputSampleBufferDelegate: NSObjectProtocol {
    /// Interleaved 16-bit PCM (by default; see `audioSettings`), timed on the session's clock.
    func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection)
}

extension AVCaptureAudioDataOutputSampleBufferDelegate {
    public func captureOutput(_ output: AVCaptureOutput, didOutput sampleBuffer: CMSampleBuffer, from connection: AVCaptureConnection) {}
}

/// A microphone's samples handed to a delegate on its queue, as AVFoundation's. Every buffer is
/// delivered (audio is not dropped for a late delegate; it waits on the queue). `audioSettings`
/// (macOS) may ask for `AVSampleRateKey` and `AVNumberOfChannelsKey` (1 or 2); the format stays
/// 16-bit interleaved PCM.
open class AVCaptureAudioDataOutput: AVCaptureOutput, @unchecked Sendable {
    // Unchecked: its settings and delegate are under `state`'s lock; see AVCaptureOutput.
    /// Unchecked Sendable: it holds the app's settings (`Any` values) and delegate, reached only
    /// under the lock, and the delegate called only on its queue.
    struct State: @unchecked Sendable {
        var settings: [String: Any]?
        var delegate: AVCaptureAudioDataOutputSampleBufferDelegate?
        var queue: DispatchQueue?
    }
    let state = Guarded(State())
    let gate = CaptureGate()

    public override init() { super.init() }

    override var acceptedMediaTypes: [AVMediaType] { [.audio] }

    open var audioSettings: [String: Any]! {
        get { state.withLock { $0.settings } }
        set { state.withLock { $0.settings = newValue } }
    }

    /// The rate and channels the settings ask for, if they do.
    var requestedRate: Int? { (audioSettings?[AVSampleRateKey]).flatMap(settingsInteger).flatMap { (8_000...192_000).contains($0) ? $0 : nil } }
    var requestedChannels: Int? { (audioSettings?[AVNumberOfChannelsKey]).flatMap(settingsInteger).flatMap { (1...2).contains($0) ? $0 : nil } }

    /// Sets the delegate (held strongly while set) and the serial queue its callbacks run on;
    /// a delegate without a queue is refused, nil clears both.
    open func setSampleBufferDelegate(_ sampleBufferDelegate: AVCaptureAudioDataOutputSampleBufferDelegate?, queue sampleBufferCallbackQueue: DispatchQueue?) {
        guard sampleBufferDelegate == nil || sampleBufferCallbackQueue != nil else { return }
        state.withLock { s in
            s.delegate = sampleBufferDelegate
            s.queue = sampleBufferDelegate == nil ? nil : sampleBufferCallbackQueue
        }
    }
    open var sampleBufferDelegate: AVCaptureAudioDataOutputSampleBufferDelegate? { state.withLock { $0.delegate } }
    open var sampleBufferCallbackQueue: DispatchQueue? { state.withLock { $0.queue } }

    /// Settings for an AAC writer input at the microphone's rate and channels.
    open func recommendedAudioSettingsForAssetWriter(writingTo outputFileType: AVFileType) -> [String: Any]? {
        guard let device = connection(with: .audio)?.device else { return nil }
        let (rate, channels) = AVCaptureSession.audioFormat(for: device, output: self)
        return [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: rate, AVNumberOfChannelsKey: channels, AVEncoderBitRateKey: 64_000 * channels]
    }

    override func sessionDidChange(running: Bool) {
        if running { gate.open() } else { gate.close() }
    }

    override func receive(_ sample: CMSampleBuffer, from connection: AVCaptureConnection) {
        let (delegate, queue) = state.withLock { ($0.delegate, $0.queue) }
        guard let delegate, let queue else { return }
        // The delegate is called only on its own queue, as the caller asked.
        nonisolated(unsafe) let delegateOnQueue = delegate
        let gate = self.gate
        queue.async { gate.deliver { delegateOnQueue.captureOutput(self, didOutput: sample, from: connection) } }
    }
}
