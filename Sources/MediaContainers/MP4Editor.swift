/// Edits an ISO base media file in place, through its descriptor: top-level boxes replaced or
/// inserted (a box inside one is changed in its tree, whose sizes follow), the boxes after a
/// change moved by what it grew or shrank, and every chunk offset of the index moved with the
/// bytes it points to, so that the samples are still found. Nothing is reopened by name, no
/// second file is made; a writer edits its temporary file this way before it takes its name.
///
/// ```swift
/// var editor = try MP4Editor(descriptor: fd)
/// guard let (i, movie) = try editor.movie() else { … }
/// editor.replace(at: i, with: edited.moov)   // bigger: every chunk after it moves
/// try editor.commit()
/// ```
///
/// Fragmented files (`moof`, `sidx`, `mfra`) hold offsets of their own: a change that would
/// move them is refused, until issue 32's CMAF writer teaches this editor those offsets.
package struct MP4Editor {
    package let file: FileBytes
    private var items: [Item]
    private let originalSize: UInt64

    private enum Item {
        /// Bytes of the file as they are (a box, or stray bytes after the last box).
        case kept(BoxExtent?, range: Range<UInt64>)
        case new(MP4Box)

        var type: FourCC? {
            switch self {
            case .kept(let extent, _): extent?.type
            case .new(let box): box.type
            }
        }
    }

    /// The file open (for reading and writing) as `descriptor`, which stays open.
    package init(descriptor: Int32) throws(ContainerError) {
        file = FileBytes(descriptor: descriptor)
        originalSize = file.count
        let top = try MP4File(file)
        var items: [Item] = []
        for box in top.boxes {
            guard top.isWhole(box) else { throw ContainerError("its \(box.type) box at byte \(box.offset) runs past the end") }
            items.append(.kept(box, range: box.offset..<box.end))
        }
        switch top.ending {
        case nil: break
        case .cut(let offset, nil)?: items.append(.kept(nil, range: offset..<originalSize))  // fewer than 8 stray bytes: kept
        case .cut(let offset, _)?, .notABox(let offset, _)?: throw ContainerError("no box starts at byte \(offset)")
        case .box?: break
        }
        self.items = items
    }

    /// The types of the top-level boxes, as they will be written (nil: stray bytes at the end).
    package var types: [FourCC?] { items.map(\.type) }

    /// The first top-level box of `type`.
    package func index(of type: FourCC) -> Int? { items.firstIndex { $0.type == type } }

    /// The top-level box at `index`: as the file holds it, or as it was replaced.
    package func box(at index: Int) throws(ContainerError) -> MP4Box {
        switch items[index] {
        case .new(let box): return box
        case .kept(let extent?, _): return try MP4File.read(extent, from: file)
        case .kept(nil, _): throw ContainerError("there is no box at the end of the file, only stray bytes")
        }
    }

    /// The index: where the first `moov` is, and the movie it holds; nil when there is none.
    package func movie() throws(ContainerError) -> (index: Int, movie: MP4Movie)? {
        guard let i = index(of: "moov") else { return nil }
        return (i, MP4Movie(moov: try box(at: i)))
    }

    package mutating func replace(at index: Int, with box: MP4Box) { items[index] = .new(box) }

    package mutating func insert(_ box: MP4Box, at index: Int) { items.insert(.new(box), at: index) }

    /// Writes the changes: the boxes after a change that grew or shrank move (the file grows
    /// or is cut to its new length), chunk offsets follow the bytes they point to.
    package mutating func commit() throws(ContainerError) {
        var base = items
        var written = items
        var lengths: [UInt64] = []
        var offsets: [UInt64] = []
        var settled = false
        for _ in 0..<8 {
            // Lay the boxes out; a change of length moves what follows.
            let newLengths = written.enumerated().map { i, item -> UInt64 in
                switch item {
                case .kept(_, let range): range.upperBound - range.lowerBound
                case .new(let box): box.length(last: i == written.count - 1)
                }
            }
            if newLengths == lengths { settled = true; break }
            lengths = newLengths
            offsets = []
            var at: UInt64 = 0
            for length in lengths {
                offsets.append(at)
                at += length
            }
            let moves = base.indices.compactMap { i -> (Range<UInt64>, UInt64)? in
                if case .kept(_, let range) = base[i], range.lowerBound != offsets[i] { return (range, offsets[i]) }
                return nil
            }
            if !moves.isEmpty {
                if let i = base.indices.first(where: { base[$0].type == "moov" }), case .kept = base[i] {
                    // The index must move its chunk offsets: read, to be written again.
                    base[i] = .new(try box(at: i))
                    written[i] = base[i]
                    lengths = []
                    continue
                }
                if let fragmented = base.compactMap(\.type).first(where: { ["moof", "sidx", "mfra"].contains($0) }) {
                    throw ContainerError("it is fragmented (\(fragmented)), and moving its fragments is not supported")
                }
            }
            func moved(_ p: UInt64) -> UInt64 {
                guard let (range, to) = moves.first(where: { $0.0.contains(p) }) else { return p }
                return to + (p - range.lowerBound)
            }
            for i in base.indices {
                guard case .new(let box) = base[i], box.type == "moov" else { continue }
                var movie = MP4Movie(moov: box)
                if !moves.isEmpty { movie.moveChunkOffsets(moved) }
                written[i] = .new(movie.moov)
            }
        }
        guard settled else { throw ContainerError("its index does not settle to one size") }

        // Move what moves: those that move forward from the last, those that move back from
        // the first (neither overwrites bytes not yet moved).
        let kept = written.indices.compactMap { i -> (Range<UInt64>, Int64)? in
            guard case .kept(_, let range) = written[i], range.lowerBound != offsets[i] else { return nil }
            return (range, Int64(offsets[i]) - Int64(range.lowerBound))
        }
        for (range, shift) in kept.reversed() where shift > 0 { try file.move(range, by: shift) }
        for (range, shift) in kept where shift < 0 { try file.move(range, by: shift) }
        for i in written.indices {
            switch written[i] {
            case .new(let box):
                var bytes: [UInt8] = []
                box.write(to: &bytes, last: i == written.count - 1)
                try file.write(bytes, at: offsets[i])
            case .kept(let extent?, let range) where extent.header.sizeField == .toEnd && i != written.count - 1:
                // "To the end" no longer ends where it did: its size, written (the same 8 bytes).
                guard let size = UInt32(exactly: range.upperBound - range.lowerBound) else {
                    throw ContainerError("its \(extent.type) box runs to the end of the file and is too large to be followed by another")
                }
                try file.write(Array(size.bigEndianBytes), at: offsets[i])
            case .kept:
                break
            }
        }
        let end = (offsets.last ?? 0) + (lengths.last ?? 0)
        if end < originalSize { try file.truncate(to: end) }
    }
}

extension UInt32 {
    var bigEndianBytes: [UInt8] { [UInt8(self >> 24), UInt8((self >> 16) & 0xFF), UInt8((self >> 8) & 0xFF), UInt8(self & 0xFF)] }
}
