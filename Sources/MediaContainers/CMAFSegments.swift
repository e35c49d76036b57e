// Fragmented MP4 as HTTP Live Streaming carries it (RFC 8216 3.3, ISO/IEC 23000-19 CMAF): an
// initialization segment (ftyp + a moov whose sample tables are empty and which says, in mvex,
// that the samples come in fragments) and media segments (moof + mdat), each a run of whole
// samples per track whose first video sample is a key frame. GStreamer 1.22 has no such muxer;
// these are written from the one MP4 box model this library reads and edits.

/// A track's samples for one media segment: their table entries and their bytes, in order.
package struct FragmentRun: Sendable {
    package var trackID: UInt32
    /// When the first sample is decoded, in the track's media clock.
    package var baseDecodeTime: UInt64
    package var samples: [MP4Sample]
    /// The samples' bytes, one after another (`samples[i].size` each).
    package var data: [UInt8]

    package init(trackID: UInt32, baseDecodeTime: UInt64, samples: [MP4Sample], data: [UInt8]) {
        self.trackID = trackID
        self.baseDecodeTime = baseDecodeTime
        self.samples = samples
        self.data = data
    }
}

package enum CMAF {
    /// The initialization segment for the tracks at `trackIndices` of `movie`: their sample
    /// descriptions, edit lists and headers as they are, durations 0 (the fragments carry the
    /// samples), and a `trex` per track.
    package static func initializationSegment(of movie: MP4Movie, trackIndices: [Int]) -> [UInt8] {
        var moov = MP4Box(type: "moov", children: [])
        var children: [MP4Box] = []
        if var mvhd = movie.moov.first("mvhd") {
            if var header = mvhd.read(MovieHeader.self) {
                header.duration = 0
                mvhd.store(header)
            }
            children.append(mvhd)
        }
        var extend: [MP4Box] = []
        for i in trackIndices {
            var trak = movie.track(i).box
            trak.update(["tkhd"], as: TrackHeader.self) { $0.duration = 0 }
            trak.update(["mdia", "mdhd"], as: MediaHeader.self) { $0.duration = 0 }
            trak.modify(["mdia", "minf", "stbl"]) { stbl in
                stbl.children = stbl.children.filter { $0.type == "stsd" } + emptySampleTables
            }
            children.append(trak)
            var trex: [UInt8] = []
            trex.appendVersionAndFlags(0, 0)
            trex.appendU32(movie.track(i).trackID)
            trex.appendU32(1)  // the first sample description
            trex.appendU32(0)  // default duration, size, flags: each run gives its own
            trex.appendU32(0)
            trex.appendU32(0)
            extend.append(MP4Box(type: "trex", body: trex))
        }
        children.append(MP4Box(type: "mvex", children: extend))
        moov.children = children
        let ftyp = MP4Box(FileType(majorBrand: "iso6", compatibleBrands: ["iso6", "mp41"]))
        return ftyp.bytes + moov.bytes
    }

    private static let emptySampleTables: [MP4Box] = {
        func table(_ type: FourCC, _ words: [UInt32]) -> MP4Box {
            var body: [UInt8] = []
            for w in words { body.appendU32(w) }
            return MP4Box(type: type, body: body)
        }
        // version and flags, then no entries (stsz: no common size, no samples).
        return [table("stts", [0, 0]), table("stsc", [0, 0]), table("stsz", [0, 0, 0]), table("stco", [0, 0])]
    }()

    /// `sample_depends_on` 2 (depends on no other sample): a key frame, every audio sample.
    static let syncSampleFlags: UInt32 = 0x0200_0000
    /// `sample_depends_on` 1 and `sample_is_non_sync_sample`.
    static let otherSampleFlags: UInt32 = 0x0101_0000

    /// A media segment, `moof` numbered `sequenceNumber` (from 1, rising) then the `mdat`
    /// holding each run's bytes in turn.
    package static func mediaSegment(sequenceNumber: UInt32, runs: [FragmentRun]) -> [UInt8] {
        func moof(dataOffsets: [Int32]) -> MP4Box {
            var mfhd: [UInt8] = []
            mfhd.appendVersionAndFlags(0, 0)
            mfhd.appendU32(sequenceNumber)
            var children = [MP4Box(type: "mfhd", body: mfhd)]
            for (k, run) in runs.enumerated() {
                var tfhd: [UInt8] = []
                tfhd.appendVersionAndFlags(0, 0x02_0000)  // default-base-is-moof
                tfhd.appendU32(run.trackID)
                var tfdt: [UInt8] = []
                tfdt.appendVersionAndFlags(1, 0)
                tfdt.appendU64(run.baseDecodeTime)
                let shifted = run.samples.contains { $0.compositionOffset != 0 }
                let trun = TrackRun(version: shifted ? 1 : 0, flags: 0x300 | 0x400 | (shifted ? 0x800 : 0), samples: run.samples.map {
                    TrackRun.Sample(duration: $0.duration, size: $0.size, flags: $0.isSync ? syncSampleFlags : otherSampleFlags,
                                    compositionOffset: UInt32(bitPattern: $0.compositionOffset))
                }, dataOffset: dataOffsets[k])
                children.append(MP4Box(type: "traf", children: [MP4Box(type: "tfhd", body: tfhd), MP4Box(type: "tfdt", body: tfdt), MP4Box(trun)]))
            }
            return MP4Box(type: "moof", children: children)
        }
        // The data offsets count from the moof's first byte; its size does not depend on them.
        let size = Int(moof(dataOffsets: runs.map { _ in 0 }).length())
        let mdatSize = 8 + runs.reduce(0) { $0 + $1.data.count }
        let wide = mdatSize > Int(UInt32.max)
        var offsets: [Int32] = []
        var at = size + (wide ? 16 : 8)
        for run in runs {
            offsets.append(Int32(clamping: at))
            at += run.data.count
        }
        var out = moof(dataOffsets: offsets).bytes
        if !wide {
            out.appendU32(UInt32(mdatSize))
            out.appendU32(FourCC("mdat").rawValue)
        } else {
            out.appendU32(1)
            out.appendU32(FourCC("mdat").rawValue)
            out.appendU64(UInt64(mdatSize + 8))
        }
        for run in runs { out += run.data }
        return out
    }
}
