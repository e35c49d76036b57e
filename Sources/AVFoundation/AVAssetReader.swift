import Assets
@_spi(Engine) import GraphKitCore

/// Reads decoded samples out of an asset, as AVFoundation's: over GraphKit's `AssetReader`.
///
/// As in AVFoundation, `startReading()` returns false with `status` `.failed` and `error` set
/// when reading cannot start, and `copyNextSampleBuffer()` returns nil at the end, after a
/// failure and after `cancelReading()`. Adding an output `canAdd` refuses fails the reader
/// (AVFoundation raises an exception) with an error saying why.
open class AVAssetReader: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (app code may subclass it), and the compiler checks only
    // final classes; its asset and reader are let, its state in a Mutex.
    public enum Status: Int, Sendable {
        case unknown = 0, reading, completed, failed, cancelled
    }

    public let asset: AVAsset
    package let reader: AssetReader
    private let state = Guarded<(failure: NSError?, outputs: [AVAssetReaderOutput])>((nil, []))

    /// A reader of `asset`; throws when the file cannot be read.
    public init(asset: AVAsset) throws {
        self.asset = asset
        do {
            if let composition = asset as? AVComposition {
                reader = try AssetReader(composition: composition.composition)
            } else {
                reader = try AssetReader(asset: try asset.loaded())
            }
        } catch {
            throw avError(error)
        }
    }

    public var status: Status {
        let failed = state.withLock { $0.failure != nil }
        switch reader.status {
        case .completed: return .completed
        case _ where failed: return .failed
        case .cancelled: return .cancelled
        case .failed: return .failed
        case .reading: return .reading
        case .unknown: return .unknown
        }
    }

    public var error: (any Error)? { state.withLock { $0.failure } ?? reader.error.map { avError($0) } }

    public var outputs: [AVAssetReaderOutput] { state.withLock { $0.outputs } }

    /// The part of the asset to read (by default all of it): a numeric start and a numeric or
    /// infinite duration. Set it before `startReading()`.
    public var timeRange: CMTimeRange {
        get { CMTimeRange(reader.timeRange) }
        set {
            guard let range = newValue.mediaTimeRange else {
                fail(avError(.operationNotAllowed, "timeRange needs a numeric start and duration, not \(newValue)"))
                return
            }
            reader.timeRange = range
        }
    }

    public func canAdd(_ output: AVAssetReaderOutput) -> Bool {
        guard output.problem == nil, let gk = output.output else { return false }
        return reader.canAdd(gk)
    }

    public func add(_ output: AVAssetReaderOutput) {
        if let problem = output.problem {
            fail(avError(.operationNotAllowed, "cannot add the output: \(problem)"))
            return
        }
        guard let gk = output.output else { return }
        do {
            try reader.add(gk)
            output.reader = self
            state.withLock { $0.outputs.append(output) }
        } catch {
            fail(error)
        }
    }

    /// Starts decoding; false, with `status` `.failed` and `error` set, when it cannot.
    @discardableResult
    public func startReading() -> Bool {
        if state.withLock({ $0.failure != nil }) { return false }
        do {
            try reader.startReading()
            return true
        } catch {
            fail(error)
            return false
        }
    }

    /// Stops reading: every output gives nil from now on.
    public func cancelReading() { reader.cancelReading() }

    func fail(_ error: any Error) {
        let first = state.withLock { s in
            guard s.failure == nil else { return false }
            s.failure = avError(error)
            return true
        }
        if first, reader.status == .reading { reader.cancelReading() }
    }

    var failed: Bool { state.withLock { $0.failure != nil } }
}

/// What a reader gives samples through, as AVFoundation's.
open class AVAssetReaderOutput: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (app code may subclass it), and the compiler checks only
    // final classes; its fields are let, its reader in a Mutex.
    package let output: AssetReaderTrackOutput?
    let problem: String?
    public let mediaType: AVMediaType
    /// The track's colour (primaries, transfer function, matrix), set on every decoded frame's
    /// pixel buffer as propagating attachments, as Apple's decoders set them.
    private let colour: [String: Any]
    private struct Props {
        /// Weak: the reader holds its outputs, and a strong reference back kept every reader,
        /// its run and its pipeline alive for the life of the process.
        weak var reader: AVAssetReader?
        var copies = true
    }
    private let props = Guarded(Props())

    init(output: AssetReaderTrackOutput?, mediaType: AVMediaType, problem: String?, colour: [String: Any] = [:]) {
        self.output = output
        self.mediaType = mediaType
        self.problem = problem
        self.colour = colour
    }

    /// Whether each sample is a copy the caller may change. Either way GraphKit gives the
    /// decoder's buffer without a copy: its data is read-only to everyone, and writing through
    /// a pixel buffer's lock copies first, so a copy is never needed to be safe.
    public var alwaysCopiesSampleData: Bool {
        get { props.withLock { $0.copies } }
        set { props.withLock { $0.copies = newValue } }
    }

    /// False: outputs read forward once.
    public var supportsRandomAccess: Bool { get { false } set {} }

    /// The reader this output was added to, while the app holds it.
    var reader: AVAssetReader? {
        get { props.withLock { $0.reader } }
        set { props.withLock { $0.reader = newValue } }
    }

    /// The next sample, blocking until it is decoded; nil at the end, before reading starts,
    /// after a failure or `cancelReading()` (then see the reader's `status` and `error`).
    public func copyNextSampleBuffer() -> CMSampleBuffer? {
        guard let output, let reader, !reader.failed, let sample = output.copyNextSampleBuffer() else { return nil }
        // Samples as stored at the times their edit list shows them, before 0 too (the priming
        // packet, a B-frame's decode), as Apple's reader gives them.
        let buffer = CMSampleBuffer(sample: sample, earlierBy: CMTime(output.storedLead))
        if !colour.isEmpty, let image = buffer.imageBuffer { CVBufferSetAttachments(image, colour, .shouldPropagate) }
        return buffer
    }
}

/// Reads one track, decoded as `outputSettings` say (linear PCM for audio:
/// `AVFormatIDKey: kAudioFormatLinearPCM` with 16-bit integer or 32-bit float samples,
/// interleaved, little-endian, optionally `AVSampleRateKey` and `AVNumberOfChannelsKey`; for
/// video `kCVPixelBufferPixelFormatTypeKey`). `outputSettings: nil` gives the samples as stored,
/// compressed, as AVFoundation's does: AAC and H.264 (another codec fails reading, named).
open class AVAssetReaderTrackOutput: AVAssetReaderOutput, @unchecked Sendable {
    // Unchecked: restated from its open base, as Swift requires; it adds only lets (settings as
    // [String: Any], as AVFoundation takes them).
    public let track: AVAssetTrack
    public let outputSettings: [String: Any]?

    public init(track: AVAssetTrack, outputSettings: [String: Any]?) {
        self.track = track
        self.outputSettings = outputSettings
        var made: AssetReaderTrackOutput?
        var problem: String?
        do {
            let settings = try ReaderSettings.read(outputSettings, mediaType: track.mediaType)
            if let composed = track as? AVCompositionTrack {
                do throws(GraphError) {
                    made = try AssetReaderTrackOutput(compositionTrack: composed.compositionTrack.track, outputSettings: settings)
                } catch {
                    problem = error.message
                }
            } else if let file = track.track {
                made = AssetReaderTrackOutput(track: file, outputSettings: settings)
                // Samples as stored at the times the file's edit list shows them, as Apple's are.
                made?.readsIndex = true
            }
        } catch {
            problem = error.message
        }
        let keys = [kCVImageBufferColorPrimariesKey, kCVImageBufferTransferFunctionKey, kCVImageBufferYCbCrMatrixKey]
        let colour = track.mediaType == .video ? (track.storedFormats.first?.extensions ?? [:]).filter { keys.contains($0.key) } : [:]
        super.init(output: made, mediaType: track.mediaType, problem: problem, colour: colour)
    }
}

/// Reads audio tracks mixed together, decoded as `audioSettings` say (as a track output's).
/// GraphKit mixes no tracks yet: one track is read as it is; more are refused by `canAdd`.
open class AVAssetReaderAudioMixOutput: AVAssetReaderOutput, @unchecked Sendable {
    // Unchecked: restated from its open base, as Swift requires; it adds only lets (settings as
    // [String: Any], as AVFoundation takes them).
    public let audioTracks: [AVAssetTrack]
    public let audioSettings: [String: Any]?

    public init(audioTracks: [AVAssetTrack], audioSettings: [String: Any]?) {
        self.audioTracks = audioTracks
        self.audioSettings = audioSettings
        var made: AssetReaderTrackOutput?
        var problem: String?
        do throws(SettingsError) {
            guard let track = audioTracks.first else { throw SettingsError("an audio mix output needs an audio track") }
            if let other = audioTracks.first(where: { $0.mediaType != .audio }) {
                throw SettingsError("an audio mix output mixes audio tracks; track \(other.trackID) is \(other.mediaType.rawValue)")
            }
            let settings = try ReaderSettings.read(audioSettings ?? [AVFormatIDKey: kAudioFormatLinearPCM], mediaType: .audio)
            // One track is read as it is; several are decoded to one format and summed.
            let files = audioTracks.compactMap(\.track)
            guard files.count == audioTracks.count, !(track is AVCompositionTrack) else {
                throw SettingsError("an audio mix output mixes a file's tracks; read a composition track with AVAssetReaderTrackOutput")
            }
            made = audioTracks.count == 1 ? AssetReaderTrackOutput(track: files[0], outputSettings: settings)
                : AssetReaderTrackOutput(mixing: files, outputSettings: settings)
        } catch {
            problem = error.message
        }
        super.init(output: made, mediaType: .audio, problem: problem)
    }

    private let mix = Guarded<AudioMix?>(nil)

    /// The tracks' volumes over time, applied to what is read: set it before reading starts.
    /// Applied to an output of one track; over several, the first read fails the reader, naming
    /// it (the tracks are summed before their samples reach here).
    public var audioMix: AVAudioMix? {
        get { mixSource.withLock { $0 } }
        set {
            mixSource.withLock { $0 = newValue }
            mix.withLock { $0 = newValue?.engineValue }
        }
    }
    private let mixSource = Guarded<AVAudioMix?>(nil)

    public override func copyNextSampleBuffer() -> CMSampleBuffer? {
        guard let mix = mix.withLock({ $0 }), !mix.volumes.isEmpty else { return super.copyNextSampleBuffer() }
        guard audioTracks.count == 1, let reader else {
            reader?.fail(avError(.operationNotAllowed, "an audioMix is applied to an AVAssetReaderAudioMixOutput of one track; this one mixes \(audioTracks.count) (tracks \(audioTracks.map { String($0.trackID) }.joined(separator: ", ")))"))
            return nil
        }
        guard let output, !reader.failed, let sample = output.copyNextSampleBuffer() else { return nil }
        return CMSampleBuffer(sample: mix.apply(to: sample, trackID: Int(audioTracks[0].trackID), at: sample.presentationTime ?? .zero))
    }
}

/// A reader output's settings dictionary, read into GraphKit's.
enum ReaderSettings {
    static let audioKeys: Set<String> = [AVFormatIDKey, AVSampleRateKey, AVNumberOfChannelsKey, AVLinearPCMBitDepthKey, AVLinearPCMIsFloatKey,
                                         AVLinearPCMIsBigEndianKey, AVLinearPCMIsNonInterleaved, AVChannelLayoutKey]

    static func read(_ settings: [String: Any]?, mediaType: AVMediaType) throws(SettingsError) -> ReaderOutputSettings {
        guard let settings else {
            // The samples as stored (AAC, H.264), not decoded.
            guard let type = mediaType.assets else { throw SettingsError("GraphKit reads audio and video tracks only, not \(mediaType.rawValue)") }
            return .stored(type)
        }
        switch mediaType {
        case .audio:
            for key in settings.keys where !audioKeys.contains(key) {
                throw SettingsError("the audio output settings have \(key), which a reader does not take")
            }
            guard settingsInteger(settings[AVFormatIDKey]) == Int(kAudioFormatLinearPCM) else {
                throw SettingsError("a reader decodes to linear PCM: AVFormatIDKey must be kAudioFormatLinearPCM")
            }
            if settingsBool(settings[AVLinearPCMIsBigEndianKey]) == true { throw SettingsError("big-endian PCM is not given: AVLinearPCMIsBigEndianKey must be false") }
            if settingsBool(settings[AVLinearPCMIsNonInterleaved]) == true { throw SettingsError("non-interleaved PCM is not given: AVLinearPCMIsNonInterleaved must be false") }
            let isFloat = settingsBool(settings[AVLinearPCMIsFloatKey]) ?? false
            let depth = settingsInteger(settings[AVLinearPCMBitDepthKey]) ?? (isFloat ? 32 : 16)
            let format: SampleFormat
            switch (isFloat, depth) {
            case (false, 16): format = .s16le
            case (true, 32): format = .f32le
            default: throw SettingsError("\(depth)-bit \(isFloat ? "float" : "integer") PCM is not given: ask for 16-bit integer or 32-bit float")
            }
            return .linearPCM(sampleFormat: format, sampleRate: settingsInteger(settings[AVSampleRateKey]),
                              channels: settingsInteger(settings[AVNumberOfChannelsKey]))
        case .video:
            guard let n = settingsInteger(settings[kCVPixelBufferPixelFormatTypeKey]), let type = OSType(exactly: n),
                  let format = PixelFormat(cvPixelFormat: type) else {
                throw SettingsError("a video output needs kCVPixelBufferPixelFormatTypeKey: kCVPixelFormatType_32BGRA, _32RGBA, _420YpCbCr8Planar, _420YpCbCr8BiPlanarVideoRange or _420YpCbCr10BiPlanarVideoRange")
            }
            return .pixels(format)
        default:
            throw SettingsError("GraphKit reads audio and video tracks only, not \(mediaType.rawValue)")
        }
    }
}
