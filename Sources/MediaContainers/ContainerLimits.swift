/// What GraphKit checks in an MP4 or MOV before any GStreamer element reads it (issue 47): a file's
/// claims that would make a demuxer or a decoder take more than the file's bytes can mean. A
/// few-KB file of 100,000 nested `udta`, `meta` or `trak` boxes overflowed the stack of
/// GStreamer 1.22's qtdemux (probe, export and thumbnails crashed); 200,000 `ilst` items kept
/// `probe` busy for minutes; sample tables claiming millions of samples and frames claiming
/// 37786×37786 pixels took gigabytes. The one check, at the root of every way a file is opened
/// for decoding: `source.file`'s prepare (graphs, thumbnails' graph, export's re-encoding) and
/// `MediaFileInfo` (probe, the thumbnails node, an asset). Each limit is far past what a real
/// file comes near.
///
/// The walk reads box headers only, iteratively (a hostile depth cannot take this stack either),
/// and stops at the first limit passed: it reads at most ``boxes`` headers.
public enum ContainerLimits {
    /// The deepest boxes may nest, the file's top level being 1. A movie's sample entry sits
    /// at 8 (`moov/trak/mdia/minf/stbl/stsd/avc1/avcC`); iTunes metadata at 6.
    public static let depth = 32
    /// The most boxes one box may hold (a movie's tracks, a list's metadata items): iTunes
    /// writes a few dozen items; a movie with a thousand tracks is unheard of.
    public static let children = 10_000
    /// The most boxes below one top-level box, all depths together.
    public static let boxes = 100_000
    /// The most metadata items (the boxes of every `ilst`) in the whole file: each becomes a tag
    /// that GStreamer's demuxer and the tag reader both copy.
    public static let items = 10_000

    /// Why `source` must not be decoded here, as a phrase completing "the file …" ("its udta
    /// box at byte 64 holds boxes nested more than 32 deep, …"): boxes nested deeper than
    /// ``depth``, more than ``children`` in one box, ``boxes`` below one top-level box or
    /// ``items`` of metadata; sample tables claiming more than the file can hold
    /// (``MP4Movie/checkSampleClaims(fileSize:)``); edit lists longer or showing their media
    /// more times over than a real file's (``MP4Movie/checkEditClaims()``); frames larger than
    /// ``FrameSizeLimit``; a WAV whose format chunk states a rate or channel count no sound has
    /// (``WAVEHeader/formatProblem``). Nil when nothing is past a limit, and for a file of
    /// another kind.
    public static func problem(in source: some ByteSource) -> String? {
        guard let format = try? MediaContainerFormat.detect(source) else { return nil }
        if format == .wav { return WAVEHeader(source)?.formatProblem }
        guard format == .mp4 || format == .mov else { return nil }
        if let why = structure(of: source) { return why }
        // Only the claims: an index that cannot be read at all (cut short, damaged) is for the
        // reader's own diagnosis to name ("ends at byte 804, inside its index").
        if let file = try? MP4File(source), let extent = file.first("moov"), file.isWhole(extent), let moov = try? file.read(extent) {
            do {
                let movie = MP4Movie(moov: moov)
                try movie.checkClaims(fileSize: source.count)
            } catch { return error.reason }
        }
        return FrameSizeLimit.problem(in: source)
    }

    /// Top-level boxes whose bodies are media or padding, never walked.
    static let opaque: Set<FourCC> = ["mdat", "free", "skip", "wide", "junk"]
    /// Boxes whose bodies are boxes after `leading` bytes, as this library and qtdemux read them.
    static let containers: [FourCC: Int] = {
        var all: [FourCC: Int] = [:]
        for type in MP4Box.strictContainers.union(MP4Box.containers) { all[type] = 0 }
        for type: FourCC in ["wave", "clip", "matt", "tapt", "gmhd", "rmra", "rmda", "ipro", "iprp", "ipco", "moof", "traf", "mvex", "mfra"] { all[type] = 0 }
        all["meta"] = 4  // QuickTime's, at 0, is tried too
        all["stsd"] = 8
        all["keys"] = 8
        return all
    }()
    /// Where a sample entry's boxes may start: after its 8 bytes (`hint`, `text`), an audio
    /// entry's 28, 44 or 64 (QuickTime versions 0–2), a visual entry's 78.
    static let sampleEntryStarts = [78, 28, 44, 64, 8]

    /// Where the boxes of `box`'s body start, when it holds boxes: nil for a leaf.
    static func childrenStart(of box: BoxExtent, in parent: FourCC?, source: some ByteSource) -> UInt64? {
        let body = box.bodyOffset, end = min(box.end, source.count)
        guard body < end else { return nil }
        // Where the boxes may start, and whether the first one's type must be printable: where
        // the start is guessed (ISO's or QuickTime's `meta`, a sample entry of any codec); an
        // iTunes item's is not (`©nam` starts with 0xA9).
        var starts: [Int], guessed = true
        if let leading = containers[box.type] {
            (starts, guessed) = box.type == "meta" ? ([4, 0], true) : ([leading], false)
        } else if parent == "ilst" {
            (starts, guessed) = ([0], false)
        } else if parent == "stsd" || parent == "wave" {
            starts = sampleEntryStarts
        } else {
            return nil
        }
        starts = starts.filter { body + UInt64($0) + 8 <= end }
        for start in starts {
            let at = body + UInt64(start)
            guard let bytes = try? source.read(at: at, count: 8), bytes.count == 8,
                  case .header(let header) = BoxHeader.parse(bytes) else { continue }
            let size = header.sizeField == .toEnd ? end - at : header.declaredSize
            if !guessed || header.type.isPrintable, size >= 8, size <= end - at { return at }
        }
        return nil
    }

    /// A box being walked: its boxes, its type and offset, how many of them were seen.
    private struct Level<S: ByteSource> {
        var walker: BoxWalker<S>
        var type: FourCC?
        var offset: UInt64
        var count = 0
        init(walker: BoxWalker<S>, type: FourCC?, offset: UInt64) { (self.walker, self.type, self.offset) = (walker, type, offset) }
    }

    /// The first structural limit `source` passes, walked without recursion: the whole file, or
    /// the boxes of `range` (a `moov`, for ``MP4File/movie()``) as its top level.
    static func structure(of source: some ByteSource, in range: Range<UInt64>? = nil) -> String? {
        let walker = range.map { BoxWalker(source, from: $0.lowerBound, to: $0.upperBound) } ?? BoxWalker(source)
        var stack = [Level(walker: walker, type: nil, offset: 0)]
        var top: BoxExtent?, seen = 0, items = 0
        while !stack.isEmpty {
            guard let step = try? stack[stack.count - 1].walker.next(), case .box(let box) = step else {
                stack.removeLast()
                continue
            }
            let depth = stack.count
            if depth == 1 {
                (top, seen) = (box, 0)
            } else {
                seen += 1
                stack[depth - 1].count += 1
                let parent = stack[depth - 1]
                guard parent.count <= children else {
                    return "its \(parent.type!) box at byte \(parent.offset) holds more than \(children) boxes, "
                        + "the most GraphKit reads in one box: the file is damaged or made to exhaust a reader"
                }
                if parent.type == "ilst" {
                    items += 1
                    guard items <= Self.items else {
                        return "its ilst box at byte \(parent.offset) brings its metadata items to more than \(Self.items), "
                            + "the most GraphKit reads in one file: the file is damaged or made to exhaust a reader"
                    }
                }
                guard seen <= boxes else {
                    return "its \(top!.type) box at byte \(top!.offset) holds more than \(boxes) boxes in all, "
                        + "the most GraphKit reads in one top-level box: the file is damaged or made to exhaust a reader"
                }
            }
            guard depth > 1 || !opaque.contains(box.type),
                  let start = childrenStart(of: box, in: stack[depth - 1].type, source: source) else { continue }
            guard depth < Self.depth else {
                return "its \(box.type) box at byte \(box.offset) holds boxes nested more than \(Self.depth) deep, "
                    + "the most GraphKit reads (GStreamer's demuxer would exhaust its stack): the file is damaged or made to crash a reader"
            }
            stack.append(Level(walker: BoxWalker(source, from: start, to: min(box.end, source.count)), type: box.type, offset: box.offset))
        }
        return nil
    }
}
