import Dispatch
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// Pictures of a video at given times, like `AVAssetImageGenerator`: thumbnails, a poster
/// frame, the frames of a contact sheet.
///
/// ```swift
/// let generator = AssetImageGenerator(asset: try Asset(path: "talk.mp4"))
/// generator.maximumSize = (width: 320, height: 320)
/// generator.appliesPreferredTrackTransform = true
/// let (image, actualTime) = try generator.image(at: MediaTime(seconds: 60))
/// try AssetImageGenerator.writePNG(image, to: "poster.png")
/// ```
///
/// Each picture is found by seeking, never by decoding the file up to it: a graph `source.file`
/// → `decode` → `sink.app` started at the time (``GraphRun/start(at:)``). The picture is within
/// the tolerances, [time − ``requestedTimeToleranceBefore``, time +
/// ``requestedTimeToleranceAfter``], as AVFoundation's: the keyframe nearest the time within
/// them (by default, both infinite, the nearest keyframe, before or after the time: the
/// cheapest pictures to decode); when no keyframe is within them, the first frame within them
/// after the keyframe before the time; with both `.zero`, the frame showing at exactly the
/// time, decoded from the keyframe before it.
/// Pictures are BGRA `SampleBuffer`s, rows packed (4 × width bytes), stamped with `actualTime`.
public final class AssetImageGenerator: Sendable {
    public let asset: Asset

    private struct Settings {
        var maximumSize = (width: 0, height: 0)
        var toleranceBefore = MediaTime.positiveInfinity
        var toleranceAfter = MediaTime.positiveInfinity
        var appliesPreferredTrackTransform = false
    }
    private let settings = Guarded(Settings())

    /// The pictures under way, so that ``cancelAllImageGeneration()`` can end them, and how many
    /// cancels there have been: a request made before the last one is cancelled.
    private struct Runs {
        var cancels = 0
        var current: [ObjectIdentifier: ThumbnailSession] = [:]
        /// Frames that reached the generator's output for the last picture (tests read it).
        var lastFramesDelivered = 0
        /// Pipelines made for pictures so far (tests read it).
        var pipelines = 0
    }
    private let runs = Guarded(Runs())
    /// Where pictures are made for async callers: off the Swift concurrency threads.
    private let worker = DispatchQueue(label: "graphkit.asset-image-generator")

    public init(asset: Asset) {
        self.asset = asset
    }

    /// Whether the asset's video is HDR (HLG or PQ): its pictures are then tone-mapped to SDR
    /// (`effect.toneMap`), as AVFoundation's generator gives SDR images of HDR video.
    private var showsHDRAsSDR: Bool { asset.tracks(withMediaType: .video).first?.stream.color?.hdr != nil }

    /// The largest picture wanted: a frame larger is scaled down to fit within it, its aspect
    /// kept (never scaled up). 0 in a dimension leaves that dimension free; (0, 0), the default,
    /// gives frames at their size.
    public var maximumSize: (width: Int, height: Int) {
        get { settings.withLock { $0.maximumSize } }
        set { settings.withLock { $0.maximumSize = (max(0, newValue.width), max(0, newValue.height)) } }
    }

    /// How much earlier than the requested time the picture may be (default: infinite). `.zero`
    /// with ``requestedTimeToleranceAfter`` `.zero` asks for the frame showing at exactly the
    /// time.
    public var requestedTimeToleranceBefore: MediaTime {
        get { settings.withLock { $0.toleranceBefore } }
        set { settings.withLock { $0.toleranceBefore = newValue < .zero ? .zero : newValue } }
    }

    /// How much later than the requested time the picture may be (default: infinite): a
    /// keyframe after the time within it is taken when it is nearer than the one before (a
    /// keyframe a frame after the time rather than one a second before). `.zero`: never later
    /// than the time.
    public var requestedTimeToleranceAfter: MediaTime {
        get { settings.withLock { $0.toleranceAfter } }
        set { settings.withLock { $0.toleranceAfter = newValue < .zero ? .zero : newValue } }
    }

    /// Whether pictures are turned as the track says it is shown (its `preferredTransform`: a
    /// phone's portrait video comes out upright). Off by default: frames as stored, as
    /// AVFoundation's default.
    public var appliesPreferredTrackTransform: Bool {
        get { settings.withLock { $0.appliesPreferredTrackTransform } }
        set { settings.withLock { $0.appliesPreferredTrackTransform = newValue } }
    }

    // MARK: Pictures

    /// The picture at `time` and the time of the frame it is: that frame's own presentation
    /// time, as AVFoundation's `actualTime`. Blocks while it is decoded; call from a thread of
    /// your own (`await image(at:)` in a task). An exact picture (`.zero` tolerances) is the
    /// frame showing at the time, which may have begun before it (at 2.13 s in 25 fps video, the
    /// frame from 2.12 s to 2.16 s, stamped 2.12 s).
    ///
    /// Throws `usage` (64) for a time before 0 or at or past the end of the file, or a file with
    /// no video track, naming the file and the time; `cancelled` (130) when
    /// ``cancelAllImageGeneration()`` is called meanwhile; the decode's error when the file
    /// cannot be read there.
    @available(*, noasync, message: "blocks the thread; use await image(at:)")
    public func image(at time: MediaTime) throws(GraphError) -> (image: SampleBuffer, actualTime: MediaTime) {
        try generate(at: time, cancels: runs.withLock { $0.cancels })
    }

    /// The picture at `time`, decoded off the Swift concurrency threads. Cancelling the task
    /// cancels the decode (`cancelled`).
    public func image(at time: MediaTime) async throws(GraphError) -> (image: SampleBuffer, actualTime: MediaTime) {
        try await generateOffThread(at: time, cancels: runs.withLock { $0.cancels }).get()
    }

    /// ``generate(at:cancels:box:in:)`` on the worker queue; cancelling the task cancels it.
    private func generateOffThread(at time: MediaTime, cancels: Int, in session: ThumbnailSession? = nil) async -> Result<(image: SampleBuffer, actualTime: MediaTime), GraphError> {
        let box = RunBox()
        return await withTaskCancellationHandler {
            await withHandOff { (c: HandOff<Result<(image: SampleBuffer, actualTime: MediaTime), GraphError>, Never>) in
                worker.async { [self] in
                    c.resume(returning: Result { () throws(GraphError) in try generate(at: time, cancels: cancels, box: box, in: session) })
                }
            }
        } onCancel: {
            box.cancel()
        }
    }

    /// One result of ``images(for:)``: the time asked for, and the picture or why there is none.
    public struct Element: Sendable {
        public let requestedTime: MediaTime
        public let result: Result<(image: SampleBuffer, actualTime: MediaTime), GraphError>

        public var image: SampleBuffer { get throws(GraphError) { try result.get().image } }
        public var actualTime: MediaTime { get throws(GraphError) { try result.get().actualTime } }
    }

    /// The pictures at `times`, one ``Element`` a time in the order given, each made when the
    /// loop asks for it: a time that fails (past the end) gives its error and the next goes on.
    /// Cancelling the task that iterates, or ``cancelAllImageGeneration()``, makes the rest
    /// `cancelled`.
    ///
    /// The pictures come from one ``ThumbnailSession`` of the file: one pipeline, sought from
    /// picture to picture.
    public func images(for times: [MediaTime]) -> AsyncStream<Element> {
        let cancels = runs.withLock { $0.cancels }
        let session = ThumbnailSession(path: asset.path, autorotate: appliesPreferredTrackTransform, toneMapsHDR: showsHDRAsSDR)
        let cursor = StreamCursor()
        return AsyncStream(unfolding: { [self] () async -> Element? in
            guard let next = cursor.take(below: times.count) else {
                session.close()
                return nil
            }
            let time = times[next]
            return Element(requestedTime: time, result: await generateOffThread(at: time, cancels: cancels, in: session))
        }, onCancel: { session.cancel() })
    }

    /// Which of its times an ``images(for:)`` stream gives next. AsyncStream calls its closure
    /// once at a time, but the closure is `@Sendable`, so the count is behind a lock the
    /// compiler can see rather than in a captured `var`.
    private final class StreamCursor: Sendable {
        private let next = Guarded(0)
        /// The next index below `count`, counted as taken; nil once all are.
        func take(below count: Int) -> Int? {
            next.withLock { n in
                guard n < count else { return nil }
                defer { n += 1 }
                return n
            }
        }
    }

    /// Ends every picture being made (each throws `cancelled`), and every one asked for before
    /// this call and not yet started (the rest of an ``images(for:)``).
    public func cancelAllImageGeneration() {
        let current = runs.withLock { r in
            r.cancels += 1
            return Array(r.current.values)
        }
        for session in current { session.cancel() }
    }

    /// Frames that reached the generator's output while the last picture was made: a handful
    /// (what decoded while the file's header was read, and the picture), never the file up to the
    /// time.
    var lastFramesDelivered: Int { runs.withLock { $0.lastFramesDelivered } }

    /// Pipelines made for pictures so far: one a picture of its own, one for all of an
    /// ``images(for:)``.
    var pipelinesMade: Int { runs.withLock { $0.pipelines } }

    // MARK: Making one picture

    /// One picture, from `given` (the session of an ``images(for:)``) when its settings are the
    /// generator's, else from a session of its own.
    private func generate(at time: MediaTime, cancels: Int, box: RunBox? = nil,
                          in given: ThumbnailSession? = nil) throws(GraphError) -> (image: SampleBuffer, actualTime: MediaTime) {
        let s = settings.withLock { $0 }
        let at = "\"\(asset.path)\" at \(Self.seconds(time)) s"
        _ = try asset.track(withMediaType: .video)  // a file with no video is refused here
        guard time.isFinite, time >= .zero else {
            throw GraphError(.usage, at: at, "a picture's time is a finite time from 0, not \(time)")
        }
        guard time < asset.duration else {
            throw GraphError(.usage, at: at, "\(Self.seconds(time)) s is past the end of \"\(asset.path)\", which lasts \(Self.seconds(asset.duration)) s")
        }
        // The picture is the keyframe nearest the time within the tolerances, or the first frame
        // within them after the keyframe before (ThumbnailSession.frame(at:toleranceBefore:toleranceAfter:)).
        let session = given.flatMap { $0.autorotate == s.appliesPreferredTrackTransform ? $0 : nil }
            ?? ThumbnailSession(path: asset.path, autorotate: s.appliesPreferredTrackTransform, toneMapsHDR: showsHDRAsSDR)
        let cancelled = GraphError(.cancelled, at: at, "the picture was cancelled")
        let registered = runs.withLock { r in
            guard r.cancels == cancels, box?.isCancelled != true else { return false }
            r.current[ObjectIdentifier(session)] = session
            return true
        }
        guard registered else { throw cancelled }
        box?.set(session)
        defer {
            box?.set(nil)
            runs.withLock { _ = $0.current.removeValue(forKey: ObjectIdentifier(session)) }
        }
        let (delivered, made) = (session.framesDelivered, session.pipelines)
        defer { runs.withLock { $0.pipelines += session.pipelines - made } }
        let frame: SampleBuffer
        do throws(GraphError) {
            frame = try session.frame(at: time, toleranceBefore: s.toleranceBefore, toleranceAfter: s.toleranceAfter)
        } catch {
            if error.code == .cancelled || runs.withLock({ $0.cancels }) != cancels || box?.isCancelled == true { throw cancelled }
            throw error
        }
        if session !== given { session.close() }  // a picture of its own: nothing more is decoded
        runs.withLock { $0.lastFramesDelivered = session.framesDelivered - delivered }
        let actual = frame.presentationTime ?? time
        return (try ThumbnailPicker.packed(frame, fittingIn: s.maximumSize, at: actual), actual)
    }

    static func seconds(_ t: MediaTime) -> String { ThumbnailPicker.seconds(t) }

    // MARK: PNG

    /// A BGRA picture (what ``image(at:)`` gives) as PNG bytes (8-bit RGBA).
    public static func pngData(_ image: SampleBuffer) throws(GraphError) -> [UInt8] {
        var bytes: [UInt8] = []
        try encodePNG(image) { bytes += $0 }
        return bytes
    }

    /// Writes a BGRA picture as a PNG file at `path`, by the engine's rule for outputs (a
    /// temporary file beside it, renamed when complete: nothing half-written under the name).
    /// Throws `outputUnwritable` (73) naming the path.
    public static func writePNG(_ image: SampleBuffer, to path: String) throws(GraphError) {
        try write(to: path) { (flush) throws(GraphError) in try encodePNG(image, flush) }
    }

    private static func encodePNG(_ image: SampleBuffer, _ flush: ([UInt8]) throws(GraphError) -> Void) throws(GraphError) {
        try ThumbnailPicker.encode(image, as: .png, flush)
    }

    // MARK: JPEG

    /// A BGRA picture (what ``image(at:)`` gives) as JPEG bytes (baseline, 4:4:4) of `quality`
    /// (1...100, as libjpeg's: 100 the least loss).
    public static func jpegData(_ image: SampleBuffer, quality: Int = 85) throws(GraphError) -> [UInt8] {
        var bytes: [UInt8] = []
        try ThumbnailPicker.encode(image, as: .jpeg, quality: quality) { bytes += $0 }
        return bytes
    }

    /// Writes a BGRA picture as a JPEG file at `path`, as ``writePNG(_:to:)`` writes a PNG.
    public static func writeJPEG(_ image: SampleBuffer, to path: String, quality: Int = 85) throws(GraphError) {
        try write(to: path) { (flush) throws(GraphError) in try ThumbnailPicker.encode(image, as: .jpeg, quality: quality, flush) }
    }

    /// `encode`'s bytes into a file at `path`, by the engine's rule for outputs.
    private static func write(to path: String, _ encode: (([UInt8]) throws(GraphError) -> Void) throws(GraphError) -> Void) throws(GraphError) {
        let file = OutputFile(path: path, location: path, node: "AssetImageGenerator")
        try file.prepare()
        do {
            try encode { (chunk) throws(GraphError) in try file.write(chunk) }
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }
}

/// The session making one picture for an async caller, so that cancelling the task cancels it.
private final class RunBox: Sendable {
    private let state = Guarded<(session: ThumbnailSession?, cancelled: Bool)>((nil, false))

    func set(_ session: ThumbnailSession?) {
        let cancel = state.withLock { s in
            s.session = session
            return s.cancelled
        }
        if cancel { session?.cancel() }
    }

    func cancel() {
        let session = state.withLock { s in
            s.cancelled = true
            return s.session
        }
        session?.cancel()
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }
}
