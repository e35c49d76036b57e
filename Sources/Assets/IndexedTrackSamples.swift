@_spi(Engine) import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// A file track's samples as stored, read from the MP4 or MOV's own index rather than demuxed by
/// GStreamer, for an ``AssetReaderTrackOutput`` with ``ReaderOutputSettings/stored(_:)`` on a
/// file asset: every sample the track holds, each at the time its edit list shows it, as
/// AVFoundation's reader gives them. An AAC track's priming packet comes first, before 0 (its
/// encoder's delay, which the edit hides), and its last packet is there whole; an H.264 track with
/// B-frames shows its first picture at 0 and decodes it before. (qtdemux, GStreamer 1.22's demuxer,
/// stamps them with the media's times, every AAC packet 23 ms late, and drops the last packet.)
///
/// Times before 0 cannot be stamped on a ``SampleBuffer`` (GStreamer's stamps are unsigned): each
/// is given ``lead`` later, the same for every output of a reader so that they stay together, and
/// the reader says so (``AssetReaderTrackOutput/storedLead``; AVFoundation's reader takes it off).
/// Nil, and the track is demuxed as before, for a file that is not a whole MP4 or MOV or a track
/// the container library does not copy exactly (``MP4StoredTrack``).
final class IndexedTrackSamples: Sendable {
    private let file: FileBytes
    private let path: String
    private let track: MP4StoredTrack
    private let format: MediaFormat
    private let caps: String
    /// The earliest time a sample is decoded or shown at, on the edit's time line.
    let earliest: MediaTime
    private struct Reading {
        var cursor: MP4SampleIndex.Cursor
        var lead = MediaTime.zero
    }
    private let reading: Guarded<Reading>

    init?(path: String, track: AssetTrack) {
        guard let file = FileBytes(path: path), let mp4 = try? MP4File(file), mp4.isWholeMovie, let movie = try? mp4.movie() else { return nil }
        let kind: FourCC = track.mediaType == .video ? "vide" : "soun"
        let tracks = movie.tracks(handler: kind)
        guard tracks.indices.contains(track.indexInType),
              let stored = MP4StoredTrack(tracks[track.indexInType].track, index: tracks[track.indexInType].index, movie: movie, fileSize: file.count),
              stored.format.isVideo == (track.mediaType == .video), (1...Int(Int32.max)).contains(stored.timescale),
              let description = SampleDescription(tracks[track.indexInType].track) else { return nil }
        let format: MediaFormat
        switch description.codec {
        case "avc1", "avc3": format = .h264(width: description.size?.width, height: description.size?.height)
        case "hvc1", "hev1": format = .video(.hevc, width: description.size?.width, height: description.size?.height)
        case "mp4a":
            let (_, rate, channels) = MP4StoredTrack.audioSpecificConfig(description)
            format = .aac(sampleRate: rate, channels: channels)
        default: return nil
        }
        var cursor = stored.samples.makeCursor(), least = Int64.max
        while let s = cursor.next() { least = min(least, Int64(s.decodeTime), s.presentationTime) }
        // A track shown from far into its media (a recording cut by an edit an hour in) is demuxed
        // as before: its samples would be stamped that much later.
        let first = least == .max ? MediaTime.zero : Self.time(least, of: stored)
        guard first.isFinite, first >= MediaTime.zero - Self.mostLead else { return nil }
        self.file = file
        self.path = path
        self.track = stored
        self.format = format
        caps = MP4StoredTrack.caps(description)
        earliest = first
        reading = Guarded(Reading(cursor: stored.samples.makeCursor()))
    }

    /// Media ticks on the edit's time line: from the media time its edit shows first, after the
    /// empty edit before it. Saturates rather than trap on any claim.
    private static func time(_ ticks: Int64, of track: MP4StoredTrack) -> MediaTime {
        let delay = track.delay > 0 ? Int64(clamping: Int((track.delay * Double(track.timescale)).rounded(.towardZero))) : 0
        let (fromEdit, overflow) = ticks.subtractingReportingOverflow(track.mediaStart)
        let (shown, late) = fromEdit.addingReportingOverflow(delay)
        return overflow || late ? (fromEdit < 0 ? .negativeInfinity : .positiveInfinity) : MediaTime(value: shown, timescale: Int32(track.timescale))
    }

    /// The most a reader stamps samples later (``lead(_:)``): an hour.
    static let mostLead = MediaTime(value: 3_600, timescale: 1)

    /// How much later a reader stamps samples as stored so that none of `tracks` is stamped before
    /// 0: their earliest time, turned round, in whole nanoseconds (so that taking it off again
    /// gives each time as it was).
    static func lead(_ tracks: [IndexedTrackSamples]) -> MediaTime {
        guard let earliest = tracks.map(\.earliest).min(), earliest < .zero, earliest.isFinite else { return .zero }
        let nanoseconds = (MediaTime.zero - earliest).converted(to: MediaTime.nanosecondTimescale)
        return nanoseconds < MediaTime.zero - earliest ? nanoseconds + MediaTime(value: 1, timescale: MediaTime.nanosecondTimescale) : nanoseconds
    }

    /// Stamps every sample `lead` later (a reader's outputs, together): at least `-earliest`.
    func start(lead: MediaTime) {
        reading.withLock { $0.lead = lead }
    }

    /// The next sample in decode order, its bytes read from the file; `.end` after the last.
    func next() -> SampleSource.Next {
        let (sample, lead) = reading.withLock { r in (r.cursor.next(), r.lead) }
        guard let s = sample else { return .end }
        var buffer = SampleBuffer(format: format, byteCount: Int(s.size))
        buffer.capsDetail = caps
        let read: Int
        do {
            read = try buffer.withUnsafeMutableBytes { (raw) throws(ContainerError) -> Int in try file.read(at: s.offset, into: raw) }
        } catch {
            return .failed("cannot read \"\(path)\": \(error.reason)")
        }
        guard read == Int(s.size) else {
            return .failed("\"\(path)\" ends at byte \(s.offset + UInt64(read)), inside its samples: it was cut while it was read")
        }
        buffer.presentationTime = Self.time(s.presentationTime, of: track) + lead
        buffer.decodeTime = Self.time(Int64(s.decodeTime), of: track) + lead
        buffer.duration = MediaTime(value: Int64(s.duration), timescale: Int32(clamping: track.timescale))
        buffer.flags = s.isSync ? [.keyframe] : []
        return .sample(buffer)
    }
}
