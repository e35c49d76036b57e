// A time range of an MP4 copied into a new MP4 without decoding (what `ffmpeg -ss -t -c copy`
// and AVAssetExportSession's passthrough preset do): each track's samples from where a decoder
// can start (the video's key frame at or before the range's start, the sound's packet before the
// one holding it, for the AAC decoder's overlap) to the range's end, and an edit list per track
// that shows exactly the range: the frames and sound before its start are decoded, not shown.
// The new index is written before the media (faststart) or after it; the samples are copied as
// they are.

/// The new file: its first bytes (ftyp, moov, the mdat's header), then the source's byte
/// ranges to copy after them, in order.
package struct MP4Trim: Sendable {
    /// `ftyp`, the new `moov` and the `mdat` header (with the index last, no `moov`).
    package var header: [UInt8]
    /// The `moov` when the index goes last, else nothing.
    package var trailer: [UInt8]
    /// Where in the source each run of the new file's media lies, in the order they are written.
    package var copies: [(offset: UInt64, count: Int)]
    /// The range shown, in seconds.
    package var duration: Double

    package var mediaBytes: Int { copies.reduce(0) { $0 + $1.count } }

    /// The range [`start`, `end`) (seconds on the presentation timeline) of the first video and
    /// first audio track of `movie` (the other tracks are left out), and of `chapters` (the
    /// movie's, ``MP4Movie/chapters(in:)``; by default its Nero list's): those that show in the
    /// range, from where they show, on the new file's timeline. Throws, naming the track, for a
    /// damaged sample table, and when the range holds no sample.
    package init(movie: MP4Movie, fileSize: UInt64, fileType: MP4Box?, start: Double, end: Double, indexFirst: Bool = true,
                 chapters: [MediaMetadata.Chapter]? = nil) throws(ContainerError) {
        guard start.isFinite, end.isFinite, start >= 0, end > start else {
            throw ContainerError("the range \(start) s to \(end) s is not a range of it")
        }
        // A join of one piece per track: the tracks with a sample in the range, in the file's order.
        let plan = try HLSSegmentPlan(movie: movie, fileSize: fileSize, target: 1_000_000)
        var tracks: [(index: Int, track: MP4Join.Track)] = []
        var planned: [String: HLSSegmentPlan.Track] = [:]
        for track in plan.tracks where try MP4Join.cut(track, start: start, end: end) != nil {
            let handler: FourCC = movie.track(track.index).handler ?? "vide"
            tracks.append((track.index, MP4Join.Track(handler: handler, parts: [.media(source: 0, indexInType: 0, start: start, end: end)])))
            planned["0 \(track.index)"] = track
        }
        guard !tracks.isEmpty else { throw ContainerError("no sample of its video or sound lies between \(start) s and \(end) s") }
        let join = try MP4Join(sources: [MP4Join.Source(name: "it", movie: movie, fileSize: fileSize, chapters: chapters)],
                               tracks: tracks.sorted { $0.index < $1.index }.map(\.track), fileType: fileType, indexFirst: indexFirst, planned: planned)
        header = join.header
        trailer = join.trailer
        copies = join.copies.map { ($0.offset, $0.count) }
        duration = end - start
    }
}
