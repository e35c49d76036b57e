// A time range of an MP4 copied into a new MP4 without decoding (what `ffmpeg -ss -t -c copy`
// and AVAssetExportSession's passthrough preset do): each track's samples from where a decoder
// can start (the video's key frame at or before the range's start, the sound's packet before the
// one holding it, for the AAC decoder's overlap) to the range's end, and an edit list per track
// that shows exactly the range: the frames and sound before its start are decoded, not shown.
// The new index is written before the media (faststart); the samples are copied as they are.

/// The new file: its first bytes (ftyp, moov, the mdat's header), then the source's byte
/// ranges to copy after them, in order.
package struct MP4Trim: Sendable {
    /// `ftyp`, the new `moov` and the `mdat` header.
    package var header: [UInt8]
    /// Where in the source each run of the new file's media lies, in the order they are written.
    package var copies: [(offset: UInt64, count: Int)]
    /// The range shown, in seconds.
    package var duration: Double

    package var mediaBytes: Int { copies.reduce(0) { $0 + $1.count } }

    /// The range [`start`, `end`) (seconds on the presentation timeline) of the first video and
    /// first audio track of `movie` (the other tracks are left out). Throws, naming the track, for
    /// a damaged sample table, and when the range holds no sample.
    package init(movie: MP4Movie, fileSize: UInt64, fileType: MP4Box?, start: Double, end: Double) throws(ContainerError) {
        guard start.isFinite, end.isFinite, start >= 0, end > start else {
            throw ContainerError("the range \(start) s to \(end) s is not a range of it")
        }
        let plan = try HLSSegmentPlan(movie: movie, fileSize: fileSize, target: 1_000_000)
        let movieScale = UInt64(max(1, movie.timescale))
        struct Cut { var track: HLSSegmentPlan.Track; var samples: ArraySlice<MP4Sample>; var mediaTime: Int64 }
        var cuts: [Cut] = []
        for track in plan.tracks {
            let scale = Double(track.timescale)
            // The range in the track's media clock.
            let first = Int64((((start - track.delay) * scale)).rounded()) + track.mediaStart
            let last = Int64((((end - track.delay) * scale)).rounded()) + track.mediaStart
            let samples = track.samples
            // The last sample shown before the end, in decode order: everything up to it is needed.
            guard let upTo = samples.lastIndex(where: { $0.presentationTime < last }) else { continue }
            // The first sample shown at the start (or the first after it).
            guard let from = samples.firstIndex(where: { $0.presentationTime + Int64($0.duration) > first }), from <= upTo else { continue }
            var begin: Int
            if samples[from].isSync, samples.allSatisfy({ $0.isSync }) {
                // Sound: one packet more before, for the decoder's overlap (AAC's first packet
                // decodes to the priming it adds).
                begin = max(0, from - 1)
            } else {
                // Video: back to the key frame before, in decode order, and before every frame
                // that shows at or after the start.
                let earliest = samples[from...upTo].indices.min { samples[$0].decodeTime < samples[$1].decodeTime } ?? from
                begin = min(from, earliest)
                while begin > 0, !samples[begin].isSync { begin -= 1 }
                guard samples[begin].isSync else { throw ContainerError("its track \(track.trackID) has no key frame before \(start) s") }
            }
            let base = Int64(samples[begin].decodeTime)
            cuts.append(Cut(track: track, samples: samples[begin...upTo], mediaTime: max(0, first - base)))
        }
        guard !cuts.isEmpty else { throw ContainerError("no sample of its video or sound lies between \(start) s and \(end) s") }
        let span = end - start

        // The media: each track's samples in runs of half a second, the runs interleaved by time
        // (as muxers write them); a run is one chunk.
        struct Chunk { var track: Int; var samples: Range<Int>; var time: Double }
        var chunks: [Chunk] = []
        for (t, cut) in cuts.enumerated() {
            var i = cut.samples.startIndex
            while i < cut.samples.endIndex {
                let t0 = cut.track.seconds(Int64(cut.samples[i].decodeTime))
                var j = i + 1
                while j < cut.samples.endIndex, cut.track.seconds(Int64(cut.samples[j].decodeTime)) - t0 < 0.5 { j += 1 }
                chunks.append(Chunk(track: t, samples: i..<j, time: t0))
                i = j
            }
        }
        chunks.sort { ($0.time, $0.track) < ($1.time, $1.track) }

        // The new index, with each chunk's offset once the index's own size is known (the
        // offsets' width can change it: measured with placeholders, then written).
        func moov(mdatStart: UInt64) -> MP4Box {
            var out = movie.moov
            var offsets: [[UInt64]] = cuts.map { _ in [] }
            var at = mdatStart
            for c in chunks {
                offsets[c.track].append(at)
                at += c.samples.reduce(UInt64(0)) { $0 + UInt64(cuts[c.track].samples[$1].size) }
            }
            let kept = Set(cuts.map(\.track.index))
            var children: [MP4Box] = []
            var longest: UInt64 = 0
            for (i, child) in movie.moov.children.enumerated() {
                if child.type == "trak" {
                    guard kept.contains(i), let t = cuts.firstIndex(where: { $0.track.index == i }) else { continue }
                    var track = MP4Track(box: child)
                    let cut = cuts[t]
                    let shown = UInt64((span * Double(movieScale)).rounded())
                    track.setEdits([MP4Track.Edit(duration: shown, mediaTime: cut.mediaTime, rate: 0x1_0000)])
                    longest = max(longest, shown)
                    let mediaDuration = cut.samples.reduce(UInt64(0)) { $0 + UInt64($1.duration) }
                    track.box.update(["mdia", "mdhd"], as: MediaHeader.self) { $0.duration = mediaDuration }
                    let chunkSizes = chunks.filter { $0.track == t }.map(\.samples.count)
                    track.box.modify(["mdia", "minf", "stbl"]) { stbl in
                        let keep = stbl.children.filter { $0.type == "stsd" }
                        stbl.children = keep + MP4Trim.tables(cut.samples, chunkSizes: chunkSizes, offsets: offsets[t])
                    }
                    children.append(track.box)
                } else if child.type != "mvex" {
                    children.append(child)
                }
            }
            out.children = children
            out.update(["mvhd"], as: MovieHeader.self) { $0.duration = longest }
            return out
        }
        let ftyp = fileType?.bytes ?? MP4Box(FileType(majorBrand: "isom", compatibleBrands: ["isom", "iso2", "avc1", "mp41"])).bytes
        let media = UInt64(chunks.reduce(0) { total, c in total + c.samples.reduce(0) { $0 + Int(cuts[c.track].samples[$1].size) } })
        let wide = media + 8 > UInt64(UInt32.max)
        let mdatHeader = wide ? 16 : 8
        var index = moov(mdatStart: 0)
        for _ in 0..<3 {  // the offsets' width settles at once; three passes at most
            let start = UInt64(ftyp.count) + index.length() + UInt64(mdatHeader)
            let next = moov(mdatStart: start)
            if next.length() == index.length() { index = next; break }
            index = next
        }
        var header = ftyp + index.bytes
        if wide {
            header.appendU32(1); header.appendU32(FourCC("mdat").rawValue); header.appendU64(media + 16)
        } else {
            header.appendU32(UInt32(media + 8)); header.appendU32(FourCC("mdat").rawValue)
        }
        self.header = header
        duration = span
        var copies: [(offset: UInt64, count: Int)] = []
        for c in chunks {
            for i in c.samples {
                let s = cuts[c.track].samples[i]
                if let last = copies.last, last.offset + UInt64(last.count) == s.offset, last.count < 4 << 20 {
                    copies[copies.count - 1].count += Int(s.size)
                } else {
                    copies.append((s.offset, Int(s.size)))
                }
            }
        }
        self.copies = copies
    }

    /// The sample tables of `samples`, stored in chunks of `chunkSizes` samples at `offsets`.
    static func tables(_ samples: ArraySlice<MP4Sample>, chunkSizes: [Int], offsets: [UInt64]) -> [MP4Box] {
        func box(_ type: FourCC, _ build: (inout [UInt8]) -> Void) -> MP4Box {
            var body: [UInt8] = []
            body.appendVersionAndFlags(0, 0)
            build(&body)
            return MP4Box(type: type, body: body)
        }
        func runs<T: Equatable>(_ values: [T]) -> [(count: UInt32, value: T)] {
            var out: [(count: UInt32, value: T)] = []
            for v in values {
                if let last = out.last, last.value == v { out[out.count - 1].count += 1 } else { out.append((1, v)) }
            }
            return out
        }
        let durations = runs(samples.map(\.duration))
        var tables = [box("stts") { b in
            b.appendU32(UInt32(durations.count))
            for r in durations { b.appendU32(r.count); b.appendU32(r.value) }
        }]
        if samples.contains(where: { $0.compositionOffset != 0 }) {
            let offsets = runs(samples.map(\.compositionOffset))
            var ctts = box("ctts") { b in
                b.appendU32(UInt32(offsets.count))
                for r in offsets { b.appendU32(r.count); b.appendU32(UInt32(bitPattern: r.value)) }
            }
            // Version 1 when an offset is negative (signed offsets).
            if offsets.contains(where: { $0.value < 0 }) {
                var body = ctts.body
                body[0] = 1
                ctts = MP4Box(type: "ctts", body: body)
            }
            tables.append(ctts)
        }
        if !samples.allSatisfy(\.isSync) {
            let numbers = samples.enumerated().filter { $0.element.isSync }.map { UInt32($0.offset + 1) }
            tables.append(box("stss") { b in
                b.appendU32(UInt32(numbers.count))
                for n in numbers { b.appendU32(n) }
            })
        }
        tables.append(box("stsz") { b in
            b.appendU32(0)
            b.appendU32(UInt32(samples.count))
            for s in samples { b.appendU32(s.size) }
        })
        let perChunk = runs(chunkSizes)
        var firstChunk: UInt32 = 1
        tables.append(box("stsc") { b in
            b.appendU32(UInt32(perChunk.count))
            for r in perChunk {
                b.appendU32(firstChunk); b.appendU32(UInt32(r.value)); b.appendU32(1)
                firstChunk += r.count
            }
        })
        tables.append(MP4Box(ChunkOffsets(offsets)))
        return tables
    }
}
