/// Tags GStreamer 1.22's MP4 muxer does not write, written into a finished file's index as
/// ffmpeg and AVFoundation write them: the cover picture (`moov/udta/meta/ilst/covr`, a JPEG or
/// PNG), the place (`moov/udta/©xyz`, ISO 6709: "+48.8583+002.2945/") and chapters (Nero's
/// `moov/udta/chpl`, which ffmpeg and ffprobe `-show_chapters` read).
package struct MP4ExtraTags: Sendable, Equatable {
    /// A chapter: its start (seconds from the presentation's start) and title; chpl holds no end.
    package typealias Chapter = MediaMetadata.Chapter

    package var artwork: [UInt8]?
    package var location: String?
    package var chapters: [Chapter] = []
    /// Each kind of track's language (ISO 639-2/T, `fra`) by its kind (`audio`, `video`):
    /// written into the media header (`mdhd`) of every track of the kind, as ffmpeg writes
    /// `-metadata:s:a language=`; a code that is not three letters a to z is left out.
    package var languages: [String: String] = [:]
    /// The creation time (seconds from 1904-01-01 UTC), written as ffmpeg writes
    /// `creation_time`: the creation and modification times of the movie's, each track's and
    /// each media's header.
    package var creationTime: UInt64?

    package init(artwork: [UInt8]? = nil, location: String? = nil, chapters: [Chapter] = [],
                 languages: [String: String] = [:], creationTime: UInt64? = nil) {
        self.artwork = artwork
        self.location = location
        self.chapters = chapters
        self.languages = languages
        self.creationTime = creationTime
    }

    /// Whether there is no cover, place or chapter: what a fragmented file (written as it goes)
    /// cannot take (the languages and creation time are in the headers, not counted here).
    package var isEmpty: Bool { artwork == nil && location == nil && chapters.isEmpty }

    /// Whether nothing at all is to be written, headers included.
    package var isNothing: Bool { isEmpty && languages.isEmpty && creationTime == nil }

    /// `code` packed as `mdhd` holds an ISO 639-2/T language (three letters, 5 bits each);
    /// nil when it is not three letters a to z.
    package static func packedLanguage(_ code: String) -> UInt16? {
        let letters = Array(code.lowercased().utf8)
        guard letters.count == 3, letters.allSatisfy({ (0x61...0x7A).contains($0) }) else { return nil }
        return letters.reduce(UInt16(0)) { $0 << 5 | UInt16($1 - 0x60) }
    }

    /// A picture's kind by its first bytes, as `ilst` data types: 13 for JPEG, 14 for PNG; nil
    /// for anything else (a cover must be one of the two).
    package static func pictureType(_ bytes: [UInt8]) -> UInt32? {
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return 13 }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return 14 }
        return nil
    }

    /// Why the tags cannot be written (a cover that is not a JPEG or PNG, a chapter list not
    /// in order, a title longer than 255 bytes), naming the tag; nil when they can.
    /// Seconds a chapter may start at most: chpl's 64-bit count of 100 ns units.
    static let latestChapterStart = Double(UInt64.max) / 10_000_000 - 1

    package var problem: String? {
        if let artwork, Self.pictureType(artwork) == nil {
            return "the cover (artwork) is not a JPEG or PNG picture: its first bytes are \(artwork.prefix(8).map { String($0, radix: 16) }.joined(separator: " "))"
        }
        if let location, location.utf8.count > 0xFFFF { return "the location is longer than 65,535 bytes" }
        if chapters.count > 255 { return "there are \(chapters.count) chapters, more than the 255 a chpl box holds" }
        for (i, c) in chapters.enumerated() {
            guard c.start.isFinite, c.start >= 0 else { return "chapter \(i + 1) starts at \(c.start) s: give a time from 0" }
            // chpl counts in 100 ns units, 64 bits: about 58,000 years.
            guard c.start < Self.latestChapterStart else { return "chapter \(i + 1) starts at \(c.start) s, later than a chpl box holds" }
            if i > 0, c.start <= chapters[i - 1].start { return "chapter \(i + 1) starts at \(c.start) s, not after chapter \(i)'s \(chapters[i - 1].start) s" }
            if c.title.utf8.count > 255 { return "chapter \(i + 1)'s title is longer than 255 bytes" }
        }
        return nil
    }

    /// `chapters` (another file's, carried over) as a chpl box holds them: each title cut to
    /// 255 bytes (at a character), a chapter that does not start after the one before (or
    /// starts before 0, or later than chpl counts) left out, and the first 255 kept.
    package static func storable(_ chapters: [Chapter]) -> [Chapter] {
        var out: [Chapter] = []
        for var c in chapters where out.count < 255 && c.start.isFinite && c.start >= 0 && c.start < latestChapterStart {
            if let last = out.last, c.start <= last.start { continue }
            while c.title.utf8.count > 255 { c.title.removeLast() }
            out.append(c)
        }
        return out
    }

    /// The tags written into `moov` (each replacing one of its kind already there).
    package func apply(to moov: inout MP4Box) {
        var udta = moov.first("udta") ?? MP4Box(type: "udta", children: [])
        if let location, location.utf8.count <= Int(UInt16.max) {
            var body: [UInt8] = []
            body.appendU16(UInt16(location.utf8.count))
            body.appendU16(0x55C4)  // "und", packed ISO 639-2/T
            body += Array(location.utf8)
            udta.replaceOrInsert(MP4Box(type: FourCC("©xyz"), body: body))
        }
        if !chapters.isEmpty {
            var body: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 0, UInt8(chapters.count)]
            for c in chapters {
                body.appendU64(UInt64((c.start * 10_000_000).rounded()))  // 100 ns units
                body.append(UInt8(c.title.utf8.count))
                body += Array(c.title.utf8)
            }
            udta.replaceOrInsert(MP4Box(type: "chpl", body: body))
        }
        if let artwork, let type = Self.pictureType(artwork) {
            var data: [UInt8] = []
            data.appendU32(type)
            data.appendU32(0)  // locale
            let covr = MP4Box(type: "covr", children: [MP4Box(type: "data", body: data + artwork)])
            var meta = udta.first("meta") ?? MP4Box(type: "meta", leading: [0, 0, 0, 0], children: [Self.itunesHandler])
            if meta.first("hdlr") == nil { meta.replaceOrInsert(Self.itunesHandler) }
            var ilst = meta.first("ilst") ?? MP4Box(type: "ilst", children: [])
            ilst.replaceOrInsert(covr)
            meta.replaceOrInsert(ilst, after: ["hdlr", "keys"])
            udta.replaceOrInsert(meta)
        }
        moov.replaceOrInsert(udta, after: ["mvhd", "trak"])
        applyHeaders(to: &moov)
    }

    /// The languages and the creation time, written into the movie's, tracks' and media's headers.
    private func applyHeaders(to moov: inout MP4Box) {
        if let creationTime {
            func stamp(_ times: inout HeaderTimes) { (times.creationTime, times.modificationTime) = (creationTime, creationTime) }
            moov.update(["mvhd"], as: MovieHeader.self) { stamp(&$0.times) }
            for i in moov.children.indices where moov.children[i].type == "trak" {
                moov.children[i].update(["tkhd"], as: TrackHeader.self) { stamp(&$0.times) }
                moov.children[i].update(["mdia", "mdhd"], as: MediaHeader.self) { stamp(&$0.times) }
            }
        }
        guard !languages.isEmpty else { return }
        for i in moov.children.indices where moov.children[i].type == "trak" {
            let kind: String? = switch MP4Track(box: moov.children[i]).handler {
            case "soun"?: "audio"
            case "vide"?: "video"
            default: nil
            }
            guard let kind, let code = languages[kind], let packed = Self.packedLanguage(code) else { continue }
            moov.children[i].update(["mdia", "mdhd"], as: MediaHeader.self) { $0.language = packed }
        }
    }

    /// Sets the iTunes text item `key` (`moov/udta/meta/ilst/KEY`: one `data` box, type 1 UTF-8,
    /// locale 0, the text), the tag list made if missing.
    package static func setText(_ key: FourCC, _ text: String, in moov: inout MP4Box) {
        setItem(MP4Box(type: key, children: [MP4Box(type: "data", body: [0, 0, 0, 1, 0, 0, 0, 0] + Array(text.utf8))]), in: &moov)
    }

    /// Sets `item` in the iTunes tag list (`moov/udta/meta/ilst`), replacing one of its type,
    /// the list made if missing.
    package static func setItem(_ item: MP4Box, in moov: inout MP4Box) {
        var udta = moov.first("udta") ?? MP4Box(type: "udta", children: [])
        var meta = udta.first("meta") ?? MP4Box(type: "meta", leading: [0, 0, 0, 0], children: [itunesHandler])
        if meta.first("hdlr") == nil { meta.replaceOrInsert(itunesHandler) }
        var ilst = meta.first("ilst") ?? MP4Box(type: "ilst", children: [])
        ilst.replaceOrInsert(item)
        meta.replaceOrInsert(ilst, after: ["hdlr", "keys"])
        udta.replaceOrInsert(meta)
        moov.replaceOrInsert(udta, after: ["mvhd", "trak"])
    }

    /// The handler of an iTunes tag list (`mdir`, `appl`), as iTunes and ffmpeg write it.
    static let itunesHandler = MP4Box(type: "hdlr", body: [0, 0, 0, 0, 0, 0, 0, 0] + Array("mdirappl".utf8) + [UInt8](repeating: 0, count: 9))
}

extension MediaMetadata {
    /// The place as an MP4 writes it: the location when it is ISO 6709 ("+48.8583+002.2945/");
    /// nil for another form.
    package var writableLocation: String? {
        // (Its length is a 16-bit field: a hostile file's longer one is not kept.)
        guard let location, let first = location.first, first == "+" || first == "-", location.utf8.count <= Int(UInt16.max),
              location.allSatisfy({ "+-0123456789./".contains($0) }) else { return nil }
        return location
    }

    /// The cover as an MP4 holds it: the artwork when it is a JPEG or PNG picture.
    package var writableArtwork: [UInt8]? { artwork.map(\.data).flatMap { MP4ExtraTags.pictureType($0) == nil ? nil : $0 } }

    /// The text field named `name` as this type names it (`title`, `albumArtist`, `date`…);
    /// nil for a field it does not have, or that is not set.
    package func textField(_ name: String) -> String? {
        switch name {
        case "title": title
        case "artist": artist
        case "album": album
        case "albumArtist": albumArtist
        case "genre": genre
        case "comment": comment
        case "date": date
        case "encoder": encoder
        case "location": location
        default: nil
        }
    }
}
