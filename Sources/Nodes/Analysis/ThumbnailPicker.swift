import GraphKitCore
import GraphKitRuntime
import Synchronization

/// One picture of a video file at a time, found by seeking: a graph `source.file` → `decode`
/// (BGRA) → `sink.app` started at the time (``GraphRun/start(at:)``), stopped as soon as the
/// picture is there. What `AssetImageGenerator` and the `analysis.thumbnails` node share.
///
/// Many pictures of one file are a ``ThumbnailSession``'s, which decides how many pipelines they
/// take.
package enum ThumbnailPicker {
    /// A run that gives the file's frames as BGRA at `out`, turned as shown when `autorotate`.
    package static func makeRun(path: String, autorotate: Bool) throws(GraphError) -> GraphRun {
        var b = GraphBuilder(name: "thumbnail", description: "a picture of \(path)")
        let file = b.add("file", FileSourceNode.self) { $0[\.path] = path }
        let decode = b.add("decode", DecodeNode.self) { p in
            p[\.pixelFormat] = .bgra
            p[\.autorotate] = autorotate
        }
        // Two frames at most wait while the pipeline prerolls (a flushing seek drops them).
        let sink = b.add("out", AppSinkNode.self) { $0[\.maxBuffers] = 2 }
        b.connect(file.output(), to: decode.input())
        b.connect(decode.output("video"), to: sink.input())
        return try GraphRun(try b.build(registry: .builtIn))
    }

    /// How to seek for a picture at `time` that may be `toleranceBefore` earlier: `.zero` an
    /// exact seek, anything else the keyframe at or before it (and then, if that is earlier than
    /// the tolerance allows, the frames after it up to the first that is not: a GOP at most).
    package static func seek(for time: MediaTime, toleranceBefore: MediaTime) -> (seek: GraphRun.Seek, earliest: MediaTime?) {
        (toleranceBefore == .zero ? .exact(time) : .keyframe(atOrBefore: time),
         toleranceBefore.isFinite ? time - toleranceBefore : nil)
    }

    /// The first frame `output` gives that starts at or after `earliest` (nil: any) or is still
    /// showing at `time` (a decoder may give the frame that ends at the time first). Nil when
    /// the run ends first.
    package static func firstFrame(of output: MediaOutput, from earliest: MediaTime?, showingAt time: MediaTime) -> SampleBuffer? {
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
    package static func packed(_ frame: SampleBuffer, fittingIn size: (width: Int, height: Int), at time: MediaTime) throws(GraphError) -> SampleBuffer {
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
    package static func fitted(width: Int, height: Int, within size: (width: Int, height: Int)) -> (width: Int, height: Int) {
        var scale = 1.0
        if size.width > 0 { scale = min(scale, Double(size.width) / Double(width)) }
        if size.height > 0 { scale = min(scale, Double(size.height) / Double(height)) }
        guard scale < 1 else { return (width, height) }
        return (max(1, Int((Double(width) * scale).rounded())), max(1, Int((Double(height) * scale).rounded())))
    }

    /// `t` in seconds with three decimals, for messages.
    package static func seconds(_ t: MediaTime) -> String {
        guard t.isFinite else { return t < .zero ? "-infinity" : "infinity" }
        let ms = Int((t.seconds * 1000).rounded())
        let fraction = String(abs(ms % 1000))
        return "\(ms / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }

    // MARK: Files

    /// A BGRA picture with packed rows (what ``packed(_:fittingIn:at:)`` gives) as the bytes of
    /// a PNG (8-bit RGBA) or a JPEG of `quality` (1...100).
    package static func encode(_ image: SampleBuffer, as format: ImageFileFormat, quality: Int = 85, _ flush: ([UInt8]) throws(GraphError) -> Void) throws(GraphError) {
        guard case .rawVideo(let v)? = image.format, v.pixelFormat == .bgra, v.width > 0, v.height > 0 else {
            throw GraphError(.usage, "an image file is written from a BGRA picture, not \(image.format?.description ?? "a buffer with no format")")
        }
        var image = image
        switch format {
        case .jpeg:
            let bytes = try image.withMutablePixelPlanes { planes in
                JPEGEncoder(quality: quality).encode(bgra: UnsafeRawPointer(planes[0].baseAddress), width: v.width, height: v.height,
                                                     bytesPerRow: planes[0].bytesPerRow)
            }
            try flush(bytes)
        case .png:
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
}

/// Pictures of one file, one time after another, for a caller that asks for many (the
/// thumbnails node): the frame at each time as the decoder gives it (BGRA, full size).
///
/// One pipeline for them all: the first picture starts it at its time (``GraphRun/start(at:)``),
/// each next one seeks it there (``GraphRun/seek(to:)``: a flushing seek, so nothing decoded for
/// the last time reaches the next picture), and ``close()`` ends it (BENCHMARKS.md, issue 31:
/// 0.77× the wall, 0.73× the CPU and 60-110 MB less RSS than a pipeline a picture). A picture
/// whose run failed ends the pipeline; the next one starts a new one.
package final class ThumbnailSession: Sendable {
    package let path: String
    package let autorotate: Bool
    private struct State {
        var run: GraphRun?
        var cancelled = false
        var pipelines = 0
        var framesDelivered = 0
    }
    private let state = Mutex(State())

    package init(path: String, autorotate: Bool) {
        self.path = path
        self.autorotate = autorotate
    }

    deinit { close() }

    /// Pipelines made so far, and decoded frames that reached the output of those closed (every
    /// picture's decoding from its keyframe, and what was in flight): what tests count.
    package var pipelines: Int { state.withLock { $0.pipelines } }
    package var framesDelivered: Int { state.withLock { $0.framesDelivered } }
    /// Whether ``cancel()`` was called: every picture asked for since throws `cancelled`.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// The frame for `time` that may be `toleranceBefore` earlier (see
    /// ``ThumbnailPicker/seek(for:toleranceBefore:)``). Blocks while it is decoded. Throws
    /// `cancelled` once ``cancel()`` is called, `inputUnreadable` when the file has no frame
    /// there, or the run's error.
    package func frame(at time: MediaTime, toleranceBefore: MediaTime) throws(GraphError) -> SampleBuffer {
        let (seek, earliest) = ThumbnailPicker.seek(for: time, toleranceBefore: toleranceBefore)
        let cancelled = GraphError(.cancelled, at: path, "the picture was cancelled")
        do throws(GraphError) {
            let current: GraphRun
            if let running = state.withLock({ $0.run }) {
                current = running
                try current.seek(to: seek)
            } else {
                let made = try ThumbnailPicker.makeRun(path: path, autorotate: autorotate)
                let taken = state.withLock { s in
                    guard !s.cancelled else { return false }
                    s.run = made
                    s.pipelines += 1
                    return true
                }
                guard taken else { throw cancelled }
                current = made
                try current.start(at: seek)
            }
            let frame = ThumbnailPicker.firstFrame(of: try current.output("out"), from: earliest, showingAt: time)
            guard let frame else {
                if let error = close() { throw error }
                throw isCancelled ? cancelled : GraphError(.inputUnreadable, at: path, "\"\(path)\" has no frame at \(ThumbnailPicker.seconds(time)) s")
            }
            return frame  // the pipeline stays, for the next picture to seek
        } catch {
            close()
            throw error.code == .cancelled || isCancelled ? cancelled : error
        }
    }

    /// Ends the picture being made (it throws `cancelled`) and every one asked for after. From
    /// any thread.
    package func cancel() {
        let run = state.withLock { s in
            s.cancelled = true
            return s.run
        }
        run?.cancel()
    }

    /// Ends the pipeline; the error it failed with, if it did.
    @discardableResult
    package func close() -> GraphError? {
        guard let run = state.withLock({ s in defer { s.run = nil }; return s.run }) else { return nil }
        run.cancel()
        let report = run.wait()
        state.withLock { $0.framesDelivered += report.nodes.first { $0.id == "out" }?.buffersIn ?? 0 }
        return report.status == .failed ? report.error : nil
    }
}

/// The image files thumbnails are written as.
public enum ImageFileFormat: String, ParameterEnum, Sendable {
    case png, jpeg

    public var fileExtension: String { self == .png ? "png" : "jpg" }
}
