// The boxes of a movie fragment (ISO/IEC 14496-12, 8.8): `moof` holds `mfhd` and a `traf` per
// track, each with `tfhd`, `tfdt` and `trun` boxes that describe samples in the `mdat` after
// it. Read by the tests that wait on a fragmented recording; issue 32's CMAF writer writes them.

/// `mfhd`: the fragment's sequence number.
package struct MovieFragmentHeader: MP4BoxValue {
    package static let types: Set<FourCC> = ["mfhd"]
    package var type: FourCC { "mfhd" }
    package var version: UInt8 = 0
    package var flags: UInt32 = 0
    package var sequenceNumber: UInt32
    package var extra: [UInt8] = []

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        sequenceNumber = try r.u32()
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        out.appendVersionAndFlags(version, flags)
        out.appendU32(sequenceNumber)
        out += extra
    }
}

/// `tfhd`: which track a `traf` describes, and the defaults its runs' samples take.
package struct TrackFragmentHeader: MP4BoxValue {
    package static let types: Set<FourCC> = ["tfhd"]
    package var type: FourCC { "tfhd" }
    package var version: UInt8 = 0
    /// What follows the track ID (the bits of the optional fields below, which writing sets
    /// from them), duration-is-empty (0x10000), default-base-is-moof (0x20000).
    package var flags: UInt32
    package var trackID: UInt32
    /// Absolute: from the start of the file (moved when what comes before it grows).
    package var baseDataOffset: UInt64?
    package var sampleDescriptionIndex: UInt32?
    package var defaultSampleDuration: UInt32?
    package var defaultSampleSize: UInt32?
    package var defaultSampleFlags: UInt32?
    package var extra: [UInt8] = []

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        trackID = try r.u32()
        if flags & 0x01 != 0 { baseDataOffset = try r.u64() }
        if flags & 0x02 != 0 { sampleDescriptionIndex = try r.u32() }
        if flags & 0x08 != 0 { defaultSampleDuration = try r.u32() }
        if flags & 0x10 != 0 { defaultSampleSize = try r.u32() }
        if flags & 0x20 != 0 { defaultSampleFlags = try r.u32() }
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        var flags = self.flags & ~0x3B
        let optional: [(UInt32, UInt32?)] = [(0x02, sampleDescriptionIndex), (0x08, defaultSampleDuration),
                                              (0x10, defaultSampleSize), (0x20, defaultSampleFlags)]
        if baseDataOffset != nil { flags |= 0x01 }
        for (bit, value) in optional where value != nil { flags |= bit }
        out.appendVersionAndFlags(version, flags)
        out.appendU32(trackID)
        if let baseDataOffset { out.appendU64(baseDataOffset) }
        for (_, value) in optional { if let value { out.appendU32(value) } }
        out += extra
    }
}

/// `tfdt`: the decode time of the fragment's first sample, in the track's clock.
package struct TrackFragmentDecodeTime: MP4BoxValue {
    package static let types: Set<FourCC> = ["tfdt"]
    package var type: FourCC { "tfdt" }
    package var version: UInt8
    package var flags: UInt32
    package var baseMediaDecodeTime: UInt64
    package var extra: [UInt8]

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        guard version <= 1 else { throw ContainerError("its tfdt box is of version \(version), which is not defined") }
        baseMediaDecodeTime = version == 1 ? try r.u64() : UInt64(try r.u32())
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        let wide = version == 1 || baseMediaDecodeTime > UInt64(UInt32.max)
        out.appendVersionAndFlags(wide ? 1 : 0, flags)
        out.appendWideOrNarrow(baseMediaDecodeTime, wide: wide)
        out += extra
    }
}

/// `trun`: a run of samples, one after another in the `mdat`.
package struct TrackRun: MP4BoxValue {
    package static let types: Set<FourCC> = ["trun"]
    package var type: FourCC { "trun" }
    /// 1: composition offsets are signed.
    package var version: UInt8
    /// Which fields are there: data offset (0x1), first sample's flags (0x4), and for each
    /// sample its duration (0x100), size (0x200), flags (0x400), composition offset (0x800).
    package var flags: UInt32
    package var sampleCount: UInt32
    /// From the base (the `moof`'s start, or the `tfhd`'s base data offset).
    package var dataOffset: Int32?
    package var firstSampleFlags: UInt32?
    /// The samples' own fields, when ``flags`` says they carry any (else empty: each takes the
    /// defaults).
    package var samples: [Sample]
    package var extra: [UInt8]

    /// A sample's fields; those ``TrackRun/flags`` leaves out are 0 and not written.
    package struct Sample: Sendable, Equatable {
        package var duration: UInt32 = 0
        package var size: UInt32 = 0
        package var flags: UInt32 = 0
        /// Signed in version 1.
        package var compositionOffset: UInt32 = 0
    }

    static let sampleFields: [UInt32] = [0x100, 0x200, 0x400, 0x800]

    /// A run whose samples carry the fields `flags` names (0x100 duration, 0x200 size, 0x400
    /// flags, 0x800 composition offset), starting `dataOffset` bytes from the base.
    package init(version: UInt8, flags: UInt32, samples: [Sample], dataOffset: Int32?) {
        self.version = version
        self.flags = flags
        self.sampleCount = UInt32(samples.count)
        self.dataOffset = dataOffset
        self.samples = samples
        self.extra = []
    }

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        sampleCount = try r.u32()
        if flags & 0x01 != 0 { dataOffset = Int32(bitPattern: try r.u32()) }
        if flags & 0x04 != 0 { firstSampleFlags = try r.u32() }
        let flags = self.flags
        let size = Self.sampleFields.filter { flags & $0 != 0 }.count * 4
        samples = size == 0 ? [] : try r.entries(sampleCount, size: size) { r throws(ContainerError) in
            var s = Sample()
            if flags & 0x100 != 0 { s.duration = try r.u32() }
            if flags & 0x200 != 0 { s.size = try r.u32() }
            if flags & 0x400 != 0 { s.flags = try r.u32() }
            if flags & 0x800 != 0 { s.compositionOffset = try r.u32() }
            return s
        }
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        var flags = self.flags & ~0x05
        if dataOffset != nil { flags |= 0x01 }
        if firstSampleFlags != nil { flags |= 0x04 }
        out.appendVersionAndFlags(version, flags)
        let perSample = Self.sampleFields.contains { flags & $0 != 0 }
        out.appendU32(perSample ? UInt32(samples.count) : sampleCount)
        if let dataOffset { out.appendU32(UInt32(bitPattern: dataOffset)) }
        if let firstSampleFlags { out.appendU32(firstSampleFlags) }
        for s in samples where perSample {
            if flags & 0x100 != 0 { out.appendU32(s.duration) }
            if flags & 0x200 != 0 { out.appendU32(s.size) }
            if flags & 0x400 != 0 { out.appendU32(s.flags) }
            if flags & 0x800 != 0 { out.appendU32(s.compositionOffset) }
        }
        out += extra
    }
}
