// The boxes of a movie's index that GraphKit reads and writes, each as its fields
// (ISO/IEC 14496-12 and QuickTime's file format): what a file is (ftyp), the movie's header
// (mvhd), a track's header (tkhd), edit list (elst), media header (mdhd), handler (hdlr) and the
// sample tables it reads (stts, stsz, stco/co64). Each writes back the bytes it read; a value
// that no longer fits a version-0 field is written as version 1.

/// `ftyp` (or a segment's `styp`): the brands a file conforms to.
package struct FileType: MP4BoxValue {
    package static let types: Set<FourCC> = ["ftyp", "styp"]
    package var type: FourCC = "ftyp"
    package var majorBrand: FourCC
    package var minorVersion: UInt32
    package var compatibleBrands: [FourCC]
    /// Bytes after the last whole brand.
    package var extra: [UInt8] = []

    package init(majorBrand: FourCC, minorVersion: UInt32 = 0, compatibleBrands: [FourCC]) {
        self.majorBrand = majorBrand
        self.minorVersion = minorVersion
        self.compatibleBrands = compatibleBrands
    }

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        self.type = type
        majorBrand = try r.fourCC()
        minorVersion = try r.u32()
        compatibleBrands = try r.entries(UInt32(r.remaining / 4), size: 4) { r throws(ContainerError) in try r.fourCC() }
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        out.appendU32(majorBrand.rawValue)
        out.appendU32(minorVersion)
        for brand in compatibleBrands { out.appendU32(brand.rawValue) }
        out += extra
    }
}

/// Reads a version-dependent field: 64 bits in version 1, 32 in version 0.
private func wideOrNarrow(_ r: inout ByteReader, _ version: UInt8) throws(ContainerError) -> UInt64 {
    version == 1 ? try r.u64() : UInt64(try r.u32())
}

private func checkVersion(_ version: UInt8, of type: FourCC) throws(ContainerError) {
    guard version <= 1 else { throw ContainerError("its \(type) box is of version \(version), which is not defined") }
}

/// What `mvhd`, `tkhd` and `mdhd` open with: a full box's version (0: its times and duration
/// are 32 bits, 1: 64) and flags, then the creation and modification times.
package struct HeaderTimes: Sendable, Equatable {
    package var version: UInt8
    package var flags: UInt32
    package var creationTime: UInt64
    package var modificationTime: UInt64

    init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        try checkVersion(version, of: type)
        creationTime = try wideOrNarrow(&r, version)
        modificationTime = try wideOrNarrow(&r, version)
    }

    /// Whether the box is written as version 1: it was, or a value (its duration too) no
    /// longer fits 32 bits.
    func isWide(duration: UInt64) -> Bool { version == 1 || max(creationTime, modificationTime, duration) > UInt64(UInt32.max) }

    func write(to out: inout [UInt8], wide: Bool) {
        out.appendVersionAndFlags(wide ? 1 : 0, flags)
        out.appendWideOrNarrow(creationTime, wide: wide)
        out.appendWideOrNarrow(modificationTime, wide: wide)
    }
}

extension [UInt8] {
    mutating func appendWideOrNarrow(_ v: UInt64, wide: Bool) { if wide { appendU64(v) } else { appendU32(UInt32(truncatingIfNeeded: v)) } }
}

/// `mvhd`: the movie's clock and duration.
package struct MovieHeader: MP4BoxValue {
    package static let types: Set<FourCC> = ["mvhd"]
    package var type: FourCC { "mvhd" }
    package var times: HeaderTimes
    package var version: UInt8 { times.version }
    /// Ticks a second of the movie's clock, in which durations and edits are.
    package var timescale: UInt32
    package var duration: UInt64
    /// Rate, volume, matrix, next track ID and anything after: as read.
    package var rest: [UInt8]

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        times = try HeaderTimes(reading: &r, type: type)
        timescale = try r.u32()
        duration = try wideOrNarrow(&r, times.version)
        rest = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        let wide = times.isWide(duration: duration)
        times.write(to: &out, wide: wide)
        out.appendU32(timescale)
        out.appendWideOrNarrow(duration, wide: wide)
        out += rest
    }
}

/// `tkhd`: a track's ID, duration (in the movie's clock), display matrix and size.
package struct TrackHeader: MP4BoxValue {
    package static let types: Set<FourCC> = ["tkhd"]
    package var type: FourCC { "tkhd" }
    /// Flags 1: enabled, 2: in the movie, 4: in the preview.
    package var times: HeaderTimes
    package var version: UInt8 { times.version }
    package var trackID: UInt32
    package var duration: UInt64
    package var layer: UInt16
    package var alternateGroup: UInt16
    package var volume: UInt16
    /// a, b, u, c, d, v, x, y, w: 16.16 fixed point, and 2.30 for u, v and w.
    package var matrix: [Int32]
    /// The picture's size, 16.16.
    package var width: UInt32
    package var height: UInt32
    /// Reserved fields, kept as read.
    private var reserved0: UInt32, reserved1: UInt64, reserved2: UInt16
    package var extra: [UInt8]

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        times = try HeaderTimes(reading: &r, type: type)
        trackID = try r.u32()
        reserved0 = try r.u32()
        duration = try wideOrNarrow(&r, times.version)
        reserved1 = try r.u64()
        layer = try r.u16()
        alternateGroup = try r.u16()
        volume = try r.u16()
        reserved2 = try r.u16()
        matrix = try r.entries(9, size: 4) { r throws(ContainerError) in Int32(bitPattern: try r.u32()) }
        width = try r.u32()
        height = try r.u32()
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        let wide = times.isWide(duration: duration)
        times.write(to: &out, wide: wide)
        out.appendU32(trackID)
        out.appendU32(reserved0)
        out.appendWideOrNarrow(duration, wide: wide)
        out.appendU64(reserved1)
        out.appendU16(layer)
        out.appendU16(alternateGroup)
        out.appendU16(volume)
        out.appendU16(reserved2)
        for m in matrix.prefix(9) { out.appendU32(UInt32(bitPattern: m)) }
        for _ in matrix.count..<max(9, matrix.count) { out.appendU32(0) }
        out.appendU32(width)
        out.appendU32(height)
        out += extra
    }
}

/// `elst`: which part of a track's media plays when.
package struct EditList: MP4BoxValue {
    package static let types: Set<FourCC> = ["elst"]
    package var type: FourCC { "elst" }
    package var version: UInt8 = 0
    package var flags: UInt32 = 0
    package var edits: [Edit]
    package var extra: [UInt8] = []

    package struct Edit: Sendable, Equatable {
        /// In the movie's clock.
        package var duration: UInt64
        /// In the track's clock; -1 for an empty edit (time with nothing shown).
        package var mediaTime: Int64
        /// 16.16: 1.0 plays at normal speed.
        package var rate: Int32
        package init(duration: UInt64, mediaTime: Int64, rate: Int32 = 0x1_0000) {
            self.duration = duration
            self.mediaTime = mediaTime
            self.rate = rate
        }
    }

    package init(_ edits: [Edit]) { self.edits = edits }

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        try checkVersion(version, of: type)
        let wide = version == 1
        edits = try r.entries(try r.u32(), size: wide ? 20 : 12) { r throws(ContainerError) in
            wide ? Edit(duration: try r.u64(), mediaTime: Int64(bitPattern: try r.u64()), rate: Int32(bitPattern: try r.u32()))
                : Edit(duration: UInt64(try r.u32()), mediaTime: Int64(Int32(bitPattern: try r.u32())), rate: Int32(bitPattern: try r.u32()))
        }
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        let wide = version == 1 || edits.contains { $0.duration > UInt64(UInt32.max) || Int32(exactly: $0.mediaTime) == nil }
        out.appendVersionAndFlags(wide ? 1 : 0, flags)
        out.appendU32(UInt32(edits.count))
        for e in edits {
            out.appendWideOrNarrow(e.duration, wide: wide)
            out.appendWideOrNarrow(UInt64(bitPattern: e.mediaTime), wide: wide)
            out.appendU32(UInt32(bitPattern: e.rate))
        }
        out += extra
    }
}

/// `mdhd`: a track's own clock and the length of its media in it.
package struct MediaHeader: MP4BoxValue {
    package static let types: Set<FourCC> = ["mdhd"]
    package var type: FourCC { "mdhd" }
    package var times: HeaderTimes
    package var timescale: UInt32
    package var duration: UInt64
    /// ISO 639-2/T, three letters of 5 bits each (QuickTime: a Macintosh language code).
    package var language: UInt16
    package var quality: UInt16
    package var extra: [UInt8]

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        times = try HeaderTimes(reading: &r, type: type)
        timescale = try r.u32()
        duration = try wideOrNarrow(&r, times.version)
        language = try r.u16()
        quality = try r.u16()
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        let wide = times.isWide(duration: duration)
        times.write(to: &out, wide: wide)
        out.appendU32(timescale)
        out.appendWideOrNarrow(duration, wide: wide)
        out.appendU16(language)
        out.appendU16(quality)
        out += extra
    }
}

/// `hdlr`: what a track (or a `meta` box) holds: `soun`, `vide`, `mdir`, `mdta`, ….
package struct HandlerReference: MP4BoxValue {
    package static let types: Set<FourCC> = ["hdlr"]
    package var type: FourCC { "hdlr" }
    package var version: UInt8
    package var flags: UInt32
    /// QuickTime's component type (`mhlr`, `dhlr`); 0 in ISO files.
    package var componentType: UInt32
    package var handlerType: FourCC
    /// Reserved in ISO (QuickTime: manufacturer, flags, mask), as read: up to 12 bytes.
    package var reserved: [UInt8]
    /// The name: a C string in ISO files, a counted string in QuickTime's.
    package var name: [UInt8]

    package init(handlerType: FourCC, name: String = "") {
        version = 0
        flags = 0
        componentType = 0
        self.handlerType = handlerType
        reserved = [UInt8](repeating: 0, count: 12)
        self.name = Array(name.utf8) + [0]
    }

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        componentType = try r.u32()
        handlerType = try r.fourCC()
        reserved = Array(try r.bytes(min(12, r.remaining)))
        name = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        out.appendVersionAndFlags(version, flags)
        out.appendU32(componentType)
        out.appendU32(handlerType.rawValue)
        out += reserved
        out += name
    }
}

/// `stsz`: each sample's size in bytes, or one size for all.
package struct SampleSizes: MP4BoxValue {
    package static let types: Set<FourCC> = ["stsz"]
    package var type: FourCC { "stsz" }
    package var version: UInt8
    package var flags: UInt32
    /// Every sample's size, when they are all one; 0 when ``sizes`` lists them.
    package var sampleSize: UInt32
    package var sampleCount: UInt32
    package var sizes: [UInt32]
    package var extra: [UInt8]

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        sampleSize = try r.u32()
        sampleCount = try r.u32()
        sizes = sampleSize == 0 ? try r.entries(sampleCount, size: 4) { r throws(ContainerError) in try r.u32() } : []
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        out.appendVersionAndFlags(version, flags)
        out.appendU32(sampleSize)
        out.appendU32(sampleSize == 0 ? UInt32(sizes.count) : sampleCount)
        for size in sizes where sampleSize == 0 { out.appendU32(size) }
        out += extra
    }
}

/// `stco` or `co64`: where each chunk of samples starts, in bytes from the start of the file.
package struct ChunkOffsets: MP4BoxValue {
    package static let types: Set<FourCC> = ["stco", "co64"]
    /// `co64` when it was, or when an offset needs 64 bits.
    package var type: FourCC { wide || offsets.contains { $0 > UInt64(UInt32.max) } ? "co64" : "stco" }
    package var wide: Bool
    package var version: UInt8 = 0
    package var flags: UInt32 = 0
    package var offsets: [UInt64]
    package var extra: [UInt8] = []

    package init(_ offsets: [UInt64], wide: Bool = false) {
        self.offsets = offsets
        self.wide = wide
    }

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        wide = type == "co64"
        (version, flags) = try r.versionAndFlags()
        let wide = self.wide
        offsets = try r.entries(try r.u32(), size: wide ? 8 : 4) { r throws(ContainerError) in wide ? try r.u64() : UInt64(try r.u32()) }
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        let wide = type == "co64"
        out.appendVersionAndFlags(version, flags)
        out.appendU32(UInt32(offsets.count))
        for o in offsets { out.appendWideOrNarrow(o, wide: wide) }
        out += extra
    }
}
