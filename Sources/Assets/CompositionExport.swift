import GraphKitCore
import MediaContainers

/// A composition's passthrough export planned by the container library (`MP4Join`): every
/// piece of every track copied as stored, one after another, each shown exactly by an edit.
struct CompositionJoin {
    /// The new file's first bytes, the runs of the sources to copy after them, and its last bytes.
    var join: MP4Join
    /// The sources, open, in ``MP4Join/Source`` order.
    var files: [FileBytes]
    var paths: [String]

    /// Plans the join of `range` of `composition`. Throws `usage` (64), naming the composition
    /// track, the piece and its file, when the pieces of a track cannot follow one another
    /// without re-encoding (another codec, size, rate or codec configuration), when a piece
    /// is of a file that is not MP4 or MOV, or is scaled (a passthrough copies samples with
    /// their timing); `inputUnreadable` (66) for a file that cannot be read or whose index is
    /// damaged. `fileType` is the new file's `ftyp`; `indexFirst` puts the index before the
    /// media; `tags`, when given, replace the first file's, which the join keeps otherwise.
    init(_ composition: Composition, range: MediaTimeRange, fileType: MP4Box, indexFirst: Bool, tags: MediaMetadata?) throws(GraphError) {
        var tracks: [CompositionTrack] = []
        for var track in composition.tracks where !track.pieces.isEmpty {
            // The range alone: what follows it, then what comes before it, taken out.
            if range.end < track.duration { try track.removeTimeRange(MediaTimeRange(start: range.end, end: track.duration)) }
            if range.start > .zero { try track.removeTimeRange(MediaTimeRange(start: .zero, end: min(range.start, track.duration))) }
            guard !track.pieces.isEmpty else { continue }
            try track.checkPassthrough()
            tracks.append(track)
        }
        guard !tracks.isEmpty else {
            throw GraphError(.usage, at: "composition", "the composition holds no media in \(range): there is nothing to export")
        }
        var paths: [String] = []
        var files: [FileBytes] = []
        var sources: [MP4Join.Source] = []
        var plan: [MP4Join.Track] = []
        for track in tracks {
            var parts: [MP4Join.Part] = []
            for (n, segment) in track.segments.enumerated() {
                guard let asset = segment.asset, let source = segment.sourceTrack else {
                    parts.append(.empty(seconds: segment.destinationRange.duration.seconds))
                    continue
                }
                let at = "composition track \(track.trackID), piece \(n + 1) (\"\(asset.path)\")"
                guard segment.sourceRange.duration == segment.destinationRange.duration else {
                    throw GraphError(.usage, at: at, "its range is scaled (\(segment.sourceRange.duration.seconds) s of the file shown over \(segment.destinationRange.duration.seconds) s): a passthrough export copies samples with their timing and cannot change it")
                }
                let index: Int
                if let known = paths.firstIndex(of: asset.path) {
                    index = known
                } else {
                    guard let bytes = FileBytes(path: asset.path) else {
                        throw GraphError(.inputUnreadable, at: asset.path, "cannot read \"\(asset.path)\": it cannot be opened as a file")
                    }
                    do throws(ContainerError) {
                        let file = try MP4File(bytes)
                        guard let movie = try file.movie() else { throw ContainerError("it has no index (moov box)") }
                        sources.append(MP4Join.Source(name: "\"\(asset.path)\"", movie: movie, fileSize: bytes.count, chapters: movie.chapters(in: bytes)))
                    } catch {
                        throw GraphError(.inputUnreadable, at: asset.path, "cannot export \"\(asset.path)\": \(error.reason)")
                    }
                    paths.append(asset.path)
                    files.append(bytes)
                    index = paths.count - 1
                }
                parts.append(.media(source: index, indexInType: source.indexInType,
                                    start: segment.sourceRange.start.seconds, end: segment.sourceRange.end.seconds))
            }
            plan.append(MP4Join.Track(handler: track.mediaType == .audio ? "soun" : "vide", parts: parts,
                                      matrix: track.mediaType == .video ? track.preferredTransform : nil))
        }
        if let tags, !sources.isEmpty { tags.replaceTags(in: &sources[0].movie.moov) }
        if !sources.isEmpty { sources[0].movie.keepSoundExact() }
        do throws(ContainerError) {
            join = try MP4Join(sources: sources, tracks: plan, fileType: fileType, indexFirst: indexFirst)
        } catch {
            throw GraphError(.inputUnreadable, at: "composition", "cannot join the composition's pieces: \(error.reason)")
        }
        self.files = files
        self.paths = paths
    }
}

extension MediaMetadata {
    /// These tags in place of `moov`'s (its `udta`): the text items sink.mp4 writes (title,
    /// artist, album, album artist, genre, comment, date) as iTunes items under `udta/meta/ilst`,
    /// and the place and cover as ``MP4ExtraTags`` writes them, for an export that copies the
    /// first file's index and was given tags of its own.
    func replaceTags(in moov: inout MP4Box) {
        moov.children.removeAll { $0.type == "udta" }
        let texts: [(String, String?)] = [("©nam", title), ("©ART", artist), ("©alb", album), ("aART", albumArtist),
                                          ("©gen", genre), ("©cmt", comment), ("©day", date)]
        for case let (key, text?) in texts where !text.isEmpty { MP4ExtraTags.setText(FourCC(key), text, in: &moov) }
        let extra = MP4ExtraTags(artwork: writableArtwork, location: writableLocation)
        if !extra.isEmpty { extra.apply(to: &moov) }
    }
}

extension MP4Movie {
    /// The movie's clock made its sound's rate when it is coarser (ffmpeg's files count the
    /// movie in milliseconds): the edit lists a join or a trim writes are in the movie's clock,
    /// and only the sound's own rate puts each edit on a sample (a millisecond is 44.1 samples).
    mutating func keepSoundExact() {
        guard let rate = tracks(handler: "soun").map({ $0.track.mediaTimescale }).max(), rate > timescale else { return }
        rescale(to: rate)
    }
}
