import GraphKitCore

/// Records a session's camera and microphone to a QuickTime movie (or MP4/M4V by the URL's
/// extension), as AVFoundation's: H.264 and AAC through an `AVAssetWriter` fed with the same
/// samples the data outputs get, its time origin the first video frame recorded.
///
/// A recording started before the session runs begins when it does. Stopping the session
/// finishes a recording (the delegate's error is nil: the file is complete). A frame the writer is
/// not ready for is dropped and counted (``droppedSampleCount``, a GraphKit addition), as a live
/// writer input drops at its edge. A file at the URL already is an error to the delegate
/// (`AVError.fileAlreadyExists`), as on Apple's platforms. The delegate's calls run on a queue of
/// their own.
open class AVCaptureMovieFileOutput: AVCaptureFileOutput, @unchecked Sendable {
    // Unchecked: the recording is under `recording`'s lock; see AVCaptureOutput.

    /// What a recording needs to know of the session's streams, set by it before it starts.
    struct Plan {
        var video: (width: Int, height: Int)?
        var audio: (rate: Int, channels: Int)?
    }

    /// Unchecked Sendable: its vars are touched only under the output's `state` lock; the
    /// delegate is called on the output's own callback queue. The compiler cannot see the lock.
    final class Recording: @unchecked Sendable {
        let url: URL
        let delegate: AVCaptureFileOutputRecordingDelegate
        var writer: AVAssetWriter?
        var video: AVAssetWriterInput?
        var audio: AVAssetWriterInput?
        var start: CMTime?
        var last: CMTime = .zero
        var dropped = 0
        var failure: Error?
        init(url: URL, delegate: AVCaptureFileOutputRecordingDelegate) { self.url = url; self.delegate = delegate }
    }

    /// Unchecked Sendable: it holds the app's settings (`Any` values) and delegate, reached only
    /// under the lock, and the delegate called only on its queue.
    struct State: @unchecked Sendable {
        var plan: Plan?
        var current: Recording?
        var running = false
        var dropped = 0
        var settings: [AVMediaType: [String: Any]] = [:]
    }
    let state = Guarded(State())
    private let callbacks = DispatchQueue(label: "AVCaptureMovieFileOutput.delegate")

    public override init() { super.init() }

    override var acceptedMediaTypes: [AVMediaType] { [.video, .audio] }

    /// Accepted for compatibility; fragments are not written (the file is written whole).
    open var movieFragmentInterval: CMTime = CMTime(value: 10, timescale: 1)
    open var metadata: [AVMetadataItem]?
    open var availableVideoCodecTypes: [AVVideoCodecType] { [.h264, .hevc] }

    /// The writer settings for a connection's media (the codec, for video: H.264 or HEVC).
    open func outputSettings(for connection: AVCaptureConnection) -> [String: Any] {
        state.withLock { $0.settings[connection.mediaType] } ?? [:]
    }
    open func setOutputSettings(_ outputSettings: [String: Any]?, for connection: AVCaptureConnection) {
        state.withLock { $0.settings[connection.mediaType] = outputSettings }
    }

    open override var outputFileURL: URL? { state.withLock { $0.current?.url } }
    open override var isRecording: Bool { state.withLock { $0.current != nil } }
    open override var recordedDuration: CMTime {
        state.withLock { s in s.current.flatMap { r in r.start.map { r.last - $0 } } ?? .zero }
    }
    open override var recordedFileSize: Int64 {
        guard let url = outputFileURL, let size = try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber else { return 0 }
        return size.int64Value
    }
    /// Samples the writer was not ready for, in the current or last recording.
    public var droppedSampleCount: Int { state.withLock { $0.current?.dropped ?? $0.dropped } }

    open override func startRecording(to outputFileURL: URL, recordingDelegate delegate: AVCaptureFileOutputRecordingDelegate) {
        let recording = Recording(url: outputFileURL, delegate: delegate)
        let (began, plan) = state.withLock { s -> (Bool, Plan?) in
            guard s.current == nil else { return (false, nil) }
            s.current = recording
            return (true, s.running ? s.plan : nil)
        }
        guard began else { return }
        if let plan { open(recording, plan) }
    }

    open override func stopRecording() {
        guard let recording = state.withLock({ s -> Recording? in
            defer { s.current = nil }
            s.dropped = s.current?.dropped ?? s.dropped
            return s.current
        }) else { return }
        finish(recording)
    }

    /// Makes the writer for a recording; a failure is kept for the delegate.
    private func open(_ r: Recording, _ plan: Plan) {
        let codec = state.withLock { $0.settings[.video]?[AVVideoCodecKey] } ?? AVVideoCodecType.h264
        state.withLock { _ in
            guard r.writer == nil, r.failure == nil else { return }
            if FileManager.default.fileExists(atPath: r.url.path) {
                r.failure = avError(.fileAlreadyExists, "cannot record to \(r.url.path): a file is there already")
                return
            }
            let type: AVFileType = switch r.url.pathExtension.lowercased() {
            case "mp4": .mp4
            case "m4v": .m4v
            default: .mov
            }
            do {
                let writer = try AVAssetWriter(outputURL: r.url, fileType: type)
                if let v = plan.video {
                    let settings: [String: Any] = [AVVideoCodecKey: codec, AVVideoWidthKey: v.width, AVVideoHeightKey: v.height]
                    let input = AVAssetWriterInput(mediaType: .video, outputSettings: settings)
                    input.expectsMediaDataInRealTime = true
                    writer.add(input)
                    r.video = input
                }
                if let a = plan.audio {
                    let input = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: a.rate,
                                                                                       AVNumberOfChannelsKey: a.channels, AVEncoderBitRateKey: 64_000 * a.channels])
                    input.expectsMediaDataInRealTime = true
                    writer.add(input)
                    r.audio = input
                }
                guard writer.startWriting() else {
                    r.failure = writer.error ?? avError(.unknown, "cannot start writing \(r.url.path)")
                    return
                }
                r.writer = writer
            } catch {
                r.failure = error
            }
        }
    }

    private func finish(_ r: Recording) {
        let connections = self.connections
        let (writer, failure, started) = state.withLock { _ in (r.writer, r.failure, r.start != nil) }
        guard let writer, failure == nil, started else {
            // Nothing recorded: the writer is abandoned, and the delegate told why.
            writer?.cancelWriting()
            let error = failure ?? avError(.noDataCaptured, "no video or audio was recorded to \(r.url.path)")
            callbacks.async { r.delegate.fileOutput(self, didFinishRecordingTo: r.url, from: connections, error: error) }
            return
        }
        r.video?.markAsFinished()
        r.audio?.markAsFinished()
        writer.finishWriting {
            let error: Error? = writer.status == .completed ? nil : (writer.error ?? avError(.unknown, "the recording to \(r.url.path) did not complete"))
            self.callbacks.async { r.delegate.fileOutput(self, didFinishRecordingTo: r.url, from: connections, error: error) }
        }
    }

    override func receive(_ sample: CMSampleBuffer, from connection: AVCaptureConnection) {
        let pts = CMSampleBufferGetPresentationTimeStamp(sample)
        var justStarted: Recording?
        var reachedLimit: Recording?
        state.withLock { s in
            guard let r = s.current, let writer = r.writer, writer.status == .writing else { return }
            let isVideo = connection.mediaType == .video
            if r.start == nil {
                // The recording's origin is its first frame (its first audio, with no camera).
                guard isVideo || r.video == nil else { return }
                writer.startSession(atSourceTime: pts)
                r.start = pts
                justStarted = r
            }
            guard let start = r.start, pts >= start, let input = isVideo ? r.video : r.audio else { return }
            if input.isReadyForMoreMediaData, input.append(sample) {
                r.last = max(r.last, pts + CMSampleBufferGetDuration(sample))
            } else {
                r.dropped += 1
            }
            if maxRecordedDuration.isNumeric, r.last - start >= maxRecordedDuration { reachedLimit = r }
        }
        if let r = justStarted {
            let connections = self.connections
            callbacks.async { r.delegate.fileOutput(self, didStartRecordingTo: r.url, from: connections) }
        }
        if reachedLimit != nil { stopRecording() }
    }

    /// Set by the session before it starts.
    func prepare(_ plan: Plan) { state.withLock { $0.plan = plan } }

    override func sessionDidChange(running: Bool) {
        let (recording, plan) = state.withLock { s in
            s.running = running
            return (s.current, s.plan)
        }
        if running, let recording, let plan { open(recording, plan) }
        if !running { stopRecording() }
    }
}
