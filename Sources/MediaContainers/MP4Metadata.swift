/// One item of iTunes-style metadata (`moov/udta/meta/ilst`): a key and its `data` values.
/// Read only here, and into the common model (``MediaMetadata``, below: with QuickTime's `mdta`
/// keys in `meta/keys` and user-data strings); writing items and chapters (issue 31) belong here
/// too, on the same tree, so that metadata is read and written by this one reader.
package struct MetadataItem: Sendable, Equatable {
    /// The item's box type: `©nam`, `trkn`, `----` (a freeform item, named by ``mean`` and
    /// ``name``), or, under an `mdta` handler, a 1-based index into the `keys` box.
    package var key: FourCC
    /// A freeform item's domain (`com.apple.iTunes`).
    package var mean: String?
    /// A freeform item's name (`iTunSMPB`).
    package var name: String?
    package var values: [Value]

    /// A `data` box: a type (1 is UTF-8 text, 21 a signed integer, 13 JPEG…), a locale, the bytes.
    package struct Value: Sendable, Equatable {
        package var dataType: UInt32
        package var locale: UInt32
        package var payload: [UInt8]

        /// The payload as text, when the type says UTF-8 (1) or is unset (0, as some writers
        /// leave freeform items).
        package var text: String? { dataType == 1 || dataType == 0 ? String(decoding: payload, as: UTF8.self) : nil }
    }

    /// The item an `ilst` child box holds; nil when it is not one (its body is not boxes).
    package init?(_ box: MP4Box) {
        guard box.isContainer else { return nil }
        key = box.type
        values = []
        for child in box.children {
            var r = ByteReader(child.body)
            switch child.type {
            case "mean", "name":
                guard (try? r.versionAndFlags()) != nil else { continue }
                let text = String(decoding: r.rest(), as: UTF8.self)
                if child.type == "mean" { mean = text } else { name = text }
            case "data":
                guard let type = try? r.u32(), let locale = try? r.u32() else { continue }
                values.append(Value(dataType: type & 0xFF_FFFF, locale: locale, payload: Array(r.rest())))
            default:
                continue
            }
        }
    }
}

extension MP4Box {
    /// The metadata items of this `ilst` box.
    package var metadataItems: [MetadataItem] { type == "ilst" ? children.compactMap(MetadataItem.init) : [] }
}

extension MediaMetadata {
    /// Adds what a movie's index says: its `ilst` items (iTunes keys, or QuickTime `mdta` keys
    /// when the `meta` box's handler is `mdta`), and QuickTime's user-data strings (`udta/©xyz`,
    /// `udta/©nam`…), from every `meta` and `udta` of the movie.
    package mutating func add(movie: MP4Movie) {
        let udtas = movie.moov.all("udta")
        for meta in udtas.flatMap({ $0.all("meta") }) + movie.moov.all("meta") {
            let isQuickTimeKeys = meta.first("hdlr")?.read(HandlerReference.self)?.handlerType == "mdta"
            // `keys`: 8 bytes (version, flags, count), then entries that read as boxes: a size,
            // a namespace (`mdta`), the key's name.
            let keys = isQuickTimeKeys ? (meta.first("keys")?.children.map { TagText.utf8($0.body) } ?? []) : []
            for item in meta.all("ilst").flatMap(\.metadataItems) {
                let name: String
                if isQuickTimeKeys {
                    let index = Int(item.key.rawValue)
                    guard index >= 1, index <= keys.count else { continue }
                    name = keys[index - 1]
                } else if item.key == "----" {
                    name = item.name ?? "----"
                } else {
                    name = item.key.description
                }
                add(item: item, named: name)
            }
        }
        // QuickTime user data: `©` boxes, each holding strings (a 16-bit length, a 16-bit
        // language code, the text); the first is read.
        for box in udtas.flatMap(\.children) where box.type.rawValue >> 24 == 0xA9 && !box.isContainer {
            var r = ByteReader(box.body)
            guard let length = try? r.u16(), (try? r.u16()) != nil, let text = try? r.bytes(Int(length)) else { continue }
            add(box.type.description, TagText.utf8(text))
        }
        // 3GPP's location (TS 26.244 `loci`, as ffmpeg's MP4 muxer writes the place): a name,
        // a role, then longitude, latitude and altitude in 16.16 fixed point; read as ISO 6709.
        if location == nil, let loci = udtas.lazy.compactMap({ $0.first("loci") }).first {
            var r = ByteReader(loci.body)
            // Version and flags, the language, the name (to its 0 byte), the role.
            func skipName() -> Bool {
                while let byte = try? r.u8() { if byte == 0 { return true } }
                return false
            }
            if (try? r.skip(6)) != nil, skipName(), (try? r.u8()) != nil,
               let lon = try? r.u32(), let lat = try? r.u32(), let alt = try? r.u32() {
                func degrees(_ v: UInt32) -> Double { Double(Int32(bitPattern: v)) / 65536 }
                let (la, lo, al) = (degrees(lat), degrees(lon), degrees(alt))
                if abs(la) <= 90, abs(lo) <= 180 {
                    add("loci", Self.iso6709(la, digits: 2, decimals: 4) + Self.iso6709(lo, digits: 3, decimals: 4)
                        + (al != 0 ? Self.iso6709(al, digits: 3, decimals: 3) : "") + "/")
                }
            }
        }
    }

    /// `v` as ISO 6709 writes a coordinate: its sign, at least `digits` whole digits, `decimals`
    /// after the point (`+48.8577`, `+002.2950`). `v` is a 16.16 value: finite and small.
    static func iso6709(_ v: Double, digits: Int, decimals: Int) -> String {
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let units = Int64((abs(v) * scale).rounded()), step = Int64(scale)
        let whole = String(units / step), fraction = String(units % step)
        return (v < 0 ? "-" : "+") + String(repeating: "0", count: max(0, digits - whole.count)) + whole + "."
            + String(repeating: "0", count: max(0, decimals - fraction.count)) + fraction
    }

    /// What ``add(movie:)`` adds, and the movie's chapters (``MP4Movie/chapters(in:)``: a
    /// chapter track's titles are in `source`, the file the index belongs to).
    package mutating func add(movie: MP4Movie, in source: some ByteSource) {
        add(movie: movie)
        addHeaders(of: movie)
        let track = movie.quickTimeChapters(in: source)
        chapters = track.isEmpty ? movie.neroChapters : track
        chapterLanguage = track.isEmpty ? nil : movie.chapterLanguage
    }

    /// The movie header's creation time and each kind of track's language, as ffprobe reads
    /// them: a kind's only track's (of several, which one a copy takes is the graph's choice, and
    /// one language written for another track's sound would be wrong).
    package mutating func addHeaders(of movie: MP4Movie) {
        if creationTime == nil, let made = movie.header?.times.creationTime, made != 0 { creationTime = made }
        for (handler, kind) in [(FourCC("soun"), "audio"), (FourCC("vide"), "video")] where languages[kind] == nil {
            let tracks = movie.tracks(handler: handler)
            if tracks.count == 1, let code = tracks[0].track.anyLanguageCode { languages[kind] = code }
        }
    }

    /// One `ilst` item's values: text, a number, a track or disc pair, or a picture.
    private mutating func add(item: MetadataItem, named name: String) {
        let field = Self.commonField(name)
        let isPicture = name == "covr" || name.lowercased().hasSuffix("artwork")
        for value in item.values {
            switch value.dataType {
            case 0 where isPicture: addPicture(value.payload, mimeType: nil)
            case 13 where isPicture: addPicture(value.payload, mimeType: "image/jpeg")
            case 14 where isPicture: addPicture(value.payload, mimeType: "image/png")
            case 27 where isPicture: addPicture(value.payload, mimeType: "image/bmp")
            case 0 where field == .track || field == .disc:
                // trkn, disk: 2 reserved bytes, the number, the count (16 bits each).
                var r = ByteReader(value.payload)
                guard (try? r.skip(2)) != nil, let number = try? r.u16() else { continue }
                let count = (try? r.u16()) ?? 0
                add(name, count > 0 ? "\(number)/\(count)" : "\(number)")
            case 21, 22:
                // A signed (21) or unsigned (22) big-endian integer of 1 to 8 bytes.
                guard (1...8).contains(value.payload.count) else { continue }
                let raw = value.payload.reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                let bits = UInt64(value.payload.count * 8)
                if value.dataType == 22 {
                    add(name, "\(raw)")
                } else if bits < 64, raw >> (bits - 1) & 1 == 1 {
                    add(name, "\(Int64(bitPattern: raw | ~((1 << bits) - 1)))")  // negative: sign-extended
                } else {
                    add(name, "\(Int64(bitPattern: raw))")
                }
            case 1:
                add(name, TagText.utf8(value.payload))
            case 0 where item.key == "----":
                add(name, TagText.utf8(value.payload))  // some writers leave a freeform item's type unset
            default:
                continue  // other binary values (gnre's number, flags)
            }
        }
    }
}

extension MP4Track {
    /// The track's language, ISO 639-2/T, whichever way `mdhd` holds it: packed letters
    /// (``languageCode``), or a QuickTime Macintosh language code (0 English, 1 French…, as
    /// QuickTime and ffmpeg write a MOV's), as ffprobe reads it; nil for "undetermined".
    package var anyLanguageCode: String? {
        if let code = languageCode { return code }
        guard let packed = mediaHeader?.language, Int(packed) < Self.macintoshLanguages.count else { return nil }
        return Self.macintoshLanguages[Int(packed)]
    }

    /// The Macintosh language codes 0 to 28 (Inside Macintosh, QuickTime's `mdhd`), as ISO 639-2/T.
    static let macintoshLanguages = ["eng", "fra", "deu", "ita", "nld", "swe", "spa", "dan", "por", "nor", "heb", "jpn", "ara", "fin",
                                     "ell", "isl", "mlt", "tur", "hrv", "zho", "urd", "hin", "tha", "kor", "lit", "pol", "hun", "est", "lav"]
}
