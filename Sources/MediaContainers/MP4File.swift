/// An ISO base media file's top level (ISO/IEC 14496-12: MP4, M4A, MOV, fragmented MP4), walked
/// once: where each box is. Only what is asked for is read into memory (an index, a fragment's
/// header), never the media data.
package struct MP4File<Source: ByteSource> {
    package let source: Source
    /// The top-level boxes in order. The last may run past the end of the file (see
    /// ``isWhole(_:)``): a file cut short or still being written.
    package let boxes: [BoxExtent]
    /// How the walk ended, when not exactly at the end of the last box: the file ends inside a
    /// box header, or no box starts where one should.
    package let ending: BoxStep?

    /// Walks the top level of `source`. Throws only when it cannot be read.
    package init(_ source: Source) throws(ContainerError) {
        self.source = source
        var walker = BoxWalker(source)
        var boxes: [BoxExtent] = []
        var ending: BoxStep?
        while let step = try walker.next() {
            if case .box(let extent) = step { boxes.append(extent) } else { ending = step }
        }
        self.boxes = boxes
        self.ending = ending
    }

    /// Whether all of the box is in the file.
    package func isWhole(_ extent: BoxExtent) -> Bool { extent.end <= source.count }

    /// The first top-level box of `type`.
    package func first(_ type: FourCC) -> BoxExtent? { boxes.first { $0.type == type } }

    /// The box at `extent`, read and parsed: it must be whole.
    package func read(_ extent: BoxExtent) throws(ContainerError) -> MP4Box { try Self.read(extent, from: source) }

    /// The box at `extent` of `source`, read and parsed: it must be whole.
    package static func read(_ extent: BoxExtent, from source: Source) throws(ContainerError) -> MP4Box {
        guard extent.end <= source.count else {
            throw ContainerError("its \(extent.type) box at byte \(extent.offset) runs to byte \(extent.end), past the end of the file at byte \(source.count)")
        }
        let bytes = try source.read(at: extent.offset, count: Int(extent.size))
        guard bytes.count == Int(extent.size) else { throw ContainerError("it ends at byte \(extent.offset + UInt64(bytes.count)), inside its \(extent.type) box") }
        let (boxes, _) = try MP4Box.parseSequence(bytes[...], in: nil, depth: 0)
        guard boxes.count == 1 else { throw ContainerError("its \(extent.type) box at byte \(extent.offset) could not be read") }
        return boxes[0]
    }

    /// The index: the first `moov` box, read; nil when the file has none. Throws for an index
    /// past ``ContainerLimits`` (boxes nested deeper than its ``ContainerLimits/depth``, too many
    /// boxes) or whose sample tables claim more than the file holds
    /// (``MP4Movie/checkSampleClaims(fileSize:)``), or whose edit lists are longer or show their
    /// media more times over than a real file's (``MP4Movie/checkEditClaims()``): no reader of it
    /// makes a list of samples the file's bytes cannot back or expands a hostile edit list, and
    /// no file written from it (an export, a join, an HLS initialization segment) carries the
    /// nesting that crashes GStreamer's demuxer.
    package func movie() throws(ContainerError) -> MP4Movie? {
        guard let extent = first("moov") else { return nil }
        if isWhole(extent), let why = ContainerLimits.structure(of: source, in: extent.offset..<extent.end) { throw ContainerError(why) }
        let movie = MP4Movie(moov: try read(extent))
        try movie.checkClaims(fileSize: source.count)
        return movie
    }
}
