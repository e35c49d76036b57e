import Dispatch
import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes
import Synchronization

/// Exports an asset, or part of it, to a new file with a preset or settings of your own, like
/// `AVAssetExportSession`.
///
/// ```swift
/// let session = try AssetExportSession(asset: try Asset(path: "talk.mp4"), preset: .hd1280x720)
/// session.outputPath = "talk-720p.mp4"
/// session.timeRange = MediaTimeRange(start: MediaTime(seconds: 10), duration: MediaTime(seconds: 60))
/// try await session.export()
/// ```
///
/// A passthrough of an MP4 or QuickTime file (its H.264 and AAC tracks, no new tags, no length
/// limit) is done by the container library, not a graph (`MP4Trim`): the samples are copied by
/// byte range, from the video's keyframe at or before the range's start (a frame before it
/// cannot be decoded) and the sound's packet before it, and each track's edit list shows exactly
/// the range: the pictures and sound before its start are decoded, not shown, as
/// `ffmpeg -ss … -c copy` and AVFoundation's passthrough write it. The index goes first.
///
/// Otherwise it is one graph, run by the runtime from the range's start to its end (a seek with
/// a stop): `source.file` → `demux` → `sink.mp4` for ``ExportPreset/passthrough`` (the samples
/// as stored), `source.file` → `decode` → `encode.h264` (which scales) / `encode.aac` →
/// `sink.mp4` otherwise. `sink.mp4` writes under a temporary name and renames only a complete
/// file, so ``cancelExport()`` or a failure leaves nothing; `fileLengthLimit` is its own
/// (`sink.mp4`'s `fileLengthLimit`: the first sample that would pass it ends the file).
///
/// The input is a list of source segments (a file and a range of it, played in order); an
/// asset is the one-segment case. A composition exports as its segments.
public final class AssetExportSession: Sendable {
    /// Where an export is, like `AVAssetExportSession.Status` (Apple's raw values).
    public enum Status: Int, Sendable {
        case unknown = 0, waiting = 1, exporting = 2, completed = 3, failed = 4, cancelled = 5
    }

    /// What ``states(updateInterval:)`` gives, like `AVAssetExportSession.State`.
    public enum State: Sendable, Equatable {
        /// Not started.
        case pending
        /// Started, preparing (the graph built, the files opened, the start sought).
        case waiting
        /// Writing; `progress` from 0 to 1.
        case exporting(progress: Double)
    }

    /// One piece of what is exported: a file and the part of it, played in sequence.
    struct Segment: Sendable {
        var path: String
        var range: MediaTimeRange
    }

    public let asset: Asset
    /// The composition exported, for ``init(asset:preset:)-(Composition,_)``; ``asset`` is
    /// then its first piece's file.
    public let composition: Composition?
    /// The preset, or nil for ``init(asset:videoSettings:audioSettings:)``'s settings.
    public let preset: ExportPreset?
    private let videoSettings: VideoSettings?
    private let audioSettings: AudioSettings?

    private struct Locked {
        var status = Status.unknown
        var error: GraphError?
        var progress = 0.0
        var run: GraphRun?
        var cancelRequested = false
        var outputPath: String?
        var outputFileType: FileType?
        var timeRange: MediaTimeRange?
        var optimizeForNetworkUse = false
        var metadata: MediaMetadata?
        var fileLengthLimit: Int64?
        /// The range's length in seconds, once the export runs: what progress is measured against.
        var length = 0.0

        var isOver: Bool { status == .completed || status == .failed || status == .cancelled }
    }
    private let locked = Mutex(Locked())

    /// A session exporting `asset` with `preset`; throws, saying why, when the preset cannot
    /// export it (``ExportPreset/presets(compatibleWith:)``).
    public init(asset: Asset, preset: ExportPreset) throws(GraphError) {
        if let why = preset.incompatibility(with: asset) {
            throw GraphError(.usage, at: asset.path, "\(preset.rawValue) cannot export \"\(asset.path)\": \(why)")
        }
        self.asset = asset
        composition = nil
        self.preset = preset
        let video = asset.tracks(withMediaType: .video).first?.stream, audio = asset.tracks(withMediaType: .audio).first?.stream
        (videoSettings, audioSettings) = preset.settings(width: video?.width, height: video?.height,
                                                         sampleRate: audio?.sampleRate, channels: audio?.channels)
        locked.withLock { $0.outputFileType = preset.supportedFileTypes(for: asset).first }
    }

    /// A session encoding `asset`'s first video track with `videoSettings` and its first sound
    /// track with `audioSettings`; a track whose settings are nil is left out.
    public init(asset: Asset, videoSettings: VideoSettings?, audioSettings: AudioSettings?) throws(GraphError) {
        guard videoSettings != nil || audioSettings != nil else {
            throw GraphError(.usage, at: "AssetExportSession", "neither video nor audio settings given: there would be nothing to export")
        }
        if videoSettings != nil, asset.tracks(withMediaType: .video).isEmpty {
            throw GraphError(.usage, at: asset.path, "\"\(asset.path)\" has no video track to encode with the video settings")
        }
        if audioSettings != nil, asset.tracks(withMediaType: .audio).isEmpty {
            throw GraphError(.usage, at: asset.path, "\"\(asset.path)\" has no sound track to encode with the audio settings")
        }
        self.asset = asset
        composition = nil
        preset = nil
        self.videoSettings = videoSettings
        self.audioSettings = audioSettings
        locked.withLock { $0.outputFileType = videoSettings == nil ? .m4a : .mp4 }
    }

    /// A session exporting `composition` (`AVAssetExportSession(asset: AVComposition, …)`):
    /// with ``ExportPreset/passthrough``, its tracks' pieces joined without re-encoding (every
    /// piece of a track with the same codec and parameters; see
    /// ``CompositionTrack/checkPassthrough()``), each shown exactly by the track's edit list,
    /// gaps as empty edits. Written as MP4 or QuickTime; the sources must be MP4 or MOV files.
    /// Other presets are refused: a composition re-encodes through ``AssetReader/init(composition:)``
    /// and an ``AssetWriter``.
    public init(asset composition: Composition, preset: ExportPreset) throws(GraphError) {
        guard let first = composition.tracks.lazy.flatMap(\.pieces).first?.asset else {
            throw GraphError(.usage, at: "composition", "the composition has no piece of any file: there is nothing to export")
        }
        guard preset == .passthrough else {
            throw GraphError(.usage, at: "composition", "\(preset.rawValue) cannot export a composition here: only \(ExportPreset.passthrough.rawValue) does (a join without re-encoding); to re-encode one, read it with AssetReader(composition:) into an AssetWriter")
        }
        for track in composition.tracks { try track.checkPassthrough() }
        asset = first
        self.composition = composition
        self.preset = preset
        videoSettings = nil
        audioSettings = nil
        locked.withLock { $0.outputFileType = .mp4 }
    }

    // MARK: Settings (before export())

    /// The file to write. It must not exist (as AVFoundation, an export never replaces a file);
    /// missing folders are made.
    public var outputPath: String? {
        get { locked.withLock { $0.outputPath } }
        set { locked.withLock { $0.outputPath = newValue } }
    }

    /// The kind of file written (by default the preset's first, ``supportedFileTypes``).
    public var outputFileType: FileType? {
        get { locked.withLock { $0.outputFileType } }
        set { locked.withLock { $0.outputFileType = newValue } }
    }

    /// The file types this session can write.
    public var supportedFileTypes: [FileType] {
        if composition != nil { return [.mp4, .mov] }
        if let preset { return preset.supportedFileTypes(for: asset) }
        return videoSettings == nil ? [.m4a, .mp4, .mov] : [.mp4, .mov]
    }

    /// The part of the asset exported; by default all of it. A range that ends past the
    /// asset's end ends there; one that starts at or past the end, or is empty, fails
    /// ``export()``.
    public var timeRange: MediaTimeRange {
        get { locked.withLock { $0.timeRange } ?? MediaTimeRange(start: .zero, duration: composition?.duration ?? asset.duration) }
        set { locked.withLock { $0.timeRange = newValue } }
    }

    /// The index (moov) before the media data, so that playback can start before the whole
    /// file has arrived (`faststart`). An export of a range that starts within the asset
    /// always writes the index first (GStreamer's muxer cannot restart a file written in place
    /// after the seek); false matters for an export from the asset's start.
    public var shouldOptimizeForNetworkUse: Bool {
        get { locked.withLock { $0.optimizeForNetworkUse } }
        set { locked.withLock { $0.optimizeForNetworkUse = newValue } }
    }

    /// The file's tags; by default the asset's own, so that they survive the export. Title,
    /// artist, album, album artist, genre, comment, date, location (ISO 6709) and the cover
    /// (JPEG or PNG) are written (as `sink.mp4` does); a cover set here that is not a JPEG or
    /// PNG picture fails ``export()`` before anything is written.
    public var metadata: MediaMetadata {
        get { locked.withLock { $0.metadata } ?? asset.metadata }
        set { locked.withLock { $0.metadata = newValue } }
    }

    /// The most bytes the file may have: the export stops before it would grow past it, and the
    /// file is complete (a shorter export, every sample up to there). Nil: no limit.
    public var fileLengthLimit: Int64? {
        get { locked.withLock { $0.fileLengthLimit } }
        set { locked.withLock { $0.fileLengthLimit = newValue } }
    }

    // MARK: Where it is

    public var status: Status { locked.withLock { $0.status } }

    /// Why the export failed, once ``status`` is `.failed`.
    public var error: GraphError? { locked.withLock { $0.error } }

    /// From 0 to 1, never falling: the share of the range that has reached the file.
    public var progress: Double {
        let run = locked.withLock { $0.status == .exporting ? $0.run : nil }
        let position = run?.progress.position
        return locked.withLock { l in
            if l.status == .exporting, let position, l.length > 0 {
                // 1 is for a complete file: the index is still to be written.
                l.progress = max(l.progress, min(0.99, position / l.length))
            }
            return l.progress
        }
    }

    /// The session's state every `updateInterval` (only when it changed), from now until the
    /// export ends, like `AVAssetExportSession.states(updateInterval:)`.
    public func states(updateInterval: Duration = .milliseconds(100)) -> AsyncStream<State> {
        let last = Mutex<State?>(nil)
        return AsyncStream { [self] () async -> State? in
            while true {
                let (status, progress) = (self.status, self.progress)
                let state: State
                switch status {
                case .unknown: state = .pending
                case .waiting: state = .waiting
                case .exporting: state = .exporting(progress: progress)
                case .completed, .failed, .cancelled: return nil
                }
                let changed = last.withLock { l in
                    defer { l = state }
                    return l != state
                }
                if changed { return state }
                do { try await Task.sleep(for: updateInterval) } catch { return nil }
            }
        }
    }

    // MARK: Exporting

    /// Exports, and returns once the file is complete under its name. Throws a `GraphError`
    /// naming the thing at fault (the range, the output, the node) when the export cannot
    /// start or fails, and `cancelled` after ``cancelExport()`` (or when the task awaiting it
    /// is cancelled); either way nothing is left under the output's name, nor a temporary file.
    public func export() async throws(GraphError) {
        if let composition { return try await exportJoin(of: composition) }
        let (segments, seek) = try begin()
        do throws(GraphError) {
            if try await exportByIndex(segments) { return }
            let run = try GraphRun(try graph(for: segments, seek: seek))
            // The cover, and the chapters that show in the range, moved to its timeline.
            try (locked.withLock { $0.metadata } ?? asset.metadata).addExtraTags(to: run, showing: segments[0].range, of: asset.duration)
            let cancelled = locked.withLock { l in
                l.run = run
                return l.cancelRequested
            }
            guard !cancelled else { throw Self.cancelled }
            try await start(run, at: seek)
            locked.withLock { if $0.status == .waiting { $0.status = .exporting } }
            // The task awaiting the export cancels it while it runs too, not only while it starts.
            let report = await withTaskCancellationHandler { await run.report() } onCancel: { cancelExport() }
            switch report.status {
            case .completed, .stopped:
                locked.withLock { l in
                    l.status = .completed
                    l.progress = 1
                }
            case .cancelled:
                throw Self.cancelled
            case .failed:
                throw report.error ?? GraphError(.runFailed, at: "AssetExportSession", "the export failed and did not say why")
            }
        } catch {
            locked.withLock { l in
                if error.code == .cancelled || l.cancelRequested {
                    l.status = .cancelled
                } else {
                    l.status = .failed
                    l.error = error
                }
            }
            throw locked.withLock { $0.cancelRequested } ? Self.cancelled : error
        }
    }

    /// Abandons the export: the run stops, the temporary file is removed, and ``export()``
    /// throws `cancelled`. Before an export starts, it makes the export throw `cancelled` at once.
    public func cancelExport() {
        let run = locked.withLock { l -> GraphRun? in
            guard !l.isOver else { return nil }
            l.cancelRequested = true
            if l.status == .unknown { l.status = .cancelled }
            return l.run
        }
        run?.cancel()
    }

    private static let cancelled = GraphError(.cancelled, at: "AssetExportSession", "the export was cancelled (cancelExport()); nothing was written")

    /// Checks the settings and marks the export started: the segments to export, and the seek
    /// that plays them (nil: the whole file, from its start).
    private func begin() throws(GraphError) -> (segments: [Segment], seek: GraphRun.Seek?) {
        try starting { l throws(GraphError) in
            try l.metadata?.checkWritable()
            let segments = [Segment(path: asset.path, range: try clamped(l.timeRange, of: asset.duration, named: "\"\(asset.path)\""))]
            try checkOutput(l)
            l.status = .waiting
            let range = segments[0].range
            l.length = range.duration.seconds
            let whole = range.start == .zero && range.end >= asset.duration
            let start: GraphRun.Seek = preset == .passthrough ? .keyframe(atOrBefore: range.start) : .exact(range.start)
            return (segments, whole ? nil : start.ending(at: range.end))
        }
    }

    /// Marks the export started, after `check` (which sets what it finds: the range, the
    /// output): refused when cancelled or exported already; a failed check fails the export.
    private func starting<T>(_ check: (inout Locked) throws(GraphError) -> T) throws(GraphError) -> T {
        try locked.withLock { l throws(GraphError) in
            if l.cancelRequested { throw Self.cancelled }
            guard l.status == .unknown else {
                throw GraphError(.usage, at: "AssetExportSession", "this session has exported already (status \(l.status)); make a new AssetExportSession")
            }
            do throws(GraphError) {
                return try check(&l)
            } catch {
                l.status = .failed
                l.error = error
                throw error
            }
        }
    }

    /// A composition's passthrough: its range's pieces joined by the container library
    /// (``CompositionJoin``), written index first, then the samples copied by byte range.
    private func exportJoin(of composition: Composition) async throws(GraphError) {
        let (range, path) = try starting { l throws(GraphError) in
            let range = try clamped(l.timeRange, of: composition.duration, named: "the composition")
            try checkOutput(l)
            l.status = .waiting
            l.length = range.duration.seconds
            return (range, l.outputPath ?? "")
        }
        let failure: GraphError? = await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<GraphError?, Never>) in
                DispatchQueue.global().async { [self] in
                    do throws(GraphError) {
                        let plan = try CompositionJoin(composition, range: range)
                        try write(header: plan.join.header, copies: plan.join.copies, from: plan.files, named: plan.paths, to: path)
                        done.resume(returning: nil)
                    } catch {
                        done.resume(returning: error)
                    }
                }
            }
        } onCancel: {
            cancelExport()
        }
        locked.withLock { l in
            if let failure {
                if failure.code == .cancelled || l.cancelRequested { l.status = .cancelled } else { l.status = .failed; l.error = failure }
            } else {
                l.status = .completed
                l.progress = 1
            }
        }
        if let failure { throw locked.withLock { $0.cancelRequested } ? Self.cancelled : failure }
    }

    /// The asked range within the asset: the end cut to the asset's; refused when it is empty,
    /// or starts at or past the end.
    private func clamped(_ asked: MediaTimeRange?, of duration: MediaTime, named name: String) throws(GraphError) -> MediaTimeRange {
        guard let asked else { return MediaTimeRange(start: .zero, duration: duration) }
        guard asked.start.isFinite, asked.duration.isFinite, asked.start >= .zero else {
            throw GraphError(.usage, at: "timeRange", "\(asked) is not a range of the asset: its start and duration must be finite, the start from 0")
        }
        guard asked.duration > .zero else {
            throw GraphError(.usage, at: "timeRange", "the range \(asked) is empty: give it a duration above 0")
        }
        guard asked.start < duration else {
            throw GraphError(.usage, at: "timeRange", "the range \(asked) starts at or past the end of \(name) (\(duration.seconds) s long)")
        }
        return MediaTimeRange(start: asked.start, end: min(asked.end, duration))
    }

    /// The output must be named, of a type this session writes, and not there yet.
    private func checkOutput(_ l: Locked) throws(GraphError) {
        guard let path = l.outputPath, !path.isEmpty else {
            throw GraphError(.usage, at: "outputPath", "no output file: set outputPath before export()")
        }
        guard let type = l.outputFileType, supportedFileTypes.contains(type) else {
            let asked = l.outputFileType.map { "\($0.rawValue)" } ?? "no file type"
            throw GraphError(.usage, at: "outputFileType", "\(asked) is not a file type this export writes: choose one of \(supportedFileTypes.map(\.rawValue).joined(separator: ", "))")
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            throw GraphError(.outputUnwritable, at: path, "\"\(path)\" exists already: an export does not replace a file; remove it or choose another name")
        }
    }

    /// The graph that exports `segments`: one segment, a file's range, read by a seek.
    private func graph(for segments: [Segment], seek: GraphRun.Seek?) throws(GraphError) -> Graph {
        guard segments.count == 1, let segment = segments.first else {
            throw GraphError(.usage, at: "AssetExportSession", "exporting several segments in sequence needs the concat node; one is supported")
        }
        var (path, type, faststart, tags, limit) = locked.withLock { l in
            (l.outputPath ?? "", l.outputFileType ?? .mp4, l.optimizeForNetworkUse, l.metadata ?? asset.metadata, l.fileLengthLimit)
        }
        // GStreamer's muxer starts its file while the graph prerolls, and starts it again after
        // the seek; written in place, the second one lands after the first's header (a file
        // whose index the first's media box swallows). Index first, the muxer writes nothing to
        // the file before the end: a range is always written so.
        if seek != nil { faststart = true }
        var b = GraphBuilder(name: "AssetExportSession", description: "exports \(segment.path) to \(path)")
        let file = b.add("file", MP4SinkNode.self) { p in
            p[\.path] = path
            p[\.container] = switch type {
            case .mp4: .mp4
            case .mov: .mov
            case .m4a: .m4a
            }
            p[\.faststart] = faststart
            p[\.fileLengthLimit] = limit.map { Int(clamping: $0) }
            tags.write(to: &p)
        }
        let source = b.add("source", FileSourceNode.self) { $0[\.path] = segment.path }
        let video = type == .m4a ? nil : asset.tracks(withMediaType: .video).first
        let audio = asset.tracks(withMediaType: .audio).first
        if preset == .passthrough {
            let demux = b.add("demux", DemuxNode.self)
            b.connect(source.output(), to: demux.input())
            for track in [video, audio].compactMap({ $0 }) where track.isCopyable {
                b.connect(demux.output(track.mediaType.rawValue), to: file.input(track.mediaType.rawValue), capacity: AssetWriter.intoTheMuxer)
            }
        } else {
            let decode = b.add("decode", DecodeNode.self) { p in
                p[\.pixelFormat] = .i420  // what x264 takes: no conversion before the encoder
                p[\.sampleFormat] = .auto
            }
            b.connect(source.output(), to: decode.input())
            if let settings = videoSettings, video != nil {
                let encoder = b.add("video-encoder", H264EncoderNode.self) { p in
                    p[\.width] = settings.width
                    p[\.height] = settings.height
                    if let rate = settings.averageBitRate { p[\.bitrate] = .value(rate) }
                    if let interval = settings.keyframeInterval { p[\.keyframeInterval] = interval }
                }
                b.connect(decode.output("video"), to: encoder.input())
                b.connect(encoder.output(), to: file.input("video"), capacity: AssetWriter.intoTheMuxer)
            }
            if let settings = audioSettings, audio != nil {
                let encoder = b.add("audio-encoder", AACEncoderNode.self) { p in
                    p[\.sampleRate] = settings.sampleRate
                    p[\.channels] = settings.channels
                    if let rate = settings.bitRate { p[\.bitrate] = rate }
                }
                b.connect(decode.output("audio"), to: encoder.input())
                b.connect(encoder.output(), to: file.input("audio"), capacity: AssetWriter.intoTheMuxer)
            }
        }
        return try b.build(registry: .builtIn)
    }

    /// Starts the run, at `seek` when given: a seek blocks until the run plays from there, so
    /// it is made on a thread of its own; the task's cancellation cancels the run, which wakes it.
    private func start(_ run: GraphRun, at seek: GraphRun.Seek?) async throws(GraphError) {
        guard let seek else { return try run.start() }
        let failure: GraphError? = await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<GraphError?, Never>) in
                DispatchQueue.global().async {
                    do throws(GraphError) {
                        try run.start(at: seek)
                        done.resume(returning: nil)
                    } catch {
                        done.resume(returning: error)
                    }
                }
            }
        } onCancel: {
            run.cancel()
        }
        if let failure { throw failure }
    }

    /// A passthrough of an MP4 or QuickTime file's range, done by the container library rather
    /// than a graph (`MP4Trim`): the samples from the video's key frame before the start and the
    /// sound's packet before it are copied by byte range, and each track's edit list shows
    /// exactly the range, the sound cut to the sample. No demuxer, no muxer: the index is
    /// written first, then the media, reading only what is copied. False when it does not
    /// apply (another container, other codecs than the graph copies, tags or a length limit to
    /// honour, an M4A): the graph exports then.
    private func exportByIndex(_ segments: [Segment]) async throws(GraphError) -> Bool {
        let (path, type, tags, limit) = locked.withLock { l in (l.outputPath ?? "", l.outputFileType ?? .mp4, l.metadata, l.fileLengthLimit) }
        let video = asset.tracks(withMediaType: .video).first, audio = asset.tracks(withMediaType: .audio).first
        guard preset == .passthrough, segments.count == 1, type != .m4a, tags == nil, limit == nil,
              asset.containerFormat == .mp4 || asset.containerFormat == .mov,
              [video, audio].allSatisfy({ $0 == nil || $0!.isCopyable }) else { return false }
        let range = segments[0].range
        let failure: GraphError? = await withTaskCancellationHandler {
            await withCheckedContinuation { (done: CheckedContinuation<GraphError?, Never>) in
                DispatchQueue.global().async { [self] in
                    do throws(GraphError) {
                        try copyRange(of: segments[0].path, range: range, to: path)
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
        locked.withLock { l in
            l.status = .completed
            l.progress = 1
        }
        return true
    }

    /// Writes `range` of the file at `source` to `path` (through ``OutputFile``: complete, or
    /// nothing), a few megabytes at a time, watching for a cancel between them.
    private func copyRange(of source: String, range: MediaTimeRange, to path: String) throws(GraphError) {
        let fd = open(source, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { throw GraphError(.inputUnreadable, at: source, "cannot read \"\(source)\": \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = FileBytes(descriptor: fd)
        let trim: MP4Trim
        do throws(ContainerError) {
            let file = try MP4File(bytes)
            guard let movie = try file.movie() else { throw ContainerError("it has no index (moov box)") }
            let ftyp = try file.first("ftyp").map { e throws(ContainerError) in try file.read(e) }
            trim = try MP4Trim(movie: movie, fileSize: bytes.count, fileType: ftyp, start: range.start.seconds, end: range.end.seconds,
                               chapters: movie.chapters(in: bytes))
        } catch {
            throw GraphError(.inputUnreadable, at: source, "cannot export \"\(source)\": \(error.reason)")
        }
        try write(header: trim.header, copies: trim.copies.map { (0, $0.offset, $0.count) }, from: [bytes], named: [source], to: path)
    }

    /// Writes `header`, then each run of `copies` from its file of `files` (named by `names`),
    /// to `path` (through ``OutputFile``: complete, or nothing), a few megabytes at a time,
    /// watching for a cancel between them.
    private func write(header: [UInt8], copies: [(source: Int, offset: UInt64, count: Int)], from files: [FileBytes], named names: [String],
                       to path: String) throws(GraphError) {
        let output = OutputFile(path: path, location: "outputPath", node: "AssetExportSession")
        try output.prepare()
        var done = false
        defer { if !done { output.discard() } }
        locked.withLock { if $0.status == .waiting { $0.status = .exporting } }
        try output.write(header)
        let total = Double(max(1, copies.reduce(0) { $0 + $1.count }))
        var copied = 0
        for (source, offset, count) in copies {
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
        if locked.withLock({ $0.cancelRequested }) { throw Self.cancelled }
        try output.commit()
        done = true
    }
}
