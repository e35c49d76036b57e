/// A media file's tags, one model for every format GraphKit reads them from (AVFoundation's
/// `commonMetadata`): MP4/M4A/MOV (iTunes `ilst` items, QuickTime `mdta` keys, QuickTime user
/// data strings such as `©xyz`), MP3 (ID3v2.3 and 2.4), FLAC and Ogg Vorbis/Opus (Vorbis
/// comments, FLAC pictures). The common fields hold the first value found for each; ``items``
/// holds every text item as the file names it, for anything the fields do not name.
///
/// Read from the file's own bytes (``read(from:)``), never past them: a tag whose sizes are
/// damaged gives what it holds before the damage, and nothing is allocated from a size that was
/// not first checked against the bytes there are.
public struct MediaMetadata: Sendable, Equatable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var albumArtist: String?
    public var genre: String?
    public var comment: String?
    /// The date as written: a year (`2024`), a day, or a time (`2024-05-01T10:00:00Z`); a
    /// QuickTime file's creation date.
    public var date: String?
    /// The software that wrote the file (`©too`, `TSSE`, `ENCODER`, a Vorbis vendor string).
    public var encoder: String?
    public var trackNumber: Int?
    public var trackCount: Int?
    public var discNumber: Int?
    public var discCount: Int?
    /// Where it was recorded, as ISO 6709 text (`+48.8577+002.2950/`).
    public var location: String?
    /// The cover picture: the front cover when the file says which, else the first.
    public var artwork: Artwork?
    /// Every text item, in the file's order, keyed as the format names it (`©nam`, `TIT2`,
    /// `TITLE`, `com.apple.quicktime.title`; an ID3 `TXXX` or an iTunes `----` item by its own
    /// name). Binary items other than pictures are not here.
    public var items: [Item] = []

    /// The chapters, in order: an MP4/M4A/MOV's QuickTime chapter track or Nero list (`chpl`),
    /// an MP3's ID3 `CHAP` frames (in the order of its top-level `CTOC` table of contents, when
    /// it has one), a FLAC or Ogg file's `CHAPTERxxx`/`CHAPTERxxxNAME` Vorbis comments.
    public var chapters: [Chapter] = []
    /// The chapter titles' language, ISO 639-2/T (`eng`), when the file states one (a QuickTime
    /// chapter track's); nil: undetermined.
    public var chapterLanguage: String?

    /// Each kind of track's language, ISO 639-2/T (`fra`), by the kind (`audio`, `video`): the
    /// first track of the kind that states one (an MP4/MOV track's `mdhd`); none: undetermined.
    /// Not among the tags (``isEmpty``): a stream's, as ffprobe shows it.
    public var languages: [String: String] = [:]
    /// When the file says it was made (an MP4/MOV movie header's creation time, as ffprobe's
    /// `creation_time`), in seconds from 1904-01-01 UTC, MP4's epoch; nil when it does not say
    /// (0). Not among the tags (``isEmpty``).
    public var creationTime: UInt64?

    /// One chapter: where it starts, where it ends when the file says, and its title.
    public struct Chapter: Sendable, Equatable {
        /// Where it starts, in seconds from the presentation's start.
        public var start: Double
        /// Where it ends, in seconds, when the file says (an ID3 `CHAP` frame, a chapter track's
        /// sample); nil: where the next one starts, the last at the end.
        public var end: Double?
        public var title: String
        public init(start: Double, end: Double? = nil, title: String) {
            self.start = start
            self.end = end
            self.title = title
        }
    }

    /// Each chapter's start and end in seconds, as players and ffprobe's `-show_chapters` take
    /// them: the end the file states, else where the next chapter starts, the last's at
    /// `duration` (the file's length); never before its start.
    public func chapterSpans(until duration: Double) -> [(start: Double, end: Double)] {
        chapters.enumerated().map { i, c in
            let end = c.end ?? (i + 1 < chapters.count ? chapters[i + 1].start : duration)
            return (c.start, max(c.start, end))
        }
    }

    /// The chapters that show in [`start`, `end`) seconds of the presentation (the last one
    /// lasting until `duration`), each with its place among ``chapters``, from where it shows,
    /// in seconds from `start`: what a cut of that range keeps.
    package func chapters(from start: Double, to end: Double, duration: Double) -> [(index: Int, chapter: Chapter)] {
        chapterSpans(until: max(duration, end)).enumerated().compactMap { i, span in
            let from = max(span.start, start), to = min(span.end, end)
            guard to > from else { return nil }
            return (i, Chapter(start: from - start, end: to - start, title: chapters[i].title))
        }
    }

    public struct Item: Sendable, Equatable {
        public var key: String
        public var value: String
        public init(key: String, value: String) { (self.key, self.value) = (key, value) }
    }

    public struct Artwork: Sendable, Equatable {
        /// `image/jpeg`, `image/png`, … (from the tag, or from the picture's first bytes).
        public var mimeType: String
        public var data: [UInt8]
        public init(mimeType: String, data: [UInt8]) { (self.mimeType, self.data) = (mimeType, data) }
    }

    public init() {}

    /// Whether no tag, picture, place or chapter was read (``languages`` and ``creationTime``,
    /// a stream's and the header's, are not counted).
    public var isEmpty: Bool { items.isEmpty && artwork == nil && location == nil && chapters.isEmpty }

    /// Reads the tags of the file `source` holds, in whichever of the formats above it is; empty
    /// for another format and for a file without tags. Throws only when the bytes cannot be read.
    public static func read(from source: some ByteSource) throws(ContainerError) -> MediaMetadata {
        var metadata = MediaMetadata()
        switch try MediaContainerFormat.detect(source) {
        case .mp4?, .mov?:
            let file = try MP4File(source)
            guard let extent = file.first("moov"), file.isWhole(extent), let moov = try? file.read(extent) else { break }
            metadata.add(movie: MP4Movie(moov: moov), in: source)
        case .mp3?:
            try ID3v2.read(source, into: &metadata)
        case .flac?:
            try FLAC.readMetadata(source, into: &metadata)
        case .ogg?:
            try Ogg.readMetadata(source, into: &metadata)
        case .wav?, .aiff?, .matroska?, nil:
            break
        }
        return metadata
    }

    // MARK: Filling

    /// Adds a text item, and sets the common field its key names when that is not set yet.
    package mutating func add(_ key: String, _ value: String) {
        guard !value.isEmpty else { return }
        items.append(Item(key: key, value: value))
        guard let field = Self.commonField(key) else { return }
        func set(_ path: WritableKeyPath<MediaMetadata, String?>) { if self[keyPath: path] == nil { self[keyPath: path] = value } }
        func set(_ number: WritableKeyPath<MediaMetadata, Int?>, _ count: WritableKeyPath<MediaMetadata, Int?>) {
            // "3", "3/10": a number and, after a slash, the count.
            let parts = value.split(separator: "/", maxSplits: 1).map { Int($0.trimmingSpaces) }
            if self[keyPath: number] == nil, let n = parts.first ?? nil { self[keyPath: number] = n }
            if self[keyPath: count] == nil, parts.count == 2, let n = parts[1] { self[keyPath: count] = n }
        }
        switch field {
        case .title: set(\.title)
        case .artist: set(\.artist)
        case .album: set(\.album)
        case .albumArtist: set(\.albumArtist)
        case .genre: set(\.genre)
        case .comment: set(\.comment)
        case .date: set(\.date)
        case .encoder: set(\.encoder)
        case .location: set(\.location)
        case .track: set(\.trackNumber, \.trackCount)
        case .disc: set(\.discNumber, \.discCount)
        case .trackCount: if trackCount == nil { trackCount = Int(value.trimmingSpaces) }
        case .discCount: if discCount == nil { discCount = Int(value.trimmingSpaces) }
        }
    }

    /// Adds a picture: it becomes ``artwork`` when there is none yet, or when it is the front
    /// cover and the one there is not.
    public mutating func addPicture(_ data: some Collection<UInt8>, mimeType: String?, frontCover: Bool = false) {
        guard !data.isEmpty else { return }
        guard artwork == nil || (frontCover && !artworkIsFrontCover) else { return }
        let bytes = Array(data)
        let mime = mimeType.flatMap { $0.isEmpty ? nil : $0.lowercased() } ?? Self.mimeType(sniffing: bytes)
        artwork = Artwork(mimeType: mime == "image/jpg" ? "image/jpeg" : mime, data: bytes)
        artworkIsFrontCover = frontCover
    }

    /// Whether ``artwork`` is a picture marked as the front cover (ID3, FLAC).
    private var artworkIsFrontCover = false

    /// A picture's type by its first bytes, when its tag does not say.
    static func mimeType(sniffing bytes: [UInt8]) -> String {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if bytes.starts(with: Array("BM".utf8)) { return "image/bmp" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), bytes[8..<12].elementsEqual("WEBP".utf8) { return "image/webp" }
        return "application/octet-stream"
    }

    /// The common fields, and the keys of every format that name them (compared lower-cased,
    /// without QuickTime's `com.apple.quicktime.` and without `_`, `-`, `.` and spaces).
    enum Field { case title, artist, album, albumArtist, genre, comment, date, encoder, location, track, trackCount, disc, discCount }

    private static let fields: [String: Field] = [
        "title": .title, "©nam": .title, "tit2": .title,
        "artist": .artist, "©art": .artist, "tpe1": .artist,
        "album": .album, "©alb": .album, "talb": .album,
        "albumartist": .albumArtist, "aart": .albumArtist, "tpe2": .albumArtist,
        "genre": .genre, "©gen": .genre, "tcon": .genre,
        "comment": .comment, "©cmt": .comment, "comm": .comment, "description": .comment,
        "date": .date, "©day": .date, "tdrc": .date, "tyer": .date, "creationdate": .date, "year": .date,
        "encoder": .encoder, "©too": .encoder, "tsse": .encoder, "software": .encoder,
        "location": .location, "©xyz": .location, "loci": .location, "locationiso6709": .location,
        "track": .track, "tracknumber": .track, "trck": .track, "trkn": .track,
        "tracktotal": .trackCount, "totaltracks": .trackCount,
        "disc": .disc, "discnumber": .disc, "tpos": .disc, "disk": .disc,
        "disctotal": .discCount, "totaldiscs": .discCount,
    ]

    /// The common field a format's key names (`©nam`, `TIT2`, `TITLE`, QuickTime's
    /// `com.apple.quicktime.title`: `title`), as this type's property is named; nil for another.
    public static func commonFieldName(_ key: String) -> String? { commonField(key).map { "\($0)" } }

    static func commonField(_ key: String) -> Field? {
        var k = key.lowercased()
        let quickTime = "com.apple.quicktime."
        if k.hasPrefix(quickTime) { k.removeFirst(quickTime.count) }
        k.removeAll { $0 == "_" || $0 == "-" || $0 == "." || $0 == " " }
        return fields[k]
    }
}

/// The formats whose tags ``MediaMetadata`` reads, and those it knows but whose tags it does
/// not read (WAV, AIFF, Matroska), told apart by their first bytes.
public enum MediaContainerFormat: String, Sendable, CaseIterable {
    /// ISO base media (MP4, M4A, 3GP): a `ftyp` box whose brand is not QuickTime's.
    case mp4
    /// QuickTime (`ftyp` brand `qt  `, or no `ftyp`).
    case mov
    case mp3, flac, ogg, wav, aiff
    /// Matroska or WebM (an EBML header): known, its tags not read yet.
    case matroska

    /// The format of `source`, or nil when it is none of these. Throws only when it cannot be read.
    public static func detect(_ source: some ByteSource) throws(ContainerError) -> MediaContainerFormat? {
        let head = try source.read(at: 0, count: 12)
        guard head.count >= 4 else { return nil }
        if head[0..<4].elementsEqual(Ogg.capture) { return .ogg }
        if head[0..<4].elementsEqual(FLAC.marker) { return .flac }
        if head[0..<4].elementsEqual([0x1A, 0x45, 0xDF, 0xA3]) { return .matroska }
        if WAVEHeader.isWAVE(source) { return .wav }
        if WAVEHeader.isAIFF(source) { return .aiff }
        if head.count >= 8, let type = FourCC(exactly: String(decoding: head[4..<8], as: UTF8.self)),
           ["ftyp", "moov", "mdat", "free", "skip", "wide"].contains(type) {
            // Brand `qt  ` is QuickTime's; a file with no `ftyp` is an old QuickTime movie.
            return type == "ftyp" && head.count >= 12 && !head[8..<12].elementsEqual("qt  ".utf8) ? .mp4 : .mov
        }
        if let tag = MPEGAudio.id3v2Length(source) {
            // FLAC files sometimes open with an ID3 tag too.
            if try source.read(at: tag, count: 4).elementsEqual(FLAC.marker) { return .flac }
            return .mp3
        }
        if let length = MPEGAudio.frameLength(head), length > 4,
           MPEGAudio.frameLength(try source.read(at: length, count: 4)) != nil { return .mp3 }
        return nil
    }
}

extension StringProtocol {
    /// Without spaces at either end.
    var trimmingSpaces: Substring {
        let s = Substring(self)
        guard let first = s.firstIndex(where: { $0 != " " }), let last = s.lastIndex(where: { $0 != " " }) else { return "" }
        return s[first...last]
    }
}

/// Text in the encodings tags use, decoded without Foundation.
enum TagText {
    /// ISO 8859-1: each byte is the code point.
    static func latin1(_ bytes: some Collection<UInt8>) -> String {
        String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    static func utf8(_ bytes: some Collection<UInt8>) -> String { String(decoding: bytes, as: UTF8.self) }

    /// UTF-16 in `bigEndian` order unless a byte-order mark says otherwise (and is dropped).
    static func utf16(_ bytes: ArraySlice<UInt8>, bigEndian: Bool) -> String {
        var big = bigEndian
        var start = bytes.startIndex
        if bytes.count >= 2 {
            let (a, b) = (bytes[start], bytes[start + 1])
            if a == 0xFE && b == 0xFF { big = true; start += 2 } else if a == 0xFF && b == 0xFE { big = false; start += 2 }
        }
        var units: [UInt16] = []
        units.reserveCapacity((bytes.endIndex - start) / 2)
        var i = start
        while i + 1 < bytes.endIndex {
            let (a, b) = (UInt16(bytes[i]), UInt16(bytes[i + 1]))
            units.append(big ? a << 8 | b : b << 8 | a)
            i += 2
        }
        return String(decoding: units, as: UTF16.self)
    }
}

extension ByteReader {
    /// A 32-bit little-endian field (Vorbis comments).
    mutating func u32LE() throws(ContainerError) -> UInt32 {
        let b = try bytes(4)
        let s = b.startIndex
        return UInt32(b[s]) | UInt32(b[s + 1]) << 8 | UInt32(b[s + 2]) << 16 | UInt32(b[s + 3]) << 24
    }
}
