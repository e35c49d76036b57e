/// EXIF's TIFF structure written in the tests (CIPA DC-008): directories of entries of any type,
/// in either byte order, with the Exif and GPS directories and an Apple maker note linked from
/// IFD0 as cameras write them; for what exiftool does not write (Apple's maker note) and for
/// damage.
public struct EXIFBuilder {
    public enum Value {
        case ascii(String)
        case shorts([Int])
        case longs([Int])
        case rationals([(Int, Int)])
        case signedRationals([(Int, Int)])
        case undefined([UInt8])
    }

    public var little: Bool
    public var primary: [(UInt16, Value)] = []
    public var exif: [(UInt16, Value)] = []
    public var gps: [(UInt16, Value)] = []
    /// Apple's maker note directory (offsets from the note's start, big-endian, as Apple writes).
    public var makerApple: [(UInt16, Value)] = []

    public init(little: Bool) { self.little = little }

    /// The TIFF structure's bytes.
    public func bytes() -> [UInt8] {
        var out = little ? Array("II".utf8) + u16(42) + u32(8) : Array("MM".utf8) + u16(42) + u32(8)
        var ifd0 = primary
        // The sub-directories go after IFD0 (12 bytes an entry, 2 for the count, 4 for next);
        // their pointers are written once their places are known.
        var sub: [(tag: UInt16, entries: [(UInt16, Value)])] = []
        var exifEntries = exif
        if !makerApple.isEmpty { exifEntries.append((0x927C, .undefined(Self.appleNote(makerApple)))) }
        if !exifEntries.isEmpty { sub.append((0x8769, exifEntries)) }
        if !gps.isEmpty { sub.append((0x8825, gps)) }
        for s in sub { ifd0.append((s.tag, .longs([0]))) }
        let ifd0Size = 2 + ifd0.count * 12 + 4 + dataSize(ifd0)
        var next = 8 + ifd0Size
        var places: [UInt16: Int] = [:]
        for s in sub {
            places[s.tag] = next
            next += 2 + s.entries.count * 12 + 4 + dataSize(s.entries)
        }
        ifd0 = ifd0.map { tag, value in places[tag].map { (tag, .longs([$0])) } ?? (tag, value) }
        out += directory(ifd0, at: 8)
        for s in sub { out += directory(s.entries, at: places[s.tag]!) }
        return out
    }

    /// An Apple maker note: "Apple iOS\0", version 1, "MM", then its directory at 14.
    static func appleNote(_ entries: [(UInt16, Value)]) -> [UInt8] {
        Array("Apple iOS".utf8) + [0, 0, 1] + Array("MM".utf8) + EXIFBuilder(little: false).directory(entries, at: 14, base: 0)
    }

    func u16(_ v: Int) -> [UInt8] { little ? [UInt8(v & 0xFF), UInt8((v >> 8) & 0xFF)] : [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    func u32(_ v: Int) -> [UInt8] { little ? u16(v & 0xFFFF) + u16((v >> 16) & 0xFFFF) : u16((v >> 16) & 0xFFFF) + u16(v & 0xFFFF) }

    func encoded(_ value: Value) -> (type: Int, count: Int, bytes: [UInt8]) {
        switch value {
        case .ascii(let s): return (2, s.utf8.count + 1, Array(s.utf8) + [0])
        case .shorts(let v): return (3, v.count, v.flatMap(u16))
        case .longs(let v): return (4, v.count, v.flatMap(u32))
        case .rationals(let v): return (5, v.count, v.flatMap { u32($0.0) + u32($0.1) })
        case .signedRationals(let v): return (10, v.count, v.flatMap { u32($0.0) + u32($0.1) })
        case .undefined(let b): return (7, b.count, b)
        }
    }

    func dataSize(_ entries: [(UInt16, Value)]) -> Int {
        entries.map { let b = encoded($0.1).bytes.count; return b > 4 ? b + (b & 1) : 0 }.reduce(0, +)
    }

    /// A directory placed at `offset` (its values after it), offsets counted from `base`.
    func directory(_ entries: [(UInt16, Value)], at offset: Int, base: Int = 0) -> [UInt8] {
        var head = u16(entries.count)
        var data: [UInt8] = []
        let dataStart = offset + 2 + entries.count * 12 + 4
        for (tag, value) in entries.sorted(by: { $0.0 < $1.0 }) {
            let (type, count, bytes) = encoded(value)
            head += u16(Int(tag)) + u16(type) + u32(count)
            if bytes.count <= 4 {
                head += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
            } else {
                head += u32(dataStart + data.count - base)
                data += bytes
                if data.count & 1 == 1 { data.append(0) }
            }
        }
        return head + u32(0) + data
    }

    /// A JPEG's APP1 segment holding `tiff`.
    public static func jpegSegment(_ tiff: [UInt8]) -> [UInt8] {
        let payload = Array("Exif".utf8) + [0, 0] + tiff
        return [0xFF, 0xE1, UInt8((payload.count + 2) >> 8), UInt8((payload.count + 2) & 0xFF)] + payload
    }
}
