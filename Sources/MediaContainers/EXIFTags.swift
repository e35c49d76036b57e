/// The tags of EXIF's TIFF structure (CIPA DC-008 / JEITA CP-3451): IFD0 (the camera's make and
/// model, orientation, dates), the Exif IFD (exposure, dates with their offsets, lens), the GPS
/// IFD, and Apple's maker note (its own IFD after "Apple iOS": the Live Photo content identifier
/// is tag 17, the HDR headroom tags 33 and 48), as JPEG's APP1, PNG's eXIf and HEIF's Exif item
/// hold them.
///
/// Read with every count and offset checked against the bytes: a directory of at most
/// ``maximumEntries`` entries, a value of at most ``maximumValueBytes``, each directory read once
/// (a pointer back to one already read is not followed), so a crafted block cannot loop or
/// allocate beyond its own size.
public struct EXIFTags: Sendable, Equatable {
    /// A tag's value as its type says: text (ASCII), whole numbers (BYTE, SHORT, LONG and their
    /// signed forms), numbers (RATIONAL, SRATIONAL, FLOAT, DOUBLE; a zero denominator gives
    /// nothing), or bytes (UNDEFINED).
    public enum Value: Sendable, Equatable {
        case text(String)
        case integers([Int])
        case numbers([Double])
        case bytes([UInt8])
    }

    /// IFD0: the picture's tags (0x010F make, 0x0110 model, 0x0112 orientation, 0x0132 date…).
    public var primary: [UInt16: Value] = [:]
    /// The Exif IFD (0x8769): 0x9003 DateTimeOriginal, 0x9011 OffsetTimeOriginal, 0x829A exposure…
    public var exif: [UInt16: Value] = [:]
    /// The GPS IFD (0x8825): 1/2 latitude, 3/4 longitude, 5/6 altitude, 7 time, 0x1D date…
    public var gps: [UInt16: Value] = [:]
    /// Apple's maker note (0x927C beginning "Apple iOS"), its own directory's tags.
    public var makerApple: [UInt16: Value] = [:]

    /// A text tag's value.
    public static func text(_ value: Value?) -> String? {
        if case .text(let s)? = value, !s.isEmpty { return s }
        return nil
    }

    /// Where the picture was taken: decimal degrees, south and west negative; metres, below sea
    /// level negative (GPS tags 1 to 6).
    public var location: (latitude: Double, longitude: Double, altitude: Double?)? {
        func degrees(_ tag: UInt16, negative: UInt16, _ letter: String) -> Double? {
            guard let value = Self.degrees(gps[tag]) else { return nil }
            return Self.text(gps[negative]) == letter ? -value : value
        }
        guard let latitude = degrees(2, negative: 1, "S"), let longitude = degrees(4, negative: 3, "W") else { return nil }
        var altitude: Double?
        if case .numbers(let a)? = gps[6], let metres = a.first, metres.isFinite {
            altitude = gps[5] == .integers([1]) ? -metres : metres
        }
        return (latitude, longitude, altitude)
    }

    /// A GPS coordinate's degrees, minutes and seconds (GPS tags 2, 4, 20, 22) as decimal degrees,
    /// unsigned (the reference tag gives the side); nil when there are none or one is not finite.
    public static func degrees(_ value: Value?) -> Double? {
        guard case .numbers(let dms)? = value, !dms.isEmpty, dms.allSatisfy(\.isFinite) else { return nil }
        return dms.prefix(3).enumerated().reduce(0.0) { $0 + $1.element / [1.0, 60, 3600][$1.offset] }
    }

    /// The orientation IFD0 states (tag 0x0112), 1 to 8; nil when none or another value.
    public var orientation: Int? {
        guard case .integers(let values)? = primary[0x0112], let value = values.first, (1...8).contains(value) else { return nil }
        return value
    }

    /// A Live Photo's content identifier: Apple's maker note tag 17, which the movie's
    /// `com.apple.quicktime.content.identifier` repeats.
    public var contentIdentifier: String? { Self.text(makerApple[17]) }

    public static let maximumEntries = 1024
    public static let maximumValueBytes = 1 << 16

    public init() {}

    /// The tags of the TIFF structure in `bytes` (from its "II" or "MM"); nil when it is not one.
    public init?(tiff bytes: [UInt8]) {
        self.init(tiffStructure: MemoryBytes(bytes))
    }

    /// The tags of the TIFF structure that `source` holds from its first byte (a TIFF file's
    /// first page, or an EXIF block), read where its offsets point; nil when it is not one.
    public init?(tiffStructure source: some ByteSource) {
        guard let reader = TIFFReader(source), let first = reader.u32(4) else { return nil }
        var seen = Set<Int>()
        primary = reader.directory(at: first, base: 0, seen: &seen)
        if case .integers(let p)? = primary[0x8769], let at = p.first { exif = reader.directory(at: at, base: 0, seen: &seen) }
        if case .integers(let p)? = primary[0x8825], let at = p.first { gps = reader.directory(at: at, base: 0, seen: &seen) }
        // Apple's maker note: "Apple iOS\0", a version, "MM", then a directory whose offsets count
        // from the note's start.
        if case .bytes(let note)? = exif[0x927C], note.count > 16, note.starts(with: Array("Apple iOS".utf8)) {
            let apple = TIFFReader(source: MemoryBytes(note), little: note[12] == 0x49)
            var own = Set<Int>()
            makerApple = apple.directory(at: 14, base: 0, seen: &own)
        }
    }

    /// The TIFF structure of a JPEG APP1 or HEIF Exif item: after "Exif\0\0" in a JPEG segment,
    /// or after a HEIF Exif item's 4-byte offset to it.
    public init?(heifExifItem item: [UInt8]) {
        guard item.count >= 4 else { return nil }
        let skip = Int(item[0]) << 24 | Int(item[1]) << 16 | Int(item[2]) << 8 | Int(item[3])
        guard skip >= 0, skip <= item.count - 8 else { return nil }
        self.init(tiff: Array(item[(4 + skip)...]))
    }
}
