
/// An ISO base media file's boxes (MP4, M4A, MOV), as far as GraphKit reads and edits a movie's
/// index (`moov`): tracks, their headers, edit lists and sample tables. Not a demuxer: the
/// samples stay where they are.
package struct MP4Box: Equatable {
    package var type: String
    /// A leaf's bytes after its header; empty for a container.
    package var body: [UInt8]
    /// A container's boxes (those in ``containers``).
    package var children: [MP4Box]

    package init(type: String, body: [UInt8] = [], children: [MP4Box] = []) {
        self.type = type
        self.body = body
        self.children = children
    }

    /// Boxes made only of boxes, that GraphKit looks into.
    package static let containers: Set<String> = ["moov", "trak", "mdia", "minf", "stbl", "edts", "dinf"]

    package struct Malformed: Error {
        let reason: String
    }

    /// The boxes in `bytes`, one after another.
    package static func parse(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> [MP4Box] {
        var boxes: [MP4Box] = []
        var at = bytes.startIndex
        while at < bytes.endIndex {
            guard bytes.endIndex - at >= 8 else { throw Malformed(reason: "\(bytes.endIndex - at) stray bytes") }
            var size = Int(bytes.u32(at))
            let type = String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self)
            var header = 8
            if size == 1 {
                guard bytes.endIndex - at >= 16 else { throw Malformed(reason: "\(type) box cut short") }
                size = Int(clamping: bytes.u64(at + 8))
                header = 16
            } else if size == 0 {
                size = bytes.endIndex - at
            }
            guard size >= header, size <= bytes.endIndex - at else {
                throw Malformed(reason: "\(type) box of \(size) bytes in \(bytes.endIndex - at)")
            }
            let body = bytes[(at + header)..<(at + size)]
            if containers.contains(type) {
                boxes.append(MP4Box(type: type, children: try parse(body)))
            } else {
                boxes.append(MP4Box(type: type, body: Array(body)))
            }
            at += size
        }
        return boxes
    }

    /// The box's bytes, header included, sizes recomputed.
    package var bytes: [UInt8] {
        var content: [UInt8] = []
        if Self.containers.contains(type) {
            for child in children { content += child.bytes }
        } else {
            content = body
        }
        var out: [UInt8] = []
        if content.count + 8 > Int(UInt32.max) {
            out.appendU32(1)
            out += Array(type.utf8.prefix(4))
            out.appendU64(UInt64(content.count + 16))
        } else {
            out.appendU32(UInt32(content.count + 8))
            out += Array(type.utf8.prefix(4))
        }
        return out + content
    }

    package func first(_ type: String) -> MP4Box? { children.first { $0.type == type } }

    /// The box at a path of types below this one (`["mdia", "mdhd"]`).
    package func find(_ path: [String]) -> MP4Box? {
        guard let head = path.first else { return self }
        return first(head)?.find(Array(path.dropFirst()))
    }

    /// Changes the box at `path`, if there is one.
    package mutating func modify(_ path: [String], _ change: (inout MP4Box) -> Void) {
        guard let head = path.first else { return change(&self) }
        guard let i = children.firstIndex(where: { $0.type == head }) else { return }
        children[i].modify(Array(path.dropFirst()), change)
    }
}

/// A movie's index (`moov`): the facts GraphKit reads from it and the edits it makes.
package struct MP4Movie {
    package var moov: MP4Box

    package init(moov: MP4Box) { self.moov = moov }

    package init(parsing bytes: ArraySlice<UInt8>) throws(MP4Box.Malformed) {
        guard let box = try MP4Box.parse(bytes).first, box.type == "moov" else {
            throw MP4Box.Malformed(reason: "no moov box")
        }
        moov = box
    }

    package var timescale: Int { moov.first("mvhd").map { Int($0.body.fullBoxField(version0: 12, version1: 20)) } ?? 0 }

    /// Track indices (into `moov.children`) of the `trak` boxes, in file order.
    package var trackIndices: [Int] { moov.children.indices.filter { moov.children[$0].type == "trak" } }

    package func track(_ i: Int) -> MP4Track { MP4Track(box: moov.children[i]) }

    /// The tracks of one kind (`soun`, `vide`), ordered by track ID as GStreamer's demuxer
    /// exposes them.
    package func tracks(handler: String) -> [(index: Int, track: MP4Track)] {
        trackIndices.map { ($0, track($0)) }.filter { $0.1.handler == handler }.sorted { $0.1.trackID < $1.1.trackID }
    }

    /// Moves the movie's clock to `newScale` ticks a second (an audio track's rate, so that its
    /// edit is exact to the sample): the movie's, each track header's and each edit's durations
    /// are rescaled. Media times are in each track's own clock and stay.
    package mutating func rescale(to newScale: Int) {
        let old = timescale
        guard old > 0, newScale > 0, old != newScale else { return }
        func scaled(_ v: UInt64) -> UInt64 {
            let (product, overflow) = v.multipliedReportingOverflow(by: UInt64(newScale))
            return overflow ? .max : (product / UInt64(old)) + (product % UInt64(old) >= UInt64(old + 1) / 2 ? 1 : 0)
        }
        moov.modify(["mvhd"]) { mvhd in
            mvhd.body.setFullBoxField(version0: 12, version1: 20, UInt64(newScale), wideInVersion1: false)
            mvhd.body.setFullBoxField(version0: 16, version1: 24, scaled(mvhd.body.fullBoxField(version0: 16, version1: 24)), wideInVersion1: true)
        }
        for i in trackIndices {
            moov.children[i].modify(["tkhd"]) { tkhd in
                tkhd.body.setFullBoxField(version0: 20, version1: 28, scaled(tkhd.body.fullBoxField(version0: 20, version1: 28)), wideInVersion1: true)
            }
            moov.children[i].modify(["edts", "elst"]) { elst in
                var edits = MP4Track.edits(elst.body)
                for e in edits.indices { edits[e].duration = scaled(edits[e].duration) }
                elst.body = MP4Track.elstBody(edits)
            }
        }
    }

    /// The movie's duration: its longest track's, by their headers.
    package mutating func updateDuration() {
        let longest = trackIndices.map { track($0).duration }.max() ?? 0
        moov.modify(["mvhd"]) { $0.body.setFullBoxField(version0: 16, version1: 24, longest, wideInVersion1: true) }
    }
}

/// One `trak` box, read.
package struct MP4Track {
    package var box: MP4Box

    package struct Edit: Equatable {
        /// In the movie's clock.
        package var duration: UInt64
        /// In the track's clock; -1 for an empty edit (time with nothing shown).
        package var mediaTime: Int64
        package init(duration: UInt64, mediaTime: Int64) {
            self.duration = duration
            self.mediaTime = mediaTime
        }
    }

    package var handler: String {
        guard let hdlr = box.find(["mdia", "hdlr"]), hdlr.body.count >= 12 else { return "" }
        return String(decoding: hdlr.body[8..<12], as: UTF8.self)
    }

    package var trackID: UInt32 {
        guard let tkhd = box.first("tkhd"), tkhd.body.count >= 24 || (tkhd.body.count >= 16 && tkhd.body[0] != 1) else { return 0 }
        return tkhd.body.u32(tkhd.body[0] == 1 ? 20 : 12)
    }

    /// The first sample description's format (`mp4a` for AAC, `avc1`, …).
    package var sampleEntry: String {
        guard let stsd = box.find(["mdia", "minf", "stbl", "stsd"]), stsd.body.count >= 16 else { return "" }
        return String(decoding: stsd.body[12..<16], as: UTF8.self)
    }

    /// Duration in the movie's clock, by the track header.
    package var duration: UInt64 { box.first("tkhd")?.body.fullBoxField(version0: 20, version1: 28) ?? 0 }

    /// The track's own clock (`mdhd`), ticks a second.
    package var mediaTimescale: Int { box.find(["mdia", "mdhd"]).map { Int($0.body.fullBoxField(version0: 12, version1: 20)) } ?? 0 }

    package var edits: [Edit]? { box.find(["edts", "elst"]).map { Self.edits($0.body) } }

    /// The sum of the sample durations (`stts`), in the track's clock: where its media ends.
    package var sampleTableDuration: UInt64 {
        guard let stts = box.find(["mdia", "minf", "stbl", "stts"]), stts.body.count >= 8 else { return 0 }
        // Counts come from the file: never more entries than its bytes hold (a damaged count
        // would otherwise loop billions of times).
        let count = min(Int(stts.body.u32(4)), (stts.body.count - 8) / 8)
        var total: UInt64 = 0
        for i in 0..<count {
            let (part, over) = UInt64(stts.body.u32(8 + i * 8)).multipliedReportingOverflow(by: UInt64(stts.body.u32(12 + i * 8)))
            let (sum, overSum) = total.addingReportingOverflow(part)
            guard !over, !overSum else { return .max }  // a damaged table: no real end
            total = sum
        }
        return total
    }

    /// The display matrix of the track header: a, b, u, c, d, v, x, y, w (16.16 and 2.30 fixed
    /// point), or nil if the header is short.
    package var matrix: [Int32]? {
        guard let tkhd = box.first("tkhd") else { return nil }
        let at = Self.matrixOffset(tkhd.body)
        guard tkhd.body.count >= at + 36 else { return nil }
        return (0..<9).map { Int32(bitPattern: tkhd.body.u32(at + $0 * 4)) }
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

    /// Sets the display matrix for `orientation` of a picture `width` × `height` (the track
    /// header's own size, 16.16).
    package mutating func setOrientation(_ orientation: DisplayOrientation) {
        box.modify(["tkhd"]) { tkhd in
            let at = Self.matrixOffset(tkhd.body)
            guard tkhd.body.count >= at + 44 else { return }
            let w = Int64(tkhd.body.u32(at + 36)), h = Int64(tkhd.body.u32(at + 40))  // 16.16
            let (a, b, c, d) = Self.rotation(orientation)
            // The picture's corners land back in the first quadrant: x' = a·x + c·y + tx.
            let tx = -min(0, Int64(a) * w) - min(0, Int64(c) * h)
            let ty = -min(0, Int64(b) * w) - min(0, Int64(d) * h)
            let values: [Int64] = [Int64(a) << 16, Int64(b) << 16, 0, Int64(c) << 16, Int64(d) << 16, 0, tx, ty, 1 << 30]
            for (i, v) in values.enumerated() { tkhd.body.setU32(at + i * 4, UInt32(truncatingIfNeeded: v)) }
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

    /// Where the matrix starts in a `tkhd` body: after version/flags, times, track ID,
    /// reserved, duration, reserved (8), layer, group, volume, reserved.
    package static func matrixOffset(_ body: [UInt8]) -> Int { (body.first == 1 ? 32 : 20) + 8 + 8 + 4 }

    package static func edits(_ body: [UInt8]) -> [Edit] {
        guard body.count >= 8 else { return [] }
        let wide = body[0] == 1
        let size = wide ? 20 : 12, count = min(Int(body.u32(4)), (body.count - 8) / size)
        return (0..<count).map { i in
            let at = 8 + i * size
            return wide ? Edit(duration: body.u64(at), mediaTime: Int64(bitPattern: body.u64(at + 8)))
                : Edit(duration: UInt64(body.u32(at)), mediaTime: Int64(Int32(bitPattern: body.u32(at + 4))))
        }
    }

    /// An `elst` body for `edits`, at normal rate, 64-bit only when a value needs it.
    package static func elstBody(_ edits: [Edit]) -> [UInt8] {
        let wide = edits.contains { $0.duration > UInt64(UInt32.max) || $0.mediaTime > Int64(Int32.max) }
        var body: [UInt8] = [wide ? 1 : 0, 0, 0, 0]
        body.appendU32(UInt32(edits.count))
        for e in edits {
            if wide {
                body.appendU64(e.duration)
                body.appendU64(UInt64(bitPattern: e.mediaTime))
            } else {
                body.appendU32(UInt32(e.duration))
                body.appendU32(UInt32(bitPattern: Int32(e.mediaTime)))
            }
            body += [0, 1, 0, 0]  // rate 1.0
        }
        return body
    }

    /// Replaces the track's edit list, and its header's duration with the edits' total.
    package mutating func setEdits(_ edits: [Edit]) {
        let elst = MP4Box(type: "elst", body: Self.elstBody(edits))
        if box.first("edts") != nil {
            box.modify(["edts"]) { $0.children = [elst] }
        } else {
            let at = (box.children.firstIndex { $0.type == "tkhd" } ?? -1) + 1
            box.children.insert(MP4Box(type: "edts", children: [elst]), at: at)
        }
        let total = edits.reduce(UInt64(0)) { $0 + $1.duration }
        box.modify(["tkhd"]) { $0.body.setFullBoxField(version0: 20, version1: 28, total, wideInVersion1: true) }
    }
}

extension [UInt8] {
    /// A field of a full box (version in the first byte) that is 32 bits in version 0 and 64 in
    /// version 1, at `version0` or `version1` bytes into the body (version/flags included).
    package func fullBoxField(version0: Int, version1: Int) -> UInt64 {
        guard let version = first else { return 0 }
        if version == 1 { return count >= version1 + 8 ? u64(version1) : 0 }
        return count >= version0 + 4 ? UInt64(u32(version0)) : 0
    }

    /// Sets such a field; `wideInVersion1` is false for one that is 32 bits in both versions (a
    /// timescale, at `version1`). A value too large for 32 bits is clamped there.
    package mutating func setFullBoxField(version0: Int, version1: Int, _ value: UInt64, wideInVersion1: Bool) {
        guard let version = first else { return }
        if version == 1 {
            if count >= version1 + 8, wideInVersion1 { setU64(version1, value) } else if count >= version1 + 4 { setU32(version1, UInt32(clamping: value)) }
        } else if count >= version0 + 4 {
            setU32(version0, UInt32(clamping: value))
        }
    }

    package mutating func appendU32(_ v: UInt32) { append(contentsOf: [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]) }
    package mutating func appendU64(_ v: UInt64) { appendU32(UInt32(v >> 32)); appendU32(UInt32(v & 0xffff_ffff)) }
    package mutating func setU32(_ at: Int, _ v: UInt32) {
        self[at] = UInt8(v >> 24); self[at + 1] = UInt8((v >> 16) & 0xff); self[at + 2] = UInt8((v >> 8) & 0xff); self[at + 3] = UInt8(v & 0xff)
    }
    package mutating func setU64(_ at: Int, _ v: UInt64) { setU32(at, UInt32(v >> 32)); setU32(at + 4, UInt32(v & 0xffff_ffff)) }
}

extension Collection where Element == UInt8, Index == Int {
    package func u32(_ at: Int) -> UInt32 {
        UInt32(self[at]) << 24 | UInt32(self[at + 1]) << 16 | UInt32(self[at + 2]) << 8 | UInt32(self[at + 3])
    }
    package func u64(_ at: Int) -> UInt64 { UInt64(u32(at)) << 32 | UInt64(u32(at + 4)) }
}
