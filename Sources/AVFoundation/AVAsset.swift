@_spi(Engine) import Assets
@_spi(Engine) import GraphKitCore
import GraphKitRuntime
import MediaContainers

// MARK: Asynchronous properties

/// A property of an asset or track that `load(_:)` reads, as AVFoundation's.
public class AVPartialAsyncProperty<Root>: @unchecked Sendable {
    // Unchecked: not final (AVAsyncProperty extends it, as AVFoundation's does), and the compiler
    // checks only final classes; it holds one let String.
    let name: String
    init(_ name: String) { self.name = name }
}

/// A property of type `Value`, as AVFoundation's: `try await asset.load(.duration)`.
public final class AVAsyncProperty<Root, Value>: AVPartialAsyncProperty<Root>, @unchecked Sendable {
    // Unchecked: restated from its base, as Swift requires; its reader is a let closure made by the
    // static property that names it, capturing nothing, which the compiler cannot see.
    let read: (Root) throws -> Value
    init(_ name: String, _ read: @escaping (Root) throws -> Value) {
        self.read = read
        super.init(name)
    }
}

/// What `load(_:)` is declared on, as in AVFoundation.
public protocol AVAsynchronousKeyValueLoading {}

extension AVAsynchronousKeyValueLoading {
    /// Reads a property; throws when the file cannot be read (an error in AVFoundationErrorDomain).
    public func load<T>(_ property: AVAsyncProperty<Self, T>) async throws -> T { try property.read(self) }

    public func load<A, B>(_ a: AVAsyncProperty<Self, A>, _ b: AVAsyncProperty<Self, B>) async throws -> (A, B) {
        (try a.read(self), try b.read(self))
    }

    public func load<A, B, C>(_ a: AVAsyncProperty<Self, A>, _ b: AVAsyncProperty<Self, B>, _ c: AVAsyncProperty<Self, C>) async throws -> (A, B, C) {
        (try a.read(self), try b.read(self), try c.read(self))
    }

    public func load<A, B, C, D>(_ a: AVAsyncProperty<Self, A>, _ b: AVAsyncProperty<Self, B>, _ c: AVAsyncProperty<Self, C>,
                                 _ d: AVAsyncProperty<Self, D>) async throws -> (A, B, C, D) {
        (try a.read(self), try b.read(self), try c.read(self), try d.read(self))
    }
}

/// How far a property has loaded, for `status(of:)`: `AVAsyncProperty<Root, Value>.Status`, as
/// Apple names it.
public enum AVAsyncPropertyStatus<Value> {
    case notYetLoaded, loading, loaded(Value), failed(any Error)
}

extension AVAsyncProperty {
    public typealias Status = AVAsyncPropertyStatus<Value>
}

/// How far a value has loaded, the old way (`statusOfValue(forKey:error:)`).
public enum AVKeyValueStatus: Int, Sendable {
    case unknown = 0, loading, loaded, failed, cancelled
}

/// What knows whether its file has been read yet (an asset reads it on the first `load`).
protocol AVLoadedState {
    var hasLoaded: Bool { get }
}

extension AVAsynchronousKeyValueLoading {
    /// How far `property` has loaded, without waiting: `.notYetLoaded` until a `load` has read
    /// the file, then `.loaded` with the value or `.failed` with the error `load` threw. (GraphKit
    /// loads synchronously inside `load`, so `.loading` is never seen.)
    public func status<T>(of property: AVAsyncProperty<Self, T>) -> AVAsyncProperty<Self, T>.Status {
        if let state = self as? any AVLoadedState, !state.hasLoaded { return .notYetLoaded }
        do { return .loaded(try property.read(self)) } catch { return .failed(error) }
    }
}

extension AVPartialAsyncProperty where Root: AVAsset {
    public static var duration: AVAsyncProperty<Root, CMTime> { AVAsyncProperty("duration") { try $0.loadedDuration() } }
    public static var tracks: AVAsyncProperty<Root, [AVAssetTrack]> { AVAsyncProperty("tracks") { try $0.loadedTracks() } }
    public static var isPlayable: AVAsyncProperty<Root, Bool> { AVAsyncProperty("isPlayable") { try !$0.loadedTracks().isEmpty } }
    public static var isReadable: AVAsyncProperty<Root, Bool> { AVAsyncProperty("isReadable") { try !$0.loadedTracks().isEmpty } }
    /// False: GraphKit has no export session yet.
    public static var isExportable: AVAsyncProperty<Root, Bool> { AVAsyncProperty("isExportable") { _ in false } }
    public static var providesPreciseDurationAndTiming: AVAsyncProperty<Root, Bool> { AVAsyncProperty("providesPreciseDurationAndTiming") { _ in true } }
    public static var preferredRate: AVAsyncProperty<Root, Float> { AVAsyncProperty("preferredRate") { _ in 1 } }
    public static var preferredVolume: AVAsyncProperty<Root, Float> { AVAsyncProperty("preferredVolume") { _ in 1 } }
    public static var preferredTransform: AVAsyncProperty<Root, CGAffineTransform> { AVAsyncProperty("preferredTransform") { _ in .identity } }
    /// The file's tags under the common keys (title, artist, albumName, type, description,
    /// creationDate, software, location, artwork).
    public static var commonMetadata: AVAsyncProperty<Root, [AVMetadataItem]> { AVAsyncProperty("commonMetadata") { try $0.metadataItems().common } }
    /// When the asset was made: its common creation date (QuickTime's `creationdate`, iTunes'
    /// `©day`, ID3's year), else the movie header's creation time, as a date item; nil when the
    /// file says neither.
    public static var creationDate: AVAsyncProperty<Root, AVMetadataItem?> {
        AVAsyncProperty("creationDate") { asset in
            if let tagged = try asset.metadataItems().common.first(where: { $0.commonKey == .commonKeyCreationDate }) { return tagged }
            guard let seconds = try asset.loaded().metadata.creationTime else { return nil }
            // MP4's epoch is 1904-01-01; Date's reference is 2001-01-01, 3,061,152,000 s later.
            return AVMetadataItem.date(Date(timeIntervalSinceReferenceDate: Double(seconds) - 3_061_152_000))
        }
    }
    /// Every tag of the file, each in its format's key space (iTunes, QuickTime, ID3, Vorbis comments).
    public static var metadata: AVAsyncProperty<Root, [AVMetadataItem]> { AVAsyncProperty("metadata") { try $0.metadataItems().all } }
    public static var availableMetadataFormats: AVAsyncProperty<Root, [AVMetadataFormat]> {
        AVAsyncProperty("availableMetadataFormats") { asset in
            var formats: [AVMetadataFormat] = []
            for item in try asset.metadataItems().all {
                if let space = item.keySpace, !formats.contains(AVMetadataFormat(space)) { formats.append(AVMetadataFormat(space)) }
            }
            return formats
        }
    }
}

// MARK: AVAsset, AVURLAsset

/// A media file, as AVFoundation's: over GraphKit's `Asset`, read (without decoding) when a
/// property is first loaded. Load properties with `try await asset.load(.duration, .tracks)`;
/// the synchronous properties AVFoundation deprecated are here too, and read the file the same
/// way (an unreadable file gives a zero duration and no tracks, as AVFoundation's do).
open class AVAsset: AVAsynchronousKeyValueLoading, AVLoadedState, @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (app code may subclass it), and the compiler checks only
    // final classes; its URL is let, what it loaded in a Mutex.
    package let fileURL: URL
    private let state = Guarded<(asset: Result<Asset, NSError>, tracks: [AVAssetTrack])?>(nil)

    /// An asset for a local file URL (`AVURLAsset` is the same with options).
    public convenience init(url URL: URL) { self.init(fileURL: URL) }

    package init(fileURL: URL) { self.fileURL = fileURL }

    /// GraphKit's asset, read once.
    package func loaded() throws -> Asset {
        try loadState().asset.get()
    }

    /// The file's tags as items: common, and all.
    func metadataItems() throws -> (common: [AVMetadataItem], all: [AVMetadataItem]) {
        AVMetadataItem.items(of: try loaded())
    }

    /// The items of one metadata format (`availableMetadataFormats` lists the file's).
    public func loadMetadata(for format: AVMetadataFormat) async throws -> [AVMetadataItem] {
        try metadataItems().all.filter { $0.keySpace.map(AVMetadataFormat.init) == format }
    }

    @available(*, deprecated, message: "Use load(.commonMetadata) instead")
    public var commonMetadata: [AVMetadataItem] { (try? metadataItems().common) ?? [] }
    @available(*, deprecated, message: "Use load(.metadata) instead")
    public var metadata: [AVMetadataItem] { (try? metadataItems().all) ?? [] }
    @available(*, deprecated, message: "Use loadMetadata(for:) instead")
    public func metadata(forFormat format: AVMetadataFormat) -> [AVMetadataItem] {
        ((try? metadataItems().all) ?? []).filter { $0.keySpace.map(AVMetadataFormat.init) == format }
    }

    var hasLoaded: Bool { state.withLock { $0 != nil } }

    /// The duration (a composition's is its tracks').
    func loadedDuration() throws -> CMTime { CMTime(try loaded().duration) }

    func loadedTracks() throws -> [AVAssetTrack] {
        let s = loadState()
        _ = try s.asset.get()
        return s.tracks
    }

    private func loadState() -> (asset: Result<Asset, NSError>, tracks: [AVAssetTrack]) {
        state.withLock { s in
            if let s { return s }
            let result: Result<Asset, NSError>
            if !fileURL.isFileURL {
                result = .failure(avError(.fileFormatNotRecognized, "\(fileURL) is not a file URL; GraphKit reads local files"))
            } else {
                do { result = .success(try Asset(path: fileURL.path)) } catch { result = .failure(avError(error)) }
            }
            let tracks = (try? result.get())?.tracks.map { AVAssetTrack(track: $0, asset: self) } ?? []
            s = (result, tracks)
            return s!
        }
    }

    /// The tracks of `mediaType`, in the file's order.
    public func loadTracks(withMediaType mediaType: AVMediaType) async throws -> [AVAssetTrack] {
        try loadedTracks().filter { $0.mediaType == mediaType }
    }

    /// ``loadTracks(withMediaType:)`` with a completion handler: the tracks, or nil and the
    /// error (an `NSError` in `AVFoundationErrorDomain`), on a queue of its own.
    public func loadTracks(withMediaType mediaType: AVMediaType, completionHandler: @escaping @Sendable ([AVAssetTrack]?, (any Error)?) -> Void) {
        DispatchQueue.global().async { [self] in
            do { completionHandler(try loadedTracks().filter { $0.mediaType == mediaType }, nil) } catch { completionHandler(nil, error) }
        }
    }

    public func loadTrack(withTrackID trackID: CMPersistentTrackID) async throws -> AVAssetTrack? {
        try loadedTracks().first { $0.trackID == trackID }
    }

    /// The keys `loadValuesAsynchronously(forKeys:)` and `statusOfValue(forKey:error:)` know: the
    /// asset's properties by their Objective-C names.
    static let loadableKeys: Set<String> = [
        "duration", "tracks", "playable", "readable", "exportable", "composable", "metadata", "commonMetadata",
        "availableMetadataFormats", "preferredTransform", "preferredRate", "preferredVolume", "naturalSize",
        "providesPreciseDurationAndTiming", "hasProtectedContent", "creationDate", "availableChapterLocales", "trackGroups",
    ]

    /// How far `key` has loaded, the old way (`load(_:)` and `status(of:)` are the new):
    /// `.unknown` until `loadValuesAsynchronously(forKeys:)` or a `load` has read the file, then
    /// `.loaded`, or `.failed` with the reason in `outError` (a file that cannot be read, or a
    /// key that is not one of the asset's).
    public func statusOfValue(forKey key: String, error outError: NSErrorPointer) -> AVKeyValueStatus {
        guard Self.loadableKeys.contains(key) else {
            outError?.pointee = avError(.operationNotAllowed, "\"\(key)\" is not a key an asset loads (duration, tracks, metadata…)")
            return .failed
        }
        guard hasLoaded else { return .unknown }
        do {
            _ = try loaded()
            return .loaded
        } catch {
            outError?.pointee = avError(error)
            return .failed
        }
    }

    /// Cancels loading, as Apple's: GraphKit loads a value within the call that asks for it, so
    /// nothing is ever in flight, and this does nothing.
    public func cancelLoading() {}

    /// The asset itself, as `NSCopying` gives an immutable object (a composition gives a copy of
    /// what it holds: ``AVComposition/copy()``).
    open func copy() -> Any { self }

    /// Calls `handler` once the keys are loaded (the old way; use `load(_:)`).
    public func loadValuesAsynchronously(forKeys keys: [String], completionHandler handler: (@Sendable () -> Void)? = nil) {
        _ = loadState()
        if let handler { DispatchQueue.global().async(execute: handler) }
    }

    // The synchronous properties AVFoundation deprecated.

    @available(*, deprecated, message: "Use load(.duration) instead")
    public var duration: CMTime { (try? loadedDuration()) ?? .zero }

    @available(*, deprecated, message: "Use load(.tracks) instead")
    public var tracks: [AVAssetTrack] { (try? loadedTracks()) ?? [] }

    // Disfavoured: AVMutableComposition's own, which gives AVMutableCompositionTracks as Apple's
    // does, is chosen on a composition (Swift overrides no array covariantly).
    @available(*, deprecated, message: "Use loadTracks(withMediaType:) instead")
    @_disfavoredOverload
    public func tracks(withMediaType mediaType: AVMediaType) -> [AVAssetTrack] {
        ((try? loadedTracks()) ?? []).filter { $0.mediaType == mediaType }
    }

    /// The tracks whose media has `mediaCharacteristic` (``AVAssetTrack/hasMediaCharacteristic(_:)``).
    @available(*, deprecated, message: "Use loadTracks(withMediaCharacteristic:) instead")
    public func tracks(withMediaCharacteristic mediaCharacteristic: AVMediaCharacteristic) -> [AVAssetTrack] {
        ((try? loadedTracks()) ?? []).filter { $0.hasMediaCharacteristic(mediaCharacteristic) }
    }

    public func loadTracks(withMediaCharacteristic mediaCharacteristic: AVMediaCharacteristic) async throws -> [AVAssetTrack] {
        try loadedTracks().filter { $0.hasMediaCharacteristic(mediaCharacteristic) }
    }

    @available(*, deprecated, message: "Use load(.isPlayable) instead")
    public var isPlayable: Bool { !((try? loadedTracks()) ?? []).isEmpty }

    @available(*, deprecated, message: "Use load(.isReadable) instead")
    public var isReadable: Bool { !((try? loadedTracks()) ?? []).isEmpty }
}

/// A local media file, as AVFoundation's `AVURLAsset`; `options` are accepted and not used
/// (timing is always precise here).
open class AVURLAsset: AVAsset, @unchecked Sendable {
    // Unchecked: restated from its open base, as Swift requires; it adds one let URL.
    public let url: URL

    public init(url URL: URL, options: [String: Any]? = nil) {
        url = URL
        super.init(fileURL: URL)
    }
}

extension CGAffineTransform {
    /// A track's display matrix as CoreGraphics holds it.
    init(_ m: DisplayMatrix) { self.init(a: m.a, b: m.b, c: m.c, d: m.d, tx: m.tx, ty: m.ty) }
}

extension DisplayMatrix {
    init(_ t: CGAffineTransform) { self.init(a: Double(t.a), b: Double(t.b), c: Double(t.c), d: Double(t.d), tx: Double(t.tx), ty: Double(t.ty)) }
}

public let AVURLAssetPreferPreciseDurationAndTimingKey = "AVURLAssetPreferPreciseDurationAndTimingKey"

// MARK: AVAssetTrack

public typealias CMPersistentTrackID = Int32
public let kCMPersistentTrackID_Invalid: CMPersistentTrackID = 0

/// One track of an asset, as AVFoundation's: over GraphKit's `AssetTrack`.
open class AVAssetTrack: AVAsynchronousKeyValueLoading, @unchecked Sendable {
    // Unchecked: open, as AVFoundation's (app code may subclass it), and the compiler checks only
    // final classes; its fields are let but for a weak
    // reference to its asset, set when made.
    /// The file's track; for an `AVCompositionTrack`, its first piece's track (nil while it
    /// has none).
    package var track: AssetTrack? { fileTrack }
    private let fileTrack: AssetTrack?
    public private(set) weak var asset: AVAsset?
    public let trackID: CMPersistentTrackID
    public let mediaType: AVMediaType

    init(track: AssetTrack, asset: AVAsset) {
        fileTrack = track
        self.asset = asset
        trackID = CMPersistentTrackID(track.trackID)
        mediaType = AVMediaType(track.mediaType)
    }

    /// A composition's track (`AVCompositionTrack`): no file's track of its own.
    init(compositionTrackID: Int, mediaType: MediaType, asset: AVAsset) {
        fileTrack = nil
        self.asset = asset
        trackID = CMPersistentTrackID(compositionTrackID)
        self.mediaType = AVMediaType(mediaType)
    }

    /// The format as stored: AAC or H.264 with its rate, channels or size; PCM as it decodes
    /// for a file of PCM; empty when the file says too little.
    var storedFormats: [CMFormatDescription] {
        guard let track else { return [] }
        let s = track.stream
        let caps = s.storedFormat
        let format: MediaFormat?
        if caps.hasPrefix("audio/mpeg") {
            format = .aac(sampleRate: s.sampleRate, channels: s.channels)
        } else if caps.hasPrefix("video/x-h264") {
            format = .h264(width: s.width, height: s.height)
        } else if let coding = VideoCoding.allCases.first(where: { caps.hasPrefix($0.capsName) }) {
            format = .video(coding, width: s.width, height: s.height)
        } else if let coding = AudioCoding.allCases.first(where: { caps.hasPrefix($0.capsName) }) {
            format = .audio(coding, sampleRate: s.sampleRate, channels: s.channels)
        } else {
            format = track.format
        }
        let extensions = s.color?.formatDescriptionExtensions ?? [:]
        return format.map { [CMFormatDescription(format: $0, capsDetail: caps, extensions: extensions)] } ?? []
    }

    var size: CGSize { CGSize(width: track?.stream.width ?? 0, height: track?.stream.height ?? 0) }
    var transform: CGAffineTransform { CGAffineTransform(track?.preferredTransform ?? .identity) }
    var dataRate: Float { Float(track?.estimatedDataRate ?? 0) }
    var frameRate: Float { Float(track?.stream.frameRate?.framesPerSecond ?? 0) }
    var range: CMTimeRange { track.map { CMTimeRange($0.timeRange) } ?? CMTimeRange(start: .zero, duration: .zero) }
    /// The index's clock when there is one; else the sample rate for audio, 600 for video.
    var timeScale: CMTimeScale { CMTimeScale(clamping: track?.naturalTimeScale ?? track?.stream.sampleRate ?? 600) }
    var sampleDataLength: Int64 { track?.totalSampleDataLength ?? 0 }
    var shortestFrame: CMTime { track?.minFrameDuration.map { CMTime($0) } ?? .invalid }
    var characteristics: Set<AVMediaCharacteristic> {
        guard mediaType == .video else { return [.audible] }
        return track?.stream.color?.hdr != nil ? [.visual, .frameBased, .containsHDRVideo] : [.visual, .frameBased]
    }

    /// Whether the track's media is for `mediaCharacteristic`: audio is audible, video visual
    /// and frame-based, and HDR video (a PQ or HLG transfer function stated by the file)
    /// `containsHDRVideo`.
    public func hasMediaCharacteristic(_ mediaCharacteristic: AVMediaCharacteristic) -> Bool {
        characteristics.contains(mediaCharacteristic)
    }

    // The synchronous properties AVFoundation deprecated.

    @available(*, deprecated, message: "Use load(.formatDescriptions) instead")
    public var formatDescriptions: [Any] { storedFormats }
    @available(*, deprecated, message: "Use load(.naturalSize) instead")
    public var naturalSize: CGSize { size }
    @available(*, deprecated, message: "Use load(.nominalFrameRate) instead")
    public var nominalFrameRate: Float { frameRate }
    @available(*, deprecated, message: "Use load(.preferredTransform) instead")
    public var preferredTransform: CGAffineTransform { transform }
    @available(*, deprecated, message: "Use load(.estimatedDataRate) instead")
    public var estimatedDataRate: Float { dataRate }
    @available(*, deprecated, message: "Use load(.timeRange) instead")
    public var timeRange: CMTimeRange { range }
    @available(*, deprecated, message: "Use load(.isPlayable) instead")
    public var isPlayable: Bool { true }
    @available(*, deprecated, message: "Use load(.isEnabled) instead")
    public var isEnabled: Bool { true }
    @available(*, deprecated, message: "Use load(.naturalTimeScale) instead")
    public var naturalTimeScale: CMTimeScale { timeScale }
    @available(*, deprecated, message: "Use load(.totalSampleDataLength) instead")
    public var totalSampleDataLength: Int64 { sampleDataLength }
    @available(*, deprecated, message: "Use load(.minFrameDuration) instead")
    public var minFrameDuration: CMTime { shortestFrame }
    @available(*, deprecated, message: "Use load(.languageCode) instead")
    public var languageCode: String? { track?.languageCode }
    @available(*, deprecated, message: "Use load(.isSelfContained) instead")
    public var isSelfContained: Bool { true }
}

extension AVPartialAsyncProperty where Root: AVAssetTrack {
    public static var mediaType: AVAsyncProperty<Root, AVMediaType> { AVAsyncProperty("mediaType") { $0.mediaType } }
    public static var formatDescriptions: AVAsyncProperty<Root, [CMFormatDescription]> { AVAsyncProperty("formatDescriptions") { $0.storedFormats } }
    public static var naturalSize: AVAsyncProperty<Root, CGSize> { AVAsyncProperty("naturalSize") { $0.size } }
    public static var nominalFrameRate: AVAsyncProperty<Root, Float> { AVAsyncProperty("nominalFrameRate") { $0.frameRate } }
    /// An MP4 or MOV video track's display matrix; the identity for sound and other files.
    public static var preferredTransform: AVAsyncProperty<Root, CGAffineTransform> { AVAsyncProperty("preferredTransform") { $0.transform } }
    /// Bits a second, all samples over their duration, from an MP4 or MOV file's index; 0 for
    /// other files (their index is not read).
    public static var estimatedDataRate: AVAsyncProperty<Root, Float> { AVAsyncProperty("estimatedDataRate") { $0.dataRate } }
    public static var timeRange: AVAsyncProperty<Root, CMTimeRange> { AVAsyncProperty("timeRange") { $0.range } }
    public static var isPlayable: AVAsyncProperty<Root, Bool> { AVAsyncProperty("isPlayable") { _ in true } }
    public static var isEnabled: AVAsyncProperty<Root, Bool> { AVAsyncProperty("isEnabled") { _ in true } }
    /// The track's clock as an MP4 or MOV file's index states it; for other files, the sample
    /// rate for audio and 600 for video (what AVFoundation's writers commonly use).
    public static var naturalTimeScale: AVAsyncProperty<Root, CMTimeScale> { AVAsyncProperty("naturalTimeScale") { $0.timeScale } }
    /// The bytes of all its samples as stored, from an MP4 or MOV file's index; 0 for other files.
    public static var totalSampleDataLength: AVAsyncProperty<Root, Int64> {
        AVAsyncProperty("totalSampleDataLength") { $0.sampleDataLength }
    }
    /// The shortest sample duration, from an MP4 or MOV file's index; invalid for other files.
    public static var minFrameDuration: AVAsyncProperty<Root, CMTime> { AVAsyncProperty("minFrameDuration") { $0.shortestFrame } }
    /// ISO 639-2/T, from an MP4 or MOV file's index; nil when undetermined and for other files.
    public static var languageCode: AVAsyncProperty<Root, String?> { AVAsyncProperty("languageCode") { $0.track?.languageCode } }
    public static var isSelfContained: AVAsyncProperty<Root, Bool> { AVAsyncProperty("isSelfContained") { _ in true } }
    public static var mediaCharacteristics: AVAsyncProperty<Root, [AVMediaCharacteristic]> {
        AVAsyncProperty("mediaCharacteristics") { $0.characteristics.sorted { $0.rawValue < $1.rawValue } }
    }
}
