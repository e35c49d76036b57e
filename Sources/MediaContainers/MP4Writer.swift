import Glibc

/// Writes an MP4, M4A or MOV file from encoded samples as they arrive: GraphKit's one MP4 writer,
/// on the box model this library reads and edits (``MP4Box``, ``MP4TrackFormat``).
///
/// - Whole files (``Layout/indexLast``, ``Layout/indexFirst``): the samples are written
///   in chunks of a track's samples (at most a quarter of a second and 1 MiB), the tracks
///   interleaved in time (a chunk waits in memory until the other tracks have reached its start;
///   at most 16 MiB wait); the index (sample tables, edit lists, display matrix, tags) is built
///   once at the end, from what was written, never by editing a finished file.
///   Index last: `ftyp`, the media, `moov`; the media's header is written at the start and its
///   size set at the end (16 bytes kept, so a file past 4 GiB takes a 64-bit size). Index first
///   (faststart): the media is written from the file's start, and the end moves it up in place
///   to make room for `ftyp`, `moov` and the media's header, as ffmpeg's faststart moves it: one
///   file, the media's pages rewritten where they are (a scratch file held the media twice on
///   disk and wrote it twice).
/// - Fragmented files (``Layout/fragmented(seconds:)``): `ftyp` and a `moov` of empty tables once
///   every track's format is known, then a `moof` + `mdat` fragment about every `seconds`, cut
///   before a key frame of the video (every sample of a sound-only file is one), or before any
///   sample once it holds twice `seconds` (``longestFragment(_:)``): a file cut short (a killed
///   recording) plays up to its last whole fragment.
///
/// Times are each track's ticks (``MP4TrackFormat/timescale``) on one clock for all tracks (a
/// run's): a track starting after the earliest one gets an empty edit for the difference, and a
/// track whose first presentation is after its first decode (B-frames) an edit from it, as
/// ffmpeg and GStreamer's muxer write them. A sample's duration is the next one's decode time
/// less its own; the last one's is its own stated duration (else the one before's).
///
/// Memory: the index as the file stores it (``SampleTableBuilder``: 4 bytes a sample and a few
/// bytes a run of durations or offsets, a key frame, a chunk; past ``tableMemoryBytes`` a table,
/// in a temporary file, but for the chunks' 8 bytes a quarter second), the chunks waiting to interleave,
/// a write buffer, and for a fragmented file the samples of the fragment being gathered. Every number a stream gives is
/// bounded: nothing traps.
package struct MP4Writer: Sendable {
    package enum Brand: Sendable, Equatable { case mp4, m4a, mov }
    package enum Layout: Sendable, Equatable {
        case indexLast
        case indexFirst
        case fragmented(seconds: Double)
    }

    /// A chunk holds at most this long of a track's samples, and this many bytes.
    package static let chunkSeconds = 0.25
    package static let chunkBytes = 1 << 20
    /// A fragment is cut, key frame or not, when its samples pass this many bytes.
    package static let fragmentBytes = 64 << 20
    /// A fragment of `seconds` is cut at its first key frame after them, and, key frame or not,
    /// once it holds this many: twice as many (each sample's flags say whether it is one). A
    /// camera sending a key frame every 20 s had nothing on disk before its first 20 s, so a
    /// `kill -9` lost them all; its recording is now on disk within twice the interval.
    package static func longestFragment(_ seconds: Double) -> Double { 2 * seconds }
    /// Bytes gathered before a write: small enough that a full disk or a killed run shows within
    /// seconds of audio, large enough that a write is rare.
    static let bufferBytes = 32 << 10

    /// A run of one track's samples kept together in the file.
    struct Chunk: Sendable {
        var track: Int
        /// The decode time of its first sample, in seconds.
        var start: Double
        /// Its sample description (an index into the track's, from 0).
        var description = 0
        var count = 0
        var data: [UInt8] = []
    }

    /// Closed chunks wait at most this many bytes for the other tracks to reach their time: past
    /// it (a track that stalls), the oldest is written anyway.
    package static let interleaveBytes = 16 << 20
    /// What each of a track's per-sample tables holds in memory before it moves to a temporary
    /// file (``SampleTableSpill``): 65,536 sizes, 36 minutes of 30 fps video.
    package static let tableMemoryBytes = 256 << 10

    struct Track: Sendable {
        var name: String
        /// Every sample description the track has had (``setFormat(_:track:)``), and which one
        /// its samples take now.
        var descriptions: [MP4TrackFormat] = []
        var description = 0
        /// The format now: nil before the first.
        var format: MP4TrackFormat? { descriptions.indices.contains(description) ? descriptions[description] : nil }
        /// Whole files: the sample tables, chunk offsets from the media's first byte.
        var tables = SampleTableBuilder(spillingPast: MP4Writer.tableMemoryBytes)
        /// The chunk being gathered: its samples wait in memory until the other tracks reach
        /// its time (``Chunk``).
        var open: Chunk?
        /// The decode time (seconds) of its latest sample, and whether it has ended (every layout).
        var reached = -Double.infinity
        var ended = false
        var firstDecode: Int64?
        var lastDecode: Int64 = 0
        var minPresentation: Int64 = .max
        /// The latest presentation, which sample has it, and its duration (which ends the track).
        var maxPresentation: Int64 = .min
        var lastShown = 0
        var lastShownDuration: UInt32 = 0
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
    var tracks: [Track]
    /// Bytes waiting to be written.
    var pending: [UInt8] = []
    /// Sample bytes placed in the media so far.
    var mediaBytes: UInt64 = 0
    /// Whole files: where the media's header is (index last), and where its first byte is in
    /// what is written to its destination.
    var mdatHeaderAt: UInt64 = 0
    var mediaStart: UInt64 = 0
    /// Closed chunks waiting for the other tracks, and their bytes.
    var waiting: [Chunk] = []
    var waitingBytes = 0
    var sequence: UInt32 = 1
    var fragmentStart: Int64?
    var started = false
    var ended = false
    /// Whether a write failed (the disk full, a device error): the error is the output's, not the stream's.
    package internal(set) var failedWriting = false

    /// A writer of `trackNames.count` tracks (named in errors: "audio", "video") into `fd`, open
    /// for writing at its start (a sink's temporary file; the writer never opens or closes it).
    package init(descriptor fd: Int32, brand: Brand, layout: Layout, trackNames: [String]) {
        self.fd = fd
        self.brand = brand
        self.layout = layout
        tracks = trackNames.map { Track(name: $0) }
    }

    /// Track `t`'s format: before its first sample (the encoder's caps), and again whenever the
    /// stream's configuration changes (an encoder's new parameter sets, a new picture size).
    /// A whole file's track takes a new sample description from the next sample on, as
    /// GStreamer's muxer and AVFoundation write them (the chunks after it name it); the codec
    /// and its clock stay the track's (a change of codec, or of an audio rate, is refused), and
    /// a fragmented file, whose descriptions are written before its first fragment, keeps one.
    package mutating func setFormat(_ format: MP4TrackFormat, track t: Int) throws(ContainerError) {
        guard tracks.indices.contains(t) else { throw ContainerError("there is no track \(t + 1)") }
        var format = format
        format.trackID = UInt32(t + 1)
        format.quickTime = brand == .mov
        guard let old = tracks[t].format else {
            (tracks[t].descriptions, tracks[t].description) = ([format], 0)
            return try startIfReady()
        }
        // Facts known later (the display matrix, colour) are kept.
        if format.colour == nil { format.colour = old.colour }
        if format.displayMatrix == nil { format.displayMatrix = old.displayMatrix }
        if tracks[t].count > 0, !Self.sameStream(old, format) {
            let fragmented = if case .fragmented = layout { true } else { false }
            guard !fragmented, Self.sameCodec(old, format), old.timescale == format.timescale else {
                let change = old.codecName == format.codecName ? "\(old.codecName), \(Self.describe(old)) to \(Self.describe(format))" : "\(old.codecName) to \(format.codecName)"
                throw ContainerError("the \(tracks[t].name) input's format changed in the stream (\(change)): "
                                     + (fragmented ? "a fragmented file's track holds one" : "a track holds one codec at one rate"))
            }
            guard tracks[t].descriptions.count < Self.mostDescriptions else {
                throw ContainerError("the \(tracks[t].name) input's format changed more than \(Self.mostDescriptions - 1) times in the stream")
            }
            // The next sample starts a chunk of the new description (a chunk has one).
            if let open = tracks[t].open {
                waiting.append(open)
                waitingBytes += open.data.count
                tracks[t].open = nil
            }
            // Back to an earlier configuration: its description again.
            if let same = tracks[t].descriptions.firstIndex(where: { Self.sameStream($0, format) }) {
                tracks[t].description = same
            } else {
                tracks[t].descriptions.append(format)
                tracks[t].description = tracks[t].descriptions.count - 1
            }
        }
        tracks[t].descriptions[tracks[t].description] = format
        try startIfReady()
    }

    /// A track's sample descriptions are bounded: a stream that changes its format on every
    /// sample is refused rather than indexed.
    package static let mostDescriptions = 256

    /// Sets a fact of track `t`'s format known after its caps (a display matrix from a tag).
    package mutating func updateFormat(track t: Int, _ change: (inout MP4TrackFormat) -> Void) {
        guard tracks.indices.contains(t) else { return }
        for d in tracks[t].descriptions.indices { change(&tracks[t].descriptions[d]) }
    }

    static func sameCodec(_ a: MP4TrackFormat, _ b: MP4TrackFormat) -> Bool {
        switch (a.codec, b.codec) {
        case (.h264, .h264), (.hevc, .hevc), (.av1, .av1), (.vp9, .vp9), (.aac, .aac), (.opus, .opus), (.alac, .alac): true
        // FLAC's one description is its stream header, written at the end.
        default: false
        }
    }

    /// A format in an error: its size or rate and channels.
    static func describe(_ f: MP4TrackFormat) -> String {
        switch f.codec {
        case .h264(_, let w, let h), .hevc(_, let w, let h), .av1(_, let w, let h), .vp9(_, let w, let h): "\(w)x\(h)"
        case .aac(_, let rate, let ch), .alac(_, let rate, let ch), .flac(let rate, let ch): "\(rate) Hz \(ch) ch"
        case .opus(_, let ch): "\(ch) ch"
        }
    }

    static func sameStream(_ a: MP4TrackFormat, _ b: MP4TrackFormat) -> Bool {
        var (a, b) = (a, b)
        (a.colour, b.colour, a.displayMatrix, b.displayMatrix, a.gapless, b.gapless) = (nil, nil, nil, nil, nil, nil)
        (a.shownMedia, b.shownMedia) = (nil, nil)
        return a == b
    }

    /// Starts track `t` again, its format kept: what it gave before a flush (a seek's) is stale.
    /// Its samples leave the index (bytes already in the media stay there, unreferenced: a
    /// flush comes before a run's media, after its preroll); the other tracks are untouched,
    /// since each input's flush comes in its own time.
    package mutating func restart(track t: Int) {
        guard !ended, tracks.indices.contains(t), tracks[t].count > 0 else { return }
        for chunk in waiting where chunk.track == t { waitingBytes -= chunk.data.count }
        waiting.removeAll { $0.track == t }
        var fresh = Track(name: tracks[t].name)
        fresh.descriptions = tracks[t].format.map { [$0] } ?? []
        tracks[t] = fresh
    }

    /// Track `t`'s format, once known.
    package func format(track t: Int) -> MP4TrackFormat? { tracks.indices.contains(t) ? tracks[t].format : nil }

    /// What the whole file's sample tables keep in temporary files so far, in bytes.
    package var spilledIndexBytes: UInt64 { tracks.reduce(0) { $0 + $1.tables.spilledByteCount } }

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
        // Times that round to the same tick (less than a tick apart) make a sample of no
        // duration, as GStreamer's muxer writes them; times that go back are refused.
        if tracks[t].firstDecode != nil, decodeTime < tracks[t].lastDecode {
            throw ContainerError("the \(tracks[t].name) input's time stamps go back at "
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
            if !fragmented { track.tables.setLastDuration(delta) }
            if track.lastShown == track.count - 1 { track.lastShownDuration = delta }
        }
        let previous = track.count > 0 ? delta : 0
        let own = fixed ?? duration.flatMap { $0 > 0 ? UInt32(clamping: $0) : nil } ?? previous
        let offset = Int64(clamping: Int128(presentationTime) - Int128(decodeTime))
        var sample = MP4Sample(offset: mediaBytes, size: UInt32(bytes.count), decodeTime: UInt64(clamping: decodeTime &- first),
                               duration: own, compositionOffset: Int32(clamping: offset), isSync: isSync || !format.isVideo)
        track.lastDecode = decodeTime
        track.minPresentation = min(track.minPresentation, presentationTime)
        if presentationTime >= track.maxPresentation { (track.maxPresentation, track.lastShown, track.lastShownDuration) = (presentationTime, track.count, own) }
        track.count += 1
        track.reached = Double(decodeTime) / scale
        if fragmented {
            tracks[t] = track
            try appendToFragment(track: t, sample: &sample, bytes: bytes, decodeTime: decodeTime)
            return
        }
        // The tracks interleave in time, a chunk of each in turn, as a player reads them: a
        // chunk is closed at a quarter of a second or 1 MiB, and written once every other track has
        // reached its start (or ended).
        let time = Double(decodeTime) / scale
        if let open = track.open, open.data.count + bytes.count > Self.chunkBytes || time - open.start >= Self.chunkSeconds {
            waiting.append(open)
            waitingBytes += open.data.count
            track.open = nil
        }
        if track.open == nil { track.open = Chunk(track: t, start: time, description: track.description) }
        track.open!.count += 1
        track.open!.data.append(contentsOf: bytes)
        track.tables.append(size: sample.size, duration: sample.duration, compositionOffset: sample.compositionOffset, isSync: sample.isSync)
        tracks[t] = track
        try writeWaiting()
    }

    /// Ends track `t`: its last chunk is closed, and no later one waits for it.
    package mutating func endTrack(_ t: Int) throws(ContainerError) {
        guard tracks.indices.contains(t), !tracks[t].ended else { return }
        tracks[t].ended = true
        if let open = tracks[t].open {
            waiting.append(open)
            waitingBytes += open.data.count
            tracks[t].open = nil
        }
        if case .fragmented = layout { return }
        try writeWaiting()
    }

    /// Writes the waiting chunks, earliest first, that every other track has reached (all of
    /// them with `all`); the oldest regardless while too many bytes wait.
    mutating func writeWaiting(all: Bool = false) throws(ContainerError) {
        guard !waiting.isEmpty else { return }
        waiting.sort { ($0.start, $0.track) < ($1.start, $1.track) }
        while let chunk = waiting.first {
            // Every other track is past its start: nothing of theirs from before it is still to come.
            let reached = all || tracks.indices.allSatisfy { u in
                u == chunk.track || tracks[u].ended || (tracks[u].open.map { $0.start >= chunk.start } ?? (tracks[u].reached >= chunk.start))
            }
            guard reached || waitingBytes > Self.interleaveBytes else { return }
            waiting.removeFirst()
            waitingBytes -= chunk.data.count
            try place(chunk)
        }
    }

    /// Writes `chunk` into the media, where the track's chunk table says it is.
    mutating func place(_ chunk: Chunk) throws(ContainerError) {
        tracks[chunk.track].tables.addChunk(offset: mediaBytes, samples: chunk.count, description: chunk.description)
        mediaBytes += UInt64(chunk.data.count)
        if pending.count + chunk.data.count > Self.bufferBytes { try flush() }
        if chunk.data.count >= Self.bufferBytes { try write(chunk.data) } else { pending += chunk.data }
    }

    private static func isFLAC(_ f: MP4TrackFormat) -> Bool { if case .flac = f.codec { true } else { false } }

    static func seconds(_ ticks: Int64, _ scale: Double) -> String { HLSSegmenter.seconds(Double(ticks) / scale) }

    // MARK: Fragments

    /// Starts the file once it can be: a whole file at once (its `ftyp` and the media's header);
    /// a fragmented one when every track's format is known (its `moov` of empty tables).
    mutating func startIfReady() throws(ContainerError) {
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
            // A copied track's own edit (a sound's priming, a cut file's pictures) is known now,
            // to the end of the samples to come.
            var moov = MP4Box(type: "moov", children: [CMAF.movieHeader(duration: 0, nextTrackID: UInt32(formats.count + 1))]
                + formats.map { $0.trak(edits: $0.gaplessEdits) } + [MP4Box(type: "mvex", children: formats.map { CMAF.trex(trackID: $0.trackID) })])
            moov.sizeField = .compact
            try write(fileType.bytes + moov.bytes)
            try flush()
        }
    }

    private mutating func appendToFragment(track t: Int, sample: inout MP4Sample, bytes: UnsafeRawBufferPointer, decodeTime: Int64) throws(ContainerError) {
        guard case .fragmented(let seconds) = layout else { return }
        let lead = tracks.firstIndex { $0.format?.isVideo == true } ?? 0
        let gathered = tracks.reduce(0) { $0 + $1.runData.count }
        if t == lead, started, let start = fragmentStart, let format = tracks[t].format {
            let held = Double(decodeTime &- start) / Double(format.timescale)
            if (sample.isSync && held >= seconds) || held >= Self.longestFragment(seconds) || gathered + bytes.count > Self.fragmentBytes {
                try writeFragment()
            }
        }
        if t == lead, fragmentStart == nil { fragmentStart = decodeTime }
        if tracks[t].run.isEmpty { tracks[t].runBase = tracks[t].nextBase }
        tracks[t].run.append(sample)
        tracks[t].runData.append(contentsOf: bytes)
    }

    /// Writes the samples gathered as one fragment (nothing before every track's format is known).
    mutating func writeFragment() throws(ContainerError) {
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

