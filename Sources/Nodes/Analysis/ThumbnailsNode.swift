import GraphKitCore
import GraphKitRuntime

/// `analysis.thumbnails`: evenly spaced pictures of a video file, as image files, a sprite sheet
/// (one grid picture of them) and its WebVTT index (`sprite.jpg#xywh=x,y,w,h` per cue), which web
/// video players show while scrubbing.
///
/// Every picture is found by seeking (`ThumbnailPicker`), never by decoding the file up to it:
/// the keyframe at or before each time by default, the exact frame with `exact`. Picture `i` of
/// `count` is at `i × duration / count` (or every `interval` seconds from 0), and its cue lasts
/// until the next picture's time, the last until the end: the cues cover the whole file.
///
/// The node reads its file itself, so a graph of this node alone is the whole job; its
/// optional output gives the pictures as BGRA frames (one a second) to any video node, for
/// example to encode them. The file is checked while the run is built (a file that is not a
/// video fails before anything is written); the pictures are taken while the run plays, on a
/// thread of the node's own that feeds its output (`PushedSource`), so a stop or a cancel
/// (SIGINT) ends the work at once: the picture under way is abandoned. The files are written
/// complete first (the pictures into a staging folder, `OutputFileGroup`; the sprite sheet and
/// index under temporary names, `OutputFile`) and renamed into place together when the run
/// ends: when it completes, all of them; when it is stopped, the pictures taken so far, the
/// sprite sheet of those and an index whose last cue ends where the next picture would have
/// been; when it is cancelled or fails (a full disk, an encoder error), none, and an earlier
/// run's files stay as they were. Every file goes through the outputs' check: a picture named
/// like the file read is refused (65).
///
/// Example:
/// ```json
/// "thumbs": { "type": "analysis.thumbnails", "params": { "path": "in.mp4", "count": 10, "width": 160, "columns": 5, "format": "jpeg", "sprite": "out/sprite.jpg", "vtt": "out/sprite.vtt" } }
/// ```
public final class ThumbnailsNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "analysis.thumbnails",
        category: .analysis,
        summary: "Evenly spaced pictures of a video file, found by seeking: image files, a sprite sheet and its WebVTT index",
        outputs: [PortDescriptor("out", .rawVideo([.bgra]), presence: .optional,
                                 help: "the pictures as BGRA frames, one a second, width wide (height by the video's aspect)")],
        parameters: [path, count, interval, at, sceneThreshold, width, columns, format, quality, exact, autorotate, folder, sprite, vtt, spriteURL],
        rules: [.exclusive(count, interval),
                .when(.given(vtt), require: .given(sprite), because: "the index points into the sprite sheet"),
                .when(.given(spriteURL), require: .given(vtt), because: "spriteURL is what the index calls the sprite sheet")],
        writtenFilesInFolders: { p, _ in
            // The pictures, when their number is known from the parameters (count, or its
            // default); with interval it is known once the file is read (``prepare()``).
            guard let folder = p[folder], p[interval] == nil else { return [] }
            return pictureNames(count: p[count] ?? 10, format: p[format]).map { WrittenFile(parameter: "folder", path: WrittenFile.path($0, in: folder)) }
        },
        example: #"{ "type": "analysis.thumbnails", "params": { "path": "in.mp4", "count": 10, "width": 160, "columns": 5, "sprite": "out/sprite.jpg", "vtt": "out/sprite.vtt" } }"#
    )

    /// The pictures' file names: thumb-0001.jpg, thumb-0002.jpg… (more digits past 9999).
    static func pictureNames(count: Int, format: ImageFileFormat) -> [String] {
        let digits = max(4, String(count).count)
        return (0..<count).map { i in
            let number = String(i + 1)
            return "thumb-" + String(repeating: "0", count: digits - number.count) + number + "." + format.fileExtension
        }
    }

    public static let path = RequiredParameter<String>("path", format: .path, help: "the video file, relative to the current folder")
    public static let count = OptionalParameter<Int>("count", 1...10_000, help: "how many pictures, evenly spaced over the file (default 10)")
    public static let interval = OptionalParameter<Double>("interval", 0.04...86_400, help: "seconds between pictures, from 0, instead of count")
    public enum Placement: String, ParameterEnum { case even, scenes }
    public static let at = Parameter<Placement>("at", default: .even,
                                                help: "even: evenly spaced (count) or every interval; scenes: the file's start and its strongest scene cuts (count pictures in all; evenly spaced where there are fewer cuts), each picture the first frame of its scene")
    public static let sceneThreshold = Parameter<Double>("sceneThreshold", 0...100, default: 10,
                                                         help: "at scenes: the score (0 to 100, as analysis.scenes and ffmpeg scdet) a frame needs to start a scene")
    public static let width = Parameter<Int>("width", 16...3840, default: 160,
                                             help: "picture width in pixels (height by the video's aspect; never scaled up)")
    public static let columns = Parameter<Int>("columns", 1...100, default: 5, help: "pictures per row of the sprite sheet")
    public static let format = Parameter<ImageFileFormat>("format", default: .jpeg, help: "the image files' format (the sprite sheet's too)")
    public static let quality = Parameter<Int>("quality", 1...100, default: 85, help: "JPEG quality: 100 is the least loss")
    public static let exact = Parameter<Bool>("exact", default: false,
                                              help: "the frame showing at each time (decoded from the keyframe before it) rather than that keyframe")
    public static let autorotate = Parameter<Bool>("autorotate", default: true, help: "turn pictures as the video says it is shown (a phone's portrait video)")
    public static let folder = OptionalParameter<String>("folder", format: .path,
                                                         help: "write each picture here as thumb-0001.jpg, thumb-0002.jpg… (png with format png)")
    public static let sprite = OptionalParameter<String>("sprite", format: .path, writesFile: true, help: "write the sprite sheet (the pictures in a grid) here")
    public static let vtt = OptionalParameter<String>("vtt", format: .path, writesFile: true, help: "write the sprite sheet's WebVTT index here")
    public static let spriteURL = OptionalParameter<String>("spriteURL",
                                                            help: "the sprite sheet's URL in the index (default: its file name, beside the index)")

    let context: NodeContext
    let path: String
    /// When the pictures are, once built; the pictures, as they are taken; the files, once
    /// prepared; the source the pictures are taken for and the session taking them.
    private struct State {
        var times: [MediaTime] = []
        var duration = MediaTime.zero
        var pictures: [SampleBuffer] = []
        var files: [(kind: Kind, file: OutputFile)] = []
        var status: [Int: OutputReport.Status] = [:]
        var framesDelivered = 0
        var pipelines = 0
        var source: PushedSource?
        var session: ThumbnailSession?
        /// The video is HLG or PQ: pictures are tone-mapped to SDR.
        var hdr = false
        /// With `at` `scenes`: the pass that finds the cuts, while it runs.
        var scan: SceneScan?
        /// The run is over: take no more pictures.
        var stopping = false
    }
    private enum Kind { case picture(Int), sprite, vtt }
    private let state = Guarded(State())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        path = try context.parameters.value(Self.path)
        let p = context.parameters
        guard p[Self.folder] != nil || p[Self.sprite] != nil || context.connectedOutputs.contains("out") else {
            throw GraphError(.invalidGraph, at: context.location(), "analysis.thumbnails writes nothing: give folder, sprite (and vtt), or connect out",
                             node: context.id)
        }
        if p[Self.at] == .scenes, p[Self.interval] != nil {
            throw GraphError(.invalidGraph, at: context.location(parameter: "interval"),
                             "at \"scenes\" places count pictures at the scene cuts: give count, not interval", node: context.id)
        }
    }

    public var mediaDescription: String? { "thumbnails of \"\(path)\"" }

    /// A second of output a picture, once the times are planned (the progress line counts the
    /// pictures so).
    public var expectedDuration: MediaTime? {
        let count = state.withLock { $0.times.count }
        return count > 0 ? MediaTime(value: Int64(count), timescale: 1) : nil
    }

    /// Every picture taken so far, in time order: BGRA, packed rows.
    public var pictures: [(time: MediaTime, image: SampleBuffer)] {
        state.withLock { s in s.pictures.map { ($0.presentationTime ?? .zero, $0) } }
    }

    /// Decoded frames that reached the pictures' sink, all pictures together: a handful a picture
    /// (what decoded while prerolling, the picture, what was in flight), never the file.
    public var framesDelivered: Int { state.withLock { $0.framesDelivered } }

    /// Pipelines made to take the pictures: one, sought from picture to picture.
    public var pipelines: Int { state.withLock { $0.pipelines } }

    /// The times asked for, evenly spaced, and the file's duration.
    public var requestedTimes: (times: [MediaTime], duration: MediaTime) { state.withLock { ($0.times, $0.duration) } }

    // MARK: Taking the pictures

    /// Checks the file and plans the times; the pictures are taken once the run plays.
    public func build(in bin: BinBuilder) throws(GraphError) {
        let (times, duration, hdr) = try plan()
        state.withLock { s in
            s.times = times
            s.duration = duration
            s.hdr = hdr
        }
        let source = try bin.makePushedSource { [weak self] source in self?.takePictures(for: source) }
        state.withLock { $0.source = source }
        try bin.expose(output: "out", source.element)
    }

    /// The times, evenly spaced over the file, its duration, and whether its video is HDR (HLG or
    /// PQ); throws, naming the file, for one that is not a video or does not say how long it is.
    private func plan() throws(GraphError) -> ([MediaTime], MediaTime, Bool) {
        let p = context.parameters
        let at = context.location(parameter: "path")
        let info: MediaFileInfo
        do throws(GraphError) {
            info = try MediaFileInfo(path: path)
        } catch {
            throw GraphError(error.code, at: at, error.message, node: context.id, cause: error.cause)
        }
        guard info.streams.contains(where: { $0.kind == .video }) else {
            if let why = info.videoLeftOut {
                throw GraphError(.inputUnreadable, at: at, "\"\(path)\" \(why)", node: context.id)
            }
            let kinds = info.streams.map(\.kind.rawValue)
            throw GraphError(.inputUnreadable, at: at, "\"\(path)\" has no video track (it holds \(kinds.isEmpty ? "no streams" : kinds.joined(separator: ", "))): "
                             + "thumbnails are pictures of a video", node: context.id)
        }
        guard info.duration > .zero else {
            throw GraphError(.inputUnreadable, at: at, "\"\(path)\" does not say how long it is: evenly spaced pictures need its duration", node: context.id)
        }
        let times = Self.times(duration: info.duration, count: p[Self.count], interval: p[Self.interval])
        guard times.count <= Self.maximumCount else {
            throw GraphError(.invalidGraph, at: context.location(parameter: "interval"),
                             "an interval of \(p[Self.interval] ?? 0) s makes more than \(Self.maximumCount) pictures of \(ThumbnailPicker.seconds(info.duration)) s", node: context.id)
        }
        return (times, info.duration, info.streams.first { $0.kind == .video }?.color?.hdr != nil)
    }

    /// Takes the picture at each time, on the source's thread, and gives each on the output as
    /// a frame of a second; ends the output after the last. Returns early when the run ends
    /// (``finish(_:)`` cancels the picture under way, a push finds the output flushing) and
    /// when a picture fails (the run fails with this node's error).
    private func takePictures(for source: PushedSource) {
        let p = context.parameters
        let at = context.location(parameter: "path")
        let session = ThumbnailSession(path: path, autorotate: p[Self.autorotate], toneMapsHDR: state.withLock { $0.hdr })
        let scan = p[Self.at] == .scenes ? SceneScan() : nil
        guard var times = state.withLock({ s -> [MediaTime]? in
            guard !s.stopping else { return nil }
            s.session = session
            s.scan = scan
            return s.times
        }) else { return }
        defer {
            session.close()
            state.withLock { $0.framesDelivered = session.framesDelivered; $0.pipelines = session.pipelines }
        }
        if let scan {
            // The pictures at the cuts, each the first frame of its scene (exactly: the key
            // frame before a cut is the scene before).
            do throws(GraphError) {
                let cuts = try scan.cuts(of: path, threshold: p[Self.sceneThreshold])
                times = state.withLock { s in
                    s.times = SceneScan.times(cuts: cuts, count: s.times.count, duration: s.duration)
                    return s.times
                }
            } catch {
                if error.code == .cancelled || state.withLock({ $0.stopping }) { return }
                source.fail(GraphError(error.code, at: at, "cannot find the scene cuts of \"\(path)\": \(error.message)", node: context.id, cause: error.cause))
                return
            }
        }
        let tolerance: MediaTime = p[Self.exact] || scan != nil ? .zero : .positiveInfinity
        for (n, time) in times.enumerated() {
            let picture: SampleBuffer
            do throws(GraphError) {
                let frame = try session.frame(at: time, toleranceBefore: tolerance)
                picture = try ThumbnailPicker.packed(frame, fittingIn: (p[Self.width], 0), at: frame.presentationTime ?? time)
            } catch {
                if error.code == .cancelled || state.withLock({ $0.stopping }) { return }
                source.fail(GraphError(error.code, at: at, "cannot take the picture of \"\(path)\" at \(ThumbnailPicker.seconds(time)) s: \(error.message)",
                                       node: context.id, cause: error.cause))
                return
            }
            guard state.withLock({ s in
                guard !s.stopping else { return false }
                s.pictures.append(picture)
                return true
            }) else { return }
            // On the output: a frame a second, from 0.
            guard case .rawVideo(let v)? = picture.format else { return }
            let frame = SampleBuffer(format: .rawVideo(.init(pixelFormat: .bgra, width: v.width, height: v.height, frameRate: FrameRate(1))),
                                     bytes: picture.bytes, presentationTime: MediaTime(value: Int64(n), timescale: 1),
                                     duration: MediaTime(value: 1, timescale: 1))
            guard source.push(frame) else { return }  // the run is ending
        }
        source.endOfStream()
    }

    /// The most pictures one node takes (count's limit, and interval's).
    static let maximumCount = 10_000

    /// `count` times (default 10) at i × duration / count, or every `interval` seconds from 0
    /// while before the end.
    static func times(duration: MediaTime, count: Int?, interval: Double?) -> [MediaTime] {
        if let interval {
            var times: [MediaTime] = []
            while times.count <= maximumCount {
                let t = MediaTime(seconds: Double(times.count) * interval)
                guard t < duration else { break }
                times.append(t)
            }
            return times
        }
        let n = count ?? 10
        let ns = duration.nanoseconds
        return (0..<n).map { MediaTime(nanoseconds: UInt64(Double(ns) * Double($0) / Double(n))) }
    }

    // MARK: Files

    public func prepare() throws(GraphError) {
        let p = context.parameters
        let count = state.withLock { $0.times.count }
        var files: [(kind: Kind, file: OutputFile)] = []
        if let folder = p[Self.folder] {
            let names = Self.pictureNames(count: count, format: p[Self.format])
            // Never a picture over the file read (with interval, the graph's check could not
            // know the names): 65, before anything is written.
            var roles = FileRoles()
            roles.reads(path, as: context.location(parameter: "path"))
            for name in names { roles.writes(WrittenFile.path(name, in: folder), as: context.location(parameter: "folder")) }
            try roles.check()
            for (i, name) in names.enumerated() {
                files.append((.picture(i), OutputFile(path: WrittenFile.path(name, in: folder), location: context.location(parameter: "folder"), node: context.id)))
            }
        }
        if let sprite = p[Self.sprite] {
            files.append((.sprite, OutputFile(path: sprite, location: context.location(parameter: "sprite"), node: context.id)))
        }
        if let vtt = p[Self.vtt] {
            files.append((.vtt, OutputFile(path: vtt, location: context.location(parameter: "vtt"), node: context.id)))
        }
        state.withLock { $0.files = files }
        for (i, (kind, file)) in files.enumerated() {
            try file.prepare()
            // A picture's file is checked now (its folder made, its name refused if something
            // else than a file is there) and made when it is written: 10,000 pictures held open
            // at once would be 20,000 descriptors, past what a process may hold.
            if case .picture = kind { file.discard() }
            state.withLock { $0.status[i] = .writing }
        }
    }

    public var outputs: [OutputReport] {
        state.withLock { s in s.files.enumerated().map { OutputReport(node: context.id, path: $1.file.path, status: s.status[$0] ?? .unknown) } }
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        // No more pictures: the one under way is abandoned, and the thread returns (a push it
        // waits in woke when the pipeline stopped).
        let (session, scan, source) = state.withLock { s in
            s.stopping = true
            return (s.session, s.scan, s.source)
        }
        scan?.cancel()
        session?.cancel()
        source?.join()
        let (files, pictures, times, duration) = state.withLock { ($0.files, $0.pictures, $0.times, $0.duration) }
        // A stopped run writes the pictures taken: the index's last cue ends where the next
        // picture would have been.
        let taken = min(pictures.count, times.count)
        let complete = outcome == .completed || (outcome == .stopped && taken > 0)
        let end = taken < times.count ? times[taken] : duration
        var sheet: SpriteSheet?
        if taken > 0, case .rawVideo(let v)? = pictures[0].format {
            sheet = SpriteSheet(count: taken, columns: context.parameters[Self.columns], tileWidth: v.width, tileHeight: v.height)
        }
        // Every file written complete first (the pictures into a staging folder, `OutputFileGroup`;
        // the sprite and index under their temporary names), then all renamed into place: a
        // failure on the way (a full disk, a signal) leaves none of them, and an earlier run's set
        // as it was.
        var firstError: GraphError?
        var written: [(kind: Kind, file: OutputFile)] = []
        let group = context.parameters[Self.folder].map { OutputFileGroup(folder: $0, location: context.location(parameter: "folder"), node: context.id) }
        if complete, let sheet {
            do throws(GraphError) {
                try group?.prepare(stem: "thumbnails")
                for (kind, file) in files {
                    if case .picture(let i) = kind {
                        guard i < taken else { continue }  // a picture the stop came before: not one of the files
                        var bytes: [UInt8] = []
                        try ThumbnailPicker.encode(pictures[i], as: context.parameters[Self.format], quality: context.parameters[Self.quality]) { bytes += $0 }
                        try group?.add(OutputFile.split(file.path).name, bytes)
                    } else {
                        try write(kind, to: file, pictures: Array(pictures.prefix(taken)), sheet: sheet, times: Array(times.prefix(taken)), end: end)
                    }
                }
                // Every name checked before the first rename, so that what is left to fail
                // between the pictures and the sprite sheet is a rename alone.
                try group?.checkCommit()
                for (kind, file) in files {
                    if case .picture = kind { continue }
                    try file.checkCommit()
                }
                try group?.commit()
                for (kind, file) in files {
                    if case .picture = kind { continue }
                    try file.commit()
                }
            } catch {
                firstError = error
            }
        }
        group?.discard()
        var statuses: [Int: OutputReport.Status] = [:]
        for (kind, file) in files {
            if case .picture(let i) = kind, i >= taken, complete { continue }
            let final: OutputReport.Status = outcome == .cancelled ? .cancelled : complete && sheet != nil && firstError == nil ? .completed : .failed
            file.discard()
            statuses[written.count] = final
            written.append((kind, file))
        }
        state.withLock { s in
            s.files = written
            s.status = statuses
        }
        if let firstError { throw firstError }
        if outcome == .stopped, taken == 0, !files.isEmpty {
            throw GraphError(.runFailed, at: context.location(), "the run was stopped before the first picture of \"\(path)\" was taken: nothing was written",
                             node: context.id)
        }
    }

    private func write(_ kind: Kind, to file: OutputFile, pictures: [SampleBuffer], sheet: SpriteSheet,
                       times: [MediaTime], end: MediaTime) throws(GraphError) {
        let p = context.parameters
        let write = { (bytes: [UInt8]) throws(GraphError) in try file.write(bytes) }
        switch kind {
        case .picture(let i):
            try ThumbnailPicker.encode(pictures[i], as: p[Self.format], quality: p[Self.quality], write)
        case .sprite:
            try ThumbnailPicker.encode(try sheet.compose(pictures), as: p[Self.format], quality: p[Self.quality], write)
        case .vtt:
            let url = p[Self.spriteURL] ?? OutputFile.split(p[Self.sprite] ?? "sprite").name
            try write(Array(WebVTTIndex.text(times: times, end: end, sheet: sheet, spriteURL: url).utf8))
        }
    }
}
