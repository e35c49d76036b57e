// The rest of a track's sample table (ISO/IEC 14496-12 8.6-8.7): which samples each chunk holds
// (stsc), which samples are sync samples (stss), and how far each sample's presentation is from
// its decode (ctts); and the table as one list of samples: where each lies in the file, how big
// it is, when it is decoded and shown, whether it starts a group a decoder can begin at.

/// `stsc`: runs of chunks holding the same number of samples.
package struct SampleToChunk: MP4BoxValue {
    package static let types: Set<FourCC> = ["stsc"]
    package var type: FourCC { "stsc" }
    package var version: UInt8 = 0
    package var flags: UInt32 = 0
    package var entries: [Entry]
    package var extra: [UInt8] = []

    package struct Entry: Sendable, Equatable {
        /// 1-based: the first chunk of the run.
        package var firstChunk: UInt32
        package var samplesPerChunk: UInt32
        package var sampleDescriptionIndex: UInt32
    }

    package init(entries: [Entry]) { self.entries = entries }

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        entries = try r.entries(try r.u32(), size: 12) { r throws(ContainerError) in
            Entry(firstChunk: try r.u32(), samplesPerChunk: try r.u32(), sampleDescriptionIndex: try r.u32())
        }
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        out.appendVersionAndFlags(version, flags)
        out.appendU32(UInt32(entries.count))
        for e in entries {
            out.appendU32(e.firstChunk)
            out.appendU32(e.samplesPerChunk)
            out.appendU32(e.sampleDescriptionIndex)
        }
        out += extra
    }
}

/// `stss`: the sync samples (1-based numbers, rising). A track without one has only sync samples.
package struct SyncSamples: MP4BoxValue {
    package static let types: Set<FourCC> = ["stss"]
    package var type: FourCC { "stss" }
    package var version: UInt8 = 0
    package var flags: UInt32 = 0
    package var numbers: [UInt32]
    package var extra: [UInt8] = []

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        numbers = try r.entries(try r.u32(), size: 4) { r throws(ContainerError) in try r.u32() }
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        out.appendVersionAndFlags(version, flags)
        out.appendU32(UInt32(numbers.count))
        for n in numbers { out.appendU32(n) }
        out += extra
    }
}

/// A full box that is a count and then that many runs of samples sharing one 32-bit value: `stts`
/// (``TimeToSample``) and `ctts` (``CompositionOffsets``), one reader and writer for both.
package struct SampleRuns<Kind: SampleRunKind>: MP4BoxValue {
    package static var types: Set<FourCC> { [Kind.boxType] }
    package var type: FourCC { Kind.boxType }
    package var version: UInt8 = 0
    package var flags: UInt32 = 0
    package var entries: [Entry]
    package var extra: [UInt8] = []

    /// `count` samples in a row with the same `value`.
    package struct Entry: Sendable, Equatable {
        package var count: UInt32
        package var value: Kind.Value
    }

    package init(reading r: inout ByteReader, type: FourCC) throws(ContainerError) {
        (version, flags) = try r.versionAndFlags()
        entries = try r.entries(try r.u32(), size: 8) { r throws(ContainerError) in
            Entry(count: try r.u32(), value: Kind.value(try r.u32()))
        }
        extra = Array(r.rest())
    }

    package func write(to out: inout [UInt8]) {
        out.appendVersionAndFlags(version, flags)
        out.appendU32(UInt32(entries.count))
        for e in entries {
            out.appendU32(e.count)
            out.appendU32(Kind.word(e.value))
        }
        out += extra
    }
}

/// What a ``SampleRuns`` box holds: its type and how its 32-bit values read.
package protocol SampleRunKind: Sendable {
    associatedtype Value: Sendable, Equatable
    static var boxType: FourCC { get }
    static func value(_ word: UInt32) -> Value
    static func word(_ value: Value) -> UInt32
}

/// `stts`: how long each run of samples lasts, in the track's clock.
package typealias TimeToSample = SampleRuns<SampleDurations>

package enum SampleDurations: SampleRunKind {
    package static var boxType: FourCC { "stts" }
    package static func value(_ word: UInt32) -> UInt32 { word }
    package static func word(_ value: UInt32) -> UInt32 { value }
}

extension SampleRuns.Entry where Kind == SampleDurations {
    package init(count: UInt32, delta: UInt32) { self.init(count: count, value: delta) }
    /// Each sample's duration.
    package var delta: UInt32 {
        get { value }
        set { value = newValue }
    }
}

extension SampleRuns where Kind == SampleDurations {
    /// The sum of the samples' durations: where the media ends. Nil when it overflows 64 bits
    /// (a damaged table: no real end).
    package var duration: UInt64? {
        var total: UInt64 = 0
        for e in entries {
            let (part, over) = UInt64(e.count).multipliedReportingOverflow(by: UInt64(e.delta))
            let (sum, overSum) = total.addingReportingOverflow(part)
            guard !over, !overSum else { return nil }
            total = sum
        }
        return total
    }
}

/// `ctts`: runs of samples whose presentation is the same distance from their decode (signed in
/// version 1; version 0's unsigned offsets are read as signed too, as every player does).
package typealias CompositionOffsets = SampleRuns<PresentationOffsets>

package enum PresentationOffsets: SampleRunKind {
    package static var boxType: FourCC { "ctts" }
    package static func value(_ word: UInt32) -> Int32 { Int32(bitPattern: word) }
    package static func word(_ value: Int32) -> UInt32 { UInt32(bitPattern: value) }
}

extension SampleRuns.Entry where Kind == PresentationOffsets {
    package init(count: UInt32, offset: Int32) { self.init(count: count, value: offset) }
    /// Presentation minus decode time, in the track's clock.
    package var offset: Int32 {
        get { value }
        set { value = newValue }
    }
}

/// One sample of a track, as its sample table places it.
/// 32 bytes a sample (the 64-bit fields first: in the order of the initializer it took 40).
package struct MP4Sample: Sendable, Equatable {
    /// Where its bytes start in the file.
    package var offset: UInt64
    /// When it is decoded, in the track's media clock (``MP4Track/mediaTimescale``).
    package var decodeTime: UInt64
    package var size: UInt32
    package var duration: UInt32
    /// Presentation minus decode time, in the same clock.
    package var compositionOffset: Int32
    /// Whether a decoder can start at it (a key frame; every audio sample).
    package var isSync: Bool

    package init(offset: UInt64, size: UInt32, decodeTime: UInt64, duration: UInt32, compositionOffset: Int32, isSync: Bool) {
        (self.offset, self.decodeTime, self.size, self.duration) = (offset, decodeTime, size, duration)
        (self.compositionOffset, self.isSync) = (compositionOffset, isSync)
    }

    package var presentationTime: Int64 { Int64(decodeTime) + Int64(compositionOffset) }
}

extension MP4Track {
    /// The most samples ``samples(fileSize:)`` lists: ``MP4Movie/mostSamples``, which bounds a
    /// movie's tracks together (``MP4Movie/checkSampleClaims(fileSize:)``, when it is read).
    package static var mostSamples: Int { MP4Movie.mostSamples }

    /// Every sample of the track in decode order, from its sample table. Throws, naming the
    /// table, when the tables disagree (a chunk past the offsets, sizes for fewer samples than
    /// the times give, a sample past `fileSize`): a damaged index.
    package func samples(fileSize: UInt64) throws(ContainerError) -> [MP4Sample] {
        let index = try MP4SampleIndex(self, fileSize: fileSize)
        var samples: [MP4Sample] = []
        samples.reserveCapacity(index.count)
        var cursor = index.makeCursor()
        while let s = cursor.next() { samples.append(s) }
        return samples
    }
}
