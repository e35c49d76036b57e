import Assets
import MediaContainers
@_spi(Engine) import GraphKitCore

/// One track of an ``AVAssetWriter``, as AVFoundation's: over GraphKit's `AssetWriterInput`.
///
/// `outputSettings` is AVFoundation's dictionary (``AVFormatIDKey``, ``AVVideoCodecKey``…):
/// AAC for audio, H.264 for video; nil writes AAC or H.264 samples as they are (passthrough). Settings GraphKit cannot honour do not raise an exception
/// as AVFoundation's do: ``AVAssetWriter/canAdd(_:)`` says no, and adding the input anyway
/// fails the writer with an error naming the key.
///
/// `append(_:)` returns false when the sample was not taken; the writer's `status` is then
/// `.failed` (or `.cancelled`, `.completed`) and its `error` says why, as in AVFoundation. A
/// mistake AVFoundation answers with an exception (appending to an input of another media
/// type, before `startSession`) fails the writer the same way.
open class AVAssetWriterInput: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (app code may subclass it), and the compiler checks only
    // final classes; its settings are let, its state in a Mutex.
    public let mediaType: AVMediaType
    public let outputSettings: [String: Any]?
    public let sourceFormatHint: CMFormatDescription?
    /// GraphKit's input; nil when the settings cannot be honoured (``settingsError`` says why).
    package let input: AssetWriterInput?
    let settingsError: String?

    /// What it keeps of the app's values, to give them back; its writing state is in GraphKit's
    /// writer session, which its input is a handle to.
    private struct Props {
        var transform = CGAffineTransform.identity
        var mediaTimeScale: CMTimeScale = 0
        var naturalSize = CGSize.zero
        var performsMultiPass = false
        /// How much later than their own times samples go to GraphKit's writer
        /// (``AVAssetWriter/clockBias``), set as writing starts.
        var clockBias = MediaTime.zero
    }
    private let props = Guarded(Props())

    public convenience init(mediaType: AVMediaType, outputSettings: [String: Any]?) {
        self.init(mediaType: mediaType, outputSettings: outputSettings, sourceFormatHint: nil)
    }

    public init(mediaType: AVMediaType, outputSettings: [String: Any]?, sourceFormatHint: CMFormatDescription?) {
        self.mediaType = mediaType
        self.outputSettings = outputSettings
        self.sourceFormatHint = sourceFormatHint
        var made: AssetWriterInput?
        var problem: String?
        do {
            switch try WriterSettings.read(outputSettings, mediaType: mediaType) {
            case .encode(let settings):
                made = AssetWriterInput(mediaType: mediaType.assets!, outputSettings: settings)
            case .passthrough:
                made = try Self.passthroughInput(mediaType: mediaType, hint: sourceFormatHint)
            }
        } catch {
            problem = error.message
        }
        input = made
        settingsError = problem.map { "the \(mediaType == .audio ? "audio" : mediaType == .video ? "video" : mediaType.rawValue) input: \($0)" }
    }

    // MARK: Properties

    /// Whether samples come from a real-time source (a camera, a microphone): GraphKit's input
    /// then tunes its readiness for latency. Every appended sample is still written.
    public var expectsMediaDataInRealTime: Bool {
        get { input?.expectsMediaDataInRealTime ?? false }
        set { input?.expectsMediaDataInRealTime = newValue }
    }

    /// Whether the input takes another sample now.
    public var isReadyForMoreMediaData: Bool {
        input?.isReadyForMoreMediaData ?? false
    }

    /// The track's display transform (a portrait recording's quarter turn): written into the
    /// file as the video track's display matrix, which players and
    /// `AVAssetTrack.preferredTransform` read; the frames are stored as appended. Set it before
    /// writing starts. One that a file cannot hold (not finite, or beyond ±32768) fails
    /// `startWriting()`, with `error` saying so.
    public var transform: CGAffineTransform {
        get { props.withLock { $0.transform } }
        set {
            props.withLock { $0.transform = newValue }
            input?.transform = DisplayMatrix(newValue)
        }
    }

    /// Accepted and not used: the track's timescale is the muxer's (90 kHz for video, the
    /// sample rate for audio).
    public var mediaTimeScale: CMTimeScale {
        get { props.withLock { $0.mediaTimeScale } }
        set { props.withLock { $0.mediaTimeScale = newValue } }
    }

    /// Accepted and not used: a video track's size is the encoded size.
    public var naturalSize: CGSize {
        get { props.withLock { $0.naturalSize } }
        set { props.withLock { $0.naturalSize = newValue } }
    }

    /// Accepted; GraphKit encodes in one pass.
    public var performsMultiPassEncodingIfSupported: Bool {
        get { props.withLock { $0.performsMultiPass } }
        set { props.withLock { $0.performsMultiPass = newValue } }
    }

    /// False: GraphKit encodes in one pass.
    public var canPerformMultiplePasses: Bool { false }

    // MARK: Feeding

    /// Calls `block` on `queue` whenever the input is ready for more, until it is finished or
    /// writing ends; the block appends while ``isReadyForMoreMediaData`` holds.
    public func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        input?.requestMediaDataWhenReady(on: queue, using: block)
    }

    /// Appends a sample (PCM for audio, a frame for video, or an encoded sample to a
    /// passthrough input), waiting while the encoder is behind. False when it was not taken:
    /// see the writer's `status` and `error`.
    ///
    /// A sample past `endSession(atSourceTime:)` is taken and written, and edited out of what
    /// plays, as AVFoundation documents (the session's end is the end of the track's edit).
    @discardableResult
    public func append(_ sampleBuffer: CMSampleBuffer) -> Bool {
        guard let input, let writer = input.writerForAdaptor else { return false }
        guard sampleBuffer.isDataReady else {
            writer.fail(GraphError(.usage, "a sample buffer was appended without its data (CMSampleBufferCreate with no data buffer): "
                                   + "give it its data with CMSampleBufferSetDataBuffer first"))
            return false
        }
        do {
            try input.append(try moved(sampleBuffer, by: props.withLock { $0.clockBias }))
            return true
        } catch {
            writer.fail(error)
            return false
        }
    }

    /// No more samples for this track.
    public func markAsFinished() { input?.markAsFinished() }

    // MARK: For the writer

    /// Sets how much later than their own times this input's samples go to GraphKit's writer.
    func setClockBias(_ bias: MediaTime) { props.withLock { $0.clockBias = bias } }

    /// The engine's sample for `buffer`, at the buffer's own times moved `bias` later: a
    /// passthrough writer's samples may come before 0 (a priming packet, a B-frame's decode, as
    /// a reader gives them), which the engine's times cannot hold. Throws for one more than the
    /// bias before 0. Without a bias (a writer that encodes, a fragmented file, segments: their
    /// samples are on the session's clock), the engine's own sample: a reader's, stamped later
    /// than its times by its lead, keeps those stamps, all at or after 0.
    private func moved(_ buffer: CMSampleBuffer, by bias: MediaTime) throws(GraphError) -> SampleBuffer {
        var sample = buffer.sampleForEngine
        guard bias > .zero else { return sample }
        let shown = buffer.presentationTimeStamp.mediaTime.map { $0 + bias }, decoded = buffer.decodeTimeStamp.mediaTime.map { $0 + bias }
        if let early = [shown, decoded].compactMap({ $0 }).first(where: { $0 < .zero || !$0.isFinite }) {
            throw GraphError(.usage, at: "\(mediaType.rawValue) input", "a sample at \((early - bias).seconds) s is more than \(bias.seconds) s before 0, "
                             + "where a passthrough file's time line may begin; start the samples' times nearer 0")
        }
        sample.presentationTime = shown
        sample.decodeTime = decoded
        return sample
    }

    /// GraphKit's writer this input was added to (through its input), while it lives.
    var writer: AssetWriter? { input?.writerForAdaptor }

    /// `outputSettings: nil`: samples written as they are. AAC and H.264 (as a reader gives them
    /// with `outputSettings: nil`, or as an encoder hands them over, with their codec
    /// configuration); a hint of another format is refused by name.
    static func passthroughInput(mediaType: AVMediaType, hint: CMFormatDescription?) throws(SettingsError) -> AssetWriterInput {
        guard let type = mediaType.assets else { throw SettingsError("GraphKit writes audio and video tracks only, not \(mediaType.rawValue)") }
        if let hint {
            switch (type, hint.format) {
            case (.audio, .aac), (.video, .h264): break
            default:
                throw SettingsError("outputSettings nil writes samples as they are: AAC audio or H.264 video; the sourceFormatHint is \(hint.format) (give settings to encode it)")
            }
        }
        return AssetWriterInput(mediaType: type, outputSettings: PassthroughSettings(mediaType: type))
    }
}
