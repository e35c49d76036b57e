import Glibc

/// Mends what GStreamer's Matroska muxer writes wrong: it stores each tag's value as
/// `gst_value_serialize` gives it, so a title "Café – 東京" is written as
/// `"Caf\303\251\ \342\200\223\ \346\235\261\344\272\254"`, which every reader shows as it is
/// (measured with ffprobe on GStreamer 1.22). ``mendMuxersWriting(descriptor:)`` finds the
/// file's `Tags` element and puts each value so written back to its own UTF-8, in place: the
/// element shrinks, and an EBML `Void` fills what it gave up, so no other byte moves (the seek
/// head, cues and segment size stay right). It also writes a chapter's end that was not given
/// as all ones (which readers take for a time, and refuse): each becomes a Void.
///
/// Only what that serialization writes is changed: a value in double quotes whose inside is
/// nothing but ASCII letters, digits, `_-+/:.` and backslash escapes (`\` and a printable
/// character, or three octal digits), with at least one escape (or `""` and `"NULL"`, the two it
/// quotes with none), and the NUL the muxer ends it with. Anything else stays as it is.
package enum MatroskaTags {
    static let segment: UInt32 = 0x1853_8067, tags: UInt32 = 0x1254_C367, tag: UInt32 = 0x7373
    static let simpleTag: UInt32 = 0x67C8, targets: UInt32 = 0x63C0, tagString: UInt32 = 0x4487, void: UInt32 = 0xEC
    static let chapters: UInt32 = 0x1043_A770, edition: UInt32 = 0x45B9, chapterAtom: UInt32 = 0xB6, chapterEnd: UInt32 = 0x92
    /// A Tags element larger than this is left alone (a muxer's tags are a few kB).
    static let largestTags = 16 << 20
    /// How deep tags and chapters may nest before the element is left as it is.
    static let mostNesting = 32
    /// How many top-level elements of the segment are looked at before giving up.
    static let mostElements = 10_000_000

    /// Finds and mends the tags of the Matroska or WebM file open as `descriptor` (read and
    /// write), and its chapters' ends. Returns how many values changed. Throws when the file
    /// cannot be read or written (errno's words); a file that is not Matroska, or has neither,
    /// is left alone (0).
    @discardableResult
    package static func mendMuxersWriting(descriptor fd: Int32) throws(ContainerError) -> Int {
        let file = FileBytes(descriptor: fd)
        guard file.count > 4, try file.read(at: 0, count: 4) == [0x1A, 0x45, 0xDF, 0xA3] else { return 0 }
        // The EBML header, then the segment.
        guard let header = try element(in: file, at: 0), let segment = try element(in: file, at: header.end),
              segment.id == Self.segment else { return 0 }
        let end = min(segment.end, file.count)
        var at = segment.bodyStart, seen = 0, changed = 0
        while at < end, seen < mostElements {
            guard let child = try element(in: file, at: at), child.end <= end else { break }
            seen += 1
            if child.id == tags || child.id == chapters, child.end - child.start <= UInt64(largestTags) {
                let old = try file.read(at: child.start, count: Int(child.end - child.start))
                if child.id == chapters {
                    var mended = old, ends = 0
                    if voidUnstatedEnds(&mended, from: Int(child.bodyStart - child.start), count: &ends), ends > 0 {
                        try write(mended, at: child.start, to: fd)
                        changed += ends
                    }
                } else {
                    var strings = 0
                    let headerLength = Int(child.bodyStart - child.start)
                    if let body = mend(old[headerLength...], changed: &strings), strings > 0 {
                        var new = Array(old[0..<(headerLength - child.sizeLength)])
                        new += vint(UInt64(body.count))
                        new += body
                        if let padded = pad(new, to: old.count) {
                            try write(padded, at: child.start, to: fd)
                            changed += strings
                        }
                    }
                }
            }
            at = child.end
        }
        return changed
    }

    /// In a Chapters element's bytes, each ChapterTimeEnd that says "none" as GStreamer's muxer
    /// writes it (all ones: a chapter whose end the source did not state, the last) becomes a
    /// Void of its length, so a reader ends that chapter where the next starts or the file ends.
    /// False when the bytes do not read as elements.
    static func voidUnstatedEnds(_ bytes: inout [UInt8], from start: Int, count: inout Int, depth: Int = 0) -> Bool {
        guard depth < mostNesting else { return false }
        var at = start
        while at < bytes.count {
            guard let (id, idLength) = readID(bytes[at...]), let (size, sizeLength) = readSize(bytes[(at + idLength)...]),
                  size <= UInt64(bytes.count - at - idLength - sizeLength) else { return false }
            let body = at + idLength + sizeLength, next = body + Int(size)
            switch id {
            case edition, chapterAtom:
                var inner = Array(bytes[body..<next])
                guard voidUnstatedEnds(&inner, from: 0, count: &count, depth: depth + 1) else { return false }
                bytes.replaceSubrange(body..<next, with: inner)
            case chapterEnd where size == 8 && bytes[body..<next].allSatisfy { $0 == 0xFF }:
                // The Void: its ID, a size as wide as the end's, zeros.
                var void = [UInt8(Self.void)] + vint(UInt64(next - at - 1 - sizeLength), length: sizeLength)
                void += [UInt8](repeating: 0, count: next - at - void.count)
                bytes.replaceSubrange(at..<next, with: void)
                count += 1
            default:
                break
            }
            at = next
        }
        return true
    }

    struct Element {
        var id: UInt32
        var start: UInt64
        var bodyStart: UInt64
        var end: UInt64
        var sizeLength: Int
    }

    /// The element at `at`: its ID (marker kept), where its body starts and where it ends; nil
    /// when the bytes there are not one (or its size is unknown).
    static func element(in file: FileBytes, at: UInt64) throws(ContainerError) -> Element? {
        let head = try file.read(at: at, count: 12)
        guard let (id, idLength) = readID(head[...]), let (size, sizeLength) = readSize(head[idLength...]) else { return nil }
        let bodyStart = at + UInt64(idLength + sizeLength)
        let (end, over) = bodyStart.addingReportingOverflow(size)
        guard !over else { return nil }
        return Element(id: id, start: at, bodyStart: bodyStart, end: end, sizeLength: sizeLength)
    }

    static func readID(_ b: ArraySlice<UInt8>) -> (UInt32, Int)? {
        guard let first = b.first, first != 0 else { return nil }
        let length = first.leadingZeroBitCount + 1
        guard length <= 4, b.count >= length else { return nil }
        return (b.prefix(length).reduce(0) { $0 << 8 | UInt32($1) }, length)
    }

    /// A size: its value (nil for "unknown", all ones) and its length.
    static func readSize(_ b: ArraySlice<UInt8>) -> (UInt64, Int)? {
        guard let first = b.first, first != 0 else { return nil }
        let length = first.leadingZeroBitCount + 1
        guard b.count >= length else { return nil }
        var value = UInt64(first & (0xFF >> length))
        for byte in b.dropFirst().prefix(length - 1) { value = value << 8 | UInt64(byte) }
        guard value != (1 << (7 * length)) - 1 else { return nil }
        return (value, length)
    }

    /// A size in as few bytes as hold it, or in `length` bytes.
    static func vint(_ value: UInt64, length wanted: Int? = nil) -> [UInt8] {
        var length = wanted ?? 1
        while length < 8, value >= (1 << (7 * length)) - 1 { length += 1 }
        var out = [UInt8](repeating: 0, count: length)
        var v = value
        for i in stride(from: length - 1, through: 0, by: -1) {
            out[i] = UInt8(truncatingIfNeeded: v)
            v >>= 8
        }
        out[0] |= 0x80 >> (length - 1)
        return out
    }

    /// The body of a Tags, Tag or SimpleTag element with its strings mended, each element's size
    /// written again; nil when it does not read as elements.
    static func mend(_ body: ArraySlice<UInt8>, changed: inout Int, depth: Int = 0) -> [UInt8]? {
        guard depth < mostNesting else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(body.count)
        var rest = body
        while !rest.isEmpty {
            guard let (id, idLength) = readID(rest), let (size, sizeLength) = readSize(rest.dropFirst(idLength)),
                  size <= UInt64(rest.count - idLength - sizeLength) else { return nil }
            let start = rest.startIndex + idLength + sizeLength
            let content = rest[start..<(start + Int(size))]
            var value = Array(content)
            switch id {
            case tag, simpleTag:
                guard let inner = mend(content, changed: &changed, depth: depth + 1) else { return nil }
                value = inner
            case tagString:
                // The muxer ends each string with a NUL (EBML allows the padding): kept.
                let text = content.prefix { $0 != 0 }
                if let plain = unescape(text) {
                    value = plain + content[text.endIndex...]
                    changed += 1
                }
            default:
                break
            }
            out += rest[rest.startIndex..<(rest.startIndex + idLength)]
            out += vint(UInt64(value.count))
            out += value
            rest = rest[(start + Int(size))...]
        }
        return out
    }

    /// The string `gst_value_serialize` wrapped as `text`, or nil when `text` is not so wrapped.
    static func unescape(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        guard text.count >= 2, text.first == 0x22, text.last == 0x22 else { return nil }
        let inside = text.dropFirst().dropLast()
        // The two strings it quotes with nothing to escape: the empty one, and "NULL" (which
        // alone would read as no string).
        if inside.isEmpty || inside.elementsEqual("NULL".utf8) { return Array(inside) }
        var out: [UInt8] = []
        var escapes = 0
        var i = inside.startIndex
        func isSafe(_ c: UInt8) -> Bool {
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || [0x5F, 0x2D, 0x2B, 0x2F, 0x3A, 0x2E].contains(c)
        }
        func isOctal(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x37 }
        while i < inside.endIndex {
            let c = inside[i]
            if isSafe(c) {
                out.append(c)
                i += 1
                continue
            }
            guard c == 0x5C, i + 1 < inside.endIndex else { return nil }
            let n = inside[i + 1]
            if n >= 0x30, n <= 0x33, i + 3 < inside.endIndex, isOctal(inside[i + 2]), isOctal(inside[i + 3]) {
                out.append((n - 0x30) << 6 | (inside[i + 2] - 0x30) << 3 | (inside[i + 3] - 0x30))
                i += 4
            } else if n >= 0x20, n < 0x7F {
                out.append(n)
                i += 2
            } else {
                return nil
            }
            escapes += 1
        }
        return escapes > 0 ? out : nil
    }

    /// `bytes` followed by a Void element that makes them `length` long; nil when they are
    /// longer, or one byte short (no Void is one byte).
    static func pad(_ bytes: [UInt8], to length: Int) -> [UInt8]? {
        let gap = length - bytes.count
        if gap == 0 { return bytes }
        guard gap >= 2 else { return nil }
        // The Void's ID, its size in one byte (up to 126) or eight, zeros.
        let sizeBytes = gap - 2 <= 126 ? 1 : 8
        let payload = gap - 1 - sizeBytes
        return bytes + [UInt8(void)] + vint(UInt64(payload), length: sizeBytes) + [UInt8](repeating: 0, count: payload)
    }

    static func write(_ bytes: [UInt8], at offset: UInt64, to fd: Int32) throws(ContainerError) {
        do {
            try FileBytes(descriptor: fd).write(bytes, at: offset)
        } catch {
            throw ContainerError(error.reason.lowercased())
        }
    }
}
