// A movie's chapters, in the two forms MP4/M4A/MOV files carry them: a QuickTime chapter track
// (a text track that another track names in its `tref/chap` box: one sample a chapter, its title
// the sample's text, its time the sample's; what AVFoundation reads and writes, and ffmpeg
// writes for MP4 and MOV) and Nero's list (`moov/udta/chpl`: starts and titles; what ffmpeg
// writes beside its chapter track, and ``MP4ExtraTags`` writes).

extension MP4Movie {
    /// The movie's chapters: its QuickTime chapter track's when it has one (titles read from the
    /// track's samples in `source`, the file this index belongs to), else Nero's list. Empty when
    /// there is neither, or what there is cannot be read.
    package func chapters(in source: some ByteSource) -> [MediaMetadata.Chapter] {
        let track = quickTimeChapters(in: source)
        return track.isEmpty ? neroChapters : track
    }

    /// The most chapters read from one file: far more than any real file has; the limit only
    /// bounds what a damaged table costs.
    package static let mostChapters = 10_000

    /// The chapters of Nero's list (`moov/udta/chpl`), each start and title, in order; empty when
    /// there is none or it cannot be read.
    package var neroChapters: [MediaMetadata.Chapter] {
        guard let body = moov.find(["udta", "chpl"])?.body, body.count >= 5 else { return [] }
        // Version and flags, then (version 1) 4 reserved bytes, then a count of one byte.
        var i = body[0] == 1 ? 8 : 4
        guard i < body.count else { return [] }
        let count = Int(body[i])
        i += 1
        var out: [MediaMetadata.Chapter] = []
        for _ in 0..<count {
            guard i + 9 <= body.count else { return out }
            var start: UInt64 = 0
            for b in body[i..<(i + 8)] { start = start << 8 | UInt64(b) }
            let length = Int(body[i + 8])
            i += 9
            guard i + length <= body.count else { return out }
            let title = String(decoding: body[i..<(i + length)], as: UTF8.self)
            i += length
            out.append(MediaMetadata.Chapter(start: Double(start) / 10_000_000, title: title))  // 100 ns units
        }
        return out
    }

    /// The QuickTime chapter track: the first track that a `tref/chap` box of another track
    /// names (by track ID), when it is there.
    package var chapterTrack: MP4Track? {
        for i in trackIndices {
            guard let reference = track(i).box.find(["tref", "chap"]) else { continue }
            var r = ByteReader(reference.body)
            while let id = try? r.u32() {
                if id != 0, let t = trackIndices.first(where: { track($0).trackID == id }) { return track(t) }
            }
        }
        return nil
    }

    /// The chapters of the QuickTime chapter track: each sample is one, its text (a 16-bit
    /// length, then the title: UTF-8, or UTF-16 after a byte-order mark, as QuickTime's text
    /// and 3GPP timed text samples hold it) shown from the sample's time for its duration. The
    /// times are on the movie's timeline, through the track's edit list (empty edits first delay
    /// it; the first edit that shows media says where its media starts). Empty without such a
    /// track, or when its sample table cannot be read.
    package func quickTimeChapters(in source: some ByteSource) -> [MediaMetadata.Chapter] {
        guard let track = chapterTrack, track.mediaTimescale > 0,
              let samples = try? track.samples(fileSize: source.count) else { return [] }
        let scale = Double(track.mediaTimescale)
        var delay = 0.0
        var mediaStart: Int64 = 0
        if let edits = track.edits, timescale > 0 {
            for edit in edits {
                guard edit.mediaTime >= 0 else {
                    delay += Double(edit.duration) / Double(timescale)
                    continue
                }
                mediaStart = edit.mediaTime
                break
            }
        }
        var out: [MediaMetadata.Chapter] = []
        for sample in samples.prefix(Self.mostChapters) {
            let start = Double(Int64(sample.decodeTime) - mediaStart) / scale + delay
            let end = start + Double(sample.duration) / scale
            // A sample the edit list starts after is not shown.
            guard end > 0, sample.size >= 2,
                  let bytes = try? source.read(at: sample.offset, count: Int(min(sample.size, 2 + 0xFFFF))), bytes.count >= 2 else { continue }
            let length = Int(bytes[0]) << 8 | Int(bytes[1])
            let text = bytes[2..<min(bytes.count, 2 + length)]
            out.append(MediaMetadata.Chapter(start: max(0, start), end: end, title: Self.chapterTitle(text)))
        }
        return out
    }

    /// A text sample's text: UTF-16 after a byte-order mark (big- or little-endian), else UTF-8.
    static func chapterTitle(_ text: ArraySlice<UInt8>) -> String {
        if text.count >= 2, let first = text.first, first == 0xFE || first == 0xFF, text[text.startIndex + 1] == (first == 0xFE ? 0xFF : 0xFE) {
            return TagText.utf16(text, bigEndian: true)  // the mark says which order, and is dropped
        }
        return TagText.utf8(text)
    }

    /// The language of the chapter track's titles (its media header's), ISO 639-2/T; nil when
    /// undetermined or without a chapter track.
    package var chapterLanguage: String? { chapterTrack?.languageCode }
}
