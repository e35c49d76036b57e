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
/// A passthrough of an MP4 or QuickTime file (every track, of any codec: H.264, HEVC, AAC, ALAC…) is done by the container
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
    let videoSettings: VideoSettings?
    let audioSettings: AudioSettings?

    /// What the app sets before ``export()`` (nil: the default the property documents). Each
    /// way of exporting reads it as it starts.
    struct Settings: Sendable {
        var outputPath: String?
        var outputFileType: FileType?
        var timeRange: MediaTimeRange?
        var optimizeForNetworkUse = false
        var metadata: MediaMetadata?
        var fileLengthLimit: Int64?
        var videoComposition: VideoComposition?
        var audioMix: AudioMix?
        var loudnessNormalization: LoudnessNormalization?
    }

    /// The session's state, one value under one lock: the settings, and where the export is.
    /// The ways of exporting (ExportRange.swift, ExportByCopy.swift, ExportEncoding.swift)
    /// start it with ``starting(_:)``, and end it with ``completed()`` or ``ending(with:)``.
    struct Locked {
        var settings = Settings()
        var status = Status.unknown
        var error: GraphError?
        var progress = 0.0
        var run: GraphRun?
        /// A composition's re-encode: its reader, cancelled with the run.
        var transcode: CompositionTranscode?
        var cancelRequested = false
        /// The range's length in seconds, once the export runs: what progress is measured against.
        var length = 0.0

        var isOver: Bool { status == .completed || status == .failed || status == .cancelled }
    }
    let locked = Guarded(Locked())

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
        locked.withLock { $0.settings.outputFileType = preset.supportedFileTypes(for: asset).first }
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
        locked.withLock { $0.settings.outputFileType = videoSettings == nil ? .m4a : .mp4 }
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
        locked.withLock { $0.settings.outputFileType = preset.supportedFileTypes(for: composition).first }
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
        locked.withLock { $0.settings.outputFileType = videoSettings == nil ? .m4a : .mp4 }
    }

    // MARK: Settings (before export())

    /// The file to write. It must not exist (as AVFoundation, an export never replaces a file);
    /// missing folders are made.
    public var outputPath: String? {
        get { locked.withLock { $0.settings.outputPath } }
        set { locked.withLock { $0.settings.outputPath = newValue } }
    }

    /// The kind of file written (by default the preset's first, ``supportedFileTypes``).
    public var outputFileType: FileType? {
        get { locked.withLock { $0.settings.outputFileType } }
        set { locked.withLock { $0.settings.outputFileType = newValue } }
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
        get { locked.withLock { $0.settings.timeRange } ?? MediaTimeRange(start: .zero, duration: composition?.duration ?? asset.duration) }
        set { locked.withLock { $0.settings.timeRange = newValue } }
    }

    /// The index (moov) before the media data, so that playback can start before the whole
    /// file has arrived (`faststart`); false (the default, as AVFoundation's) writes it after
    /// the media. One case writes it first whatever this says: a passthrough of a range of a
    /// file that is not MP4 or MOV (its graph seeks, and GStreamer's muxer cannot restart a
    /// file written in place after a seek).
    public var shouldOptimizeForNetworkUse: Bool {
        get { locked.withLock { $0.settings.optimizeForNetworkUse } }
        set { locked.withLock { $0.settings.optimizeForNetworkUse = newValue } }
    }

    /// The file's tags; by default the asset's own, so that they survive the export. Title,
    /// artist, album, album artist, genre, comment, date, location (ISO 6709) and the cover
    /// (JPEG or PNG) are written (as `sink.mp4` does); a cover set here that is not a JPEG or
    /// PNG picture fails ``export()`` before anything is written.
    public var metadata: MediaMetadata {
        get { locked.withLock { $0.settings.metadata } ?? asset.metadata }
        set { locked.withLock { $0.settings.metadata = newValue } }
    }

    /// Back to the asset's own tags, as if ``metadata`` had never been set.
    package func resetMetadata() { locked.withLock { $0.settings.metadata = nil } }

    /// The most bytes the file may have: the export stops before it would grow past it, and the
    /// file is complete (a shorter export, every sample up to there). Nil: no limit.
    public var fileLengthLimit: Int64? {
        get { locked.withLock { $0.settings.fileLengthLimit } }
        set { locked.withLock { $0.settings.fileLengthLimit = newValue } }
    }

    /// How the video is drawn (`AVAssetExportSession.videoComposition`): frames of its render
    /// size at its frame rate, each cropped, moved and faded as its instruction says. Needs a
    /// preset that encodes; the preset's box then fits the render size.
    public var videoComposition: VideoComposition? {
        get { locked.withLock { $0.settings.videoComposition } }
        set { locked.withLock { $0.settings.videoComposition = newValue } }
    }

    /// The sound tracks' volumes over time (`AVAssetExportSession.audioMix`). Needs a preset
    /// that encodes.
    public var audioMix: AudioMix? {
        get { locked.withLock { $0.settings.audioMix } }
        set { locked.withLock { $0.settings.audioMix = newValue } }
    }

    /// The sound normalized to a loudness under a true-peak ceiling (EBU R128) on its way to the
    /// AAC encoder: GraphKit's own, AVFoundation has none (``LoudnessNormalization``). Needs a
    /// preset that encodes the sound, and an asset's export (not a composition's, nor one with
    /// a video composition or an audio mix); a range is then always written with the index first.
    /// A value out of `effect.normalize`'s range fails ``export()`` (`usage`). Nil: the sound's
    /// loudness is kept.
    public var loudnessNormalization: LoudnessNormalization? {
        get { locked.withLock { $0.settings.loudnessNormalization } }
        set { locked.withLock { $0.settings.loudnessNormalization = newValue } }
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
        if let normalization = locked.withLock({ $0.settings.loudnessNormalization }) {
            do throws(GraphError) { try checkNormalizable(normalization) } catch { throw ending(with: error) }
            return try await exportRange()
        }
        if locked.withLock({ $0.settings.videoComposition != nil || $0.settings.audioMix != nil }) {
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
        try await exportRange()
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

    static let cancelled = GraphError(.cancelled, at: "AssetExportSession", "the export was cancelled (cancelExport()); nothing was written")

    /// Marks the export started, after `check` (which sets what it finds: the range, the
    /// output): refused when cancelled or exported already; a failed check fails the export.
    func starting<T>(_ check: (inout Locked) throws(GraphError) -> T) throws(GraphError) -> T {
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

    /// The asked range within the asset: the end cut to the asset's; refused when it is empty,
    /// or starts at or past the end.
    func clamped(_ asked: MediaTimeRange?, of duration: MediaTime, named name: String) throws(GraphError) -> MediaTimeRange {
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
    func checkOutput(_ l: Locked) throws(GraphError) {
        guard let path = l.settings.outputPath, !path.isEmpty else {
            throw GraphError(.usage, at: "outputPath", "no output file: set outputPath before export()")
        }
        guard let type = l.settings.outputFileType, supportedFileTypes.contains(type) else {
            let asked = l.settings.outputFileType.map { "\($0.rawValue)" } ?? "no file type"
            throw GraphError(.usage, at: "outputFileType", "\(asked) is not a file type this export writes: choose one of \(supportedFileTypes.map(\.rawValue).joined(separator: ", "))")
        }
        var info = stat()
        if lstat(path, &info) == 0 {
            throw GraphError(.outputUnwritable, at: path, "\"\(path)\" exists already: an export does not replace a file; remove it or choose another name")
        }
    }

    /// The `sink.mp4` an export writes with: the output's path and type, the index's place, the
    /// length limit and the tags (the cover and chapters: ``MediaMetadata/addExtraTags(to:showing:of:)``).
    func addFile(to b: inout GraphBuilder, path: String, type: FileType, faststart: Bool, tags: MediaMetadata,
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
            // The tags are the session's (the asset's unless set), given here: none of the
            // source's is added to them.
            p[\.sourceTags] = false
        }
    }

    /// The export done: status completed, progress 1.
    func completed() {
        locked.withLock { l in
            l.status = .completed
            l.progress = 1
        }
    }

    /// The export's end as its run reports it: completed, or the error to throw.
    func end(as report: RunReport) throws(GraphError) {
        switch report.status {
        case .completed, .stopped: completed()
        case .cancelled: throw Self.cancelled
        case .failed: throw report.error ?? GraphError(.runFailed, at: "AssetExportSession", "the export failed and did not say why")
        }
    }

    /// Records `error` as how the export ended (cancelled when it is a cancel or one was asked,
    /// else failed with it) and gives what ``export()`` throws: `cancelled` once one was asked.
    func ending(with error: GraphError) -> GraphError {
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

}
