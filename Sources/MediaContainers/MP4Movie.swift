/// A movie's index (`moov`) as GraphKit reads it: the movie's clock, its tracks, and the edits
/// GraphKit makes (a clock for the audio's rate, edit lists, display matrices, chunk offsets).
/// A view over the box tree: whatever it does not touch is written back as it was read.
package struct MP4Movie: Sendable, Equatable {
    package var moov: MP4Box

    package init(moov: MP4Box) { self.moov = moov }

    /// The `moov` box that `bytes` hold.
    package init(parsing bytes: ArraySlice<UInt8>) throws(ContainerError) {
        let box = try MP4Box(parsing: bytes)
        guard box.type == "moov" else { throw ContainerError("it holds a \(box.type) box, not an index (moov)") }
        moov = box
    }

    package var bytes: [UInt8] { moov.bytes }

    package var header: MovieHeader? { moov.first("mvhd")?.read(MovieHeader.self) }

    /// Ticks a second of the movie's clock; 0 when its header does not say.
    package var timescale: Int { header.map { Int($0.timescale) } ?? 0 }

    /// Track indices (into `moov.children`) of the `trak` boxes, in file order.
    package var trackIndices: [Int] { moov.children.indices.filter { moov.children[$0].type == "trak" } }

    package func track(_ i: Int) -> MP4Track { MP4Track(box: moov.children[i]) }

    /// The tracks of one kind (`soun`, `vide`), ordered by track ID as GStreamer's demuxer
    /// exposes them.
    package func tracks(handler: FourCC) -> [(index: Int, track: MP4Track)] {
        trackIndices.map { ($0, track($0)) }.filter { $0.1.handler == handler }.sorted { $0.1.trackID < $1.1.trackID }
    }

    /// The display orientation of the first video track (by track ID), when its matrix is one
    /// of the eight right-angle ones.
    package var orientation: DisplayOrientation? { tracks(handler: "vide").first?.track.orientation }

    /// The movie's metadata items (`moov/udta/meta/ilst`, or `moov/meta/ilst`), from every
    /// such box: a file may hold more than one `udta` (a tool that adds one after the muxer's).
    package var metadataItems: [MetadataItem] {
        let metas = moov.all("udta").flatMap { $0.all("meta") } + moov.all("meta")
        return metas.flatMap { $0.all("ilst") }.flatMap(\.metadataItems)
    }

    /// Moves the movie's clock to `newScale` ticks a second (an audio track's rate, so that its
    /// edit is exact to the sample): the movie's, each track header's and each edit's durations
    /// are rescaled. Media times are in each track's own clock and stay.
    package mutating func rescale(to newScale: Int) {
        let old = timescale
        guard old > 0, newScale > 0, old != newScale, let newScale = UInt32(exactly: newScale) else { return }
        func scaled(_ v: UInt64) -> UInt64 {
            let (product, overflow) = v.multipliedReportingOverflow(by: UInt64(newScale))
            return overflow ? .max : (product / UInt64(old)) + (product % UInt64(old) >= UInt64(old + 1) / 2 ? 1 : 0)
        }
        moov.update(["mvhd"], as: MovieHeader.self) { mvhd in
            mvhd.timescale = newScale
            mvhd.duration = scaled(mvhd.duration)
        }
        for i in trackIndices {
            moov.children[i].update(["tkhd"], as: TrackHeader.self) { $0.duration = scaled($0.duration) }
            moov.children[i].update(["edts", "elst"], as: EditList.self) { elst in
                for e in elst.edits.indices { elst.edits[e].duration = scaled(elst.edits[e].duration) }
            }
        }
    }

    /// The movie's duration: its longest track's, by their headers.
    package mutating func updateDuration() {
        let longest = trackIndices.map { track($0).duration }.max() ?? 0
        moov.update(["mvhd"], as: MovieHeader.self) { $0.duration = longest }
    }

    /// Replaces track `i`.
    package mutating func setTrack(_ i: Int, _ track: MP4Track) { moov.children[i] = track.box }

    /// Maps every chunk offset (`stco`, `co64`) through `move` (where the byte an offset points
    /// to now is); a 32-bit table whose offsets no longer fit becomes a 64-bit one.
    package mutating func moveChunkOffsets(_ move: (UInt64) -> UInt64) {
        for i in trackIndices {
            moov.children[i].modify(["mdia", "minf", "stbl"]) { stbl in
                var children = stbl.children
                for c in children.indices where ChunkOffsets.types.contains(children[c].type) {
                    guard var table = children[c].read(ChunkOffsets.self) else { continue }
                    table.offsets = table.offsets.map(move)
                    children[c].store(table)
                }
                stbl.children = children
            }
        }
    }

    /// Moves every chunk offset at or after `position` by `delta` bytes.
    package mutating func shiftChunkOffsets(after position: Int, by delta: Int) {
        moveChunkOffsets { $0 >= UInt64(position) ? $0 &+ UInt64(bitPattern: Int64(delta)) : $0 }
    }

    /// Every chunk offset of every track.
    package var chunkOffsets: [UInt64] {
        trackIndices.flatMap { i in
            track(i).box.find(["mdia", "minf", "stbl"])?.children.compactMap { $0.read(ChunkOffsets.self) }.flatMap(\.offsets) ?? []
        }
    }
}

/// One `trak` box, read.
package struct MP4Track: Sendable, Equatable {
    package var box: MP4Box

    package init(box: MP4Box) { self.box = box }

    package typealias Edit = EditList.Edit

    package var header: TrackHeader? { box.first("tkhd")?.read(TrackHeader.self) }
    package var mediaHeader: MediaHeader? { box.find(["mdia", "mdhd"])?.read(MediaHeader.self) }

    /// `soun`, `vide`, …; nil when the track has no readable handler.
    package var handler: FourCC? { box.find(["mdia", "hdlr"])?.read(HandlerReference.self)?.handlerType }

    package var trackID: UInt32 { header?.trackID ?? 0 }

    /// The first sample description's format (`mp4a` for AAC, `avc1`, …); nil when there is none.
    package var sampleEntry: FourCC? { box.find(["mdia", "minf", "stbl", "stsd"])?.children.first?.type }

    /// Duration in the movie's clock, by the track header.
    package var duration: UInt64 { header?.duration ?? 0 }

    /// The track's own clock (`mdhd`), ticks a second.
    package var mediaTimescale: Int { mediaHeader.map { Int($0.timescale) } ?? 0 }

    package var editList: EditList? { box.find(["edts", "elst"])?.read(EditList.self) }
    package var edits: [Edit]? { editList?.edits }

    /// The sum of the sample durations (`stts`), in the track's clock: where its media ends.
    /// 0 without a readable table, `.max` for one that overflows (a damaged table: no real end).
    package var sampleTableDuration: UInt64 {
        guard let stts = box.find(["mdia", "minf", "stbl", "stts"])?.read(TimeToSample.self) else { return 0 }
        return stts.duration ?? .max
    }

    /// The display matrix of the track header: a, b, u, c, d, v, x, y, w.
    package var matrix: [Int32]? { header?.matrix }

    /// The display matrix as a transform; nil without a readable track header.
    package var displayMatrix: DisplayMatrix? { matrix.flatMap { DisplayMatrix(fixedPoint: $0) } }

    /// Sets the display matrix as it is given (AVFoundation writes a transform as it was set,
    /// with no translation added).
    package mutating func setDisplayMatrix(_ m: DisplayMatrix) {
        box.update(["tkhd"], as: TrackHeader.self) { $0.matrix = m.fixedPoint }
    }

    /// The shortest duration of a sample (`stts`), in the track's clock, but for a last sample
    /// cut short (an AAC stream's final partial packet, a recording's last frame); nil without a
    /// readable table or with no sample that lasts.
    package var shortestSampleDelta: UInt32? {
        guard var entries = box.find(["mdia", "minf", "stbl", "stts"])?.read(TimeToSample.self)?.entries else { return nil }
        entries.removeAll { $0.count == 0 || $0.delta == 0 }
        if entries.count > 1, let last = entries.last, last.count == 1 { entries.removeLast() }
        return entries.map(\.delta).min()
    }

    /// The track's language (`mdhd`), ISO 639-2/T letters (`eng`, `fra`); nil for "undetermined"
    /// (`und`), a QuickTime Macintosh language code, or letters out of range.
    package var languageCode: String? {
        guard let packed = mediaHeader?.language, packed >= 0x400 else { return nil }
        let letters = [(packed >> 10) & 0x1F, (packed >> 5) & 0x1F, packed & 0x1F]
        guard letters.allSatisfy({ (1...26).contains($0) }) else { return nil }
        let code = String(decoding: letters.map { UInt8($0) + 0x60 }, as: UTF8.self)
        return code == "und" ? nil : code
    }

    /// The bytes of all its samples (`stsz`); nil without a readable sample size table.
    package var sampleBytes: UInt64? {
        guard let stsz = box.find(["mdia", "minf", "stbl", "stsz"])?.read(SampleSizes.self) else { return nil }
        if stsz.sampleSize != 0 { return UInt64(stsz.sampleSize) * UInt64(stsz.sampleCount) }
        return stsz.sizes.reduce(UInt64(0)) { $0 + UInt64($1) }
    }

    /// The orientation the display matrix describes, when it is one of the eight that turn
    /// and mirror a picture by right angles (ignoring translation).
    package var orientation: DisplayOrientation? {
        guard let m = matrix else { return nil }
        let one: Int32 = 0x10000
        for o in DisplayOrientation.allCases {
            let (a, b, c, d) = Self.rotation(o)
            if m[0] == a * one, m[1] == b * one, m[3] == c * one, m[4] == d * one { return o }
        }
        return nil
    }

    /// Sets the display matrix for `orientation` of the picture the track header sizes.
    package mutating func setOrientation(_ orientation: DisplayOrientation) {
        box.update(["tkhd"], as: TrackHeader.self) { tkhd in
            let w = Int64(tkhd.width), h = Int64(tkhd.height)  // 16.16
            let (a, b, c, d) = Self.rotation(orientation)
            // The picture's corners land back in the first quadrant: x' = a·x + c·y + tx.
            let tx = -min(0, Int64(a) * w) - min(0, Int64(c) * h)
            let ty = -min(0, Int64(b) * w) - min(0, Int64(d) * h)
            let values: [Int64] = [Int64(a) << 16, Int64(b) << 16, 0, Int64(c) << 16, Int64(d) << 16, 0, tx, ty, 1 << 30]
            tkhd.matrix = values.map { Int32(truncatingIfNeeded: $0) }
        }
    }

    /// (a, b, c, d) of the matrix, for x' = a·x + c·y, y' = b·x + d·y: a turn clockwise on a
    /// screen whose y grows downwards; the `flip` ones are GStreamer's videoflip methods for the
    /// tag (horizontal, upper-left/lower-right diagonal, vertical, upper-right/lower-left).
    package static func rotation(_ o: DisplayOrientation) -> (Int32, Int32, Int32, Int32) {
        switch o {
        case .rotate0: (1, 0, 0, 1)
        case .rotate90: (0, 1, -1, 0)
        case .rotate180: (-1, 0, 0, -1)
        case .rotate270: (0, -1, 1, 0)
        case .flipRotate0: (-1, 0, 0, 1)
        case .flipRotate90: (0, 1, 1, 0)
        case .flipRotate180: (1, 0, 0, -1)
        case .flipRotate270: (0, -1, -1, 0)
        }
    }

    /// Replaces the track's edit list (making its `edts` when it has none, after its header),
    /// and its header's duration with the edits' total.
    package mutating func setEdits(_ edits: [Edit]) {
        let elst = MP4Box(EditList(edits))
        if box.first("edts") != nil {
            box.modify(["edts"]) { $0.children = [elst] }
        } else {
            box.replaceOrInsert(MP4Box(type: FourCC("edts"), children: [elst]), after: ["tkhd"])
        }
        let total = edits.reduce(UInt64(0)) { $0 &+ $1.duration }
        box.update(["tkhd"], as: TrackHeader.self) { $0.duration = total }
    }
}
