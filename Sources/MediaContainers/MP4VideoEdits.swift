/// The edit list of an MP4's video track when it has several edits, as `decode` applies it
/// itself (the gkvideotrim element): each edit's media range and where it plays, in the track's
/// clock.
///
/// A file joined without re-encoding (a passthrough export of a composition) plays each piece
/// through an edit of its own, and GStreamer 1.22's demuxer shows 80 of such a file's 95 frames.
/// So `decode` takes such a track's edit list out of the index on its way into the demuxer (its
/// `edts` box becomes `free`, the same size), which then gives every frame at its media time,
/// and the frames are shown through the edits after decoding, as ffmpeg and AVFoundation show
/// them. One edit (with an empty one before it or not) is left to the demuxer, which shows it
/// right; so is a list whose edits go back in the media or overlap (frames come in media order
/// and would have to be held), one at another speed, and a list longer than the claims allow
/// (``MP4Movie/mostEdits``, refused when the file is read).
package struct MP4VideoEdits: Sendable, Equatable {
    package struct Edit: Sendable, Equatable {
        /// The media shown, from `start` to `end` (exclusive), in the track's clock.
        package var start: Int64
        package var end: Int64
        /// Where it plays, in the track's clock.
        package var at: Int64
    }

    package var edits: [Edit]
    package var timescale: Int

    /// The edits as gkvideotrim's `edits` property takes them: `start:end:at`, comma-separated.
    package var text: String { edits.map { "\($0.start):\($0.end):\($0.at)" }.joined(separator: ",") }

    /// Reads the first video track's edit list from a `moov` box's bytes and, when it is one
    /// to apply after decoding, takes it out (in place: the size stays) and returns it. Nil, and
    /// the bytes as they were, otherwise.
    package static func take(from moov: inout [UInt8]) -> MP4VideoEdits? {
        guard var movie = try? MP4Movie(parsing: moov[...]), let (index, track) = movie.tracks(handler: "vide").first,
              let edits = edits(of: track, movieTimescale: movie.timescale) else { return nil }
        movie.removeEditList(ofTrackAt: index)
        let edited = movie.bytes
        guard edited.count == moov.count else { return nil }
        moov = edited
        return edits
    }

    /// The edits of `track` to apply after decoding; nil for a list the demuxer is left with.
    /// Every number comes from the file and may be damaged: none may overflow.
    package static func edits(of track: MP4Track, movieTimescale: Int) -> MP4VideoEdits? {
        let scale = track.mediaTimescale
        guard scale > 0, scale <= Int(Int32.max), movieTimescale > 0, let list = track.edits, list.count >= 2, list.count <= MP4Movie.mostEdits else { return nil }
        let most = Double(Int64(1) << 62)
        var at = 0.0
        var edits: [Edit] = []
        for e in list {
            guard e.rate == 0x1_0000 else { return nil }
            let length = (Double(e.duration) * Double(scale) / Double(movieTimescale)).rounded()
            guard length < most else { return nil }
            if e.mediaTime < 0 {
                at += length  // an empty edit: time with nothing shown
                continue
            }
            // A media edit of no length ("to the end", as some writers end a list) is left to the demuxer.
            guard length > 0, Double(e.mediaTime) + length < most, edits.last.map({ e.mediaTime >= $0.end }) ?? true else { return nil }
            edits.append(Edit(start: e.mediaTime, end: e.mediaTime + Int64(length), at: Int64(at)))
            at += length
            guard at < most else { return nil }
        }
        guard edits.count >= 2 else { return nil }
        return MP4VideoEdits(edits: edits, timescale: scale)
    }
}

extension MP4Movie {
    /// Takes the edit list of the track at `index` (of the movie box's children) out (its `edts`
    /// becomes `free`, the same size), so that the demuxer gives all its frames at their media
    /// times. Without its edit list, the demuxer ends the track at its headers' durations (the
    /// edits' length, and the media's decode times): the track's and the movie's headers are
    /// raised to reach the last frame's presentation end, or frames past them would be dropped.
    /// Nothing changes size: a 32-bit duration is raised at most to its largest value.
    package mutating func removeEditList(ofTrackAt index: Int) {
        let track = MP4Track(box: moov.children[index])
        let offsets = track.box.find(["mdia", "minf", "stbl", "ctts"])?.read(CompositionOffsets.self)?.entries ?? []
        let latest = UInt64(max(0, offsets.map(\.offset).max() ?? 0))
        let (end, over) = track.sampleTableDuration.addingReportingOverflow(latest)
        hideEditList(ofTrackAt: index, mediaEnd: over ? .max : end, raisingMedia: true)
    }
}
