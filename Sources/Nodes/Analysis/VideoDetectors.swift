import CKernels
import FoundationEssentials
import GraphKitCore

/// A frame's luma, every second pixel of every second row: what `analysis.black` and
/// `analysis.scenes` look at (a quarter of the pixels, read once, never copied out of the frame
/// otherwise). Y of I420 and NV12 is taken as it is (limited range, black 16, white 235); BGRA
/// and RGBA become BT.601 luma, full range (black 0, white 255).
public struct LumaThumbnail: Sendable {
    /// The thumbnail's size and its luma, row after row, no padding.
    public var width: Int
    public var height: Int
    public var pixels: [UInt8]
    /// The luma of black and of white in this picture's range.
    public var black: Int
    public var white: Int

    /// A thumbnail made by hand (tests, other sources of luma).
    public init(width: Int, height: Int, pixels: [UInt8], black: Int = 0, white: Int = 255) {
        self.width = width; self.height = height; self.pixels = pixels; self.black = black; self.white = white
    }

    /// The thumbnail of one raw video frame.
    public init(_ buffer: SampleBuffer, format v: MediaFormat.VideoFormat) throws(GraphError) {
        width = (v.width + 1) / 2
        height = (v.height + 1) / 2
        let (w, h) = (width, height)
        let yuv = v.pixelFormat == .i420 || v.pixelFormat == .nv12
        (black, white) = yuv ? (16, 235) : (0, 255)
        let (r, b) = v.pixelFormat == .bgra ? (2, 0) : (0, 2)
        pixels = try buffer.withPixelPlanes { (planes) throws(GraphError) in
            let p = planes[0]
            return [UInt8](unsafeUninitializedCapacity: w * h) { out, count in
                count = w * h
                guard let base = out.baseAddress else { return }
                if yuv, p.bytesPerRow >= 0 {
                    gk_luma_half(p.baseAddress.assumingMemoryBound(to: UInt8.self), p.bytesPerRow, w, h, base)
                    return
                }
                for row in 0..<h {
                    let src = (p.baseAddress + 2 * row * p.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                    for x in 0..<w where yuv { base[row * w + x] = src[2 * x] }
                    for x in 0..<w where !yuv {
                        let px = src + 8 * x
                        let red: Int = 299 * Int(px[r]), green: Int = 587 * Int(px[1]), blue: Int = 114 * Int(px[b])
                        base[row * w + x] = UInt8((red + green + blue + 500) / 1000)
                    }
                }
            }
        }
    }
}

/// A stretch of black frames that ``BlackDetector`` found.
public struct BlackEvent: Codable, Sendable, Equatable {
    /// The first black frame's presentation time, and the first frame's after the stretch (the
    /// stream's end when it ends black), in seconds.
    public var start: Double
    public var end: Double
    public var duration: Double
}

/// What `analysis.black` writes.
public struct BlackReport: Codable, Sendable, Equatable {
    /// The settings, the frames seen, and the black stretches in order.
    public var threshold: Double
    public var pixelRatio: Double
    public var minimumDuration: Double
    public var frames: Int
    public var blacks: [BlackEvent]
}

/// Finds black stretches, frame-exactly, by ffmpeg `blackdetect`'s rule: a pixel is black when
/// its luma is at most `threshold` of the way from black to white; a frame is black when at
/// least `pixelRatio` of its pixels are; a run of black frames at least `minimumDuration` long
/// is an event.
public struct BlackDetector: Sendable {
    /// The settings (see the type), fixed for the detector's life.
    public let threshold: Double
    public let pixelRatio: Double
    public let minimumDuration: Double
    var runStart: Double?
    var lastEnd = 0.0
    var frames = 0
    public private(set) var events: [BlackEvent] = []

    public init(threshold: Double, pixelRatio: Double, minimumDuration: Double) {
        self.threshold = threshold; self.pixelRatio = pixelRatio; self.minimumDuration = minimumDuration
    }

    /// Whether a frame is black by this detector's rule.
    public func isBlack(_ luma: LumaThumbnail) -> Bool {
        let limit = UInt8(clamping: Int((Double(luma.black) + threshold * Double(luma.white - luma.black)).rounded(.down)))
        var count = 0
        for p in luma.pixels where p <= limit { count += 1 }
        return Double(count) >= pixelRatio * Double(max(1, luma.pixels.count))
    }

    /// Adds a frame shown from `time` for `duration` seconds.
    public mutating func add(_ luma: LumaThumbnail, time: Double, duration: Double) {
        frames += 1
        if isBlack(luma) {
            if runStart == nil { runStart = time }
        } else {
            close(at: time)
        }
        lastEnd = time + duration
    }

    private mutating func close(at end: Double) {
        guard let start = runStart else { return }
        runStart = nil
        if end - start >= minimumDuration - 1e-9 { events.append(BlackEvent(start: start, end: end, duration: end - start)) }
    }

    /// Ends the stream: a black stretch still going ends with the last frame.
    public mutating func finish() { close(at: lastEnd) }

    /// The report of every frame added (call ``finish()`` first).
    public var report: BlackReport {
        BlackReport(threshold: threshold, pixelRatio: pixelRatio, minimumDuration: minimumDuration, frames: frames, blacks: events)
    }
}

/// A frame's scene-change score, and a cut where it reaches the threshold.
public struct SceneScore: Codable, Sendable, Equatable {
    /// The frame's presentation time, in seconds.
    public var time: Double
    /// 0 (the same picture) to 100.
    public var score: Double
}

/// What `analysis.scenes` writes.
public struct ScenesReport: Codable, Sendable, Equatable {
    /// The threshold, the frames seen and the end of the last, in seconds.
    public var threshold: Double
    public var frames: Int
    public var durationSeconds: Double
    /// The frames that start a new scene (the first frame is not counted).
    public var cuts: [SceneScore]
    /// Every frame's score but the first's, when asked for.
    public var scores: [SceneScore]?
}

/// Scores each frame against the one before by ffmpeg `scdet`'s rule: the mean absolute luma
/// difference as a percentage of the range (MAFD), and the score is the smaller of it and its
/// change from the previous frame's MAFD, so a steady pan (large MAFD every frame) scores low
/// while a cut (one jump) scores high. A frame whose score is at least `threshold` is a cut.
public struct SceneDetector: Sendable {
    /// The cut threshold (0 to 100), and whether every frame's score is kept for ``report``.
    public let threshold: Double
    public let keepsScores: Bool
    var previous: LumaThumbnail?
    var previousMAFD = 0.0
    var frames = 0
    var end = 0.0
    public private(set) var cuts: [SceneScore] = []
    var scores: [SceneScore] = []

    public init(threshold: Double, keepsScores: Bool = false) {
        self.threshold = threshold; self.keepsScores = keepsScores
    }

    /// Adds a frame shown from `time` for `duration` seconds.
    public mutating func add(_ luma: LumaThumbnail, time: Double, duration: Double) {
        frames += 1
        end = time + duration
        defer { previous = luma }
        guard let previous, previous.pixels.count == luma.pixels.count, !luma.pixels.isEmpty else { return }
        let sum = luma.pixels.withUnsafeBufferPointer { a in
            previous.pixels.withUnsafeBufferPointer { b in Self.sumOfAbsoluteDifferences(a, b) }
        }
        let mafd = Double(sum) / Double(luma.pixels.count) * 100 / Double(max(1, luma.white - luma.black))
        let score = min(100, max(0, min(mafd, abs(mafd - previousMAFD))))
        previousMAFD = mafd
        let rounded = (score * 1000).rounded() / 1000
        if keepsScores { scores.append(SceneScore(time: time, score: rounded)) }
        if score >= threshold { cuts.append(SceneScore(time: time, score: rounded)) }
    }

    /// Σ |a[i] − b[i]| over the shorter's length, exactly (SSE2's sum of absolute differences,
    /// sixteen bytes an instruction: `gk_sum_abs_diff`).
    static func sumOfAbsoluteDifferences(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Int {
        let n = min(a.count, b.count)
        guard n > 0, let pa = a.baseAddress, let pb = b.baseAddress else { return 0 }
        return Int(gk_sum_abs_diff(pa, pb, n))
    }

    /// The cuts (and scores) of every frame added.
    public var report: ScenesReport {
        ScenesReport(threshold: threshold, frames: frames, durationSeconds: end, cuts: cuts, scores: keepsScores ? scores : nil)
    }

    /// WebVTT chapters: one cue a scene, from its cut (the first from 0) to the next, the last to
    /// the end; titled "Scene 1", "Scene 2", ….
    public var webVTTChapters: String {
        let starts = [0.0] + cuts.map(\.time)
        var out = "WEBVTT\n"
        for (i, start) in starts.enumerated() {
            let stop = i + 1 < starts.count ? starts[i + 1] : end
            out += "\n\(i + 1)\n\(WebVTTIndex.timestamp(MediaTime(seconds: start))) --> \(WebVTTIndex.timestamp(MediaTime(seconds: stop)))\nScene \(i + 1)\n"
        }
        return out
    }
}

/// What a video analysis node reads of each frame: its luma thumbnail, its time and how long it
/// shows (its duration, else one frame at the stream's rate). Frames without a time follow the
/// previous one.
struct VideoAnalysisInput: Sendable {
    var format: MediaFormat.VideoFormat?
    var next = 0.0

    mutating func setFormat(_ format: MediaFormat, node: String) throws(GraphError) {
        guard case .rawVideo(let v) = format else {
            throw GraphError(.runFailed, "\(node) takes raw video, got \(format)")
        }
        self.format = v
    }

    mutating func read(_ buffer: SampleBuffer) throws(GraphError) -> (luma: LumaThumbnail, time: Double, duration: Double) {
        guard let v = format else { throw GraphError(.runFailed, "a frame arrived before its format") }
        let rate = v.frameRate.framesPerSecond
        let time = buffer.presentationTime?.seconds ?? next
        let duration = buffer.duration?.seconds ?? (rate > 0 ? 1 / rate : 0)
        next = time + duration
        return (try LumaThumbnail(buffer, format: v), time, duration)
    }
}
