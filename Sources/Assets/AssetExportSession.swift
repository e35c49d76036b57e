import Dispatch
import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

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
/// A passthrough of an MP4 or QuickTime file (its H.264 and AAC tracks) is done by the container
/// library, not a graph (`MP4Trim`): the samples are copied by byte range, from the video's
/// keyframe at or before the range's start (a frame before it cannot be decoded) and the sound's
/// packet before it, and each track's edit list shows exactly the range: the pictures and sound
/// before its start are decoded, not shown, as `ffmpeg -ss … -c copy` and AVFoundation's
/// passthrough write it. The file type's brand is the one asked (`qt  ` for a QuickTime file),
/// tags set replace the file's, a length limit shortens the range until the file fits, and the
/// index goes where ``shouldOptimizeForNetworkUse`` says.
///
/// Otherwise it is one graph, run by the runtime from the range's start to its end (a seek with
/// a stop): `source.file` → `demux` → `sink.mp4` for ``ExportPreset/passthrough`` (the samples
/// as stored), `source.file` → `decode` → `encode.h264` (which scales) / `encode.aac` →
/// `sink.mp4` otherwise. `sink.mp4` writes under a temporary name and renames only a complete
/// file, so ``cancelExport()`` or a failure leaves nothing; `fileLengthLimit` is its own
/// (`sink.mp4`'s `fileLengthLimit`: the first sample that would pass it ends the file). A range
/// re-encoded with the index last is read apart, as a composition of one piece.
///
/// A composition (``init(asset:preset:)-(Composition,_)``) is joined by the container library
/// in passthrough (``CompositionJoin``), or read by ``AssetReader/init(composition:)`` and
/// encoded once (``CompositionTranscode``) with any other preset.
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
        /// A composition's re-encode: its reader, cancelled with the run.
        var transcode: CompositionTranscode?
        var cancelRequested = false
        var outputPath: String?
        var outputFileType: FileType?
        var timeRange: MediaTimeRange?
        var optimizeForNetworkUse = false
        var metadata: MediaMetadata?
        var fileLengthLimit: Int64?
        var videoComposition: VideoComposition?
        var audioMix: AudioMix?
        /// The range's length in seconds, once the export runs: what progress is measured against.
        var length = 0.0

        var isOver: Bool { status == .completed || status == .failed || status == .cancelled }
    }
    private let locked = Guarded(Locked())

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

    /// A session exporting `composition` (`AVAssetExportSession(asset: AVComposition, …)`).
    ///
    /// With ``ExportPreset/passthrough``, its tracks' pieces are joined without re-encoding
    /// (every piece of a track with the same codec and parameters; see
    /// ``CompositionTrack/checkPassthrough()``, which names the piece and what differs when they
    /// are not), each shown exactly by the track's edit list, gaps as empty edits; the sources
    /// must be MP4 or MOV files. Nothing is ever re-encoded.
    ///
    /// With any other preset, every piece is decoded and the whole encoded once (H.264 and AAC,
    /// as for an asset): the pictures at the video track's ``CompositionTrack/naturalSize`` (its
    /// first piece's, as AVFoundation renders a composition without a video composition), a
    /// piece of another size scaled to fit it with its shape kept and black bars around it,
    /// then fitted to the preset's box; the sound resampled to one rate and channel count (the
    /// first sound piece's, at most 48 kHz and two channels); a gap shows black and is silent.
    /// Pieces of any codec, size or rate join so. It writes the composition's first video track
    /// and first sound track; one with more than one track of a kind with pieces is refused.
    ///
    /// Throws `usage` (64) for an empty composition, a preset that cannot export it (a video
    /// preset without video, ``ExportPreset/appleM4A`` without sound), or pieces that cannot be
    /// joined in passthrough.
    public init(asset composition: Composition, preset: ExportPreset) throws(GraphError) {
        guard let first = composition.tracks.lazy.flatMap(\.pieces).first?.asset else {
            throw GraphError(.usage, at: "composition", "the composition has no piece of any file: there is nothing to export")
        }
        if preset == .passthrough {
            for track in composition.tracks { try track.checkPassthrough() }
        } else {
            if let why = preset.incompatibility(with: composition) {
                throw GraphError(.usage, at: "composition", "\(preset.rawValue) cannot export the composition: \(why)")
            }
            try composition.checkOneTrackPerType()
        }
        asset = first
        self.composition = composition
        self.preset = preset
        if preset == .passthrough {
            (videoSettings, audioSettings) = (nil, nil)
        } else {
            let size = composition.encodedTrack(.video)?.naturalSize, sound = composition.encodedTrack(.audio)?.pieces.first?.sourceTrack?.stream
            (videoSettings, audioSettings) = preset.settings(width: size?.width, height: size?.height, sampleRate: sound?.sampleRate, channels: sound?.channels)
        }
        locked.withLock { $0.outputFileType = preset.supportedFileTypes(for: composition).first }
    }

    /// A session encoding `composition`'s video track with `videoSettings` and its sound track
    /// with `audioSettings` (a track whose settings are nil is left out), each piece decoded and
    /// the whole encoded once, as ``init(asset:preset:)-(Composition,_)`` does for a preset.
    public init(asset composition: Composition, videoSettings: VideoSettings?, audioSettings: AudioSettings?) throws(GraphError) {
        guard let first = composition.tracks.lazy.flatMap(\.pieces).first?.asset else {
            throw GraphError(.usage, at: "composition", "the composition has no piece of any file: there is nothing to export")
        }
        guard videoSettings != nil || audioSettings != nil else {
            throw GraphError(.usage, at: "AssetExportSession", "neither video nor audio settings given: there would be nothing to export")
        }
        if videoSettings != nil, composition.encodedTrack(.video) == nil {
            throw GraphError(.usage, at: "composition", "the composition has no video track with a piece to encode with the video settings")
        }
        if audioSettings != nil, composition.encodedTrack(.audio) == nil {
            throw GraphError(.usage, at: "composition", "the composition has no sound track with a piece to encode with the audio settings")
        }
        try composition.checkOneTrackPerType()
        asset = first
        self.composition = composition
        preset = nil
        self.videoSettings = videoSettings
        self.audioSettings = audioSettings
        locked.withLock { $0.outputFileType = videoSettings == nil ? .m4a : .mp4 }
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
        if let composition, let preset { return preset.supportedFileTypes(for: composition) }
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
    /// file has arrived (`faststart`); false (the default, as AVFoundation's) writes it after
    /// the media. One case writes it first whatever this says: a passthrough of a range of a
    /// file that is not MP4 or MOV (its graph seeks, and GStreamer's muxer cannot restart a
    /// file written in place after a seek).
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

    /// How the video is drawn (`AVAssetExportSession.videoComposition`): frames of its render
    /// size at its frame rate, each cropped, moved and faded as its instruction says. Needs a
    /// preset that encodes; the preset's box then fits the render size.
    public var videoComposition: VideoComposition? {
        get { locked.withLock { $0.videoComposition } }
        set { locked.withLock { $0.videoComposition = newValue } }
    }

    /// The sound tracks' volumes over time (`AVAssetExportSession.audioMix`). Needs a preset
    /// that encodes.
    public var audioMix: AudioMix? {
        get { locked.withLock { $0.audioMix } }
        set { locked.withLock { $0.audioMix = newValue } }
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
        let last = Guarded<State?>(nil)
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
        if locked.withLock({ $0.videoComposition != nil || $0.audioMix != nil }) {
            guard preset != .passthrough else {
                throw ending(with: GraphError(.usage, at: "videoComposition", "a video composition or an audio mix changes the pictures or the sound, and \(ExportPreset.passthrough.rawValue) copies them as stored: pick a preset that encodes"))
            }
            if let composition { return try await exportEncoding(composition, named: "the composition") }
            let whole: Composition
            do throws(GraphError) { whole = try wholeAsset() } catch { throw ending(with: error) }
            return try await exportEncoding(whole, named: "\"\(asset.path)\"")
        }
        if let composition {
            return preset == .passthrough ? try await exportJoin(of: composition) : try await exportEncoding(composition, named: "the composition")
        }
        if let apart = rangeReadApart() { return try await exportEncoding(apart, named: "\"\(asset.path)\"") }
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
            try end(as: report)
        } catch {
            throw ending(with: error)
        }
    }

    /// Abandons the export: the run stops, the temporary file is removed, and ``export()``
    /// throws `cancelled`. Before an export starts, it makes the export throw `cancelled` at once.
    public func cancelExport() {
        let (run, transcode) = locked.withLock { l -> (GraphRun?, CompositionTranscode?) in
            guard !l.isOver else { return (nil, nil) }
            l.cancelRequested = true
            if l.status == .unknown { l.status = .cancelled }
            return (l.run, l.transcode)
        }
        run?.cancel()
        transcode?.cancel()
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
        let (range, path, type, faststart, tags, limit) = try starting { l throws(GraphError) in
            try l.metadata?.checkWritable()
            let range = try clamped(l.timeRange, of: composition.duration, named: "the composition")
            try checkOutput(l)
            l.status = .waiting
            l.length = range.duration.seconds
            return (range, l.outputPath ?? "", l.outputFileType ?? .mp4, l.optimizeForNetworkUse, l.metadata, l.fileLengthLimit)
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

    /// A composition exported by decoding every piece and encoding once (``CompositionTranscode``):
    /// the reader's samples appended to a graph of encoders and `sink.mp4`, so the file's type,
    /// tags, length limit and index are written as for an asset.
    private func exportEncoding(_ composition: Composition, named name: String) async throws(GraphError) {
        let (range, path, type, faststart, tags, limit, drawing, mix) = try starting { l throws(GraphError) in
            try l.metadata?.checkWritable()
            let range = try clamped(l.timeRange, of: composition.duration, named: name)
            try checkOutput(l)
            try l.videoComposition?.check(duration: composition.duration,
                                          trackIDs: Set(composition.tracks.filter { $0.mediaType == .video }.map(\.trackID)))
            try l.audioMix?.check()
            l.status = .waiting
            l.length = range.duration.seconds
            return (range, l.outputPath ?? "", l.outputFileType ?? .mp4, l.optimizeForNetworkUse, l.metadata ?? asset.metadata, l.fileLengthLimit,
                    l.videoComposition, l.audioMix)
        }
        var transcode: CompositionTranscode?
        var started: GraphRun?
        do throws(GraphError) {
            // A video composition's frames are of its render size: the preset fits that.
            var video = videoSettings
            if let drawing, let preset, video != nil {
                let size = drawing.encodedSize
                video = preset.settings(width: size.width, height: size.height, sampleRate: nil, channels: nil).video
            }
            let job = try CompositionTranscode(composition, range: range, video: type == .m4a ? nil : video, audio: audioSettings,
                                               videoComposition: drawing, audioMix: mix)
            transcode = job
            var b = GraphBuilder(name: "AssetExportSession", description: "exports a composition to \(path)")
            // A composition track's preferredTransform, set, is the file's display matrix (a video
            // composition draws the frames upright instead, as Apple's export does).
            let transform = drawing == nil ? composition.encodedTrack(.video)?.preferredTransform : nil
            let file = addFile(to: &b, path: path, type: type, faststart: faststart, tags: tags, limit: limit, videoTransform: transform)
            try job.addInputs(to: &b, file: file)
            let run = try GraphRun(try b.build(registry: .builtIn))
            // The cover, and the chapters that show in the range, moved to its timeline: an
            // asset's range read apart is on the asset's timeline; a composition has none of its
            // own unless they were set (the asset's are not the composition's).
            var extra = tags
            if self.composition != nil, locked.withLock({ $0.metadata == nil }) { extra.chapters = [] }
            try extra.addExtraTags(to: run, showing: range, of: composition.duration)
            let cancelled = locked.withLock { l in
                l.run = run
                l.transcode = job
                return l.cancelRequested
            }
            guard !cancelled else { throw Self.cancelled }
            try run.start()
            started = run
            locked.withLock { if $0.status == .waiting { $0.status = .exporting } }
            try job.start(feeding: run)
            let report = await withTaskCancellationHandler { await run.report() } onCancel: { cancelExport() }
            // The run has ended (a length limit ends it before the reader does): stop reading.
            job.cancel()
            await job.ended()
            if let failure = job.failure { throw failure }
            try end(as: report)
        } catch {
            started?.cancel()  // nothing is left under the output's name
            if let transcode {
                transcode.cancel()
                await transcode.ended()
            }
            throw ending(with: error)
        }
    }

    /// The asset's first video and sound tracks as a composition of one piece each, keeping
    /// their track IDs (a video composition's layers and an audio mix's inputs name them).
    private func wholeAsset() throws(GraphError) -> Composition {
        var tracks: [CompositionTrack] = []
        for type in [MediaType.video, .audio] {
            guard let source = asset.tracks(withMediaType: type).first else { continue }
            var track = CompositionTrack(mediaType: type, trackID: source.trackID)
            try track.insertTimeRange(source.timeRange, of: source, in: asset, at: .zero)
            tracks.append(track)
        }
        return Composition(tracks: tracks)
    }

    /// An asset's range to re-encode with the index last, as a composition of one piece (the
    /// tracks encoded, from 0): read by a reader of its own, apart from the writing graph, since
    /// GStreamer's muxer restarts its file after a seek in its own graph (see
    /// ``graph(for:seek:)``), which only an index written first survives. Nil otherwise.
    private func rangeReadApart() -> Composition? {
        guard preset != .passthrough else { return nil }
        let (asked, faststart) = locked.withLock { ($0.timeRange, $0.optimizeForNetworkUse) }
        guard !faststart, let asked, asked.start > .zero || asked.end < asset.duration else { return nil }
        var tracks: [CompositionTrack] = []
        for (type, encodes) in [(MediaType.video, videoSettings != nil), (.audio, audioSettings != nil)] where encodes {
            guard let source = asset.tracks(withMediaType: type).first else { continue }
            var track = CompositionTrack(mediaType: type, trackID: tracks.count + 1)
            guard (try? track.insertTimeRange(source.timeRange, of: source, in: asset, at: .zero)) != nil else { return nil }
            tracks.append(track)
        }
        return tracks.isEmpty ? nil : Composition(tracks: tracks)
    }

    /// The asked range within the asset: the end cut to the asset's; refused when it is empty,
    /// or starts at or past the end.
    private func clamped(_ asked: MediaTimeRange?, of duration: MediaTime, named name: String) throws(GraphError) -> MediaTimeRange {
        guard let asked else { return MediaTimeRange(start: .zero, duration: duration) }
        guard asked.start.isFinite, asked.duration.isFinite, asked.start >= .zero else {
            throw GraphError(.usage, at: "timeRange", "\(asked) is not a range of the asset: its start and duration must be finite, the start from 0")
        }
        guard asked.start < duration else {
            throw GraphError(.usage, at: "timeRange", "the range \(asked) starts at or past the end of \(name) (\(duration.seconds) s long)")
        }
        guard asked.duration > .zero else {
            throw GraphError(.usage, at: "timeRange", "the range \(asked) is empty: give it a duration above 0")
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

    /// The `sink.mp4` an export writes with: the output's path and type, the index's place, the
    /// length limit and the tags (the cover and chapters: ``MediaMetadata/addExtraTags(to:showing:of:)``).
    private func addFile(to b: inout GraphBuilder, path: String, type: FileType, faststart: Bool, tags: MediaMetadata,
                         limit: Int64?, videoTransform: DisplayMatrix? = nil) -> BuiltNode<MP4SinkNode> {
        b.add("file", MP4SinkNode.self) { p in
            if let videoTransform, videoTransform != .identity, type != .m4a { p[\.videoTransform] = videoTransform.description }
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
    }

    /// The graph that exports `segments`: one segment, a file's range, read by a seek. (A
    /// composition, several files' ranges in sequence, is read by ``AssetReader`` instead:
    /// ``exportEncoding(_:)``; the graph form of a join is `source.concat`.)
    private func graph(for segments: [Segment], seek: GraphRun.Seek?) throws(GraphError) -> Graph {
        guard segments.count == 1, let segment = segments.first else {
            throw GraphError(.usage, at: "AssetExportSession", "an asset's export is of one range of it; export several files' ranges in sequence as a Composition")
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
        let file = addFile(to: &b, path: path, type: type, faststart: faststart, tags: tags, limit: limit)
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
            // The encoders the settings name (H.264 or HEVC, AAC), from the one place that maps
            // settings to nodes, as the writer's.
            for (type, settings) in [(MediaType.video, video.flatMap { _ in videoSettings } as (any OutputSettings)?),
                                     (.audio, audio.flatMap { _ in audioSettings })] {
                guard let settings, let encoder = try WriterEncoders.add(for: settings, id: "\(type.rawValue)-encoder", at: "export", to: &b) else { continue }
                b.connect(decode.output(type.rawValue), to: encoder.input)
                b.connect(encoder.output, to: file.input(type.rawValue), capacity: AssetWriter.intoTheMuxer)
            }
        }
        return try b.build(registry: .builtIn)
    }

    /// Starts the run, at `seek` when given: a seek blocks until the run plays from there, so
    /// it is made on a thread of its own; the task's cancellation cancels the run, which wakes it.
    private func start(_ run: GraphRun, at seek: GraphRun.Seek?) async throws(GraphError) {
        guard let seek else { return try run.start() }
        let failure: GraphError? = await withTaskCancellationHandler {
            await withHandOff { (done: HandOff<GraphError?, Never>) in
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
    /// written first (``shouldOptimizeForNetworkUse``) or last, reading only what is copied;
    /// tags set replace the file's, and a length limit shortens the range until the file fits.
    /// False when it does not apply (another container, other codecs than the graph copies):
    /// the graph exports then.
    private func exportByIndex(_ segments: [Segment]) async throws(GraphError) -> Bool {
        let (path, type, faststart, tags, limit) = locked.withLock { l in
            (l.outputPath ?? "", l.outputFileType ?? .mp4, l.optimizeForNetworkUse, l.metadata, l.fileLengthLimit)
        }
        let video = asset.tracks(withMediaType: .video).first, audio = asset.tracks(withMediaType: .audio).first
        guard preset == .passthrough, segments.count == 1,
              asset.containerFormat == .mp4 || asset.containerFormat == .mov,
              [video, audio].allSatisfy({ $0 == nil || $0!.isCopyable }) else { return false }
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
    private func copyByIndex(to path: String, _ plan: @escaping @Sendable () throws(GraphError) -> IndexCopy) async throws(GraphError) {
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

    /// The export done: status completed, progress 1.
    private func completed() {
        locked.withLock { l in
            l.status = .completed
            l.progress = 1
        }
    }

    /// The export's end as its run reports it: completed, or the error to throw.
    private func end(as report: RunReport) throws(GraphError) {
        switch report.status {
        case .completed, .stopped: completed()
        case .cancelled: throw Self.cancelled
        case .failed: throw report.error ?? GraphError(.runFailed, at: "AssetExportSession", "the export failed and did not say why")
        }
    }

    /// Records `error` as how the export ended (cancelled when it is a cancel or one was asked,
    /// else failed with it) and gives what ``export()`` throws: `cancelled` once one was asked.
    private func ending(with error: GraphError) -> GraphError {
        locked.withLock { l in
            if error.code == .cancelled || l.cancelRequested {
                l.status = .cancelled
            } else {
                l.status = .failed
                l.error = error
            }
            return l.cancelRequested ? Self.cancelled : error
        }
    }

    /// Writes `copy`'s header, then each run of its copies from its file (named by its names),
    /// then its trailer, to `path` (through ``OutputFile``: complete, or nothing), a few
    /// megabytes at a time, watching for a cancel between them.
    private func write(_ copy: IndexCopy, to path: String) throws(GraphError) {
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
