// Fragmented MP4 as HTTP Live Streaming carries it (RFC 8216 3.3, ISO/IEC 23000-19 CMAF): an
// initialization segment (ftyp + a moov whose sample tables are empty and which says, in mvex,
// that the samples come in fragments) and media segments, each a run of whole samples per track
// whose first video sample is a key frame, written as moof + mdat fragments of at most a second
// (and 1 MiB) that interleave the tracks in time. GStreamer 1.22 has no such muxer;
// these are written from the one MP4 box model this library reads and edits.

/// A track's samples for one media segment: their table entries and their bytes, in order.
package struct FragmentRun: Sendable {
    package var trackID: UInt32
    /// The track's media clock (ticks a second), which its samples' durations count in.
    package var timescale: UInt32
    /// When the first sample is decoded, in the track's media clock.
    package var baseDecodeTime: UInt64
    package var samples: [MP4Sample]
    /// The samples' bytes, one after another (`samples[i].size` each).
    package var data: [UInt8]

    package init(trackID: UInt32, timescale: UInt32, baseDecodeTime: UInt64, samples: [MP4Sample], data: [UInt8]) {
        self.trackID = trackID
        self.timescale = timescale
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
            extend.append(trex(trackID: movie.track(i).trackID))
        }
        children.append(MP4Box(type: "mvex", children: extend))
        // A sound track's priming, which its edit list says, said again as iTunes' gapless tag:
        // ffmpeg (to 8.x) reads no edit list of a fragmented file, and reads the tag.
        if movie.metadataItems.first(where: { $0.name == "iTunSMPB" }) == nil,
           let audio = trackIndices.first(where: { movie.track($0).handler == "soun" }), let g = gapless(of: movie.track(audio), in: movie) {
            children.append(gaplessTag(g))
        }
        moov.children = children
        let ftyp = MP4Box(FileType(majorBrand: "iso6", compatibleBrands: ["iso6", "mp41"]))
        return ftyp.bytes + moov.bytes
    }

    /// A `trex`: a fragmented track's defaults, none but its first sample description (each run
    /// gives its samples' duration, size and flags).
    static func trex(trackID: UInt32) -> MP4Box {
        var trex: [UInt8] = []
        trex.appendVersionAndFlags(0, 0)
        trex.appendU32(trackID)
        trex.appendU32(1)  // the first sample description
        trex.appendU32(0); trex.appendU32(0); trex.appendU32(0)
        return MP4Box(type: "trex", body: trex)
    }

    /// An `mvhd` of a movie written here: its clock in milliseconds, `duration` in it (64 bits
    /// when it needs them), unit rate, volume and matrix, and the next track ID.
    static func movieHeader(duration: UInt64, nextTrackID: UInt32) -> MP4Box {
        var b: [UInt8] = []
        let wide = duration > UInt64(UInt32.max)
        b.appendVersionAndFlags(wide ? 1 : 0, 0)
        if wide { b.appendU64(0); b.appendU64(0) } else { b.appendU32(0); b.appendU32(0) }
        b.appendU32(1000)
        b.appendWideOrNarrow(duration, wide: wide)
        b.appendU32(0x1_0000); b.appendU16(0x0100); b.appendU16(0)
        b.appendU64(0)
        for m: UInt32 in [0x1_0000, 0, 0, 0, 0x1_0000, 0, 0, 0, 0x4000_0000] { b.appendU32(m) }
        b += [UInt8](repeating: 0, count: 24)
        b.appendU32(nextTrackID)
        return MP4Box(type: "mvhd", body: b)
    }

    static let emptySampleTables: [MP4Box] = {
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

    /// A media segment as written: its bytes, how many fragments (moof + mdat) it holds, and
    /// where each run's first sample's bytes are in it.
    package struct MediaSegment: Sendable {
        package var bytes: [UInt8]
        package var fragmentCount: UInt32
        package var firstSampleOffsets: [Int]
    }

    /// A fragment spans at most this long (seconds, on each track's clock from its first
    /// sample in the segment) and holds at most this many bytes of samples (one sample more
    /// when a single sample is larger).
    package static let fragmentDuration = 1.0
    package static let fragmentBytes = 1 << 20

    /// A media segment of the runs (one per track), written as several fragments that
    /// interleave the tracks in time: each a `moof` (numbered from `firstSequenceNumber`,
    /// rising by 1) and an `mdat` holding every track's samples of one span of at most
    /// `maxDuration` seconds and `maxBytes` bytes. One fragment holding all of a segment's video
    /// and then all its audio makes a player read megabytes of video before the first audio
    /// sample, more than GStreamer's queues hold: hlsdemux stalls (issue 47). The segment still
    /// starts with its first run's first sample (the key frame for video), cuts as before.
    package static func mediaSegment(firstSequenceNumber: UInt32, runs: [FragmentRun], maxDuration: Double = fragmentDuration,
                                     maxBytes: Int = fragmentBytes) -> MediaSegment {
        // Every sample of every run in time order (seconds from its run's start; ties in run order).
        var order: [(time: Double, run: Int, index: Int)] = []
        for (k, run) in runs.enumerated() {
            let scale = Double(max(1, run.timescale))
            var ticks: UInt64 = 0
            for (i, sample) in run.samples.enumerated() {
                order.append((Double(ticks) / scale, k, i))
                ticks += UInt64(sample.duration)
            }
        }
        order.sort { ($0.time, $0.run, $0.index) < ($1.time, $1.run, $1.index) }
        // The fragments: each an end (exclusive) per run, cut where a span or the bytes would overflow.
        var ends: [[Int]] = []
        var current = runs.map { _ in 0 }
        var spanStart = 0.0, bytes = 0, empty = true
        for (time, k, i) in order {
            let size = Int(runs[k].samples[i].size)
            if !empty && (time - spanStart >= maxDuration - 1e-9 || bytes + size > maxBytes) {
                ends.append(current)
                spanStart = time
                bytes = 0
            }
            empty = false
            bytes += size
            current[k] = i + 1
        }
        if !empty { ends.append(current) }
        // Each fragment's runs (their samples, and where their bytes lie in the runs' data),
        // and its moof and mdat header; then the segment assembled once, into one buffer of its
        // size: a segment is megabytes, and each copy more of it costs as much as writing it.
        var heads: [[UInt8]] = []
        var slices: [[(run: Int, bytes: Range<Int>)]] = []
        var firstSampleOffsets = runs.map { _ in 0 }
        var placed = runs.map { _ in false }
        var starts = runs.map { _ in 0 }
        var dataStarts = runs.map { _ in 0 }
        var decodeTimes = runs.map(\.baseDecodeTime)
        var sequence = firstSequenceNumber
        var total = 0
        for end in ends {
            var pieces: [FragmentRun] = []
            var taken: [(run: Int, bytes: Range<Int>)] = []
            for (k, run) in runs.enumerated() where end[k] > starts[k] {
                let samples = Array(run.samples[starts[k]..<end[k]])
                let length = samples.reduce(0) { $0 + Int($1.size) }
                pieces.append(FragmentRun(trackID: run.trackID, timescale: run.timescale, baseDecodeTime: decodeTimes[k], samples: samples, data: []))
                taken.append((k, dataStarts[k]..<(dataStarts[k] + length)))
                decodeTimes[k] += samples.reduce(0) { $0 + UInt64($1.duration) }
                dataStarts[k] += length
                starts[k] = end[k]
            }
            let head = fragmentHead(sequenceNumber: sequence, runs: pieces, dataCounts: taken.map(\.bytes.count))
            var at = total + head.count
            for (k, bytes) in taken {
                if !placed[k] { (firstSampleOffsets[k], placed[k]) = (at, true) }
                at += bytes.count
            }
            total = at
            heads.append(head)
            slices.append(taken)
            sequence &+= 1
        }
        var out: [UInt8] = []
        out.reserveCapacity(total)
        for (head, taken) in zip(heads, slices) {
            out += head
            for (k, bytes) in taken { out += runs[k].data[bytes] }
        }
        return MediaSegment(bytes: out, fragmentCount: UInt32(ends.count), firstSampleOffsets: firstSampleOffsets)
    }

    /// One fragment: a `moof` numbered `sequenceNumber` (from 1, rising) then the `mdat`
    /// holding each run's bytes in turn.
    package static func fragment(sequenceNumber: UInt32, runs: [FragmentRun]) -> [UInt8] {
        var out = fragmentHead(sequenceNumber: sequenceNumber, runs: runs, dataCounts: runs.map(\.data.count))
        out.reserveCapacity(out.count + runs.reduce(0) { $0 + $1.data.count })
        for run in runs { out += run.data }
        return out
    }

    /// A fragment's `moof` and its `mdat`'s header, for runs whose bytes (`dataCounts[k]` of
    /// run k, in turn) follow it.
    static func fragmentHead(sequenceNumber: UInt32, runs: [FragmentRun], dataCounts: [Int]) -> [UInt8] {
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
        let mdatSize = 8 + dataCounts.reduce(0, +)
        let wide = mdatSize > Int(UInt32.max)
        var offsets: [Int32] = []
        var at = size + (wide ? 16 : 8)
        for count in dataCounts {
            offsets.append(Int32(clamping: at))
            at += count
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
        return out
    }
}

extension CMAF {
    /// The initialization segment of a stream packaged as it is encoded: a movie of `tracks`,
    /// each an empty sample table and its codec's sample description, and a `trex` each.
    /// `tags` and `extraTags` (a source's, kept as `sink.mp4` keeps them) go into its `udta`
    /// with the gapless tag.
    package static func initializationSegment(of tracks: [MP4TrackFormat], tags: [(key: FourCC, text: String)] = [],
                                              extraTags: MP4ExtraTags = MP4ExtraTags()) -> [UInt8] {
        let trexes = tracks.map { trex(trackID: $0.trackID) }
        let gapless = tracks.compactMap(\.gapless).first
        let untagged = tags.isEmpty && extraTags.isEmpty
        var moov = MP4Box(type: "moov", children: [movieHeader(duration: 0, nextTrackID: (tracks.map(\.trackID).max() ?? 0) + 1)] + tracks.map { $0.trak(edits: $0.gaplessEdits) } + [MP4Box(type: "mvex", children: trexes)] + (untagged ? gapless.map { [CMAF.gaplessTag($0)] } ?? [] : []))
        if !untagged {
            extraTags.apply(to: &moov)
            for (key, text) in tags { MP4ExtraTags.setText(key, text, in: &moov) }
            if let gapless { MP4ExtraTags.setItem(gaplessItem(gapless), in: &moov) }
        }
        let ftyp = MP4Box(FileType(majorBrand: "iso6", compatibleBrands: ["iso6", "mp41"]))
        return ftyp.bytes + moov.bytes
    }
}

extension CMAF {
    /// An AAC track's priming (the samples before the input's first), its input's length and
    /// its padding (after the input's last), in samples.
    package struct Gapless: Sendable, Equatable {
        package var priming: Int
        package var samples: Int
        package var padding: Int
        package init(priming: Int, samples: Int, padding: Int) {
            self.priming = priming
            self.samples = samples
            self.padding = padding
        }
    }

    /// iTunes' gapless tag as AVFoundation and ffmpeg write it: `moov/udta/meta/ilst/----`
    /// named `iTunSMPB`, in hex, ` 00000000 priming padding count` then eight zero words.
    package static func gaplessTag(_ g: Gapless) -> MP4Box {
        let meta = MP4Box(type: "meta", body: [0, 0, 0, 0] + MP4ExtraTags.itunesHandler.bytes + MP4Box(type: "ilst", children: [gaplessItem(g)]).bytes)
        return MP4Box(type: "udta", children: [meta])
    }

    /// The gapless tag's item (`----`, `com.apple.iTunes`, `iTunSMPB`), for a tag list.
    package static func gaplessItem(_ g: Gapless) -> MP4Box {
        func hex(_ v: Int, _ digits: Int) -> String {
            let s = String(UInt64(max(0, v)), radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, digits - s.count)) + s
        }
        let text = " 00000000 \(hex(g.priming, 8)) \(hex(g.padding, 8)) \(hex(g.samples, 16))" + String(repeating: " 00000000", count: 8)
        func full(_ type: FourCC, _ body: [UInt8]) -> MP4Box { MP4Box(type: type, body: [0, 0, 0, 0] + body) }
        var data: [UInt8] = []
        data.appendU32(1)  // UTF-8
        data.appendU32(0)
        data += Array(text.utf8)
        return MP4Box(type: "----", children: [full("mean", Array("com.apple.iTunes".utf8)), full("name", Array("iTunSMPB".utf8)),
                                               MP4Box(type: "data", body: data)])
    }

    /// What a sound track's edit list says of its priming: its first edit's media time, its
    /// length in samples, and the rest of the media after it.
    static func gapless(of track: MP4Track, in movie: MP4Movie) -> Gapless? {
        guard let edit = track.edits?.first(where: { $0.mediaTime >= 0 }), edit.mediaTime > 0, movie.timescale > 0, track.mediaTimescale > 0 else { return nil }
        // Every number is the file's and may be damaged: none may trap.
        let length = (Double(edit.duration) * Double(track.mediaTimescale) / Double(movie.timescale)).rounded()
        guard length < 1e15, edit.mediaTime < 1 << 50, let samples = Int(exactly: length),
              let total = Int(exactly: track.mediaHeader?.duration ?? 0) else { return nil }
        let priming = Int(edit.mediaTime)
        return Gapless(priming: priming, samples: samples, padding: max(0, total - priming - samples))
    }
}
