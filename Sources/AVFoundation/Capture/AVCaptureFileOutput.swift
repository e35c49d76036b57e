import GraphKitCore

/// Told when a file output starts and finishes a recording, as AVFoundation's delegate. The
/// start has a default that does nothing (optional in Objective-C).
public protocol AVCaptureFileOutputRecordingDelegate: NSObjectProtocol {
    func fileOutput(_ output: AVCaptureFileOutput, didStartRecordingTo fileURL: URL, from connections: [AVCaptureConnection])
    /// The file is complete (error nil), or the recording failed (the error says why; what was
    /// written may be incomplete or missing).
    func fileOutput(_ output: AVCaptureFileOutput, didFinishRecordingTo outputFileURL: URL, from connections: [AVCaptureConnection], error: Error?)
}

extension AVCaptureFileOutputRecordingDelegate {
    public func fileOutput(_ output: AVCaptureFileOutput, didStartRecordingTo fileURL: URL, from connections: [AVCaptureConnection]) {}
}

/// A capture output that records to a file, as AVFoundation's abstract `AVCaptureFileOutput`;
/// ``AVCaptureMovieFileOutput`` records.
open class AVCaptureFileOutput: AVCaptureOutput, @unchecked Sendable {
    // Unchecked: see AVCaptureOutput; subclasses keep their state under their own lock.
    override init() { super.init() }

    open var outputFileURL: URL? { nil }
    open var isRecording: Bool { false }
    open var recordedDuration: CMTime { .zero }
    open var recordedFileSize: Int64 { 0 }
    /// Longest recording (`.invalid`: no limit); reaching it finishes the recording.
    open var maxRecordedDuration: CMTime = .invalid
    open var maxRecordedFileSize: Int64 = 0
    open var minFreeDiskSpaceLimit: Int64 = 0

    open func startRecording(to outputFileURL: URL, recordingDelegate delegate: AVCaptureFileOutputRecordingDelegate) {}
    open func stopRecording() {}
}
