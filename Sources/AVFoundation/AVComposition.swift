@_spi(Engine) import Assets
import Foundation
@_spi(Engine) import GraphKitCore
import MediaContainers

/// Ranges of several assets' tracks in sequence, as AVFoundation's `AVComposition`: over
/// GraphKit's `MutableComposition`. An `AVAsset`, so `AVAssetReader(asset:)` reads it (each
/// track's pieces decoded one after another as one stream; a gap gives no sample, as
/// AVFoundation's reader gives none). It is no one file: its metadata is empty. A composition
/// track read with nil output settings gives its pieces' samples as stored, joined without
/// re-encoding (video from the keyframe at or before each range's start, AAC by whole packets),
/// when every piece has the same codec and parameters; otherwise the output is refused
/// (`canAdd` is false, `add` fails the reader naming the piece and what differs).
open class AVComposition: AVAsset, @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; its composition is a Sendable class, its track objects
    // in a Mutex.
    package let source: MutableComposition
    private let made = Guarded<[AVMutableCompositionTrack]>([])

    init(source: MutableComposition) {
        self.source = source
        super.init(fileURL: URL(fileURLWithPath: "/"))
    }

    /// What the composition holds now, as GraphKit's value.
    package var composition: Composition { source.composition }

    /// The same object for the same GraphKit track, made once.
    func trackObject(_ track: MutableCompositionTrack) -> AVMutableCompositionTrack {
        made.withLock { objects in
            if let known = objects.first(where: { $0.compositionTrack === track }) { return known }
            let object = AVMutableCompositionTrack(track, composition: self)
            objects.append(object)
            return object
        }
    }

    /// The composition's tracks, as `AVCompositionTrack`s.
    public var compositionTracks: [AVCompositionTrack] { source.tracks.map(trackObject) }

    public func track(withTrackID trackID: CMPersistentTrackID) -> AVCompositionTrack? {
        compositionTracks.first { $0.trackID == trackID }
    }

    override package func loaded() throws -> Asset {
        throw avError(.operationNotAllowed, "a composition is not one file; read it with AVAssetReader(asset:), or its tracks' segments")
    }

    override func loadedTracks() throws -> [AVAssetTrack] { compositionTracks }
    /// A composition is built in memory: always loaded.
    override var hasLoaded: Bool { true }

    override func loadedDuration() throws -> CMTime { CMTime(source.duration) }

    /// An immutable composition of what this one holds now, as `NSCopying` gives it: later edits
    /// of this one do not reach it.
    open override func copy() -> Any { AVComposition(source: MutableComposition(copying: composition)) }

    /// A mutable composition of what this one holds now, edited apart from it.
    open func mutableCopy() -> Any { AVMutableComposition(source: MutableComposition(copying: composition)) }

    override func metadataItems() throws -> (common: [AVMetadataItem], all: [AVMetadataItem]) { ([], []) }
}

/// A composition being put together, as AVFoundation's `AVMutableComposition`.
///
/// Where AVFoundation raises an exception (`insertEmptyTimeRange`, `removeTimeRange` or `scaleTimeRange` given an
/// empty or negative range), these change nothing: the ranges they refuse are the ones
/// `insertTimeRange(_:of:at:)` throws for.
open class AVMutableComposition: AVComposition, @unchecked Sendable {
    // Unchecked: restated from its open base, as Swift requires; it adds nothing stored.
    public init() { super.init(source: MutableComposition()) }

    override init(source: MutableComposition) { super.init(source: source) }

    /// Its tracks of `mediaType`, as the `AVMutableCompositionTrack`s they are (Apple's declares
    /// them so; `tracks` itself stays `[AVAssetTrack]`: Swift overrides no array covariantly).
    public func tracks(withMediaType mediaType: AVMediaType) -> [AVMutableCompositionTrack] {
        source.tracks.map(trackObject).filter { $0.mediaType == mediaType }
    }

    /// The track with `trackID`, as an `AVMutableCompositionTrack`; nil when there is none.
    public override func track(withTrackID trackID: CMPersistentTrackID) -> AVMutableCompositionTrack? {
        source.tracks.map(trackObject).first { $0.trackID == trackID }
    }

    public convenience init(urlAssetInitializationOptions: [String: Any]? = nil) { self.init() }

    /// A new empty track; nil when `preferredTrackID` is taken. `kCMPersistentTrackID_Invalid`
    /// picks a free ID.
    public func addMutableTrack(withMediaType mediaType: AVMediaType, preferredTrackID: CMPersistentTrackID) -> AVMutableCompositionTrack? {
        guard let type = mediaType.assets,
              let track = source.addMutableTrack(withMediaType: type, preferredTrackID: Int(preferredTrackID)) else { return nil }
        return trackObject(track)
    }

    public func removeTrack(_ track: AVCompositionTrack) { source.removeTrack(track.compositionTrack) }

    /// The first track of the composition of `track`'s media type.
    public func mutableTrack(compatibleWith track: AVAssetTrack) -> AVMutableCompositionTrack? {
        compositionTracks.compactMap { $0 as? AVMutableCompositionTrack }.first { $0.mediaType == track.mediaType }
    }

    /// `timeRange` of every track of `asset` placed at `startTime`; throws, naming the file and
    /// the range, for an empty range, a range past the asset's end, or an asset that cannot be read.
    public func insertTimeRange(_ timeRange: CMTimeRange, of asset: AVAsset, at startTime: CMTime) throws {
        let (range, at) = try Self.times(timeRange, startTime)
        do {
            try source.insertTimeRange(range, of: try asset.loaded(), at: at)
        } catch {
            throw avError(error)
        }
    }

    public func insertEmptyTimeRange(_ timeRange: CMTimeRange) {
        guard let range = timeRange.mediaTimeRange else { return }
        try? source.insertEmptyTimeRange(range)
    }

    public func removeTimeRange(_ timeRange: CMTimeRange) {
        guard let range = timeRange.mediaTimeRange else { return }
        try? source.removeTimeRange(range)
    }

    /// Shows `timeRange` of every track over `duration` (played faster or slower).
    public func scaleTimeRange(_ timeRange: CMTimeRange, toDuration duration: CMTime) {
        guard let range = timeRange.mediaTimeRange, let to = duration.mediaTime else { return }
        try? source.scaleTimeRange(range, toDuration: to)
    }

    static func times(_ timeRange: CMTimeRange, _ startTime: CMTime) throws -> (MediaTimeRange, MediaTime) {
        guard let range = timeRange.mediaTimeRange, range.duration != .positiveInfinity, let at = startTime.mediaTime, at != .positiveInfinity else {
            throw avError(.operationNotAllowed, "insertTimeRange needs a numeric time range and start time, not \(timeRange) at \(startTime)")
        }
        return (range, at)
    }
}

/// One track of a composition, as AVFoundation's `AVCompositionTrack`: an `AVAssetTrack` whose
/// time range is the composition's and whose file properties (size, rate) are its first piece's.
open class AVCompositionTrack: AVAssetTrack, @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; it adds one let reference to a Sendable class.
    package let compositionTrack: MutableCompositionTrack

    init(_ track: MutableCompositionTrack, composition: AVComposition) {
        compositionTrack = track
        super.init(compositionTrackID: track.trackID, mediaType: track.mediaType, asset: composition)
    }

    override package var track: AssetTrack? { compositionTrack.track.pieces.first?.sourceTrack }

    override var range: CMTimeRange { CMTimeRange(compositionTrack.timeRange) }
    /// The transform set on the track; until one is, its first piece's track's.
    override var transform: CGAffineTransform { compositionTrack.preferredTransform.map(CGAffineTransform.init) ?? super.transform }

    /// The pieces in time order, gaps included.
    public var segments: [AVCompositionTrackSegment] { compositionTrack.segments.map(AVCompositionTrackSegment.init) }

    /// The segment playing at `trackTime`; nil past the end.
    public func segment(forTrackTime trackTime: CMTime) -> AVCompositionTrackSegment? {
        guard let t = trackTime.mediaTime else { return nil }
        return compositionTrack.segments.first { $0.destinationRange.contains(t) }.map(AVCompositionTrackSegment.init)
    }
}

/// A composition track being edited, as AVFoundation's `AVMutableCompositionTrack`.
open class AVMutableCompositionTrack: AVCompositionTrack, @unchecked Sendable {
    // Unchecked: restated from its open base, as Swift requires; it adds nothing stored.

    /// How the track is meant to be shown, as code sets it to keep a phone video upright
    /// (`compositionTrack.preferredTransform = assetTrack.preferredTransform`): an export writes
    /// it as the video's display matrix (a passthrough's and a re-encode's; a video composition
    /// draws upright frames instead). Until it is set, its first piece's track's (Apple's
    /// starts at the identity). A transform a file cannot hold (a value past ±32768, or not a
    /// number) is not kept.
    public override var preferredTransform: CGAffineTransform {
        get { transform }
        set {
            let matrix = DisplayMatrix(newValue)
            guard matrix.isStorable else { return }
            compositionTrack.preferredTransform = matrix
        }
    }

    /// `timeRange` of `track` placed at `startTime`: what was there and after moves later.
    /// Throws, naming the file and the range, for an empty range, one past the track's end, a
    /// track of another media type, or a track that is not a file's (a composition's own).
    public func insertTimeRange(_ timeRange: CMTimeRange, of track: AVAssetTrack, at startTime: CMTime) throws {
        let (range, at) = try AVMutableComposition.times(timeRange, startTime)
        guard !(track is AVCompositionTrack), let source = track.track, let asset = track.asset else {
            throw avError(.operationNotAllowed, "insertTimeRange takes a track of a file's asset, not of a composition")
        }
        do {
            try compositionTrack.insertTimeRange(range, of: source, in: try asset.loaded(), at: at)
        } catch {
            throw avError(error)
        }
    }

    public func insertEmptyTimeRange(_ timeRange: CMTimeRange) {
        guard let range = timeRange.mediaTimeRange else { return }
        try? compositionTrack.insertEmptyTimeRange(range)
    }

    public func removeTimeRange(_ timeRange: CMTimeRange) {
        guard let range = timeRange.mediaTimeRange else { return }
        try? compositionTrack.removeTimeRange(range)
    }

    /// Shows `timeRange` of the track over `duration` (played faster or slower).
    public func scaleTimeRange(_ timeRange: CMTimeRange, toDuration duration: CMTime) {
        guard let range = timeRange.mediaTimeRange, let to = duration.mediaTime else { return }
        try? compositionTrack.scaleTimeRange(range, toDuration: to)
    }
}

/// A source and destination range, as CoreMedia's `CMTimeMapping`.
public struct CMTimeMapping: Sendable, Equatable {
    public var source: CMTimeRange
    public var target: CMTimeRange

    public init(source: CMTimeRange, target: CMTimeRange) {
        self.source = source
        self.target = target
    }
}

/// One piece of a composition track, as AVFoundation's `AVCompositionTrackSegment`.
open class AVCompositionTrackSegment: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; its fields are let.
    public let isEmpty: Bool
    /// The file of the piece; nil for a gap.
    public let sourceURL: URL?
    public let sourceTrackID: CMPersistentTrackID
    /// Where the piece comes from and where it plays (for a gap, both the gap).
    public let timeMapping: CMTimeMapping

    init(_ segment: CompositionTrackSegment) {
        isEmpty = segment.isEmpty
        sourceURL = segment.sourcePath.map { URL(fileURLWithPath: $0) }
        sourceTrackID = CMPersistentTrackID(segment.sourceTrack?.trackID ?? 0)
        timeMapping = CMTimeMapping(source: CMTimeRange(segment.sourceRange), target: CMTimeRange(segment.destinationRange))
    }
}
