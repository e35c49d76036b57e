import Dispatch
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes
import Synchronization

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
/// → `decode` → `sink.app` started at the time (``GraphRun/start(at:)``). With the default
/// tolerance before the time (infinite) the picture is the keyframe at or before the time, the
/// cheapest to decode; with a tolerance shorter than the distance to that keyframe, the first
/// frame after it within the tolerance; with `.zero`, the frame showing at exactly the time,
/// decoded from the keyframe before it. A picture is never later than the time.
/// Pictures are BGRA `SampleBuffer`s, rows packed (4 × width bytes), stamped with `actualTime`.
public final class AssetImageGenerator: Sendable {
    public let asset: Asset

    private struct Settings {
        var maximumSize = (width: 0, height: 0)
        var toleranceBefore = MediaTime.positiveInfinity
        var toleranceAfter = MediaTime.positiveInfinity
        var appliesPreferredTrackTransform = false
    }
    private let settings = Mutex(Settings())

    /// The runs under way, so that ``cancelAllImageGeneration()`` can end them, and how many
    /// cancels there have been: a request made before the last one is cancelled.
    private struct Runs {
        var cancels = 0
        var current: [ObjectIdentifier: GraphRun] = [:]
        /// Frames that reached the generator's output for the last picture (tests read it).
        var lastFramesDelivered = 0
    }
    private let runs = Mutex(Runs())
    /// Where pictures are made for async callers: off the Swift concurrency threads.
    private let worker = DispatchQueue(label: "graphkit.asset-image-generator")

    public init(asset: Asset) {
        self.asset = asset
    }

    /// The largest picture wanted: a frame larger is scaled down to fit within it, its aspect
    /// kept (never scaled up). 0 in a dimension leaves that dimension free; (0, 0), the default,
    /// gives frames at their size.
    public var maximumSize: (width: Int, height: Int) {
        get { settings.withLock { $0.maximumSize } }
        set { settings.withLock { $0.maximumSize = (max(0, newValue.width), max(0, newValue.height)) } }
    }

    /// How much earlier than the requested time the picture may be (default: infinite, so the
    /// keyframe at or before it). `.zero` (with ``requestedTimeToleranceAfter`` `.zero`, as
    /// AVFoundation's users write it) asks for the frame showing at exactly the time.
    public var requestedTimeToleranceBefore: MediaTime {
        get { settings.withLock { $0.toleranceBefore } }
        set { settings.withLock { $0.toleranceBefore = newValue < .zero ? .zero : newValue } }
    }

    /// How much later than the requested time the picture may be (default: infinite). Pictures
    /// are never later than the time: the keyframe before it, or the frame showing at it.
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

    /// The picture at `time` and the time of the frame it is. Blocks while it is decoded; call
    /// from a thread of your own (`await image(at:)` in a task). An exact picture (`.zero`
    /// tolerance) of a frame that began before the time is stamped from the time: the decoder
    /// cuts the frame to where the seek starts, as GStreamer clips frames to a segment.
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

    /// ``generate(at:cancels:box:)`` on the worker queue; cancelling the task cancels it.
    private func generateOffThread(at time: MediaTime, cancels: Int) async -> Result<(image: SampleBuffer, actualTime: MediaTime), GraphError> {
        let box = RunBox()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Result<(image: SampleBuffer, actualTime: MediaTime), GraphError>, Never>) in
                worker.async { [self] in
                    c.resume(returning: Result { () throws(GraphError) in try generate(at: time, cancels: cancels, box: box) })
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
    public func images(for times: [MediaTime]) -> AsyncStream<Element> {
        let cancels = runs.withLock { $0.cancels }
        var next = 0
        return AsyncStream(unfolding: { [self] () async -> Element? in
            guard next < times.count else { return nil }
            let time = times[next]
            next += 1
            return Element(requestedTime: time, result: await generateOffThread(at: time, cancels: cancels))
        })
    }

    /// Ends every picture being made (each throws `cancelled`), and every one asked for before
    /// this call and not yet started (the rest of an ``images(for:)``).
    public func cancelAllImageGeneration() {
        let current = runs.withLock { r in
            r.cancels += 1
            return Array(r.current.values)
        }
        for run in current { run.cancel() }
    }

    /// Frames that reached the generator's output while the last picture was made: a handful
    /// (what decoded while the file's header was read, and the picture), never the file up to the
    /// time.
    var lastFramesDelivered: Int { runs.withLock { $0.lastFramesDelivered } }

    // MARK: Making one picture

    private func generate(at time: MediaTime, cancels: Int, box: RunBox? = nil) throws(GraphError) -> (image: SampleBuffer, actualTime: MediaTime) {
        let s = settings.withLock { $0 }
        let at = "\"\(asset.path)\" at \(Self.seconds(time)) s"
        let track = try asset.track(withMediaType: .video)
        guard time.isFinite, time >= .zero else {
            throw GraphError(.usage, at: at, "a picture's time is a finite time from 0, not \(time)")
        }
        guard time < asset.duration else {
            throw GraphError(.usage, at: at, "\(Self.seconds(time)) s is past the end of \"\(asset.path)\", which lasts \(Self.seconds(asset.duration)) s")
        }
        // The picture is the first frame from the seek that is within the tolerance before the
        // time, or else the one showing at the time. No tolerance: an exact seek (the decoder
        // drops the frames before the time unconverted). Otherwise the keyframe at or before the
        // time, and, if that is earlier than the tolerance allows, the frames after it up to
        // the first that is not (a GOP at most).
        let earliest = s.toleranceBefore.isFinite ? time - s.toleranceBefore : nil
        let seek: GraphRun.Seek = s.toleranceBefore == .zero ? .exact(time) : .keyframe(atOrBefore: time)

        var b = GraphBuilder(name: "AssetImageGenerator", description: "a picture of \(asset.path)")
        let file = b.add("file", FileSourceNode.self) { $0[\.path] = asset.path }
        let decode = b.add("decode", DecodeNode.self) { p in
            p[\.pixelFormat] = .bgra
            p[\.autorotate] = s.appliesPreferredTrackTransform
        }
        // Two frames at most wait while the pipeline prerolls (a flushing seek drops them).
        let sink = b.add("out", AppSinkNode.self) { $0[\.maxBuffers] = 2 }
        b.connect(file.output(), to: decode.input())
        b.connect(decode.output("video"), to: sink.input())
        let run = try GraphRun(try b.build(registry: .builtIn))
        let registered = runs.withLock { r in
            guard r.cancels == cancels, box?.isCancelled != true else { return false }
            r.current[ObjectIdentifier(run)] = run
            return true
        }
        guard registered else { throw GraphError(.cancelled, at: at, "the picture was cancelled") }
        box?.set(run)
        defer {
            box?.set(nil)
            runs.withLock { _ = $0.current.removeValue(forKey: ObjectIdentifier(run)) }
        }
        let frame: SampleBuffer?
        do {
            try run.start(at: seek)
            frame = try Self.firstFrame(of: run.output("out"), from: earliest, showingAt: time)
        } catch {
            run.cancel()
            _ = run.wait()
            throw error.code == .cancelled ? GraphError(.cancelled, at: at, "the picture was cancelled") : error
        }
        run.cancel()  // the picture is here: nothing more is decoded
        let report = run.wait()
        runs.withLock { $0.lastFramesDelivered = report.nodes.first { $0.id == "out" }?.buffersIn ?? 0 }
        guard let frame, let actual = frame.presentationTime else {
            if report.status == .cancelled || runs.withLock({ $0.cancels }) != cancels || box?.isCancelled == true {
                throw GraphError(.cancelled, at: at, "the picture was cancelled")
            }
            if let error = report.error, report.status == .failed { throw error }
            throw GraphError(.inputUnreadable, at: at, "\(track) of \"\(asset.path)\" has no frame at \(Self.seconds(time)) s")
        }
        return (try Self.packed(frame, fittingIn: s.maximumSize, at: actual), actual)
    }

    /// The first frame `output` gives that starts at or after `earliest` (nil: any) or is still
    /// showing at `time` (a decoder may give the frame that ends at the time first). Nil when
    /// the run ends first.
    private static func firstFrame(of output: MediaOutput, from earliest: MediaTime?, showingAt time: MediaTime) -> SampleBuffer? {
        while let frame = output.copyNextSampleBuffer() {
            guard let earliest, let pts = frame.presentationTime else { return frame }
            if pts >= earliest { return frame }
            if let duration = frame.duration, pts + duration > time { return frame }
        }
        return nil
    }

    /// `frame` as a BGRA picture with packed rows, scaled down to fit within `size` (each
    /// destination pixel the mean of the source pixels it covers: no aliasing when a large
    /// frame becomes a small thumbnail).
    static func packed(_ frame: SampleBuffer, fittingIn size: (width: Int, height: Int), at time: MediaTime) throws(GraphError) -> SampleBuffer {
        guard case .rawVideo(let v)? = frame.format, v.pixelFormat == .bgra else {
            throw GraphError(.runFailed, "the decoder gave \(frame.format?.description ?? "no format") where BGRA frames were asked for")
        }
        let (w, h) = fitted(width: v.width, height: v.height, within: size)
        let out = MediaFormat.VideoFormat(pixelFormat: .bgra, width: w, height: h, frameRate: v.frameRate)
        var source = frame
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        try source.withMutablePixelPlanes { (planes) throws(GraphError) in
            let plane = planes[0]
            let src = UnsafeRawPointer(plane.baseAddress).assumingMemoryBound(to: UInt8.self)
            pixels.withUnsafeMutableBufferPointer { dst in
                for y in 0..<h {
                    let y0 = y * v.height / h, y1 = max(y0 + 1, (y + 1) * v.height / h)
                    for x in 0..<w {
                        let x0 = x * v.width / w, x1 = max(x0 + 1, (x + 1) * v.width / w)
                        var sum: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
                        for sy in y0..<y1 {
                            var p = src + sy * plane.bytesPerRow + x0 * 4
                            for _ in x0..<x1 {
                                sum.0 += UInt32(p[0]); sum.1 += UInt32(p[1]); sum.2 += UInt32(p[2]); sum.3 += UInt32(p[3])
                                p += 4
                            }
                        }
                        let n = UInt32((y1 - y0) * (x1 - x0)), half = n / 2, d = (y * w + x) * 4
                        dst[d] = UInt8((sum.0 + half) / n)
                        dst[d + 1] = UInt8((sum.1 + half) / n)
                        dst[d + 2] = UInt8((sum.2 + half) / n)
                        dst[d + 3] = UInt8((sum.3 + half) / n)
                    }
                }
            }
        }
        return SampleBuffer(format: .rawVideo(out), bytes: pixels, presentationTime: time, duration: frame.duration)
    }

    /// A `width` × `height` picture scaled down to fit within `size` (0: no limit in that
    /// dimension), its aspect kept, at least one pixel each way.
    static func fitted(width: Int, height: Int, within size: (width: Int, height: Int)) -> (width: Int, height: Int) {
        var scale = 1.0
        if size.width > 0 { scale = min(scale, Double(size.width) / Double(width)) }
        if size.height > 0 { scale = min(scale, Double(size.height) / Double(height)) }
        guard scale < 1 else { return (width, height) }
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    static func seconds(_ t: MediaTime) -> String {
        guard t.isFinite else { return t < .zero ? "-infinity" : "infinity" }
        let ms = Int((t.seconds * 1000).rounded())
        let fraction = String(abs(ms % 1000))
        return "\(ms / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

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
        let file = OutputFile(path: path, location: path, node: "AssetImageGenerator")
        try file.prepare()
        do {
            try encodePNG(image) { (chunk) throws(GraphError) in try file.write(chunk) }
            try file.commit()
        } catch {
            file.discard()
            throw error
        }
    }

    private static func encodePNG(_ image: SampleBuffer, _ flush: ([UInt8]) throws(GraphError) -> Void) throws(GraphError) {
        guard case .rawVideo(let v)? = image.format, v.pixelFormat == .bgra, v.width > 0, v.height > 0 else {
            throw GraphError(.usage, "a PNG is written from a BGRA picture, not \(image.format?.description ?? "a buffer with no format")")
        }
        var image = image
        let png = PNGEncoder(rgbaWidth: v.width, height: v.height)
        try png.start(flush)
        try image.withMutablePixelPlanes { (planes) throws(GraphError) in
            let plane = planes[0]
            for y in 0..<v.height {
                let src = UnsafeRawPointer(plane.baseAddress + y * plane.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                try png.appendRow({ row in
                    for x in 0..<v.width {
                        row[x * 4] = src[x * 4 + 2]
                        row[x * 4 + 1] = src[x * 4 + 1]
                        row[x * 4 + 2] = src[x * 4]
                        row[x * 4 + 3] = src[x * 4 + 3]
                    }
                }, flush)
            }
        }
        try png.finish(flush)
    }
}

/// The run making one picture for an async caller, so that cancelling the task cancels it.
private final class RunBox: Sendable {
    private let state = Mutex<(run: GraphRun?, cancelled: Bool)>((nil, false))

    func set(_ run: GraphRun?) {
        let cancel = state.withLock { s in
            s.run = run
            return s.cancelled
        }
        if cancel { run?.cancel() }
    }

    func cancel() {
        let run = state.withLock { s in
            s.cancelled = true
            return s.run
        }
        run?.cancel()
    }

    var isCancelled: Bool { state.withLock { $0.cancelled } }
}
