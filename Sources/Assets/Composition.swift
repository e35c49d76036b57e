import GraphKitCore
import MediaContainers

/// Ranges of several files' tracks in sequence, as one asset, like `AVComposition`: what
/// ``AssetReader/init(composition:)`` reads as one stream, and what a passthrough join or an
/// export consumes as a list of source pieces (each track's ``CompositionTrack/segments``).
/// A value: a ``MutableComposition``'s ``MutableComposition/composition`` is a snapshot.
public struct Composition: Sendable, Equatable {
    public let tracks: [CompositionTrack]

    public init(tracks: [CompositionTrack]) { self.tracks = tracks }

    /// The longest track's duration.
    public var duration: MediaTime { tracks.map(\.duration).max() ?? .zero }

    public func tracks(withMediaType mediaType: MediaType) -> [CompositionTrack] {
        tracks.filter { $0.mediaType == mediaType }
    }

    public func track(withTrackID trackID: Int) -> CompositionTrack? {
        tracks.first { $0.trackID == trackID }
    }
}

extension CompositionTrack {
    /// Throws `usage` (64), naming the piece and what differs, unless every piece of the track
    /// has the same codec and parameters as the first (codec, picture size, sample rate,
    /// channels and the codec configuration: `avcC`, `esds`…, as the files' MP4 sample
    /// descriptions state them), so that their compressed samples can be joined without
    /// re-encoding. A piece of a file that is not MP4/MOV is refused too: its parameters are
    /// not known without decoding.
    public func checkPassthrough() throws(GraphError) {
        var first: (piece: Int, path: String, description: SampleDescription)?
        var read: [String: MP4Movie] = [:]
        for (n, piece) in pieces.enumerated() {
            guard let asset = piece.asset, let track = piece.sourceTrack else { continue }
            let at = "composition track \(trackID), piece \(n + 1) (\"\(asset.path)\")"
            let movie: MP4Movie
            if let known = read[asset.path] {
                movie = known
            } else {
                guard let bytes = FileBytes(path: asset.path), let file = try? MP4File(bytes), let m = try? file.movie() else {
                    throw GraphError(.usage, at: at, "\"\(asset.path)\" is not an MP4 or MOV file whose index GraphKit reads: its pieces cannot be joined without re-encoding")
                }
                read[asset.path] = m
                movie = m
            }
            let handler: FourCC = track.mediaType == .audio ? "soun" : "vide"
            guard let stored = movie.tracks(handler: handler).dropFirst(track.indexInType).first?.track,
                  let description = SampleDescription(stored) else {
                throw GraphError(.usage, at: at, "\"\(asset.path)\" states no sample description for \(track)")
            }
            guard let (p, path, firstDescription) = first else {
                first = (n + 1, asset.path, description)
                continue
            }
            if let difference = description.difference(from: firstDescription) {
                throw GraphError(.usage, at: at,
                                 "cannot be joined without re-encoding to piece \(p) (\"\(path)\"): \(difference); decode and re-encode instead")
            }
        }
    }
}

/// A composition being put together, like `AVMutableComposition`: tracks are added with
/// ``addMutableTrack(withMediaType:preferredTrackID:)`` and edited through their
/// ``MutableCompositionTrack``; ``composition`` is what it holds now, as a value to read.
public final class MutableComposition: Sendable {
    private let added = Guarded<[MutableCompositionTrack]>([])

    public init() {}

    /// A composition holding what `composition` holds, to edit apart from where it came from
    /// (`AVMutableComposition`'s `copy()` and `mutableCopy()`).
    package init(copying composition: Composition) {
        added.withLock { $0 = composition.tracks.map(MutableCompositionTrack.init) }
    }

    /// A new empty track; nil when `preferredTrackID` is taken (as AVFoundation's). nil as the
    /// ID (or `kCMPersistentTrackID_Invalid`'s 0) picks the next free one.
    public func addMutableTrack(withMediaType mediaType: MediaType, preferredTrackID: Int? = nil) -> MutableCompositionTrack? {
        added.withLock { tracks in
            let taken = Set(tracks.map(\.trackID))
            let id: Int
            if let preferred = preferredTrackID, preferred > 0 {
                guard !taken.contains(preferred) else { return nil }
                id = preferred
            } else {
                id = (taken.max() ?? 0) + 1
            }
            let track = MutableCompositionTrack(CompositionTrack(mediaType: mediaType, trackID: id))
            tracks.append(track)
            return track
        }
    }

    /// Takes a track out of the composition.
    public func removeTrack(_ track: MutableCompositionTrack) {
        added.withLock { $0.removeAll { $0 === track } }
    }

    public var tracks: [MutableCompositionTrack] { added.withLock { $0 } }

    /// What the composition holds now.
    public var composition: Composition { Composition(tracks: tracks.map(\.track)) }

    public var duration: MediaTime { composition.duration }

    /// Places `range` of every audio and video track of `asset` at `time`, like
    /// `AVMutableComposition.insertTimeRange(_:of:at:)`: each into this composition's first
    /// track of its media type not yet given one of the asset's, made when there is none. Checks
    /// every track before it changes any, so a refused insert changes nothing. What was at `time`
    /// and after in tracks the asset has no track for stays where it was.
    public func insertTimeRange(_ range: MediaTimeRange, of asset: Asset, at time: MediaTime) throws(GraphError) {
        guard !asset.tracks.isEmpty else {
            throw GraphError(.usage, at: asset.path, "\"\(asset.path)\" has no audio or video track to insert")
        }
        var plan: [(MutableCompositionTrack?, CompositionTrack, MediaType)] = []
        var used: [ObjectIdentifier] = []
        for source in asset.tracks {
            let target = tracks.first { $0.mediaType == source.mediaType && !used.contains(ObjectIdentifier($0)) }
            if let target { used.append(ObjectIdentifier(target)) }
            var edited = target?.track ?? CompositionTrack(mediaType: source.mediaType, trackID: 0)
            try edited.insertTimeRange(range, of: source, in: asset, at: time)
            plan.append((target, edited, source.mediaType))
        }
        for (target, edited, type) in plan {
            if let target {
                target.replace(edited)
            } else if let made = addMutableTrack(withMediaType: type) {
                made.replace(CompositionTrack(copying: edited, trackID: made.trackID))
            }
        }
    }

    /// A gap in every track.
    public func insertEmptyTimeRange(_ range: MediaTimeRange) throws(GraphError) {
        for track in tracks { try track.insertEmptyTimeRange(range) }
    }

    /// `range` taken out of every track.
    public func removeTimeRange(_ range: MediaTimeRange) throws(GraphError) {
        for track in tracks { try track.removeTimeRange(range) }
    }

    /// `range` of every track shown over `duration`, like
    /// `AVMutableComposition.scaleTimeRange(_:toDuration:)` (see
    /// ``CompositionTrack/scaleTimeRange(_:toDuration:)``); a track that ends before the range
    /// starts is left as it is. Checks every track before it changes any.
    public func scaleTimeRange(_ range: MediaTimeRange, toDuration duration: MediaTime) throws(GraphError) {
        guard range.start.isFinite, range.duration.isFinite, range.duration > .zero, range.start >= .zero, duration.isFinite, duration > .zero else {
            throw GraphError(.usage, at: "composition", "cannot scale the time range \(range) to \(duration.seconds) s: give a range from 0 or later with a duration, and a duration above 0")
        }
        guard range.start < self.duration else {
            throw GraphError(.usage, at: "composition", "the time range \(range) starts at or past the composition's end at \(self.duration.seconds) s")
        }
        var planned: [(MutableCompositionTrack, CompositionTrack)] = []
        for track in tracks where range.start < track.track.duration {
            var edited = track.track
            try edited.scaleTimeRange(range, toDuration: duration)
            planned.append((track, edited))
        }
        for (track, edited) in planned { track.replace(edited) }
    }
}

/// One track of a ``MutableComposition``, like `AVMutableCompositionTrack`: a reference, so an
/// edit through it is an edit of the composition. Each edit checks its arguments first and
/// changes nothing when it throws.
public final class MutableCompositionTrack: Sendable {
    private let state: Guarded<CompositionTrack>
    public let mediaType: MediaType
    public let trackID: Int

    init(_ track: CompositionTrack) {
        state = Guarded(track)
        mediaType = track.mediaType
        trackID = track.trackID
    }

    /// What the track holds now.
    public var track: CompositionTrack { state.withLock { $0 } }
    public var segments: [CompositionTrackSegment] { track.segments }
    /// How the track is meant to be shown; nil: its first piece's track's (``CompositionTrack/preferredTransform``).
    public var preferredTransform: DisplayMatrix? {
        get { track.preferredTransform }
        set { state.withLock { $0.preferredTransform = newValue } }
    }
    public var timeRange: MediaTimeRange { track.timeRange }

    /// See ``CompositionTrack/insertTimeRange(_:of:in:at:)``: `track` is one of `asset`'s.
    public func insertTimeRange(_ range: MediaTimeRange, of track: AssetTrack, in asset: Asset, at time: MediaTime) throws(GraphError) {
        try state.withLock { t throws(GraphError) in try t.insertTimeRange(range, of: track, in: asset, at: time) }
    }

    public func insertEmptyTimeRange(_ range: MediaTimeRange) throws(GraphError) {
        try state.withLock { t throws(GraphError) in try t.insertEmptyTimeRange(range) }
    }

    public func removeTimeRange(_ range: MediaTimeRange) throws(GraphError) {
        try state.withLock { t throws(GraphError) in try t.removeTimeRange(range) }
    }
    public func scaleTimeRange(_ range: MediaTimeRange, toDuration duration: MediaTime) throws(GraphError) {
        try state.withLock { t throws(GraphError) in try t.scaleTimeRange(range, toDuration: duration) }
    }

    func replace(_ track: CompositionTrack) { state.withLock { $0 = track } }
}

extension CompositionTrack {
    /// `other`'s segments under another track ID.
    init(copying other: CompositionTrack, trackID: Int) {
        self.init(mediaType: other.mediaType, trackID: trackID)
        segments = other.segments
    }
}
