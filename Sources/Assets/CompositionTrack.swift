import GraphKitCore
import MediaContainers

/// One piece of a ``CompositionTrack``, like `AVCompositionTrackSegment`: a range of a file's
/// track placed at a range of the composition's time line, or an empty range (a gap: nothing
/// plays there; a reader gives no sample for it, as AVFoundation's gives none).
///
/// What a consumer of a composition reads as "a list of source pieces in sequence": for each
/// segment in order, the file (``sourcePath``), its track (``sourceTrack``), the part of it
/// (``sourceRange``) and where that part plays (``destinationRange``). Segments tile the time
/// line from 0 with neither overlap nor hole; a gap is an empty segment.
public struct CompositionTrackSegment: Sendable, Equatable, CustomStringConvertible {
    /// The file the piece comes from; nil for an empty segment.
    public let asset: Asset?
    /// The track of that file; nil for an empty segment.
    public let sourceTrack: AssetTrack?
    /// The part of the source track (as long as ``destinationRange``: no scaling); for an empty
    /// segment, the destination range again.
    public let sourceRange: MediaTimeRange
    /// Where it plays in the composition.
    public let destinationRange: MediaTimeRange

    /// A gap, as `AVCompositionTrackSegment.isEmpty`.
    public var isEmpty: Bool { asset == nil }
    /// The file's path (`AVCompositionTrackSegment.sourceURL`); nil for a gap.
    public var sourcePath: String? { asset?.path }

    init(asset: Asset, track: AssetTrack, source: MediaTimeRange, destination: MediaTimeRange) {
        self.asset = asset
        sourceTrack = track
        sourceRange = source
        destinationRange = destination
    }

    init(emptyAt destination: MediaTimeRange) {
        asset = nil
        sourceTrack = nil
        sourceRange = destination
        destinationRange = destination
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.sourcePath == b.sourcePath && a.sourceTrack?.trackID == b.sourceTrack?.trackID
            && a.sourceRange == b.sourceRange && a.destinationRange == b.destinationRange
    }

    public var description: String {
        guard let path = sourcePath, let track = sourceTrack else { return "empty \(destinationRange)" }
        return "\"\(path)\" track \(track.trackID) \(sourceRange) at \(destinationRange.start.seconds) s"
    }

    /// How far the source track's media times (the stamps of its samples as stored) run ahead
    /// of its presentation times: the start of an MP4 or MOV track's edit list (an empty first
    /// edit, a delay, counts back); zero for other files and tracks with no edit.
    var mediaOffset: MediaTime {
        guard let asset, let track = sourceTrack, let bytes = FileBytes(path: asset.path), let file = try? MP4File(bytes),
              let movie = try? file.movie(),
              let stored = movie.tracks(handler: track.mediaType == .audio ? "soun" : "vide").dropFirst(track.indexInType).first?.track,
              let first = stored.edits?.first else { return .zero }
        if first.mediaTime >= 0 {
            let scale = stored.mediaTimescale
            guard scale > 0, scale <= Int(Int32.max) else { return .zero }
            return MediaTime(value: first.mediaTime, timescale: Int32(scale))
        }
        let scale = movie.timescale
        guard scale > 0, scale <= Int(Int32.max), let delay = Int64(exactly: first.duration) else { return .zero }
        return .zero - MediaTime(value: delay, timescale: Int32(scale))
    }

    /// The same piece played from `start` on.
    func moved(to start: MediaTime) -> Self {
        let destination = MediaTimeRange(start: start, duration: destinationRange.duration)
        guard let asset, let sourceTrack else { return Self(emptyAt: destination) }
        return Self(asset: asset, track: sourceTrack, source: sourceRange, destination: destination)
    }

    /// The piece cut at composition time `t` (strictly inside it): the part before, the part after.
    /// Whether it is shown over another duration than its source range's
    /// (``CompositionTrack/scaleTimeRange(_:toDuration:)``): played faster or slower.
    public var isScaled: Bool { !isEmpty && sourceRange.duration != destinationRange.duration }

    /// The same source shown over `destination`.
    func shown(over destination: MediaTimeRange) -> Self {
        guard let asset, let sourceTrack else { return Self(emptyAt: destination) }
        return Self(asset: asset, track: sourceTrack, source: sourceRange, destination: destination)
    }

    func split(at t: MediaTime) -> (Self, Self) {
        let head = t - destinationRange.start
        let first = MediaTimeRange(start: destinationRange.start, end: t), second = MediaTimeRange(start: t, end: destinationRange.end)
        guard let asset, let sourceTrack else { return (Self(emptyAt: first), Self(emptyAt: second)) }
        // A scaled segment's source is cut in proportion.
        let cut = sourceRange.start + MediaTime.scale(head, by: sourceRange.duration, over: destinationRange.duration)
        return (Self(asset: asset, track: sourceTrack, source: MediaTimeRange(start: sourceRange.start, end: cut), destination: first),
                Self(asset: asset, track: sourceTrack, source: MediaTimeRange(start: cut, end: sourceRange.end), destination: second))
    }
}

/// One track of a ``Composition``: its media type, its ID and its segments in time order, like
/// `AVCompositionTrack`. A value: the edits (``insertTimeRange(_:of:at:)``,
/// ``insertEmptyTimeRange(_:)``, ``removeTimeRange(_:)``) are `mutating` and check their
/// arguments before they change anything, so a refused edit leaves the track as it was.
public struct CompositionTrack: Sendable, Equatable {
    public let mediaType: MediaType
    public let trackID: Int
    /// The pieces, in time order, tiling the track from 0 to ``duration``.
    public internal(set) var segments: [CompositionTrackSegment] = []
    /// How the track is meant to be shown (`AVMutableCompositionTrack.preferredTransform`),
    /// written as an export's display matrix; nil: its first piece's track's.
    public var preferredTransform: DisplayMatrix?

    public init(mediaType: MediaType, trackID: Int) {
        self.mediaType = mediaType
        self.trackID = trackID
    }

    /// Where the last segment ends (0 for a track with none).
    public var duration: MediaTime { segments.last?.destinationRange.end ?? .zero }

    /// The track's time on the composition's time line, from 0.
    public var timeRange: MediaTimeRange { MediaTimeRange(start: .zero, duration: duration) }

    /// Places `range` of `track` at `time`: what was at `time` and after moves later by the
    /// range's duration. A `time` past the track's end leaves a gap (an empty segment) before it.
    /// Throws `usage` (64), naming the track and the range, for an empty range or one that starts
    /// before 0, a range reaching past the source track's end, a track of another media type, a
    /// negative `time`, or a track of an asset that is not the one given.
    public mutating func insertTimeRange(_ range: MediaTimeRange, of track: AssetTrack, in asset: Asset, at time: MediaTime) throws(GraphError) {
        let at = "\"\(asset.path)\" \(track)"
        guard track.assetPath == asset.path else {
            throw GraphError(.usage, at: at, "\(track) is of \"\(track.assetPath)\", not of \"\(asset.path)\"")
        }
        guard track.mediaType == mediaType else {
            throw GraphError(.usage, at: at, "a \(track.mediaType.rawValue) track cannot go into \(mediaType.rawValue) composition track \(trackID)")
        }
        guard range.duration > .zero, range.start >= .zero else {
            throw GraphError(.usage, at: at, "the time range \(range) is empty or starts before 0; give a start of 0 or more and a duration above 0")
        }
        let end = track.timeRange.end
        guard range.end <= end else {
            throw GraphError(.usage, at: at, "the time range \(range) ends at \(range.end.seconds) s, past the track's end at \(end.seconds) s")
        }
        guard time >= .zero else {
            throw GraphError(.usage, at: at, "cannot insert at \(time.seconds) s: composition times start at 0")
        }
        insert(CompositionTrackSegment(asset: asset, track: track, source: range, destination: MediaTimeRange(start: time, duration: range.duration)))
    }

    /// A gap of `range.duration` at `range.start`, like `insertEmptyTimeRange(_:)`: what was there
    /// and after moves later. Throws for an empty range or one that starts before 0.
    public mutating func insertEmptyTimeRange(_ range: MediaTimeRange) throws(GraphError) {
        guard range.duration > .zero, range.start >= .zero else {
            throw GraphError(.usage, at: "composition track \(trackID)", "the empty time range \(range) has no duration or starts before 0")
        }
        insert(CompositionTrackSegment(emptyAt: range))
    }

    /// Takes `range` out: what came after moves earlier by its duration. The part of `range` past
    /// the track's end removes nothing. Throws for an empty range or one that starts before 0.
    public mutating func removeTimeRange(_ range: MediaTimeRange) throws(GraphError) {
        guard range.duration > .zero, range.start >= .zero else {
            throw GraphError(.usage, at: "composition track \(trackID)", "the time range \(range) to remove is empty or starts before 0")
        }
        let end = min(range.end, duration)
        guard range.start < end else { return }
        split(at: range.start)
        split(at: end)
        let cut = end - range.start
        var kept: [CompositionTrackSegment] = []
        for segment in segments {
            let d = segment.destinationRange
            if d.end <= range.start { kept.append(segment) }
            else if d.start >= end { kept.append(segment.moved(to: d.start - cut)) }
        }
        segments = Self.tidied(kept)
    }

    /// Shows `range` of the track over `duration`, like
    /// `AVMutableCompositionTrack.scaleTimeRange(_:toDuration:)`: each segment in it is shown
    /// over its share of `duration` (played at source duration / shown duration: faster when
    /// shorter), what follows moves by the difference, a segment across an edge of the range is
    /// cut there first. The part of `range` past the track's end scales nothing. Throws `usage`
    /// (64), changing nothing, for an empty range, one that starts before 0 or at or past the
    /// track's end, or a duration of 0 or less.
    public mutating func scaleTimeRange(_ range: MediaTimeRange, toDuration newDuration: MediaTime) throws(GraphError) {
        let at = "composition track \(trackID)"
        guard range.start.isFinite, range.duration.isFinite, range.duration > .zero, range.start >= .zero else {
            throw GraphError(.usage, at: at, "the time range \(range) to scale is empty or starts before 0")
        }
        guard newDuration.isFinite, newDuration > .zero else {
            throw GraphError(.usage, at: at, "cannot scale \(range) to \(newDuration.seconds) s: give a duration above 0")
        }
        guard range.start < duration else {
            throw GraphError(.usage, at: at, "the time range \(range) starts at or past the track's end at \(duration.seconds) s")
        }
        let end = min(range.end, duration)
        // The part within the track scales to its share of the new duration.
        let target = end == range.end ? newDuration : MediaTime.scale(end - range.start, by: newDuration, over: range.duration)
        split(at: range.start)
        split(at: end)
        let old = end - range.start
        var out: [CompositionTrackSegment] = []
        var time = MediaTime.zero
        for segment in segments {
            let d = segment.destinationRange
            if d.end <= range.start {
                out.append(segment)
                time = d.end
            } else if d.start >= end {
                out.append(segment.moved(to: time))
                time = time + d.duration
            } else {
                let shown = MediaTime.scale(d.duration, by: target, over: old)
                out.append(segment.shown(over: MediaTimeRange(start: time, duration: shown)))
                time = time + shown
            }
        }
        segments = Self.tidied(out)
    }

    /// A video track's picture size, its first piece's (as `AVCompositionTrack.naturalSize`
    /// without a video composition): the size its frames are read and exported at, pieces of
    /// another size fitted to it, their shape kept. Nil for a sound track or one with no piece.
    public var naturalSize: (width: Int, height: Int)? {
        guard mediaType == .video, let stream = pieces.first?.sourceTrack?.stream,
              let width = stream.width, let height = stream.height, width > 0, height > 0 else { return nil }
        return (width, height)
    }

    /// The non-empty segments: what a reader reads, in order.
    public var pieces: [CompositionTrackSegment] { segments.filter { !$0.isEmpty } }

    // MARK: Edits

    private mutating func insert(_ new: CompositionTrackSegment) {
        let time = new.destinationRange.start
        if time > duration {
            segments.append(CompositionTrackSegment(emptyAt: MediaTimeRange(start: duration, end: time)))
        }
        split(at: time)
        let shift = new.destinationRange.duration
        let i = segments.firstIndex { $0.destinationRange.start >= time } ?? segments.endIndex
        for j in i..<segments.endIndex { segments[j] = segments[j].moved(to: segments[j].destinationRange.start + shift) }
        segments.insert(new, at: i)
        segments = Self.tidied(segments)
    }

    /// Cuts the segment that `t` falls strictly inside, so that a segment starts at `t`.
    private mutating func split(at t: MediaTime) {
        guard let i = segments.firstIndex(where: { $0.destinationRange.start < t && t < $0.destinationRange.end }) else { return }
        let (a, b) = segments[i].split(at: t)
        segments.replaceSubrange(i...i, with: [a, b])
    }

    /// Neighbouring gaps made one. A gap at the end stays (it counts in the duration, as
    /// AVFoundation's empty segments do).
    private static func tidied(_ segments: [CompositionTrackSegment]) -> [CompositionTrackSegment] {
        var out: [CompositionTrackSegment] = []
        for s in segments {
            if s.isEmpty, let last = out.last, last.isEmpty {
                out[out.count - 1] = CompositionTrackSegment(emptyAt: MediaTimeRange(start: last.destinationRange.start, end: s.destinationRange.end))
            } else {
                out.append(s)
            }
        }
        return out
    }
}

extension MediaTime {
    /// `t` × `num` / `den`, exact when the result falls on `t`'s clock (or a finer one that fits),
    /// else to the nanosecond.
    static func scale(_ t: MediaTime, by num: MediaTime, over den: MediaTime) -> MediaTime {
        // num / den as integers on one clock.
        let n = num.converted(to: 1_000_000_000).value, d = den.converted(to: 1_000_000_000).value
        guard d != 0 else { return t }
        let (product, overflow) = t.value.multipliedReportingOverflow(by: n)
        if !overflow, product % d == 0 { return MediaTime(value: product / d, timescale: t.timescale) }
        return MediaTime(seconds: t.seconds * Double(n) / Double(d))
    }
}
