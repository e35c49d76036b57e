import Glibc

/// Writes an MP4, M4A or MOV file from encoded samples as they arrive: GraphKit's one MP4 writer,
/// on the box model this library reads and edits (``MP4Box``, ``MP4TrackFormat``).
///
/// - Whole files (``Layout/indexLast``, ``Layout/indexFirst(scratch:)``): each sample's bytes are
///   written as it comes, in chunks of a track's samples (at most half a second and 1 MiB), the
///   tracks interleaved as they arrive; the index (sample tables, edit lists, display matrix,
///   tags) is built once at the end, from what was written, never by editing a finished file.
///   Index last: `ftyp`, the media, `moov`; the media's header is written at the start and its
///   size set at the end (16 bytes kept, so a file past 4 GiB takes a 64-bit size). Index first
///   (faststart): the media goes into an unnamed scratch file, and the end writes `ftyp`, `moov`
///   and the media after it (`copy_file_range`: no pass through this process).
/// - Fragmented files (``Layout/fragmented(seconds:)``): `ftyp` and a `moov` of empty tables once
///   every track's format is known, then a `moof` + `mdat` fragment about every `seconds`, cut
///   before a key frame of the video (every sample of a sound-only file is one): a file cut short
///   (a killed recording) plays up to its last whole fragment.
///
/// Times are each track's ticks (``MP4TrackFormat/timescale``) on one clock for all tracks (a
/// run's): a track starting after the earliest one gets an empty edit for the difference, and a
/// track whose first presentation is after its first decode (B-frames) an edit from it, as
/// ffmpeg and GStreamer's muxer write them. A sample's duration is the next one's decode time
/// less its own; the last one's is its own stated duration (else the one before's).
///
/// Memory: the index entries (about 40 bytes a sample), a write buffer of 1 MiB, and for a
/// fragmented file the samples of the fragment being gathered. Every number a stream gives is
/// bounded: nothing traps.
package struct MP4Writer: Sendable {
    package enum Brand: Sendable, Equatable { case mp4, m4a, mov }
    package enum Layout: Sendable, Equatable {
        case indexLast
        case indexFirst(scratch: Int32)
        case fragmented(seconds: Double)
    }

    /// A chunk holds at most this long of a track's samples, and this many bytes.
    package static let chunkSeconds = 0.5
    package static let chunkBytes = 1 << 20
    /// A fragment is cut, key frame or not, when its samples pass this many bytes.
    package static let fragmentBytes = 64 << 20
    static let bufferBytes = 1 << 20

    struct Track: Sendable {
        var name: String
        var format: MP4TrackFormat?
        /// Whole files: every sample, offsets from the media's first byte.
        var samples: [MP4Sample] = []
        var chunkSizes: [Int] = []
        var chunkOffsets: [UInt64] = []
        var chunkStart: Int64 = 0
        var chunkBytes = 0
        var firstDecode: Int64?
        var lastDecode: Int64 = 0
        var minPresentation: Int64 = .max
        /// The latest presentation, and which sample has it (whose duration ends the track).
        var maxPresentation: Int64 = .min
        var lastShown = 0
        var count = 0
        /// Fragmented files: the samples gathered since the last fragment and their bytes.
        var run: [MP4Sample] = []
        var runData: [UInt8] = []
        var runBase: UInt64 = 0
        var nextBase: UInt64 = 0
        var mediaDuration: UInt64 = 0
    }

    let fd: Int32
    package let brand: Brand
    package let layout: Layout
    private(set) var tracks: [Track]
    /// Bytes waiting to be written.
    private var pending: [UInt8] = []
    /// Sample bytes placed in the media so far.
    private var mediaBytes: UInt64 = 0
    /// Whole files: where the media's header is (index last), and where its first byte is in
    /// what is written to its destination.
    private var mdatHeaderAt: UInt64 = 0
    private var mediaStart: UInt64 = 0
    private var lastTrack: Int?
    private var sequence: UInt32 = 1
    private var fragmentStart: Int64?
    private var started = false
    private var ended = false

    /// A writer of `trackNames.count` tracks (named in errors: "audio", "video") into `fd`, open
    /// for writing at its start (a sink's temporary file; the writer never opens or closes it).
    package init(descriptor fd: Int32, brand: Brand, layout: Layout, trackNames: [String]) {
        self.fd = fd
        self.brand = brand
        self.layout = layout
        tracks = trackNames.map { Track(name: $0) }
    }

    /// Track `t`'s format, before its first sample (the encoder's caps; a later one that differs
    /// is refused: one sample description a track).
    package mutating func setFormat(_ format: MP4TrackFormat, track t: Int) throws(ContainerError) {
        guard tracks.indices.contains(t) else { throw ContainerError("there is no track \(t + 1)") }
        var format = format
        format.trackID = UInt32(t + 1)
        format.quickTime = brand == .mov
        if let old = tracks[t].format {
            guard tracks[t].count == 0 || Self.sameStream(old, format) else {
                throw ContainerError("the \(tracks[t].name) input's format changed in the stream (\(old.codecName) to \(format.codecName)): a track holds one")
            }
            // Facts known later (the display matrix, colour) are kept.
            if format.colour == nil { format.colour = old.colour }
            if format.displayMatrix == nil { format.displayMatrix = old.displayMatrix }
        }
        tracks[t].format = format
        try startIfReady()
    }

    /// Sets a fact of track `t`'s format known after its caps (a display matrix from a tag).
    package mutating func updateFormat(track t: Int, _ change: (inout MP4TrackFormat) -> Void) {
        guard tracks.indices.contains(t), var f = tracks[t].format else { return }
        change(&f)
        tracks[t].format = f
    }

    static func sameStream(_ a: MP4TrackFormat, _ b: MP4TrackFormat) -> Bool {
        var (a, b) = (a, b)
        (a.colour, b.colour, a.displayMatrix, b.displayMatrix, a.gapless, b.gapless) = (nil, nil, nil, nil, nil, nil)
        return a == b
    }

    /// A track that will have no sample (an input that ended before its format): left out.
    package var tracksWithSamples: [Int] { tracks.indices.filter { tracks[$0].count > 0 } }

    /// Adds a sample of track `t`: its bytes, its decode and presentation times in the track's
    /// ticks, its own duration when stated (the last sample's), and whether a decoder can start
    /// at it. Throws for a track without a format, decode times that do not rise, a write that
    /// fails (the disk full: errno's words).
    package mutating func append(track t: Int, bytes: UnsafeRawBufferPointer, decodeTime: Int64, presentationTime: Int64,
                                 duration: Int64?, isSync: Bool) throws(ContainerError) {
        guard !ended else { throw ContainerError("the file is finished") }
        guard tracks.indices.contains(t), let format = tracks[t].format else {
            throw ContainerError("the \(tracks.indices.contains(t) ? tracks[t].name : "unknown") input gave a sample before its format")
        }
        guard bytes.count <= Int(UInt32.max) else { throw ContainerError("the \(tracks[t].name) input's sample of \(bytes.count) bytes is larger than a file's sample may be (4 GiB)") }
        guard tracks[t].count < MP4Movie.mostSamples else {
            throw ContainerError("the \(tracks[t].name) input has more samples than a file's index holds (\(MP4Movie.mostSamples))")
        }
        let scale = Double(format.timescale)
        if tracks[t].firstDecode != nil, decodeTime <= tracks[t].lastDecode {
            throw ContainerError("the \(tracks[t].name) input's time stamps go \(decodeTime == tracks[t].lastDecode ? "no further" : "back") at "
                                 + "\(Self.seconds(decodeTime, scale)) s (after \(Self.seconds(tracks[t].lastDecode, scale)) s): the file could not be played there")
        }
        // The track is moved out while it changes and back after: a copy left in the array would
        // make every append copy the whole sample table.
        var track = Track(name: "")
        swap(&track, &tracks[t])
        let first = track.firstDecode ?? decodeTime
        track.firstDecode = first
        // The sample before this one lasts until this one is decoded (FLAC: its frame's block).
        let delta = UInt32(clamping: decodeTime &- track.lastDecode)
        let fixed: UInt32? = if case .flac = format.codec { MP4FLAC.blockSize(frame: Array(bytes.prefix(16))).map { UInt32($0) } } else { nil }
        let fragmented = if case .fragmented = layout { true } else { false }
        if track.count > 0, !Self.isFLAC(format) {
            if fragmented, !track.run.isEmpty { track.run[track.run.count - 1].duration = delta }
            if !fragmented { track.samples[track.samples.count - 1].duration = delta }
        }
        let previous = track.count > 0 ? delta : 0
        let own = fixed ?? duration.flatMap { $0 > 0 ? UInt32(clamping: $0) : nil } ?? previous
        let offset = Int64(clamping: Int128(presentationTime) - Int128(decodeTime))
        var sample = MP4Sample(offset: mediaBytes, size: UInt32(bytes.count), decodeTime: UInt64(clamping: decodeTime &- first),
                               duration: own, compositionOffset: Int32(clamping: offset), isSync: isSync || !format.isVideo)
        track.lastDecode = decodeTime
        track.minPresentation = min(track.minPresentation, presentationTime)
        if presentationTime >= track.maxPresentation { (track.maxPresentation, track.lastShown) = (presentationTime, track.count) }
        track.count += 1
        if fragmented {
            tracks[t] = track
            try appendToFragment(track: t, sample: &sample, bytes: bytes, decodeTime: decodeTime)
            return
        }
        if lastTrack != t || track.chunkSizes.isEmpty || track.chunkBytes + bytes.count > Self.chunkBytes
            || Double(decodeTime &- track.chunkStart) / scale >= Self.chunkSeconds {
            track.chunkOffsets.append(mediaBytes)
            track.chunkSizes.append(0)
            track.chunkStart = decodeTime
            track.chunkBytes = 0
        }
        track.chunkSizes[track.chunkSizes.count - 1] += 1
        track.chunkBytes += bytes.count
        track.samples.append(sample)
        tracks[t] = track
        lastTrack = t
        mediaBytes += UInt64(bytes.count)
        try put(bytes)
    }

    private static func isFLAC(_ f: MP4TrackFormat) -> Bool { if case .flac = f.codec { true } else { false } }

    static func seconds(_ ticks: Int64, _ scale: Double) -> String { HLSSegmenter.seconds(Double(ticks) / scale) }

    // MARK: Fragments

    /// Starts the file once it can be: a whole file at once (its `ftyp` and the media's header);
    /// a fragmented one when every track's format is known (its `moov` of empty tables).
    private mutating func startIfReady() throws(ContainerError) {
        guard !started else { return }
        switch layout {
        case .indexLast:
            started = true
            var head = fileType.bytes
            mdatHeaderAt = UInt64(head.count)
            // `free` then `mdat` with its size to come: a 64-bit header in their place if needed.
            head.appendU32(8); head.appendU32(FourCC("free").rawValue)
            head.appendU32(0); head.appendU32(FourCC("mdat").rawValue)
            mediaStart = UInt64(head.count)
            try write(head)
        case .indexFirst:
            started = true
        case .fragmented:
            guard tracks.allSatisfy({ $0.format != nil }) else { return }
            started = true
            let formats = tracks.compactMap(\.format)
            var moov = MP4Box(type: "moov", children: [CMAF.movieHeader(duration: 0, nextTrackID: UInt32(formats.count + 1))]
                + formats.map { $0.trak() } + [MP4Box(type: "mvex", children: formats.map { CMAF.trex(trackID: $0.trackID) })])
            moov.sizeField = .compact
            try write(fileType.bytes + moov.bytes)
            try flush()
        }
    }

    private mutating func appendToFragment(track t: Int, sample: inout MP4Sample, bytes: UnsafeRawBufferPointer, decodeTime: Int64) throws(ContainerError) {
        guard case .fragmented(let seconds) = layout else { return }
        let lead = tracks.firstIndex { $0.format?.isVideo == true } ?? 0
        let gathered = tracks.reduce(0) { $0 + $1.runData.count }
        if t == lead, started, let start = fragmentStart, let format = tracks[t].format,
           (sample.isSync && Double(decodeTime &- start) / Double(format.timescale) >= seconds) || gathered + bytes.count > Self.fragmentBytes {
            try writeFragment()
        }
        if t == lead, fragmentStart == nil { fragmentStart = decodeTime }
        if tracks[t].run.isEmpty { tracks[t].runBase = tracks[t].nextBase }
        tracks[t].run.append(sample)
        tracks[t].runData.append(contentsOf: bytes)
    }

    /// Writes the samples gathered as one fragment (nothing before every track's format is known).
    private mutating func writeFragment() throws(ContainerError) {
        guard started else { return }
        var runs: [FragmentRun] = []
        for t in tracks.indices where !tracks[t].run.isEmpty {
            guard let format = tracks[t].format else { continue }
            runs.append(FragmentRun(trackID: format.trackID, timescale: format.timescale, baseDecodeTime: tracks[t].runBase,
                                    samples: tracks[t].run, data: tracks[t].runData))
            let span = tracks[t].run.reduce(UInt64(0)) { $0 &+ UInt64($1.duration) }
            tracks[t].nextBase = tracks[t].runBase &+ span
            tracks[t].mediaDuration = tracks[t].nextBase
            tracks[t].run = []
            tracks[t].runData = []
        }
        fragmentStart = nil
        guard !runs.isEmpty else { return }
        try write(CMAF.fragment(sequenceNumber: sequence, runs: runs))
        sequence &+= 1
        // A fragment is on its way to the disk whole: a recording killed after it keeps it.
        try flush()
    }

    // MARK: The end

    /// What the end of the file writes besides the tracks: the index edits (an audio encoder's
    /// delay, the display matrix, where the presentation ends, the date), the tags, a FLAC
    /// stream's header.
    package struct Ending: Sendable {
        package var edits = MP4Index.Edits()
        package var tags: [(key: FourCC, text: String)] = []
        package var extraTags = MP4ExtraTags()
        package var flacHeader: FLACStreamHeader?
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
        try flush()
        ended = true
        let present = tracks.indices.filter { tracks[$0].count > 0 }
        guard !present.isEmpty else { throw ContainerError("no input gave a sample") }
        var movie = MP4Movie(moov: moov(tracks: present, ending: ending))
        MP4Index.edit(&movie, with: ending.edits)
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
            try write(movie.bytes)
            try flush()
            try Self.pwriteAll(fd, header, at: mdatHeaderAt)
        case .indexFirst(let scratch):
            let ftyp = fileType.bytes
            let wide = mediaBytes + 8 > UInt64(UInt32.max)
            let headerSize = UInt64(wide ? 16 : 8)
            // The offsets' width can change the index's size: measured, then written.
            var shift = UInt64(ftyp.count) + movie.moov.length() + headerSize
            var placed = movie
            for _ in 0..<3 {
                placed = movie
                let s = shift
                placed.moveChunkOffsets { $0 + s }
                let next = UInt64(ftyp.count) + placed.moov.length() + headerSize
                if next == shift { break }
                shift = next
            }
            var head = ftyp + placed.bytes
            if wide {
                head.appendU32(1); head.appendU32(FourCC("mdat").rawValue); head.appendU64(mediaBytes + 16)
            } else {
                head.appendU32(UInt32(mediaBytes + 8)); head.appendU32(FourCC("mdat").rawValue)
            }
            try Self.pwriteAll(fd, head, at: 0)
            try Self.copy(from: scratch, count: mediaBytes, to: fd, at: UInt64(head.count))
        case .fragmented:
            break
        }
    }

    /// The index of the whole file: every track's sample tables, edits and entry, offsets from
    /// the media's first byte.
    private func moov(tracks present: [Int], ending: Ending) -> MP4Box {
        let movieScale: UInt64 = 1000
        // The earliest presentation of all: the file's start.
        let starts = present.map { t in Double(tracks[t].minPresentation) / Double(tracks[t].format?.timescale ?? 1) }
        let origin = starts.min() ?? 0
        var traks: [MP4Box] = []
        var longest: UInt64 = 0
        for (k, t) in present.enumerated() {
            let track = tracks[t]
            guard var format = track.format else { continue }
            let samples = track.samples
            var entry: MP4Box?
            if case .flac = format.codec, let header = ending.flacHeader {
                var h = header
                let held = samples.reduce(UInt64(0)) { $0 &+ UInt64($1.duration) }
                if h.totalSamples != held {
                    if h.totalSamples != 0 { h.md5 = [UInt8](repeating: 0, count: 16) }
                    h.totalSamples = held
                }
                if h.frameSizes.smallest == 0 || h.frameSizes.largest == 0, let lo = samples.map(\.size).min(), let hi = samples.map(\.size).max() {
                    h.frameSizes = (Int(lo), Int(hi))
                }
                entry = h.sampleEntry()
            }
            let scale = UInt64(format.timescale)
            let mediaDuration = samples.reduce(UInt64(0)) { $0 &+ UInt64($1.duration) }
            // The first presentation, in the media (B-frames: after the first decode).
            let mediaTime = max(0, track.minPresentation &- (track.firstDecode ?? 0))
            // From the first picture shown to the end of the last one.
            let lastDuration = samples.indices.contains(track.lastShown) ? Int64(samples[track.lastShown].duration) : 0
            let shown = UInt64(clamping: track.maxPresentation &- track.minPresentation &+ lastDuration)
            let shownMovie = UInt64((Double(shown) * Double(movieScale) / Double(scale)).rounded())
            let lateBy = UInt64(max(0, ((starts[k] - origin) * Double(movieScale)).rounded()))
            var edits: [EditList.Edit] = []
            if lateBy > 0 { edits.append(EditList.Edit(duration: lateBy, mediaTime: -1)) }
            if lateBy > 0 || mediaTime > 0 { edits.append(EditList.Edit(duration: shownMovie, mediaTime: mediaTime)) }
            let trackDuration = lateBy &+ shownMovie
            longest = max(longest, edits.isEmpty ? UInt64((Double(mediaDuration) * Double(movieScale) / Double(scale)).rounded()) : trackDuration)
            format.gapless = nil
            traks.append(format.trak(tables: MP4Join.tables(samples[...], chunkSizes: track.chunkSizes, offsets: track.chunkOffsets),
                                     mediaDuration: mediaDuration,
                                     trackDuration: edits.isEmpty ? UInt64((Double(mediaDuration) * Double(movieScale) / Double(scale)).rounded()) : trackDuration,
                                     edits: edits, stsdEntry: entry))
        }
        var moov = MP4Box(type: "moov", children: [CMAF.movieHeader(duration: longest, nextTrackID: UInt32(tracks.count + 1))] + traks)
        moov.sizeField = .compact
        return moov
    }

    private var fileType: MP4Box {
        switch brand {
        case .mp4: MP4Box(FileType(majorBrand: "isom", minorVersion: 0x200, compatibleBrands: ["isom", "iso2", "mp41"] + Self.codecBrands(tracks)))
        case .m4a: MP4Box(FileType(majorBrand: "M4A ", minorVersion: 0x200, compatibleBrands: ["M4A ", "isom", "iso2", "mp41"]))
        case .mov: MP4Box(FileType(majorBrand: "qt  ", minorVersion: 0x200, compatibleBrands: ["qt  "]))
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

    private mutating func put(_ bytes: UnsafeRawBufferPointer) throws(ContainerError) {
        if pending.count + bytes.count > Self.bufferBytes { try flush() }
        if bytes.count >= Self.bufferBytes {
            try writeOut(bytes)
        } else {
            pending.append(contentsOf: bytes)
        }
    }

    private mutating func write(_ bytes: [UInt8]) throws(ContainerError) {
        try flush()
        let failed = bytes.withUnsafeBytes { Self.writeAll(destination, $0, at: nil) }
        if failed != 0 { throw ContainerError(String(cString: strerror(failed))) }
    }

    private mutating func flush() throws(ContainerError) {
        guard !pending.isEmpty else { return }
        let failed = pending.withUnsafeBytes { Self.writeAll(destination, $0, at: nil) }
        pending.removeAll(keepingCapacity: true)
        if failed != 0 { throw ContainerError(String(cString: strerror(failed))) }
    }

    private func writeOut(_ raw: UnsafeRawBufferPointer) throws(ContainerError) {
        let failed = Self.writeAll(destination, raw, at: nil)
        if failed != 0 { throw ContainerError(String(cString: strerror(failed))) }
    }

    /// The media's destination: the scratch file for an index-first file, else the file.
    private var destination: Int32 { if case .indexFirst(let scratch) = layout { scratch } else { fd } }

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

    /// Copies `count` bytes from the start of `source` to `target` at `offset`: in the kernel
    /// where it can (`sendfile`), else through a buffer.
    static func copy(from source: Int32, count: UInt64, to target: Int32, at offset: UInt64) throws(ContainerError) {
        var inAt = off_t(0)
        var left = count
        guard lseek(target, off_t(offset), SEEK_SET) >= 0 else { throw ContainerError(String(cString: strerror(errno))) }
        while left > 0 {
            let n = sendfile(target, source, &inAt, Int(min(left, 1 << 30)))
            if n > 0 { left -= UInt64(n); continue }
            if n < 0, errno == EINTR { continue }
            if n == 0 { throw ContainerError("its media ended \(left) bytes early") }
            if [EINVAL, ENOSYS, EOPNOTSUPP].contains(errno) { break }
            throw ContainerError(String(cString: strerror(errno)))
        }
        guard left > 0 else { return }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var outAt = UInt64(offset) + (count - left)
        while left > 0 {
            let n = buffer.withUnsafeMutableBytes { pread(source, $0.baseAddress!, Int(min(left, UInt64($0.count))), inAt) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { throw ContainerError(n == 0 ? "its media ended \(left) bytes early" : String(cString: strerror(errno))) }
            try pwriteAll(target, Array(buffer[0..<n]), at: outAt)
            inAt += off_t(n); outAt += UInt64(n); left -= UInt64(n)
        }
    }
}

extension MP4TrackFormat {
    /// The codec's name in errors.
    package var codecName: String {
        switch codec {
        case .h264: "H.264"
        case .hevc: "HEVC"
        case .av1: "AV1"
        case .vp9: "VP9"
        case .aac: "AAC"
        case .opus: "Opus"
        case .alac: "ALAC"
        case .flac: "FLAC"
        }
    }
}
