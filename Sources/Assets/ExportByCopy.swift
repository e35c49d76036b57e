import Dispatch
import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// What the container library writes without a graph: a composition's passthrough
/// (``CompositionJoin``) and an MP4 or QuickTime file's range (``MP4Trim``), each an
/// ``IndexCopy`` (a header, byte ranges of the sources, a trailer) written through ``OutputFile``.
extension AssetExportSession {
    /// A composition's passthrough: its range's pieces joined by the container library
    /// (``CompositionJoin``), written index first, then the samples copied by byte range.
    func exportJoin(of composition: Composition) async throws(GraphError) {
        let (range, path, type, faststart, tags, limit) = try starting { l throws(GraphError) in
            try l.settings.metadata?.checkWritable()
            let range = try clamped(l.settings.timeRange, of: composition.duration, named: "the composition")
            try checkOutput(l)
            l.status = .waiting
            l.length = range.duration.seconds
            return (range, l.settings.outputPath ?? "", l.settings.outputFileType ?? .mp4, l.settings.optimizeForNetworkUse, l.settings.metadata, l.settings.fileLengthLimit)
        }
        do throws(GraphError) {
            let first = composition.tracks.lazy.flatMap(\.pieces).first?.sourcePath
            try await copyByIndex(to: path) { () throws(GraphError) -> IndexCopy in
                // The first file's own file type, as an MP4 join keeps it.
                let own = first.flatMap(FileBytes.init(path:)).flatMap { try? MP4File($0) }.flatMap { file in
                    try? file.first("ftyp").map { e throws(ContainerError) in try file.read(e) }
                }
                let ftyp = Self.fileTypeBox(type, source: own)
                return try Self.fitting(range, within: limit) { (r: MediaTimeRange) throws(GraphError) -> IndexCopy in
                    let plan = try CompositionJoin(composition, range: r, fileType: ftyp, indexFirst: faststart, tags: tags)
                    return IndexCopy(header: plan.join.header, copies: plan.join.copies, trailer: plan.join.trailer, files: plan.files, names: plan.paths)
                }
            }
        } catch {
            throw ending(with: error)
        }
    }

    /// A passthrough of an MP4 or QuickTime file's range, done by the container library rather
    /// than a graph (`MP4Trim`): the samples from the video's key frame before the start and the
    /// sound's packet before it are copied by byte range, and each track's edit list shows
    /// exactly the range, the sound cut to the sample. No demuxer, no muxer: the index is
    /// written first (``shouldOptimizeForNetworkUse``) or last, reading only what is copied;
    /// tags set replace the file's, and a length limit shortens the range until the file fits.
    /// False when it does not apply (another container): the graph exports then.
    func exportByIndex(_ segments: [Segment]) async throws(GraphError) -> Bool {
        let (path, type, faststart, tags, limit) = locked.withLock { l in
            (l.settings.outputPath ?? "", l.settings.outputFileType ?? .mp4, l.settings.optimizeForNetworkUse, l.settings.metadata, l.settings.fileLengthLimit)
        }
        // Any codec: the sample entries are copied as they are (HEVC, Opus, ALAC… as AVFoundation's
        // passthrough copies them).
        guard preset == .passthrough, segments.count == 1, asset.containerFormat == .mp4 || asset.containerFormat == .mov else { return false }
        let range = segments[0].range, source = segments[0].path
        try await copyByIndex(to: path) { () throws(GraphError) -> IndexCopy in
            // Opened once, without blocking, and read through that descriptor (closed with `bytes`).
            guard let bytes = FileBytes(path: source) else {
                throw GraphError(.inputUnreadable, at: source, "cannot read \"\(source)\": it cannot be opened as a file")
            }
            var movie: MP4Movie
            let ftyp: MP4Box
            do throws(ContainerError) {
                let file = try MP4File(bytes)
                guard let m = try file.movie() else { throw ContainerError("it has no index (moov box)") }
                movie = m
                let own = try file.first("ftyp").map { e throws(ContainerError) in try file.read(e) }
                ftyp = Self.fileTypeBox(type, source: own)
            } catch {
                throw GraphError(.inputUnreadable, at: source, "cannot export \"\(source)\": \(error.reason)")
            }
            // The chapters before the tags set replace the file's (chpl is among them).
            let chapters = movie.chapters(in: bytes)
            if let tags { tags.replaceTags(in: &movie.moov) }
            movie.keepSoundExact()
            return try Self.fitting(range, within: limit) { (r: MediaTimeRange) throws(GraphError) -> IndexCopy in
                do throws(ContainerError) {
                    let trim = try MP4Trim(movie: movie, fileSize: bytes.count, fileType: ftyp, start: r.start.seconds, end: r.end.seconds, indexFirst: faststart,
                                           chapters: tags.map { $0.chapters.isEmpty ? chapters : $0.chapters } ?? chapters)
                    return IndexCopy(header: trim.header, copies: trim.copies.map { (0, $0.offset, $0.count) }, trailer: trim.trailer, files: [bytes], names: [source])
                } catch {
                    throw GraphError(.inputUnreadable, at: source, "cannot export \"\(source)\": \(error.reason)")
                }
            }
        }
        return true
    }

    /// A file the container library writes without a graph: its first bytes, the runs of its
    /// sources to copy after them, its last bytes (the index, when it goes last).
    struct IndexCopy {
        var header: [UInt8]
        var copies: [(source: Int, offset: UInt64, count: Int)]
        var trailer: [UInt8]
        var files: [FileBytes]
        var names: [String]

        var size: Int64 { Int64(header.count + trailer.count) + copies.reduce(Int64(0)) { $0 + Int64($1.count) } }
    }

    /// What `plan` makes of `range` when it fits in `limit` bytes (or there is no limit), else
    /// of the longest start of `range` whose file fits (found by halving, to the millisecond):
    /// as `fileLengthLimit` promises, a complete file of what comes before the sample that would
    /// pass the limit. Throws `usage` at `fileLengthLimit` when not even a few samples fit.
    static func fitting(_ range: MediaTimeRange, within limit: Int64?,
                        _ plan: (MediaTimeRange) throws(GraphError) -> IndexCopy) throws(GraphError) -> IndexCopy {
        let whole = try plan(range)
        guard let limit, whole.size > limit else { return whole }
        var (short, long) = (0.0, range.duration.seconds)  // seconds that fit, and that do not
        var best: IndexCopy?
        while long - short > 0.001 {
            let middle = (short + long) / 2
            let planned = try? plan(MediaTimeRange(start: range.start, duration: MediaTime(seconds: middle)))
            if let planned, planned.size <= limit {
                best = planned
                short = middle
            } else if planned == nil, best == nil {
                short = middle  // no sample in so short a range: longer ones may fit
            } else {
                long = middle
            }
        }
        guard let best else {
            throw GraphError(.usage, at: "fileLengthLimit", "\(limit) bytes cannot hold any of the export (its index and first samples take more): raise the limit")
        }
        return best
    }

    /// The `ftyp` of a file of `type` made from sources whose first has `source`: an MP4 keeps an
    /// MP4 source's (its brands say what it holds), a QuickTime file is `qt  `, an M4A `M4A `.
    static func fileTypeBox(_ type: FileType, source: MP4Box?) -> MP4Box {
        switch type {
        case .mp4:
            if let source, let brand = source.read(MediaContainers.FileType.self)?.majorBrand, brand != "qt  ", brand != "M4A " { return source }
            return MP4Box(MediaContainers.FileType(majorBrand: "isom", minorVersion: 0x200, compatibleBrands: ["isom", "iso2", "avc1", "mp41"]))
        case .mov:
            return MP4Box(MediaContainers.FileType(majorBrand: "qt  ", minorVersion: 0x200, compatibleBrands: ["qt  "]))
        case .m4a:
            return MP4Box(MediaContainers.FileType(majorBrand: "M4A ", minorVersion: 0x200, compatibleBrands: ["M4A ", "isom", "iso2", "mp41"]))
        }
    }

    /// Plans (with `plan`) and writes a file the container library makes, off the concurrency
    /// threads; the task's cancellation cancels it. Marks the export completed, or throws.
    func copyByIndex(to path: String, _ plan: @escaping @Sendable () throws(GraphError) -> IndexCopy) async throws(GraphError) {
        let failure: GraphError? = await withTaskCancellationHandler {
            await withHandOff { (done: HandOff<GraphError?, Never>) in
                DispatchQueue.global().async { [self] in
                    do throws(GraphError) {
                        let copy = try plan()
                        try write(copy, to: path)
                        done.resume(returning: nil)
                    } catch {
                        done.resume(returning: error)
                    }
                }
            }
        } onCancel: {
            cancelExport()
        }
        if let failure { throw failure }
        completed()
    }

    /// Writes `copy`'s header, then each run of its copies from its file (named by its names),
    /// then its trailer, to `path` (through ``OutputFile``: complete, or nothing), a few
    /// megabytes at a time, watching for a cancel between them.
    func write(_ copy: IndexCopy, to path: String) throws(GraphError) {
        let (files, names) = (copy.files, copy.names)
        let output = OutputFile(path: path, location: "outputPath", node: "AssetExportSession")
        try output.prepare()
        var done = false
        defer { if !done { output.discard() } }
        locked.withLock { if $0.status == .waiting { $0.status = .exporting } }
        try output.write(copy.header)
        let total = Double(max(1, copy.copies.reduce(0) { $0 + $1.count }))
        var copied = 0
        for (source, offset, count) in copy.copies {
            if locked.withLock({ $0.cancelRequested }) { throw Self.cancelled }
            let chunk: [UInt8]
            let name = names[source]
            do { chunk = try files[source].read(at: offset, count: count) } catch {
                throw GraphError(.inputUnreadable, at: name, "cannot read \"\(name)\": \(error.reason)")
            }
            guard chunk.count == count else {
                throw GraphError(.inputUnreadable, at: name, "cannot export \"\(name)\": it ends at byte \(offset + UInt64(chunk.count)), inside its samples")
            }
            try output.write(chunk)
            copied += count
            let share = Double(copied) / total
            locked.withLock { $0.progress = max($0.progress, min(0.99, share)) }
        }
        if !copy.trailer.isEmpty { try output.write(copy.trailer) }
        if locked.withLock({ $0.cancelRequested }) { throw Self.cancelled }
        try output.commit()
        done = true
    }
}
