import Glibc

// The end of an MP4Writer's file: the last fragment, or the whole file's index, built once.

extension MP4Writer {
    // MARK: The end

    /// What the end of the file writes besides the tracks: the index edits (an audio encoder's
    /// delay, the display matrix, where the presentation ends, the date), the tags, a FLAC
    /// stream's header.
    package struct Ending: Sendable {
        package var edits = MP4Index.Edits()
        package var tags: [(key: FourCC, text: String)] = []
        package var extraTags = MP4ExtraTags()
        package var flacHeader: FLACStreamHeader?
        /// Ends the presentation where the shortest track's media ends (a length limit cut the
        /// inputs short, each where it was: the one that ran ahead is cut to the others).
        package var endWithShortestTrack = false
        /// Where the presentation starts on a named track's own clock (`AVAssetWriter.startSession`
        /// for samples written at their source's times, as a passthrough input's are): what
        /// comes before it stays in the file and is edited out, as AVFoundation writes it (a
        /// picture a later one depends on, an AAC packet the next one overlaps). A track not
        /// named is on the presentation's clock.
        package var presentationStarts: [String: (ticks: UInt64, timescale: UInt64)] = [:]
        package init() {}
    }

    /// Finishes the file: the last fragment, or the whole file's index. The file is complete
    /// when it returns; throws naming what failed (a write: errno's words).
    package mutating func finish(_ ending: Ending = Ending()) throws(ContainerError) {
        guard !ended else { return }
        if case .fragmented = layout {
            // Formats that never came: the file starts with the tracks that have them.
            if !started {
                let missing = tracks.indices.filter { tracks[$0].format == nil }
                guard missing.allSatisfy({ tracks[$0].count == 0 }) else { throw ContainerError("a track has samples and no format") }
                tracks.removeAll { $0.format == nil }
                guard !tracks.isEmpty else { throw ContainerError("no input gave a sample") }
                try startIfReady()
            }
            try writeFragment()
            try flush()
            ended = true
            return
        }
        try startIfReady()
        for t in tracks.indices { try endTrack(t) }
        try writeWaiting(all: true)
        try flush()
        ended = true
        let present = tracks.indices.filter { tracks[$0].count > 0 }
        guard !present.isEmpty else { throw ContainerError("no input gave a sample") }
        var movie = MP4Movie(moov: moov(tracks: present, ending: ending))
        // The tables are in the index now: let them go before it is written.
        for t in tracks.indices { tracks[t].tables = SampleTableBuilder() }  // (a spilled table stays, in the index, until it is written)
        var edits = ending.edits
        // Each track's header states where it ends on the movie's clock (from the file's start).
        if ending.endWithShortestTrack, let shortest = movie.trackIndices.map({ movie.track($0).duration }).min(), movie.timescale > 0 {
            let sooner = edits.presentationEnd.map { $0.timescale > 0 && Double($0.ticks) / Double($0.timescale) <= Double(shortest) / Double(movie.timescale) } ?? false
            if !sooner { edits.presentationEnd = (shortest, UInt64(movie.timescale)) }
        }
        MP4Index.edit(&movie, with: edits)
        ending.extraTags.apply(to: &movie.moov)
        for (key, text) in ending.tags { MP4ExtraTags.setText(key, text, in: &movie.moov) }
        switch layout {
        case .indexLast:
            // The media's size, 64 bits wide in place of `free` when it needs them.
            var header: [UInt8] = []
            let size = mediaBytes + 8
            if size <= UInt64(UInt32.max) {
                header.appendU32(8); header.appendU32(FourCC("free").rawValue)
                header.appendU32(UInt32(size)); header.appendU32(FourCC("mdat").rawValue)
            } else {
                header.appendU32(1); header.appendU32(FourCC("mdat").rawValue); header.appendU64(mediaBytes + 16)
            }
            movie.moveChunkOffsets { $0 + self.mediaStart }
            try flush()
            // In pieces: an index of hours is not held twice.
            try movie.moov.write(inPiecesOf: Self.bufferBytes) { (piece) throws(ContainerError) in try write(piece) }
            do { try Self.pwriteAll(fd, header, at: mdatHeaderAt) } catch { failedWriting = true; throw error }
        case .indexFirst:
            let ftyp = fileType.bytes
            let wide = mediaBytes + 8 > UInt64(UInt32.max)
            let headerSize = UInt64(wide ? 16 : 8)
            // Where the media will start decides the offsets, whose width can change the index's
            // size: measured, then placed.
            var start = UInt64(ftyp.count) + movie.moov.length() + headerSize
            var placed = movie
            for _ in 0..<3 {
                placed = movie
                let s = start
                placed.moveChunkOffsets { $0 + s }
                let next = UInt64(ftyp.count) + placed.moov.length() + headerSize
                if next == start { break }
                start = next
            }
            var header: [UInt8] = []
            if wide {
                header.appendU32(1); header.appendU32(FourCC("mdat").rawValue); header.appendU64(mediaBytes + 16)
            } else {
                header.appendU32(UInt32(mediaBytes + 8)); header.appendU32(FourCC("mdat").rawValue)
            }
            guard UInt64(ftyp.count) + placed.moov.length() + UInt64(header.count) == start else { throw ContainerError("the index's size did not settle") }
            do {
                // The media, written from the file's start, moves up in place to make room for the
                // head, as ffmpeg's faststart moves it (the pages are the file's own, still in the
                // page cache as a rule: no second file, nothing forced to the disk).
                try Self.moveUp(fd, count: mediaBytes, by: start)
                try Self.pwriteAll(fd, ftyp, at: 0)
                // The index in pieces: one of hours is not held twice.
                var at = UInt64(ftyp.count)
                try placed.moov.write(inPiecesOf: Self.bufferBytes) { (piece) throws(ContainerError) in
                    try Self.pwriteAll(fd, piece, at: at)
                    at += UInt64(piece.count)
                }
                try Self.pwriteAll(fd, header, at: at)
            } catch {
                failedWriting = true
                throw error
            }
        case .fragmented:
            break
        }
    }

    /// The index of the whole file: every track's sample tables, edits and entry, offsets from
    /// the media's first byte.
    func moov(tracks present: [Int], ending: Ending) -> MP4Box {
        let movieScale: UInt64 = 1000
        // The earliest presentation of all: the file's start. (A track given the media it shows
        // starts there.)
        func shownFrom(_ track: Track) -> Int64 {
            guard let shown = track.format?.shownMedia, let first = track.firstDecode else { return track.minPresentation }
            return first &+ shown.start
        }
        // Each track's first picture or sound on the presentation's clock: below 0 for a track
        // whose samples begin before the presentation does (``Ending/presentationStarts``).
        let starts = present.map { t in
            let first = Double(shownFrom(tracks[t])) / Double(tracks[t].format?.timescale ?? 1)
            guard let start = ending.presentationStarts[tracks[t].name], start.timescale > 0 else { return first }
            return first - Double(start.ticks) / Double(start.timescale)
        }
        // From the earliest, so that a file's first track starts it; or at a stated start, as
        // AVFoundation's session starts the file: what comes before it is edited out, and a
        // track that begins after it begins with an empty edit (its lead kept).
        let origin = ending.presentationStarts.isEmpty ? starts.min() ?? 0 : 0
        var traks: [MP4Box] = []
        var longest: UInt64 = 0
        for (k, t) in present.enumerated() {
            let track = tracks[t]
            guard var format = track.format else { continue }
            let tables = track.tables
            var entry: MP4Box?
            if case .flac = format.codec, let header = ending.flacHeader {
                var h = header
                let held = tables.mediaDuration
                if h.totalSamples != held {
                    if h.totalSamples != 0 { h.md5 = [UInt8](repeating: 0, count: 16) }
                    h.totalSamples = held
                }
                if h.frameSizes.smallest == 0 || h.frameSizes.largest == 0, tables.count > 0 {
                    h.frameSizes = (Int(tables.smallestSize), Int(tables.largestSize))
                }
                entry = h.sampleEntry()
            }
            let scale = UInt64(format.timescale)
            let mediaDuration = tables.mediaDuration
            // The first presentation, in the media (B-frames: after the first decode), and from the
            // first picture shown to the end of the last one; or the media given.
            let lastDuration = track.lastShown < tables.count ? Int64(track.lastShownDuration) : 0
            // What shows before the presentation starts is edited out: the edit begins that much later in the media.
            let early = Int64(saturating: max(0, origin - starts[k]) * Double(scale))
            let (sum, past) = max(0, format.shownMedia?.start ?? (track.minPresentation &- (track.firstDecode ?? 0))).addingReportingOverflow(early)
            let mediaTime = past ? Int64.max : sum
            // A given edit ends where the samples written do (a copy stopped, or cut by a length limit).
            let written = track.maxPresentation &+ lastDuration &- (track.firstDecode ?? 0)
            let whole = format.shownMedia.map { min($0.duration, UInt64(clamping: written &- $0.start)) }
                ?? UInt64(clamping: track.maxPresentation &- track.minPresentation &+ lastDuration)
            let shown = whole > UInt64(early) && !past ? whole - UInt64(early) : 0
            let shownMovie = UInt64((Double(shown) * Double(movieScale) / Double(scale)).rounded())
            let lateBy = UInt64(max(0, ((starts[k] - origin) * Double(movieScale)).rounded()))
            var edits: [EditList.Edit] = []
            if lateBy > 0 { edits.append(EditList.Edit(duration: lateBy, mediaTime: -1)) }
            if lateBy > 0 || mediaTime > 0 || format.shownMedia != nil { edits.append(EditList.Edit(duration: shownMovie, mediaTime: mediaTime)) }
            let trackDuration = lateBy &+ shownMovie
            longest = max(longest, edits.isEmpty ? UInt64((Double(mediaDuration) * Double(movieScale) / Double(scale)).rounded()) : trackDuration)
            format.gapless = nil
            // Every description the track has had, in order (FLAC's one is its stream header).
            let entries = entry.map { [$0] } ?? track.descriptions.map { d in
                var d = d
                d.gapless = nil
                return d.sampleEntry
            }
            traks.append(format.trak(tables: tables.boxes(),
                                     mediaDuration: mediaDuration,
                                     trackDuration: edits.isEmpty ? UInt64((Double(mediaDuration) * Double(movieScale) / Double(scale)).rounded()) : trackDuration,
                                     edits: edits, stsdEntries: entries))
        }
        var moov = MP4Box(type: "moov", children: [CMAF.movieHeader(duration: longest, nextTrackID: UInt32(tracks.count + 1))] + traks)
        moov.sizeField = .compact
        return moov
    }

    var fileType: MP4Box {
        switch brand {
        // As AVFoundation writes them: MP4 version 2, iTunes' audio file, QuickTime.
        case .mp4: MP4Box(FileType(majorBrand: "mp42", minorVersion: 0, compatibleBrands: ["mp42", "mp41", "isom", "iso2"] + Self.codecBrands(tracks)))
        case .m4a: MP4Box(FileType(majorBrand: "M4A ", minorVersion: 0, compatibleBrands: ["M4A ", "mp42", "isom", "iso2"]))
        case .mov: MP4Box(FileType(majorBrand: "qt  ", minorVersion: 0, compatibleBrands: ["qt  "]))
        }
    }

    static func codecBrands(_ tracks: [Track]) -> [FourCC] {
        var brands: [FourCC] = []
        for t in tracks {
            switch t.format?.codec {
            case .h264?: brands.append("avc1")
            case .av1?: brands.append("av01")
            case .opus?: brands.append("Opus")
            default: break
            }
        }
        return brands
    }


    // MARK: Bytes

    mutating func write(_ bytes: [UInt8]) throws(ContainerError) {
        try flush()
        let failed = bytes.withUnsafeBytes { Self.writeAll(destination, $0, at: nil) }
        try check(failed)
    }

    mutating func check(_ failed: Int32) throws(ContainerError) {
        guard failed != 0 else { return }
        failedWriting = true
        throw ContainerError(String(cString: strerror(failed)))
    }

    mutating func flush() throws(ContainerError) {
        guard !pending.isEmpty else { return }
        let failed = pending.withUnsafeBytes { Self.writeAll(destination, $0, at: nil) }
        pending.removeAll(keepingCapacity: true)
        try check(failed)
    }

    mutating func writeOut(_ raw: UnsafeRawBufferPointer) throws(ContainerError) {
        try check(Self.writeAll(destination, raw, at: nil))
    }

    /// Tests: leaves the next `count` bytes of an index-last file's media unwritten (a hole: no
    /// disk taken), as if samples no track refers to filled them, so that the 64-bit sizes and
    /// offsets past 4 GiB are written and read back without writing 4 GiB.
    package mutating func leaveUnwritten(_ count: UInt64) throws(ContainerError) {
        guard case .indexLast = layout, started, !ended else { throw ContainerError("only an index-last file being written can have a hole") }
        try flush()
        guard lseek(fd, off_t(count), SEEK_CUR) >= 0 else { try check(errno); return }
        mediaBytes += count
    }

    /// The media's destination: the file, from where the writer is (an index-first file's media
    /// from its start: the head goes before it at the end).
    var destination: Int32 { fd }

    /// Writes all of `raw` to `fd` (at `offset`, or where it is); 0, or the errno of the failure.
    static func writeAll(_ fd: Int32, _ raw: UnsafeRawBufferPointer, at offset: UInt64?) -> Int32 {
        var done = 0
        while done < raw.count {
            let n = offset.map { pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t($0) + off_t(done)) }
                ?? Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return n < 0 ? errno : EIO }
            done += n
        }
        return 0
    }

    static func pwriteAll(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64) throws(ContainerError) {
        let failed = bytes.withUnsafeBytes { writeAll(fd, $0, at: offset) }
        if failed != 0 { throw ContainerError(String(cString: strerror(failed))) }
    }

    /// Moves the first `count` bytes of `fd` up by `by`, from the end back, 4 MiB at a time.
    static func moveUp(_ fd: Int32, count: UInt64, by: UInt64) throws(ContainerError) {
        let step: UInt64 = 4 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: Int(step), alignment: 4096)
        defer { buffer.deallocate() }
        var end = count
        while end > 0 {
            let n = min(step, end)
            let from = end - n
            var done: UInt64 = 0
            while done < n {
                let r = pread(fd, buffer + Int(done), Int(n - done), off_t(from + done))
                if r < 0, errno == EINTR { continue }
                guard r > 0 else { throw ContainerError(r == 0 ? "its media ended \(count - from - done) bytes early" : String(cString: strerror(errno))) }
                done += UInt64(r)
            }
            let failed = writeAll(fd, UnsafeRawBufferPointer(start: buffer, count: Int(n)), at: from + by)
            if failed != 0 { throw ContainerError(String(cString: strerror(failed))) }
            end = from
        }
    }
}
