
/// Which samples of an MP4/M4A's sound track are the encoded input, as its edit list or its
/// iTunes gapless tag (`iTunSMPB`) says: what `decode` keeps (AVAssetReader gives the same).
///
/// GStreamer 1.22's demuxer applies an edit list by time and loses samples at both ends (a
/// 3 s, 132,300-sample file from ffmpeg decoded to 132,097), and reads no `iTunSMPB`. So
/// `decode` takes the sound tracks' edit lists out of the index on its way into the demuxer
/// (each `edts` box becomes `free`, the same size), which then gives every sample, priming and
/// all, and keeps the edit's samples itself (``AudioTrim``), exactly.
package struct MP4AudioEdit: Equatable {
    /// In the track's clock (`mdhd`), from the start of its media.
    package var start: Int64
    package var end: Int64
    package var timescale: Int

    /// Reads the sound tracks' edits from a `moov` box's bytes and takes them out of it (in
    /// place); returns the samples to keep of the `track`-th sound track (by track ID): the
    /// edit's, else the gapless tag's, else the whole media's. Nil for an edit list other than
    /// one plain edit (an empty edit first, several edits), or a track other than AAC or Opus,
    /// which is left to the demuxer.
    package static func take(from moov: inout [UInt8], track: Int) -> MP4AudioEdit? {
        guard let movie = try? MP4Movie(parsing: moov[...]) else { return nil }
        let sound = movie.tracks(handler: "soun")
        // AAC and Opus, whose decoded samples keep their media times (Opus' decoder drops its
        // pre-skip, which the edit also skips, and stamps the rest where they lie); other
        // codecs are left to the demuxer.
        guard track < sound.count, ["mp4a", "Opus"].contains(sound[track].track.sampleEntry) else { return nil }
        let edit = edit(of: sound[track].track, movieTimescale: movie.timescale, gapless: gaplessTag(in: moov))
        guard edit != nil else { return nil }
        // Every sound track's edit list goes (only the selected one is kept; the others are
        // discarded anyway), so that the demuxer gives all their samples.
        // Without its edit list, the demuxer ends a track at its header's duration (the edit's
        // length, in the movie's clock): each header, and the movie's, must reach the end of the
        // media, or the last frame is dropped.
        let soundOrder = Set(sound.map(\.index))
        var longest: UInt64 = 0
        var trakOrdinal = 0
        for (offset, size) in boxes(in: moov, 8..<moov.count) {
            guard moov.fourCC(offset + 4) == "trak" else { continue }
            defer { trakOrdinal += 1 }
            guard trakOrdinal < movie.trackIndices.count else { break }
            let index = movie.trackIndices[trakOrdinal]
            guard soundOrder.contains(index) else { continue }
            let track = movie.track(index)
            let length = (Double(track.sampleTableDuration) * Double(max(1, movie.timescale)) / Double(max(1, track.mediaTimescale))).rounded(.up)
            let mediaLength = length < 1.8e19 ? UInt64(length) : UInt64.max
            longest = max(longest, mediaLength)
            for (child, childSize) in boxes(in: moov, (offset + 8)..<(offset + size)) {
                switch moov.fourCC(child + 4) {
                case "edts": moov.replaceSubrange((child + 4)..<(child + 8), with: Array("free".utf8))
                case "tkhd": moov.raiseDuration(box: child, size: childSize, version0: 20, version1: 28, to: mediaLength)
                default: break
                }
            }
        }
        if let (mvhd, size) = boxes(in: moov, 8..<moov.count).first(where: { moov.fourCC($0.0 + 4) == "mvhd" }) {
            moov.raiseDuration(box: mvhd, size: size, version0: 16, version1: 24, to: longest)
        }
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

    /// iTunes' gapless tag: ` 00000000 <delay> <padding> <count> …` in hex, in the `data` box
    /// after the name `iTunSMPB` (moov/udta/meta/ilst/----).
    package static func gaplessTag(in moov: [UInt8]) -> (delay: Int64, count: Int64)? {
        let name = Array("iTunSMPB".utf8)
        guard moov.count > name.count,
              let at = (0...(moov.count - name.count)).first(where: { moov[$0..<($0 + name.count)].elementsEqual(name) }) else { return nil }
        let tail = moov[(at + name.count)...]
        guard let data = tail.indices.dropLast(3).first(where: { moov[$0..<($0 + 4)].elementsEqual("data".utf8) }),
              data >= 4 else { return nil }
        let size = Int(moov.u32(data - 4)), textStart = data + 12, textEnd = data - 4 + size
        guard size > 16, textEnd <= moov.count else { return nil }
        let words = String(decoding: moov[textStart..<textEnd], as: UTF8.self).split(separator: " ")
        guard words.count >= 4, let delay = Int64(words[1], radix: 16), let count = Int64(words[3], radix: 16),
              delay >= 0, count > 0 else { return nil }
        return (delay, count)
    }

    /// The boxes one after another in `range` of `bytes`: (offset, size), stopping at one that
    /// does not fit.
    package static func boxes(in bytes: [UInt8], _ range: Range<Int>) -> [(Int, Int)] {
        var found: [(Int, Int)] = []
        var at = range.lowerBound
        while at + 8 <= range.upperBound {
            var size = Int(bytes.u32(at))
            if size == 1, at + 16 <= range.upperBound { size = Int(clamping: bytes.u64(at + 8)) } else if size == 0 { size = range.upperBound - at }
            guard size >= 8, size <= range.upperBound - at else { break }
            found.append((at, size))
            at += size
        }
        return found
    }
}

extension [UInt8] {
    /// Raises the duration of the full box at `box` (of `size` bytes) to at least `value`, in
    /// place: the field is `version0` or `version1` bytes into its body.
    package mutating func raiseDuration(box: Int, size: Int, version0: Int, version1: Int, to value: UInt64) {
        let body = box + 8
        if self[body] == 1 {
            guard version1 + 8 <= size - 8, u64(body + version1) < value else { return }
            setU64(body + version1, value)
        } else {
            guard version0 + 4 <= size - 8, UInt64(u32(body + version0)) < value else { return }
            setU32(body + version0, UInt32(clamping: value))
        }
    }

    package func fourCC(_ at: Int) -> String { String(decoding: self[at..<(at + 4)], as: UTF8.self) }
}
