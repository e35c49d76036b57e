import Assets
import Glibc
import GraphKitCore

/// The presets' names, Apple's strings.
public let AVAssetExportPresetPassthrough = ExportPreset.passthrough.rawValue
public let AVAssetExportPresetHighestQuality = ExportPreset.highestQuality.rawValue
public let AVAssetExportPreset1920x1080 = ExportPreset.hd1920x1080.rawValue
public let AVAssetExportPreset1280x720 = ExportPreset.hd1280x720.rawValue
public let AVAssetExportPreset640x480 = ExportPreset.sd640x480.rawValue
public let AVAssetExportPresetAppleM4A = ExportPreset.appleM4A.rawValue
public let AVAssetExportPresetMediumQuality = ExportPreset.mediumQuality.rawValue
public let AVAssetExportPresetLowQuality = ExportPreset.lowQuality.rawValue
public let AVAssetExportPreset3840x2160 = ExportPreset.uhd3840x2160.rawValue
public let AVAssetExportPreset960x540 = ExportPreset.qhd960x540.rawValue
public let AVAssetExportPresetHEVCHighestQuality = ExportPreset.hevcHighestQuality.rawValue
public let AVAssetExportPresetHEVC1920x1080 = ExportPreset.hevc1920x1080.rawValue
public let AVAssetExportPresetHEVC3840x2160 = ExportPreset.hevc3840x2160.rawValue

/// Exports an asset with a preset, as AVFoundation's: over GraphKit's `AssetExportSession` (a
/// graph run from the range's start to its end; passthrough copies the samples as stored).
///
/// Errors are `NSError`s in `AVFoundationErrorDomain`: an output that exists already is
/// `AVError.fileAlreadyExists` (-11823), as Apple's; the others carry GraphKit's message and
/// its `GraphError` as `NSUnderlyingErrorKey`. A cancelled export has status `.cancelled`.
open class AVAssetExportSession: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (app code may subclass it), and the compiler checks only
    // final classes; what changes is in a Mutex, the session is let.

    /// Apple's `AVAssetExportSession.Status`, its raw values.
    public enum Status: Int, Sendable {
        case unknown = 0, waiting = 1, exporting = 2, completed = 3, failed = 4, cancelled = 5
    }

    /// What ``states(updateInterval:)`` gives.
    public enum State: Sendable {
        case pending
        case waiting
        case exporting(progress: Progress)
    }

    public let asset: AVAsset
    public let presetName: String
    private let session: AssetExportSession
    private struct Settings {
        var outputURL: URL?
        var outputFileType: AVFileType?
        var metadata: [AVMetadataItem]?
        var metadataItemFilter: AVMetadataItemFilter?
        var failure: NSError?
        var videoComposition: AVVideoComposition?
        var audioMix: AVAudioMix?
    }
    private let settings: Guarded<Settings>

    /// A session exporting `asset` with the preset named `presetName`
    /// (``AVAssetExportPresetPassthrough``…); nil when the name is not a preset, the asset
    /// cannot be read, or the preset cannot export it (``exportPresets(compatibleWith:)``).
    /// An `AVComposition` exports with any preset: passthrough joins its pieces as stored (nil
    /// when they differ in codec or parameters), the others decode every piece and encode once.
    public init?(asset: AVAsset, presetName: String) {
        guard let preset = ExportPreset(rawValue: presetName) else { return nil }
        let made: AssetExportSession?
        if let composition = asset as? AVComposition {
            made = try? AssetExportSession(asset: composition.composition, preset: preset)
        } else {
            made = (try? asset.loaded()).flatMap { try? AssetExportSession(asset: $0, preset: preset) }
        }
        guard let session = made else { return nil }
        self.asset = asset
        self.presetName = presetName
        self.session = session
        settings = Guarded(Settings(outputFileType: session.outputFileType.map(AVFileType.init)))
    }

    /// Every preset's name.
    open class func allExportPresets() -> [String] { ExportPreset.allCases.map(\.rawValue) }

    /// The names of the presets that can export `asset`.
    open class func exportPresets(compatibleWith asset: AVAsset) -> [String] {
        if let composition = asset as? AVComposition { return ExportPreset.presets(compatibleWith: composition.composition).map(\.rawValue) }
        guard let loaded = try? asset.loaded() else { return [] }
        return ExportPreset.presets(compatibleWith: loaded).map(\.rawValue)
    }

    /// Whether the preset can export `asset` as `outputFileType` (nil: as any type).
    open class func determineCompatibility(ofExportPreset presetName: String, with asset: AVAsset, outputFileType: AVFileType?,
                                           completionHandler handler: @escaping @Sendable (Bool) -> Void) {
        guard let preset = ExportPreset(rawValue: presetName) else { return handler(false) }
        if let composition = (asset as? AVComposition)?.composition {
            guard ExportPreset.presets(compatibleWith: composition).contains(preset) else { return handler(false) }
            return handler(outputFileType.map { type in preset.supportedFileTypes(for: composition).contains { AVFileType($0) == type } } ?? true)
        }
        guard let loaded = try? asset.loaded(), ExportPreset.presets(compatibleWith: loaded).contains(preset) else { return handler(false) }
        handler(outputFileType.map { type in preset.supportedFileTypes(for: loaded).contains { AVFileType($0) == type } } ?? true)
    }

    // MARK: Settings

    public var outputURL: URL? {
        get { settings.withLock { $0.outputURL } }
        set { settings.withLock { $0.outputURL = newValue } }
    }

    public var outputFileType: AVFileType? {
        get { settings.withLock { $0.outputFileType } }
        set { settings.withLock { $0.outputFileType = newValue } }
    }

    public var supportedFileTypes: [AVFileType] { session.supportedFileTypes.map(AVFileType.init) }

    /// The part exported; by default all of it (the asset's whole range). A range whose duration
    /// is `.positiveInfinity` (Apple's default) runs to the asset's end.
    public var timeRange: CMTimeRange {
        get { CMTimeRange(session.timeRange) }
        set {
            if newValue.duration.isPositiveInfinity, let start = newValue.start.mediaTime {
                let end = session.composition?.duration ?? session.asset.duration
                session.timeRange = MediaTimeRange(start: start, duration: end > start ? end - start : .zero)
            } else if let range = newValue.mediaTimeRange {
                session.timeRange = range
            }
        }
    }

    /// The file's tags (mapped as `AVAssetWriter.metadata` maps them: text tags, the location,
    /// the artwork); nil (the default) writes the asset's own. The asset's chapters are written
    /// either way (they are not metadata items but its chapter groups), those in `timeRange`.
    public var metadata: [AVMetadataItem]? {
        get { settings.withLock { $0.metadata } }
        set {
            settings.withLock { $0.metadata = newValue }
            writeTags()
        }
    }

    /// Which of the tags are written: ``AVMetadataItemFilter/forSharing()`` leaves out where the
    /// recording was made and the device that made it. Applies to ``metadata`` and to the asset's
    /// own tags alike; nil (the default) writes them all.
    public var metadataItemFilter: AVMetadataItemFilter? {
        get { settings.withLock { $0.metadataItemFilter } }
        set {
            settings.withLock { $0.metadataItemFilter = newValue }
            writeTags()
        }
    }

    /// The tags the export writes, from ``metadata`` (else the asset's) through the filter.
    private func writeTags() {
        let (items, filter) = settings.withLock { ($0.metadata, $0.metadataItemFilter) }
        guard items != nil || filter != nil else { return session.resetMetadata() }
        var tags = items.map(AVAssetWriter.tags) ?? session.asset.metadata
        tags.chapters = session.asset.metadata.chapters
        if let filter { tags = filter.apply(to: tags) }
        session.metadata = tags
    }

    /// How the video is drawn: frames of its render size at its frame rate, each cropped, moved
    /// and faded as its instructions say (the preset's box fits the render size). Nil (the
    /// default) exports the video as it is. Taken when the export starts; a passthrough refuses
    /// it, as nothing is drawn without re-encoding.
    public var videoComposition: AVVideoComposition? {
        get { settings.withLock { $0.videoComposition } }
        set { settings.withLock { $0.videoComposition = newValue } }
    }

    /// The sound tracks' volumes over time. Taken when the export starts; a passthrough refuses it.
    public var audioMix: AVAudioMix? {
        get { settings.withLock { $0.audioMix } }
        set { settings.withLock { $0.audioMix = newValue } }
    }

    public var shouldOptimizeForNetworkUse: Bool {
        get { session.shouldOptimizeForNetworkUse }
        set { session.shouldOptimizeForNetworkUse = newValue }
    }

    /// The most bytes the file may have (0, the default: no limit).
    public var fileLengthLimit: Int64 {
        get { session.fileLengthLimit ?? 0 }
        set { session.fileLengthLimit = newValue > 0 ? newValue : nil }
    }

    // MARK: Where it is

    public var status: Status {
        if settings.withLock({ $0.failure }) != nil, session.status != .cancelled { return .failed }
        return Status(rawValue: session.status.rawValue) ?? .unknown
    }

    public var error: (any Error)? {
        settings.withLock { $0.failure }
    }

    public var progress: Float { Float(session.progress) }

    /// The session's state every `updateInterval` seconds (when it changed), until the export ends.
    public func states(updateInterval: TimeInterval = 0.1) -> some AsyncSequence<State, Never> {
        session.states(updateInterval: .milliseconds(max(1, Int(updateInterval * 1000)))).map { state -> State in
            switch state {
            case .pending: return .pending
            case .waiting: return .waiting
            case .exporting(let fraction):
                let progress = Progress(totalUnitCount: 1000)
                progress.completedUnitCount = Int64(fraction * 1000)
                return .exporting(progress: progress)
            }
        }
    }

    // MARK: Exporting

    /// Exports, then calls `handler` (on another thread); check `status` and `error` in it.
    open func exportAsynchronously(completionHandler handler: @escaping @Sendable () -> Void) {
        Task {
            try? await self.run()
            handler()
        }
    }

    /// Exports to `url` as `fileType`; throws the export's error (in `AVFoundationErrorDomain`),
    /// `CancellationError` when cancelled.
    public func export(to url: URL, as fileType: AVFileType) async throws {
        settings.withLock { s in
            s.outputURL = url
            s.outputFileType = fileType
        }
        try await run()
        if session.status == .cancelled { throw CancellationError() }
    }

    /// Abandons the export: nothing is left at `outputURL`.
    open func cancelExport() { session.cancelExport() }

    /// Exports to `outputURL` as `outputFileType` (both set first), as Apple's `export()` of
    /// macOS 13 and iOS 16: returns when the export ends, however it ends; `status` and `error`
    /// say how (a cancelled export ends `.cancelled`).
    public func export() async {
        try? await run()
    }

    /// Whether the preset can export `asset` as `outputFileType` (nil: as any type), as Apple's
    /// asynchronous `compatibility(ofExportPreset:with:outputFileType:)`.
    open class func compatibility(ofExportPreset presetName: String, with asset: AVAsset, outputFileType: AVFileType?) async -> Bool {
        await withCheckedContinuation { continuation in
            determineCompatibility(ofExportPreset: presetName, with: asset, outputFileType: outputFileType) { continuation.resume(returning: $0) }
        }
    }

    /// Runs the export; its failure is kept as `error` and thrown.
    private func run() async throws {
        do {
            let (url, type) = settings.withLock { ($0.outputURL, $0.outputFileType) }
            guard let url else { throw avError(.operationNotAllowed, "no outputURL: set it before exporting") }
            guard url.isFileURL else { throw avError(.operationNotAllowed, "\(url) is not a file URL: GraphKit writes local files") }
            guard let type, let fileType = type.assets else {
                throw avError(.operationNotAllowed, "\(type?.rawValue ?? "no file type") is not a file type GraphKit writes: set outputFileType to one of supportedFileTypes")
            }
            var info = stat()
            if lstat(url.path, &info) == 0 {
                throw avError(.fileAlreadyExists, "\"\(url.path)\" exists already: an export does not replace a file; remove it or choose another URL")
            }
            if let problem = outputFolderProblem(url) { throw problem }
            let (drawing, mix) = settings.withLock { ($0.videoComposition, $0.audioMix) }
            session.videoComposition = try drawing?.engineValue()
            session.audioMix = mix?.engineValue
            session.outputPath = url.path
            session.outputFileType = fileType
            try await session.export()
        } catch let error as GraphError where error.code == .cancelled {
            return
        } catch {
            let e = avError(error)
            settings.withLock { $0.failure = e }
            throw e
        }
    }
}

extension AVFileType {
    init(_ type: FileType) {
        self = switch type {
        case .mp4: .mp4
        case .mov: .mov
        case .m4a: .m4a
        }
    }
}
