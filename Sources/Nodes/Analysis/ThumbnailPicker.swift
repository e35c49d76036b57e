import GraphKitCore
import GraphKitRuntime

/// One picture of a video file at a time, found by seeking: a graph `source.file` → `decode`
/// (BGRA) → `sink.app` started at the time (``GraphRun/start(at:)``), stopped as soon as the
/// picture is there. What `AssetImageGenerator` and the `analysis.thumbnails` node share.
///
/// Many pictures of one file are a ``ThumbnailSession``'s, which decides how many pipelines they
/// take.
package enum ThumbnailPicker {
    /// A run that gives the file's frames as BGRA at `out` in the file's colours (`decode`'s
    /// `exactColor`: its matrix, range and chroma siting), turned as shown when `autorotate`;
    /// tone-mapped to SDR when `toneMapsHDR` (an HLG or PQ file: a picture is SDR, as
    /// `AVAssetImageGenerator` gives it) by `decode` itself, from the decoder's full bit depth.
    package static func makeRun(path: String, autorotate: Bool, toneMapsHDR: Bool = false) throws(GraphError) -> GraphRun {
        var b = GraphBuilder(name: "thumbnail", description: "a picture of \(path)")
        let file = b.add("file", FileSourceNode.self) { $0[\.path] = path }
        let decode = b.add("decode", DecodeNode.self) { p in
            p[\.pixelFormat] = .bgra
            // The file's colours: chroma interpolated where the file sites it, not repeated.
            p[\.exactColor] = true
            p[\.autorotate] = autorotate
            p[\.toneMap] = toneMapsHDR
        }
        // Two frames at most wait while the pipeline prerolls (a flushing seek drops them).
        let sink = b.add("out", AppSinkNode.self) { $0[\.maxBuffers] = 2 }
        b.connect(file.output(), to: decode.input())
        b.connect(decode.output("video"), to: sink.input())
        return try GraphRun(try b.build(registry: .builtIn))
    }

    /// The first frame of the picture (or movie) at `path` as BGRA, as stored: a run of
    /// ``makeRun(path:autorotate:toneMapsHDR:)``'s graph, ended as soon as the frame is there.
    package static func firstFrame(of path: String) throws(GraphError) -> SampleBuffer {
        let run = try makeRun(path: path, autorotate: false)
        try run.start()
        let frame = try run.output("out").copyNextSampleBuffer()
        run.cancel()
        let report = run.wait()
        guard let frame else {
            if report.status == .failed, let error = report.error { throw error }
            throw GraphError(.inputUnreadable, at: path, "the decoder gave no picture")
        }
        return frame
    }

    /// Whether `frame` may be the picture for `time`: it starts at or after `earliest` (nil:
    /// any), or is still showing at `time` (a decoder may give the frame that ends at the time
    /// first).
    package static func accepts(_ frame: SampleBuffer, from earliest: MediaTime?, showingAt time: MediaTime) -> Bool {
        guard let earliest, let pts = frame.presentationTime else { return true }
        if pts >= earliest { return true }
        if let duration = frame.duration, pts + duration > time { return true }
        return false
    }

    /// The first frame `output` gives that ``accepts(_:from:showingAt:)`` takes. Nil when the
    /// run ends first.
    package static func firstFrame(of output: MediaOutput, from earliest: MediaTime?, showingAt time: MediaTime) -> SampleBuffer? {
        while let frame = output.copyNextSampleBuffer() {
            if accepts(frame, from: earliest, showingAt: time) { return frame }
        }
        return nil
    }

    /// `frame` with its own presentation time, when the decoder cut it to where an exact seek to
    /// `time` began (GstVideoDecoder clips a frame that began before the segment: stamped `time`,
    /// its duration shortened, its end kept): at 2.13 s in 25 fps video the frame showing is the
    /// one from 2.12 s to 2.16 s, which arrives stamped 2.13 s for 0.03 s and leaves stamped 2.12
    /// s for 0.04 s. Its start is its end less a frame at the stream's rate; a frame that is not
    /// cut (it starts at `time`, or lasts a whole frame), or a stream with no rate, is as it came.
    package static func unclipped(_ frame: SampleBuffer, seekingTo time: MediaTime) -> SampleBuffer {
        guard frame.presentationTime == time, let duration = frame.duration, case .rawVideo(let v)? = frame.format,
              v.frameRate.numerator > 0, v.frameRate.denominator > 0,
              let perFrame = UInt64(exactly: 1_000_000_000 * Int128(v.frameRate.denominator) / Int128(v.frameRate.numerator)), perFrame > 0 else {
            return frame
        }
        let whole = MediaTime(nanoseconds: perFrame)
        // A frame within a nanosecond of a whole one was not cut (the rate in whole nanoseconds).
        guard duration + MediaTime(nanoseconds: 1) < whole, time + duration - whole >= .zero else { return frame }
        var own = frame
        own.presentationTime = time + duration - whole
        own.duration = whole
        return own
    }

    /// `frame` as a BGRA picture with packed rows, scaled down to fit within `size`: each
    /// destination pixel the mean of the source area it covers, partly covered pixels weighted by
    /// how much of them it covers (no aliasing when a large frame becomes a small thumbnail, and
    /// no shift when the scale is not a whole number: 318 × 178 into 160 × 90 is 72 dB from
    /// ffmpeg's `area` scaler, where whole source pixels a destination pixel measured 25.7 dB).
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
                if (w, h) == (v.width, v.height) {
                    for y in 0..<h {
                        UnsafeMutableRawPointer(dst.baseAddress! + y * w * 4).copyMemory(from: src + y * plane.bytesPerRow, byteCount: w * 4)
                    }
                    return
                }
                let columns = coverage(of: v.width, by: w), rows = coverage(of: v.height, by: h)
                // Weights are in 1/w of a source column and 1/h of a source row: a destination
                // pixel's add up to width × height.
                let total = UInt64(v.width) * UInt64(v.height), half = total / 2
                var sums = [UInt64](repeating: 0, count: w * 4)
                for y in 0..<h {
                    for i in sums.indices { sums[i] = 0 }
                    for (k, wy) in rows[y].weights.enumerated() {
                        let line = src + (rows[y].first + k) * plane.bytesPerRow
                        for x in 0..<w {
                            var s: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
                            var p = line + columns[x].first * 4
                            for wx in columns[x].weights {
                                s.0 += wx * UInt64(p[0]); s.1 += wx * UInt64(p[1]); s.2 += wx * UInt64(p[2]); s.3 += wx * UInt64(p[3])
                                p += 4
                            }
                            sums[x * 4] += s.0 * wy; sums[x * 4 + 1] += s.1 * wy; sums[x * 4 + 2] += s.2 * wy; sums[x * 4 + 3] += s.3 * wy
                        }
                    }
                    for i in 0..<w * 4 { dst[y * w * 4 + i] = UInt8((sums[i] + half) / total) }
                }
            }
        }
        return SampleBuffer(format: .rawVideo(out), bytes: pixels, presentationTime: time, duration: frame.duration)
    }

    /// For each of `count` destination pixels along an axis of `size` source pixels (count ≤
    /// size), the first source pixel it covers and how much of it and of each next one, in
    /// 1/`count` of a source pixel: destination pixel o covers [o × size, (o + 1) × size).
    static func coverage(of size: Int, by count: Int) -> [(first: Int, weights: [UInt64])] {
        (0..<count).map { o in
            let a = o * size, b = (o + 1) * size
            let first = a / count, last = (b - 1) / count
            return (first, (first...last).map { i in UInt64(min(b, (i + 1) * count) - max(a, i * count)) })
        }
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
    /// Whether pictures are tone-mapped to SDR (the file is HLG or PQ).
    package let toneMapsHDR: Bool
    private struct State {
        var run: GraphRun?
        /// The last position was reached by seeking a run that was there already.
        var sought = false
        var cancelled = false
        var pipelines = 0
        var framesDelivered = 0
    }
    private let state = Guarded(State())

    package init(path: String, autorotate: Bool, toneMapsHDR: Bool = false) {
        self.path = path
        self.autorotate = autorotate
        self.toneMapsHDR = toneMapsHDR
    }

    deinit { close() }

    /// Pipelines made so far, and decoded frames that reached the output of those closed (every
    /// picture's decoding from its keyframe, and what was in flight): what tests count.
    package var pipelines: Int { state.withLock { $0.pipelines } }
    package var framesDelivered: Int { state.withLock { $0.framesDelivered } }
    /// Whether ``cancel()`` was called: every picture asked for since throws `cancelled`.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// The frame for `time` that may be `toleranceBefore` earlier or `toleranceAfter` later,
    /// as AVAssetImageGenerator chooses it: with both `.zero`, the frame showing at exactly the
    /// time (an accurate seek, decoded from the keyframe before it); otherwise the keyframe
    /// nearest the time within [time − before, time + after] (the keyframe at or before the
    /// time, and, when a tolerance after lets one be nearer, the keyframe at or after it: each
    /// found by a seek, a frame decoded; the one before wins a tie), and when neither keyframe is
    /// within it, the first frame after the keyframe before that is (a GOP decoded at most).
    /// Blocks while it is decoded. Throws `cancelled` once ``cancel()`` is called,
    /// `inputUnreadable` when the file has no frame there, or the run's error.
    package func frame(at time: MediaTime, toleranceBefore: MediaTime, toleranceAfter: MediaTime = .zero) throws(GraphError) -> SampleBuffer {
        do throws(GraphError) {
            return try picture(at: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter)
        } catch where error.code == .inputUnreadable && state.withLock({ $0.sought }) {
            // A run that had read to the file's end as it was sought (its next frame past the
            // duration the file states) may end at once instead: once more, on a new run.
            return try picture(at: time, toleranceBefore: toleranceBefore, toleranceAfter: toleranceAfter)
        }
    }

    /// ``frame(at:toleranceBefore:toleranceAfter:)``, once.
    private func picture(at time: MediaTime, toleranceBefore: MediaTime, toleranceAfter: MediaTime) throws(GraphError) -> SampleBuffer {
        let cancelled = GraphError(.cancelled, at: path, "the picture was cancelled")
        let earliest = toleranceBefore.isFinite ? time - toleranceBefore : nil
        let latest = toleranceAfter.isFinite ? time + toleranceAfter : nil
        do throws(GraphError) {
            if toleranceBefore == .zero && toleranceAfter == .zero {
                let showing = try found(ThumbnailPicker.firstFrame(of: try positioned(at: .exact(time)), from: time, showingAt: time), at: time)
                return ThumbnailPicker.unclipped(showing, seekingTo: time)
            }
            // The keyframe at or before the time.
            var output = try positioned(at: .keyframe(atOrBefore: time))
            let before = try found(output.copyNextSampleBuffer(), at: time)
            let beforeFits = ThumbnailPicker.accepts(before, from: earliest, showingAt: time)
            let p = before.presentationTime ?? time
            if toleranceAfter > .zero, p < time {
                // The keyframe at or after it, when the tolerance after may make it the nearer.
                output = try positioned(at: .nextKeyframe(atOrAfter: time))
                // A keyframe at the time would have been the one before. Past the last keyframe
                // the demuxer starts from the one before, and the decoder gives the frame showing
                // at the time, stamped with it (clipped to where the seek starts): no keyframe after.
                if let next = output.copyNextSampleBuffer(), let n = next.presentationTime, n > time,
                   latest.map({ n <= $0 }) ?? true, !beforeFits || n - time < time - p {
                    return next
                }
                if beforeFits { return before }
                // Neither is within the tolerance: from the keyframe before, the first frame that is.
                output = try positioned(at: .keyframe(atOrBefore: time))
            } else if beforeFits {
                return before
            }
            return try found(ThumbnailPicker.firstFrame(of: output, from: earliest, showingAt: time), at: time)
            // (The pipeline stays, for the next picture to seek.)
        } catch {
            close()
            throw error.code == .cancelled || isCancelled ? cancelled : error
        }
    }

    /// The output of this session's pipeline, sought to `seek`: the running one sought again, or
    /// a new one started there.
    private func positioned(at seek: GraphRun.Seek) throws(GraphError) -> MediaOutput {
        if let running = state.withLock({ $0.run }) {
            do throws(GraphError) {
                try running.seek(to: seek)
                state.withLock { $0.sought = true }
                return try running.output("out")
            } catch where error.code == .usage {
                // The run has ended, or is ending (the only way a seek to a time from 0 is
                // refused): it read the file to its end before this time (a track whose frames
                // lie far apart, or end long before the duration the file states). A failure
                // is its error; otherwise a new run starts at the time, as the first did.
                if let failure = close() { throw failure }
            }
        }
        let made = try ThumbnailPicker.makeRun(path: path, autorotate: autorotate, toneMapsHDR: toneMapsHDR)
        let taken = state.withLock { s in
            guard !s.cancelled else { return false }
            s.run = made
            s.sought = false
            s.pipelines += 1
            return true
        }
        guard taken else { throw GraphError(.cancelled, at: path, "the picture was cancelled") }
        try made.start(at: seek)
        return try made.output("out")
    }

    /// `frame`, or the reason there is none: the run's error, a cancel, or no frame at `time`.
    private func found(_ frame: SampleBuffer?, at time: MediaTime) throws(GraphError) -> SampleBuffer {
        if let frame { return frame }
        if let error = close() { throw error }
        throw isCancelled ? GraphError(.cancelled, at: path, "the picture was cancelled")
            : GraphError(.inputUnreadable, at: path, "\"\(path)\" has no frame at \(ThumbnailPicker.seconds(time)) s")
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

extension ThumbnailPicker {
    /// A packed BGRA picture shown as EXIF's `orientation` (1 to 8; another value is 1) says: the
    /// pixel at (x, y) of the result is the one the orientation puts there.
    package static func turned(_ picture: SampleBuffer, orientation: Int) throws(GraphError) -> SampleBuffer {
        guard orientation != 1, (2...8).contains(orientation) else { return picture }
        guard case .rawVideo(let v)? = picture.format, v.pixelFormat == .bgra else {
            throw GraphError(.runFailed, "a thumbnail is turned from a BGRA picture")
        }
        let (w, h) = (v.width, v.height)
        let swaps = orientation >= 5
        let (ow, oh) = swaps ? (h, w) : (w, h)
        var out = [UInt8](repeating: 0, count: ow * oh * 4)
        var source = picture
        try source.withMutablePixelPlanes { (planes) throws(GraphError) in
            let plane = planes[0]
            let src = UnsafeRawPointer(plane.baseAddress).assumingMemoryBound(to: UInt8.self)
            // Where the shown pixel (ox, oy) is stored: x = ax·ox + bx·oy + cx, y = ay·ox + by·oy + cy,
            // worked out once as byte steps, not per pixel.
            let (ax, bx, cx, ay, by, cy): (Int, Int, Int, Int, Int, Int) = switch orientation {
            case 2: (-1, 0, w - 1, 0, 1, 0)
            case 3: (-1, 0, w - 1, 0, -1, h - 1)
            case 4: (1, 0, 0, 0, -1, h - 1)
            case 5: (0, 1, 0, 1, 0, 0)
            case 6: (0, 1, 0, -1, 0, h - 1)
            case 7: (0, -1, w - 1, -1, 0, h - 1)
            default: (0, -1, w - 1, 1, 0, 0)
            }
            let row = plane.bytesPerRow
            let stepX = ax * 4 + ay * row, stepY = bx * 4 + by * row
            out.withUnsafeMutableBytes { dst in
                var start = cx * 4 + cy * row
                for oy in 0..<oh {
                    var at = start
                    let line = dst.baseAddress! + oy * ow * 4
                    for ox in 0..<ow {
                        (line + ox * 4).storeBytes(of: UnsafeRawPointer(src + at).loadUnaligned(as: UInt32.self), as: UInt32.self)
                        at += stepX
                    }
                    start += stepY
                }
            }
        }
        let format = MediaFormat.VideoFormat(pixelFormat: .bgra, width: ow, height: oh, frameRate: v.frameRate)
        return SampleBuffer(format: .rawVideo(format), bytes: out, presentationTime: .zero)
    }
}
