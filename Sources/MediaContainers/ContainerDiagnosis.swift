/// What a media file's own structure says about why it could not be decoded, in words a user
/// acts on: "ends at byte 8048 before its index: the file was not finished" rather than the
/// demuxer's "this file contains no playable streams".
///
/// A walk of headers only, never of the media: the top-level boxes of an ISO-BMFF file (MP4,
/// M4A, MOV), the pages of an Ogg file (their checksums too), a FLAC file's header and the size
/// of its first frame, the frames of an MP3 file. A run asks for it once a decode has failed
/// (and, when one succeeded, walks only an MP4's boxes, a few reads). It names only what it can
/// see: a structure it finds whole, or a format it does not know, gives nil, and the decoder's
/// own words stand. The formats' facts are this library's (``BoxWalker``, ``Ogg``, ``FLAC``,
/// ``MPEGAudio``); the words are here.
package struct ContainerDiagnosis: Sendable, Equatable {
    /// What is wrong, as the end of a sentence whose subject is the file ("ends at byte …").
    package let problem: String
    /// The file ends inside one of its parts or before its index: it was cut short or never
    /// finished. False for damage within it, which a decoder may step over.
    package var cutShort = false

    /// "ends at byte `offset``rest`": the file stops there, short of what its structure says.
    package static func ends(at offset: UInt64, _ rest: String) -> ContainerDiagnosis {
        ContainerDiagnosis(problem: "ends at byte \(offset)\(rest)", cutShort: true)
    }

    /// The sentence about the file named `name` (quoted path, as messages show inputs).
    package func sentence(about name: String) -> String { "\(name) \(problem)" }

    /// The diagnosis of the file at `path`, or nil when its structure shows nothing wrong, it is
    /// in a format this does not walk, or it cannot be opened. `indexOnly` walks only the boxes of
    /// an MP4 (a few reads, cheap enough for a run that succeeded: a file cut short behind its
    /// index decodes without error, and only this says that its end is missing); otherwise Ogg
    /// pages are checked too, which reads the whole file.
    package static func diagnose(path: String, indexOnly: Bool = false) -> ContainerDiagnosis? {
        guard let file = FileBytes(path: path) else { return nil }
        return diagnose(file, indexOnly: indexOnly)
    }

    /// The diagnosis of the bytes `source` holds (a file, or bytes in memory).
    package static func diagnose(_ source: some ByteSource, indexOnly: Bool = false) -> ContainerDiagnosis? {
        if source.count == 0 { return indexOnly ? nil : ContainerDiagnosis(problem: "is empty (0 bytes)") }
        if let found = isoBoxes(source) {
            if found.problem.isEmpty, !indexOnly { return videoTakenForAPreview(source) }
            return found.problem.isEmpty ? nil : found
        }
        if indexOnly { return nil }
        if let found = oggPages(source) ?? flacHeader(source) ?? mpegAudioFrames(source) {
            return found.problem.isEmpty ? nil : found
        }
        return nil
    }

    /// Each walk returns nil when the file is not in its format, a diagnosis with an empty
    /// problem when it is and nothing is wrong, or what is wrong.
    private static let intact = ContainerDiagnosis(problem: "")

    // MARK: ISO-BMFF (MP4, M4A, MOV)

    /// Types that may open an ISO-BMFF or QuickTime file.
    private static let openingBoxes: Set<FourCC> = ["ftyp", "moov", "mdat", "free", "skip", "wide", "pnot", "uuid", "styp", "sidx", "moof", "pdin", "meta", "junk"]

    /// Top-level boxes (``BoxWalker``). The index is `moov`; a recording killed before it was
    /// written has none, and its `mdat` often claims more bytes than the file holds.
    package static func isoBoxes(_ file: some ByteSource) -> ContainerDiagnosis? {
        var walker = BoxWalker(file)
        var sawIndex = false
        var boxes = 0
        while true {
            let next: BoxStep?
            do { next = try walker.next() } catch { return nil }  // a file that cannot be read says nothing
            guard let step = next else { break }
            let type: FourCC?, at: UInt64
            switch step {
            case .box(let extent): (type, at) = (extent.type, extent.offset)
            case .cut(let offset, let t): (type, at) = (t, offset)
            case .notABox(let offset, let t): (type, at) = (t, offset)
            }
            guard let type, type.isPrintable else {
                return boxes == 0 ? nil : truncated(at: at, cut: false, sawIndex: sawIndex, file: file)
            }
            if boxes == 0, !openingBoxes.contains(type) { return nil }
            switch step {
            case .cut:
                return truncated(at: at, cut: true, sawIndex: sawIndex, file: file)
            case .notABox:
                return boxes == 0 ? nil : truncated(at: at, cut: false, sawIndex: sawIndex, file: file)
            case .box(let extent):
                boxes += 1
                if extent.end > file.count {
                    if type == "moov" {
                        return .ends(at: file.count, ", inside its index (which runs to byte \(extent.end)): the file was cut short")
                    }
                    if !sawIndex { return .ends(at: file.count, " before its index: the file was not finished") }
                    let what = type == "mdat" ? "its media data" : "its \"\(type)\" box"
                    return .ends(at: file.count, ", inside \(what) (which runs to byte \(extent.end)): the file was cut short")
                }
                if type == "moov" { sawIndex = true }
            }
        }
        return sawIndex ? intact : .ends(at: file.count, " before its index: the file was not finished")
    }

    /// A movie whose every video track is left out by GStreamer's demuxer, which takes a video
    /// track lasting under a fifth of the movie (by their own clocks, `mdhd` against `mvhd`) for
    /// a trailer's preview picture: a track whose clock was rewritten (2³²−1 Hz, its 4 s then
    /// lasting 12 µs) was reported as "no video track". Nil when a video track is kept, or
    /// there is none.
    package static func videoTakenForAPreview(_ file: some ByteSource) -> ContainerDiagnosis? {
        // Only an MP4 or MOV by its first bytes has its index read (every M4A and WAV comes here).
        guard let format = try? MediaContainerFormat.detect(file), format == .mp4 || format == .mov,
              let movie = try? MP4File(file).movie() else { return nil }
        let videos = movie.tracks(handler: "vide").map(\.1)
        let movieScale = UInt64(max(0, movie.timescale)), movieTicks = movie.header?.duration ?? 0
        func isPreview(_ track: MP4Track) -> Bool {
            // qtdemux_parse_trak's test, in the same integers.
            guard let header = track.mediaHeader, header.duration != UInt64(UInt32.max), header.duration != .max else { return false }
            let (whole, over1) = UInt64(header.timescale).multipliedReportingOverflow(by: movieTicks)
            let (part, over2) = movieScale.multipliedReportingOverflow(by: header.duration)
            let (tenfold, over3) = part.multipliedReportingOverflow(by: 10)
            return !over1 && !over2 && !over3 && whole != 0 && tenfold / whole < 2
        }
        guard let first = videos.first, videos.allSatisfy(isPreview), let header = first.mediaHeader, header.timescale > 0, movieScale > 0 else { return nil }
        let seconds = Double(header.duration) / Double(header.timescale)
        let lasts = seconds > 0 && seconds < 0.001 ? "under a millisecond" : "\(HLSSegmenter.seconds(seconds)) s"
        let movieLasts = HLSSegmenter.seconds(Double(movieTicks) / Double(movieScale))
        return ContainerDiagnosis(problem: "has its video track \(first.trackID) lasting \(lasts) by its own clock (mdhd: \(header.duration) ticks "
                                  + "of \(header.timescale) Hz), under a fifth of the movie's \(movieLasts) s (mvhd), so GStreamer's demuxer "
                                  + "leaves it out as a preview picture: the file's timing is damaged")
    }

    /// The box structure breaks at `offset`: the file ends inside a box header (`cut`, or
    /// bytes that are no box in its last 16), or no box starts there. What follows is said as
    /// it is: a file that goes on past the break is not one that ends there (random bytes after
    /// a whole header once read "ends at byte 24" for a file of 100 KB).
    private static func truncated(at offset: UInt64, cut: Bool, sawIndex: Bool, file: some ByteSource) -> ContainerDiagnosis {
        let rest = file.count - offset
        if cut || rest < 16 {
            if !sawIndex { return .ends(at: file.count, " before its index: the file was not finished") }
            return .ends(at: file.count, ", inside a box header at byte \(offset): the file was cut short")
        }
        if !sawIndex {
            return ContainerDiagnosis(problem: "is damaged at byte \(offset): no MP4 box starts there, and no index came before it (\(rest) more bytes follow, which are not MP4 boxes)")
        }
        return ContainerDiagnosis(problem: "is damaged at byte \(offset): no box starts there")
    }

    // MARK: Ogg (Vorbis, Opus, FLAC in Ogg)

    /// Pages (``Ogg``); every page carries a CRC-32 of itself, so a changed byte anywhere is found.
    package static func oggPages(_ file: some ByteSource) -> ContainerDiagnosis? {
        guard (try? file.read(at: 0, count: 4)).map({ $0.elementsEqual(Ogg.capture) }) == true else { return nil }
        var offset: UInt64 = 0
        var page = 0
        while offset < file.count {
            page += 1
            guard let header = try? file.read(at: offset, count: Ogg.headerLength), header.count == Ogg.headerLength else {
                return .ends(at: file.count, ", inside the header of Ogg page \(page) at byte \(offset): the file was cut short")
            }
            guard Ogg.isPageHeader(header) else {
                return ContainerDiagnosis(problem: "is damaged at byte \(offset): Ogg page \(page) should start there and does not")
            }
            let segments = Int(header[26])
            guard let table = try? file.read(at: offset + UInt64(Ogg.headerLength), count: segments), table.count == segments else {
                return .ends(at: file.count, ", inside the header of Ogg page \(page) at byte \(offset): the file was cut short")
            }
            let size = Ogg.pageLength(segmentTable: table)
            guard offset + size <= file.count else {
                return .ends(at: file.count, ", inside Ogg page \(page) (which runs to byte \(offset + size)): the file was cut short")
            }
            guard let bytes = try? file.read(at: offset, count: Int(size)), bytes.count == Int(size) else { return nil }
            guard Ogg.checksumMatches(page: bytes) else {
                return ContainerDiagnosis(problem: "is damaged: Ogg page \(page), bytes \(offset) to \(offset + size), fails its checksum")
            }
            offset += size
        }
        return intact
    }

    // MARK: FLAC

    /// A FLAC file's header (``FLAC``): its metadata blocks whole, and room for its first frame
    /// (frames carry no size of their own; STREAMINFO gives the smallest's).
    package static func flacHeader(_ file: some ByteSource) -> ContainerDiagnosis? {
        let start = MPEGAudio.id3v2Length(file) ?? 0
        guard start < file.count else { return nil }
        guard (try? file.read(at: start, count: 4)).map({ $0.elementsEqual(FLAC.marker) }) == true else { return nil }
        var offset = start + 4
        var smallestFrame: UInt64 = 0
        var first = true
        while true {
            guard let bytes = try? file.read(at: offset, count: 4), let block = FLAC.BlockHeader(bytes) else {
                return .ends(at: file.count, ", inside its header: the file was cut short")
            }
            let end = offset + 4 + block.length
            guard end <= file.count else {
                return .ends(at: file.count, ", inside its header (which runs to byte \(end) at least): the file was cut short")
            }
            if first, block.type == 0, block.length >= 10, let info = try? file.read(at: offset + 4, count: 10) {
                smallestFrame = FLAC.smallestFrame(streamInfo: info)
            }
            first = false
            offset = end
            if block.isLast { break }
        }
        if offset == file.count {
            return .ends(at: file.count, ", right after its header: it holds no audio; the file was cut short")
        }
        if smallestFrame > 0, file.count - offset < smallestFrame {
            return .ends(at: file.count, ", inside its first audio frame (which starts at byte \(offset) and, as its header says, takes at least \(smallestFrame) bytes): the file was cut short")
        }
        return intact
    }

    // MARK: MP3 (MPEG audio)

    /// Frames of MPEG audio (``MPEGAudio``). Claimed only when a frame header is found where
    /// the file (or its tag) starts.
    package static func mpegAudioFrames(_ file: some ByteSource) -> ContainerDiagnosis? {
        let tag = MPEGAudio.id3v2Length(file)
        if let tag, tag > file.count {
            return .ends(at: file.count, ", inside its ID3 tag (which runs to byte \(tag)): the file was cut short")
        }
        var offset = tag ?? 0
        var frames = 0
        while offset < file.count {
            guard let h = try? file.read(at: offset, count: 4), h.count == 4 else {
                return frames == 0 ? nil : .ends(at: file.count, ", inside the header of MP3 frame \(frames + 1): the file was cut short")
            }
            guard let length = MPEGAudio.frameLength(h) else {
                // Not a frame: not MP3 at all, or damage (a decoder resynchronises past it).
                return frames == 0 ? nil : intact
            }
            if offset + length > file.count {
                let frame = frames == 0 ? "its first MP3 frame" : "MP3 frame \(frames + 1)"
                return .ends(at: file.count, ", inside \(frame) (which runs to byte \(offset + length)): the file was cut short")
            }
            frames += 1
            offset += length
        }
        return frames == 0 ? nil : intact
    }
}
