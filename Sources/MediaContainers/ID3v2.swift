/// An ID3v2 tag (versions 2.3 and 2.4; id3.org's id3v2.3.0 and id3v2.4.0-structure): a 10-byte
/// header ("ID3", version, flags, a sync-safe size), an optional extended header, then frames,
/// each a 4-character ID, a size (sync-safe in 2.4, plain in 2.3), two flag bytes and a body.
/// Read into a ``MediaMetadata``: text frames (`T???`, `TXXX` by its description), `COMM`,
/// `APIC`, and chapters (`CHAP`, in `CTOC` order). Unsynchronisation (the whole tag in 2.3, a
/// frame or all in 2.4) is undone; compressed and encrypted frames are skipped; 2.2's
/// three-letter frames are not read.
package enum ID3v2 {
    /// Reads the tag at the start of `source`, when it has one. Throws only when it cannot be read.
    package static func read(_ source: some ByteSource, into metadata: inout MediaMetadata) throws(ContainerError) {
        let header = try source.read(at: 0, count: 10)
        guard header.count == 10, header[0..<3].elementsEqual("ID3".utf8), let size = syncSafe(header[6..<10]) else { return }
        // What the header says, as far as the file holds it.
        let body = try source.read(at: 10, count: Int(min(UInt64(size), source.count - 10)))
        read(version: header[3], flags: header[5], body: body[...], into: &metadata)
    }

    /// The frames of a tag of `version` (3 or 4) whose header flags are `flags`.
    static func read(version: UInt8, flags: UInt8, body: ArraySlice<UInt8>, into metadata: inout MediaMetadata) {
        guard version == 3 || version == 4 else { return }
        let unsynchronised = flags & 0x80 != 0
        // 2.3 unsynchronises the whole tag (extended header included); 2.4 each frame.
        var r = ByteReader(version == 3 && unsynchronised ? resynchronised(body) : Array(body))
        if flags & 0x40 != 0 {  // the extended header
            guard let size = try? r.u32() else { return }
            let skip: Int
            if version == 4 {
                guard let s = syncSafe(size), s >= 4 else { return }
                skip = Int(s) - 4  // 2.4's size counts itself
            } else {
                skip = Int(size)
            }
            guard (try? r.skip(skip)) != nil else { return }
        }
        var chapters = ChapterFrames()
        frames(&r, version: version, unsynchronised: unsynchronised) { id, data in
            if id == "CHAP" || id == "CTOC" {
                chapters.add(id, data, version: version)
            } else {
                frame(id, data, into: &metadata)
            }
        }
        metadata.chapters = chapters.list
    }

    /// Each frame `r` holds, its ID and its body (what its flags put before it, and
    /// unsynchronisation, undone), until the padding or the first damaged frame.
    private static func frames(_ r: inout ByteReader, version: UInt8, unsynchronised: Bool, _ each: (String, ArraySlice<UInt8>) -> Void) {
        while r.remaining >= 10 {
            guard let id = try? r.bytes(4), id.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }),
                  let rawSize = try? r.u32(), let frameFlags = try? r.u16() else { return }  // padding, or damage
            let size: UInt32
            if version == 4 {
                guard let s = syncSafe(rawSize) else { return }
                size = s
            } else {
                size = rawSize
            }
            guard let bytes = try? r.bytes(Int(size)) else { return }  // a frame past the tag's end
            guard var data = frameData(bytes, version: version, flags: frameFlags) else { continue }
            if version == 4, unsynchronised || frameFlags & 0x02 != 0 { data = resynchronised(data)[...] }
            each(TagText.latin1(id), data)
        }
    }

    /// The chapter frames of a tag (id3.org's ID3v2 Chapter Frame Addendum, which ffmpeg writes
    /// and reads): `CHAP` (an element ID, start and end in milliseconds, byte offsets, then frames
    /// of its own: `TIT2` the title) and `CTOC` (an element ID, flags, the IDs of its entries).
    /// The chapters are in the order of the top-level table of contents (its entries that are
    /// tables themselves expanded), when the tag has one; else in the order of their starts.
    struct ChapterFrames {
        private var chapters: [String: MediaMetadata.Chapter] = [:]
        private var tables: [String: (topLevel: Bool, entries: [String])] = [:]

        mutating func add(_ id: String, _ data: ArraySlice<UInt8>, version: UInt8) {
            guard chapters.count + tables.count < MP4Movie.mostChapters else { return }
            var r = ByteReader(data)
            let element = TagText.latin1(terminatedBytes(&r, wide: false))
            if id == "CHAP" {
                guard let start = try? r.u32(), let end = try? r.u32(), (try? r.skip(8)) != nil else { return }
                // The title: the embedded TIT2, read as a tag's own.
                var embedded = MediaMetadata()
                var rest = ByteReader(r.rest())
                ID3v2.frames(&rest, version: version, unsynchronised: false) { id, data in ID3v2.frame(id, data, into: &embedded) }
                if chapters[element] == nil {
                    chapters[element] = MediaMetadata.Chapter(start: Double(start) / 1000, end: end > start && end != .max ? Double(end) / 1000 : nil,
                                                             title: embedded.title ?? "")
                }
            } else {
                guard let flags = try? r.u8(), let count = try? r.u8() else { return }
                var entries: [String] = []
                for _ in 0..<count where !r.isAtEnd { entries.append(TagText.latin1(terminatedBytes(&r, wide: false))) }
                if tables[element] == nil { tables[element] = (flags & 0x02 != 0, entries) }
            }
        }

        var list: [MediaMetadata.Chapter] {
            if let top = tables.first(where: { $0.value.topLevel })?.key {
                var seen: Set<String> = []
                var out: [MediaMetadata.Chapter] = []
                func expand(_ id: String) {
                    guard seen.insert(id).inserted else { return }  // a table that contains itself
                    if let chapter = chapters[id] { out.append(chapter) }
                    for entry in tables[id]?.entries ?? [] { expand(entry) }
                }
                expand(top)
                if !out.isEmpty { return out }
            }
            return chapters.values.sorted { ($0.start, $0.end ?? 0) < ($1.start, $1.end ?? 0) }
        }
    }

    /// A frame's body without the bytes its flags put before it; nil when it is compressed or
    /// encrypted (not read).
    private static func frameData(_ bytes: ArraySlice<UInt8>, version: UInt8, flags: UInt16) -> ArraySlice<UInt8>? {
        var r = ByteReader(bytes)
        if version == 4 {
            guard flags & 0x0C == 0 else { return nil }  // compression, encryption
            if flags & 0x40 != 0 { guard (try? r.skip(1)) != nil else { return nil } }  // group
            if flags & 0x01 != 0 { guard (try? r.skip(4)) != nil else { return nil } }  // data length
        } else {
            guard flags & 0xC0 == 0 else { return nil }
            if flags & 0x20 != 0 { guard (try? r.skip(1)) != nil else { return nil } }
        }
        return r.rest()
    }

    /// One frame.
    static func frame(_ id: String, _ data: ArraySlice<UInt8>, into metadata: inout MediaMetadata) {
        var r = ByteReader(data)
        guard let encoding = try? r.u8(), encoding <= 3 else { return }
        switch id {
        case "TXXX":
            let description = terminated(&r, encoding)
            metadata.add(description.isEmpty ? "TXXX" : description, text(r.rest(), encoding))
        case "COMM":
            guard (try? r.skip(3)) != nil else { return }  // language
            let description = terminated(&r, encoding)
            metadata.add(description.isEmpty ? "COMM" : "COMM:" + description, text(r.rest(), encoding))
        case "APIC":
            let mime = TagText.latin1(terminatedBytes(&r, wide: false))
            guard let type = try? r.u8() else { return }
            _ = terminated(&r, encoding)
            metadata.addPicture(r.rest(), mimeType: mime.contains("/") ? mime : nil, frontCover: type == 3)
        default:
            guard id.hasPrefix("T") else { return }
            metadata.add(id, text(r.rest(), encoding))
        }
    }

    /// Text in `encoding` (0 ISO-8859-1, 1 UTF-16 with a byte-order mark, 2 UTF-16BE, 3 UTF-8),
    /// its terminators dropped; 2.4's several values (separated by terminators) joined by "/".
    static func text(_ bytes: ArraySlice<UInt8>, _ encoding: UInt8) -> String {
        var r = ByteReader(bytes)
        var values: [String] = []
        while !r.isAtEnd {
            let value = terminated(&r, encoding)
            if !value.isEmpty { values.append(value) }
        }
        return values.joined(separator: "/")
    }

    /// The text up to the next terminator (one zero byte, two for UTF-16), which is passed.
    private static func terminated(_ r: inout ByteReader, _ encoding: UInt8) -> String {
        let bytes = terminatedBytes(&r, wide: encoding == 1 || encoding == 2)
        switch encoding {
        case 0: return TagText.latin1(bytes)
        case 1: return TagText.utf16(bytes, bigEndian: true)
        case 2: return TagText.utf16(bytes, bigEndian: true)
        default: return TagText.utf8(bytes)
        }
    }

    static func terminatedBytes(_ r: inout ByteReader, wide: Bool) -> ArraySlice<UInt8> {
        let rest = r.rest()
        var i = rest.startIndex
        let step = wide ? 2 : 1
        while i + step <= rest.endIndex {
            if rest[i] == 0 && (!wide || rest[i + 1] == 0) {
                let found = rest[rest.startIndex..<i]
                r = ByteReader(rest[(i + step)...])
                return found
            }
            i += step
        }
        return rest  // no terminator: the rest
    }

    /// A sync-safe integer (7 bits a byte); nil when a byte has its top bit set.
    static func syncSafe(_ bytes: ArraySlice<UInt8>) -> UInt32? {
        guard bytes.count == 4, bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        return bytes.reduce(0) { $0 << 7 | UInt32($1) }
    }

    static func syncSafe(_ value: UInt32) -> UInt32? {
        syncSafe([UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)][...])
    }

    /// Unsynchronisation undone: each 0xFF 0x00 back to 0xFF.
    static func resynchronised(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var afterFF = false
        for b in bytes {
            if !(afterFF && b == 0) { out.append(b) }
            afterFF = b == 0xFF
        }
        return out
    }
}
