// The TIFF structure's reader: EXIF blocks (EXIFTags) and TIFF files (TIFFFile) alike.

/// Reads a TIFF structure's fields in its byte order, never past its bytes.
struct TIFFReader {
    let source: any ByteSource
    let little: Bool

    init(source: any ByteSource, little: Bool) {
        self.source = source
        self.little = little
    }

    /// The reader of the TIFF structure `source` begins with ("II" or "MM", then 42); nil when
    /// it is not one.
    init?(_ source: any ByteSource) {
        guard let start = try? source.read(at: 0, count: 4), start.count == 4 else { return nil }
        switch (start[0], start[1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        self.source = source
        guard u16(2) == 42 else { return nil }
    }

    /// `count` bytes at `at`, or nil when they are not all there.
    func bytes(_ at: Int, _ count: Int) -> [UInt8]? {
        guard at >= 0, count >= 0, let read = try? source.read(at: UInt64(at), count: count), read.count == count else { return nil }
        return read
    }

    func u16(_ at: Int) -> Int? {
        guard let b = bytes(at, 2) else { return nil }
        return little ? Int(b[0]) | Int(b[1]) << 8 : Int(b[0]) << 8 | Int(b[1])
    }

    func u32(_ at: Int) -> Int? {
        guard let a = u16(at), let b = u16(at + 2) else { return nil }
        return little ? a | b << 16 : a << 16 | b
    }

    /// The tags of the directory at `offset`: each entry's value read where it lies (in the entry
    /// when it fits 4 bytes, else at its offset). An offset already read gives nothing.
    func directory(at offset: Int, base: Int, seen: inout Set<Int>) -> [UInt16: EXIFTags.Value] {
        // The entries that are there: a directory cut by the end keeps those before the cut.
        guard seen.insert(offset).inserted, let count = u16(offset), count <= EXIFTags.maximumEntries,
              let table = try? source.read(at: UInt64(offset), count: 2 + count * 12) else { return [:] }
        let entries = TIFFReader(source: MemoryBytes(table), little: little)
        var tags: [UInt16: EXIFTags.Value] = [:]
        for n in 0..<count {
            let entry = 2 + n * 12
            guard let tag = entries.u16(entry), let type = entries.u16(entry + 2), let items = entries.u32(entry + 4) else { break }
            // Type 13 (IFD) is a LONG that points to a directory, as some writers mark sub-directories.
            let size = [1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4][type] ?? 0
            guard size > 0, items > 0, items <= EXIFTags.maximumValueBytes / size else { continue }
            let length = items * size
            let bytes = length <= 4 ? entries.bytes(entry + 8, length) : entries.u32(entry + 8).flatMap { self.bytes($0 + base, length) }
            guard let bytes else { continue }
            if let value = TIFFReader(source: MemoryBytes(bytes), little: little).value(type: type, items: items) { tags[UInt16(tag)] = value }
        }
        return tags
    }

    /// The `items` values of `type` this reader's bytes hold from their first.
    private func value(type: Int, items: Int) -> EXIFTags.Value? {
        guard let bytes = bytes(0, Int(clamping: source.count)) else { return nil }
        let at = 0
        func signed(_ v: Int, bits: Int) -> Int { v >= 1 << (bits - 1) ? v - 1 << bits : v }
        switch type {
        case 2:
            let text = bytes[at..<(at + items)].prefix { $0 != 0 }
            return .text(String(decoding: text, as: UTF8.self))
        case 7:
            return .bytes(Array(bytes[at..<(at + items)]))
        case 1, 6:
            return .integers((0..<items).map { type == 6 ? signed(Int(bytes[at + $0]), bits: 8) : Int(bytes[at + $0]) })
        case 3, 8:
            return .integers((0..<items).compactMap { u16(at + $0 * 2).map { type == 8 ? signed($0, bits: 16) : $0 } })
        case 4, 9, 13:
            return .integers((0..<items).compactMap { u32(at + $0 * 4).map { type == 9 ? signed($0, bits: 32) : $0 } })
        case 5, 10:
            let numbers = (0..<items).compactMap { n -> Double? in
                guard var top = u32(at + n * 8), var bottom = u32(at + n * 8 + 4) else { return nil }
                if type == 10 { (top, bottom) = (signed(top, bits: 32), signed(bottom, bits: 32)) }
                return bottom == 0 ? nil : Double(top) / Double(bottom)
            }
            return numbers.isEmpty ? nil : .numbers(numbers)
        case 11:
            return .numbers((0..<items).compactMap { u32(at + $0 * 4).map { Double(Float(bitPattern: UInt32($0))) } })
        case 12:
            return .numbers((0..<items).compactMap { n in
                guard let a = u32(at + n * 8), let b = u32(at + n * 8 + 4) else { return nil }
                return Double(bitPattern: little ? UInt64(b) << 32 | UInt64(a) : UInt64(a) << 32 | UInt64(b))
            })
        default:
            return nil
        }
    }

    /// The offset of the directory after the one at `offset` (a TIFF file's next page), nil at
    /// the last.
    func next(after offset: Int) -> Int? {
        guard let count = u16(offset), let next = u32(offset + 2 + count * 12), next != 0 else { return nil }
        return next
    }
}
