/// Which samples of an MP4/M4A's sound track are the encoded input, as its edit list or its
/// iTunes gapless tag (`iTunSMPB`) says: what `decode` keeps (AVAssetReader gives the same).
///
/// GStreamer 1.22's demuxer applies an edit list by time and loses samples at both ends (a
/// 3 s, 132,300-sample file from ffmpeg decoded to 132,097), and reads no `iTunSMPB`. So
/// `decode` takes the sound tracks' edit lists out of the index on its way into the demuxer
/// (each `edts` box becomes `free`, the same size), which then gives every sample, priming and
/// all, and keeps the edit's samples itself (the gkaudiotrim element), exactly.
package struct MP4AudioEdit: Sendable, Equatable {
    /// In the track's clock (`mdhd`), from the start of its media.
    package var start: Int64
    package var end: Int64
    package var timescale: Int

    /// Reads the sound tracks' edits from a `moov` box's bytes and takes them out of it (in
    /// place: the count stays); returns the samples to keep of the `track`-th sound track (by
    /// track ID): the edit's, else the gapless tag's, else the whole media's. Nil, and the bytes
    /// as they were, for an edit list other than one plain edit (an empty edit first, several
    /// edits), a track other than AAC or Opus, or an index that does not read: left to the
    /// demuxer.
    package static func take(from moov: inout [UInt8], track: Int) -> MP4AudioEdit? {
        guard var movie = try? MP4Movie(parsing: moov[...]), let edit = movie.audioEdit(track: track) else { return nil }
        movie.removeSoundEditLists()
        let edited = movie.bytes
        guard edited.count == moov.count else { return nil }
        moov = edited
        return edit
    }

    /// The samples an edit list or a gapless tag keeps of `track`.
    package static func edit(of track: MP4Track, movieTimescale: Int, gapless: (delay: Int64, count: Int64)?) -> MP4AudioEdit? {
        // Every number comes from the file and may be damaged: none may overflow.
        let scale = track.mediaTimescale, mediaEnd = Int64(clamping: track.sampleTableDuration)
        guard scale > 0, movieTimescale > 0, mediaEnd > 0, mediaEnd < Int64.max else { return nil }
        let edits = track.edits ?? []
        if edits.count == 1, let e = edits.first, e.mediaTime >= 0 {
            // The edit's length is in the movie's clock: to the track's, rounded. Where that
            // lands within one movie tick of the sample table's end, the table's end is exact.
            let length = (Double(e.duration) * Double(scale) / Double(movieTimescale)).rounded()
            guard length < 9e18, case (var end, false) = e.mediaTime.addingReportingOverflow(Int64(length)) else { return nil }
            let tick = Int64((Double(scale) / Double(movieTimescale)).rounded(.up))
            if abs(end - mediaEnd) <= tick { end = mediaEnd }
            let whole = e.mediaTime == 0 && end == mediaEnd
            if !whole { return MP4AudioEdit(start: e.mediaTime, end: min(end, mediaEnd), timescale: scale) }
        } else if !edits.isEmpty {
            return nil
        }
        if let gapless, case let (end, false) = gapless.delay.addingReportingOverflow(gapless.count), end <= mediaEnd {
            return MP4AudioEdit(start: gapless.delay, end: gapless.delay + gapless.count, timescale: scale)
        }
        // Nothing to skip: every sample of the media, to the sample table's end (the demuxer
        // alone would end at the header's duration, rounded to the movie's clock).
        return MP4AudioEdit(start: 0, end: mediaEnd, timescale: scale)
    }

    /// iTunes' gapless tag, `iTunSMPB`: ` 00000000 <delay> <padding> <count> …` in hex, a
    /// freeform item of the movie's metadata (moov/udta/meta/ilst/----).
    package static func gaplessTag(in movie: MP4Movie) -> (delay: Int64, count: Int64)? {
        guard let item = movie.metadataItems.first(where: { $0.key == "----" && $0.name == "iTunSMPB" }),
              let text = item.values.first?.text else { return nil }
        let words = text.split(separator: " ")
        guard words.count >= 4, let delay = Int64(words[1], radix: 16), let count = Int64(words[3], radix: 16),
              delay >= 0, count > 0 else { return nil }
        return (delay, count)
    }
}

extension MP4Movie {
    /// The samples `decode` keeps of its `track`-th sound track (by track ID): its edit's,
    /// else its gapless tag's, else the whole media's. Nil for an edit list other than one
    /// plain edit, or a codec other than AAC or Opus: left to the demuxer.
    package func audioEdit(track: Int) -> MP4AudioEdit? {
        let sound = tracks(handler: "soun")
        // AAC and Opus, whose decoded samples keep their media times (Opus' decoder drops its
        // pre-skip, which the edit also skips, and stamps the rest where they lie); other
        // codecs are left to the demuxer.
        guard track >= 0, track < sound.count, let format = sound[track].track.sampleEntry, ["mp4a", "Opus"].contains(format) else { return nil }
        return MP4AudioEdit.edit(of: sound[track].track, movieTimescale: timescale, gapless: MP4AudioEdit.gaplessTag(in: self))
    }

    /// Takes every sound track's edit list out (each `edts` becomes `free`, the same size), so
    /// that the demuxer gives all their samples, priming and all. Without its edit list, the
    /// demuxer ends a track at its header's duration (the edit's length, in the movie's clock):
    /// each sound track's header, and the movie's, are raised to reach the end of its media, or
    /// the last frame would be dropped. Nothing changes size: a 32-bit duration is raised at
    /// most to its largest value.
    package mutating func removeSoundEditLists() {
        for (i, track) in tracks(handler: "soun") { hideEditList(ofTrackAt: i, mediaEnd: track.sampleTableDuration) }
    }

    /// Turns the edit list of the track at `index` (of the movie box's children) into a `free`
    /// box of its size, and raises the track's and the movie's headers to reach `mediaEnd` (in
    /// the track's clock; the media header too when `raisingMedia`), within what each holds.
    mutating func hideEditList(ofTrackAt index: Int, mediaEnd: UInt64, raisingMedia: Bool = false) {
        let track = MP4Track(box: moov.children[index])
        let length = (Double(mediaEnd) * Double(max(1, timescale)) / Double(max(1, track.mediaTimescale))).rounded(.up)
        let movieLength = length < 1.8e19 ? UInt64(length) : UInt64.max
        moov.children[index].modify(["edts"]) { edts in
            edts = MP4Box(type: FourCC("free"), body: edts.body, sizeField: edts.sizeField)
        }
        moov.children[index].update(["tkhd"], as: TrackHeader.self) { $0.raiseDuration(to: movieLength) }
        if raisingMedia {
            moov.children[index].update(["mdia", "mdhd"], as: MediaHeader.self) { header in
                header.duration = max(header.duration, header.times.version == 1 ? mediaEnd : min(mediaEnd, UInt64(UInt32.max)))
            }
        }
        moov.update(["mvhd"], as: MovieHeader.self) { $0.raiseDuration(to: movieLength) }
    }
}

extension TrackHeader {
    /// Raises the duration to at least `value`, within what its version holds.
    mutating func raiseDuration(to value: UInt64) {
        duration = max(duration, version == 1 ? value : min(value, UInt64(UInt32.max)))
    }
}

extension MovieHeader {
    mutating func raiseDuration(to value: UInt64) {
        duration = max(duration, version == 1 ? value : min(value, UInt64(UInt32.max)))
    }
}

extension MP4AudioEdit {
    /// The boxes one after another in `range` of `bytes`: (offset, size), stopping at one that
    /// does not fit. For callers that slice bytes by hand (a test's); ``MP4File`` and
    /// ``MP4Box/parse(_:)`` read boxes.
    package static func boxes(in bytes: [UInt8], _ range: Range<Int>) -> [(Int, Int)] {
        var walker = BoxWalker(MemoryBytes(bytes[range]))
        var found: [(Int, Int)] = []
        while case .box(let extent)? = try? walker.next(), extent.end <= UInt64(range.count) {
            found.append((range.lowerBound + Int(extent.offset), Int(extent.size)))
        }
        return found
    }
}

extension [UInt8] {
    /// The four characters at `at`.
    package func fourCC(_ at: Int) -> String { FourCC(UInt32(self[at]) << 24 | UInt32(self[at + 1]) << 16 | UInt32(self[at + 2]) << 8 | UInt32(self[at + 3])).description }
}
