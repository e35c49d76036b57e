import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// generate.frames: exact counts and timestamps, every pattern's pixels checked against the
/// tests' own formulas, the counter read back (also after H.264), parameter errors, and the pool.
@Suite(.media) struct FrameGeneratorNodeTests {
    static func harness(_ params: String) throws -> NodeHarness {
        try NodeHarness(#"{ "type": "generate.frames", "params": { \#(params) } }"#)
    }

    /// Nanoseconds of frame n at `fps`, rounded to nearest, as GStreamer stores it.
    static func ns(_ n: Int, _ fps: Int) -> UInt64 {
        (UInt64(n) * 1_000_000_000 * 2 + UInt64(fps)) / (2 * UInt64(fps))
    }

    // MARK: Length and time

    @Test(arguments: [
        (#""fps": 24, "frames": 10"#, 24, 10),
        (#""fps": 7, "duration": 2"#, 7, 14),
        (#""fps": 7, "duration": 1.3"#, 7, 9),  // 9.1 frames: to the nearest
        (#""fps": 30, "duration": 0.5"#, 30, 15),
        (#""fps": 1, "frames": 3"#, 1, 3),
    ])
    func exactFramesAndTimestamps(_ params: String, _ fps: Int, _ count: Int) throws {
        let h = try Self.harness(#""width": 32, "height": 16, \#(params)"#)
        let frames = try h.pullAll()
        #expect(frames.count == count)
        for (i, f) in frames.enumerated() {
            #expect(f.format == .rawVideo(.init(pixelFormat: .bgra, width: 32, height: 16, frameRate: FrameRate(fps))))
            #expect(f.presentationTime?.nanoseconds == Self.ns(i, fps), "frame \(i)")
            // Each frame lasts until the next begins: no gap, no overlap, 1/fps to the nanosecond.
            #expect(f.duration?.nanoseconds == Self.ns(i + 1, fps) - Self.ns(i, fps), "frame \(i)")
            #expect(f.byteCount == 32 * 16 * 4)
        }
        #expect(frames.last.map { $0.presentationTime!.nanoseconds + $0.duration!.nanoseconds } == Self.ns(count, fps))
        let node = try #require(h.node as? FrameGeneratorNode)
        #expect(node.expectedDuration == MediaTime(value: Int64(count), timescale: Int32(fps)))
        #expect(node.framesDrawn == count)
        let result = try h.finish()
        #expect(result.report.status == .completed)
    }

    /// With no length given, 5 s; with duration 0, frames until the run is stopped, then end of
    /// stream (as `stopWriting`).
    @Test func defaultLengthAndUnbounded() throws {
        let bounded = try Self.harness(#""width": 16, "height": 16, "fps": 2"#)
        #expect(try bounded.pullAll().count == 10)
        try bounded.finish()

        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "f": { "type": "generate.frames", "params": { "width": 16, "height": 16, "duration": 0 } },
              "s": { "type": "sink.app", "params": { "maxBuffers": 2 } } }, "edges": [ "f.out -> s.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("s")
        for i in 0..<40 {
            #expect(output.copyNextSampleBuffer(timeout: 10)?.presentationTime?.nanoseconds == Self.ns(i, 30))
        }
        run.stop()
        var more = 0
        while output.copyNextSampleBuffer(timeout: 10) != nil { more += 1 }
        #expect(more <= 8)  // what was queued or in flight when stop came: bounded by the edge
        #expect(run.wait().status == .stopped)
    }

    // MARK: Pixels

    /// The frame's bytes, plane after plane. GStreamer pads YUV rows to 4 bytes: the tests'
    /// widths are multiples of 8, so there is no padding.
    static func bytes(_ f: SampleBuffer) -> [UInt8] { f.bytes }

    /// Limited-range YUV of one colour, by the test's own formula (BT.601 up to 576 lines).
    static func yuv(_ r: Double, _ g: Double, _ b: Double, height: Int) -> (Double, Double, Double) {
        let (kr, kb) = height > 576 ? (0.2126, 0.0722) : (0.299, 0.114)
        let y = kr * r + (1 - kr - kb) * g + kb * b
        return (16 + y * 219 / 255, 128 + (b - y) / (2 * (1 - kb)) * 224 / 255, 128 + (r - y) / (2 * (1 - kr)) * 224 / 255)
    }

    @Test(arguments: PixelFormat.eightBit.sorted { $0.rawValue < $1.rawValue })
    func solidIsTheColourEverywhere(_ pf: PixelFormat) throws {
        let h = try Self.harness(##""width": 40, "height": 18, "frames": 3, "pattern": "solid", "color": "#10c0f0", "pixelFormat": "\##(pf.rawValue)""##)
        for f in try h.pullAll() {
            let b = Self.bytes(f)
            switch pf {
            case .bgra: #expect(b == [UInt8]([0xF0, 0xC0, 0x10, 0xFF]).repeated(40 * 18))
            case .rgba: #expect(b == [UInt8]([0x10, 0xC0, 0xF0, 0xFF]).repeated(40 * 18))
            case .i420, .nv12:
                let (y, u, v) = Self.yuv(0x10, 0xC0, 0xF0, height: 18)
                let (Y, U, V) = (UInt8(y.rounded()), UInt8(u.rounded()), UInt8(v.rounded()))
                let chroma = 20 * 9
                let expected = pf == .i420 ? [UInt8](repeating: Y, count: 40 * 18) + [UInt8](repeating: U, count: chroma) + [UInt8](repeating: V, count: chroma)
                    : [UInt8](repeating: Y, count: 40 * 18) + [U, V].repeated(chroma)
                #expect(b.count == expected.count)
                #expect(b == expected, "Y \(Y) U \(U) V \(V); got \(b[0]) \(b[40 * 18]) …")
            case .i420_10le, .p010_10le: Issue.record("generate.frames draws 8-bit frames")
            }
        }
        try h.finish()
    }

    /// YUV follows the matrix GStreamer assumes for the frame's height: BT.601 up to 576 lines,
    /// BT.709 above.
    @Test(arguments: [(576, 0.299, 0.114), (578, 0.2126, 0.0722)])
    func yuvUsesTheMatrixOfTheHeight(_ height: Int, _ kr: Double, _ kb: Double) throws {
        let h = try Self.harness(##""width": 64, "height": \##(height), "frames": 1, "pattern": "solid", "color": "#ff4000", "pixelFormat": "i420""##)
        let b = try #require(h.pull()).bytes
        let y = 16 + (kr * 255 + (1 - kr - kb) * 64) * 219 / 255
        let v = 128 + (255 - (kr * 255 + (1 - kr - kb) * 64)) / (2 * (1 - kr)) * 224 / 255
        #expect(b[0] == UInt8(y.rounded()) && b[64 * height] != 0 && b[64 * height + 32 * (height / 2)] == UInt8(v.rounded()),
                "Y \(b[0]) V \(b[64 * height + 32 * (height / 2)])")
        try h.finish()
    }

    /// red = x·256/w + 3n, green = y·256/h + n (both modulo 256), blue = 255 − red: exact in
    /// BGRA and RGBA, within one level of the exact YUV in I420 and NV12.
    @Test(arguments: PixelFormat.eightBit.sorted { $0.rawValue < $1.rawValue })
    func gradientIsTheFormulaAndMoves(_ pf: PixelFormat) throws {
        let (w, h) = (40, 22)
        let harness = try Self.harness(#""width": \#(w), "height": \#(h), "frames": 6, "pattern": "gradient", "pixelFormat": "\#(pf.rawValue)""#)
        let frames = try harness.pullAll()
        #expect(frames.count == 6)
        #expect(frames[0].bytes != frames[1].bytes)
        for n in [0, 1, 5] {
            let b = frames[n].bytes
            func rgb(_ x: Int, _ y: Int) -> (Int, Int, Int) {
                let r = (x * 256 / w + 3 * n) & 255
                return (r, (y * 256 / h + n) & 255, 255 - r)
            }
            var worst = 0
            for y in 0..<h {
                for x in 0..<w {
                    let (r, g, bl) = rgb(x, y)
                    switch pf {
                    case .bgra: #expect(Array(b[(y * w + x) * 4..<(y * w + x + 1) * 4]) == [UInt8(bl), UInt8(g), UInt8(r), 255])
                    case .rgba: #expect(Array(b[(y * w + x) * 4..<(y * w + x + 1) * 4]) == [UInt8(r), UInt8(g), UInt8(bl), 255])
                    case .i420, .nv12:
                        worst = max(worst, abs(Int(b[y * w + x]) - Int(Self.yuv(Double(r), Double(g), Double(bl), height: h).0.rounded())))
                    case .i420_10le, .p010_10le: Issue.record("generate.frames draws 8-bit frames")
                    }
                }
            }
            if pf == .i420 || pf == .nv12 {
                let cw = w / 2, luma = w * h
                for cy in 0..<h / 2 {
                    for cx in 0..<cw {
                        let (r, g, bl) = rgb(2 * cx, 2 * cy)
                        let (_, u, v) = Self.yuv(Double(r), Double(g), Double(bl), height: h)
                        let (U, V) = pf == .i420 ? (b[luma + cy * cw + cx], b[luma + cw * h / 2 + cy * cw + cx])
                            : (b[luma + cy * w + 2 * cx], b[luma + cy * w + 2 * cx + 1])
                        worst = max(worst, abs(Int(U) - Int(u.rounded())), abs(Int(V) - Int(v.rounded())))
                    }
                }
                #expect(worst <= 1, "frame \(n): off by \(worst)")
            }
        }
        try harness.finish()
    }

    /// The white square's bounding box, or nil when there is none; and whether every other pixel
    /// is the background.
    static func whiteBox(_ b: [UInt8], width w: Int, height h: Int, background: [UInt8]) -> (x: Int, y: Int, w: Int, h: Int)? {
        var x0 = w, y0 = h, x1 = -1, y1 = -1
        for y in 0..<h {
            for x in 0..<w {
                let p = Array(b[(y * w + x) * 4..<(y * w + x + 1) * 4])
                if p == [255, 255, 255, 255] {
                    (x0, y0, x1, y1) = (min(x0, x), min(y0, y), max(x1, x), max(y1, y))
                } else if p != background {
                    return nil
                }
            }
        }
        return x1 < 0 ? nil : (x0, y0, x1 - x0 + 1, y1 - y0 + 1)
    }

    @Test func boxIsAWhiteSquareThatMovesInsideTheFrame() throws {
        let (w, h) = (96, 64)
        let harness = try Self.harness(##""width": \##(w), "height": \##(h), "frames": 60, "pattern": "box", "color": "#000080""##)
        let frames = try harness.pullAll()
        var positions: [(Int, Int)] = []
        for (n, f) in frames.enumerated() {
            let box = try #require(Self.whiteBox(f.bytes, width: w, height: h, background: [0x80, 0, 0, 255]), "frame \(n)")
            #expect(box.w == 16 && box.h == 16, "frame \(n): \(box)")  // a quarter of the shorter side
            #expect(box.x >= 0 && box.y >= 0 && box.x + box.w <= w && box.y + box.h <= h)
            let expected = FramePainter.box(frame: n, width: w, height: h)
            #expect((box.x, box.y) == (expected.x0, expected.y0))
            positions.append((box.x, box.y))
        }
        for n in 1..<positions.count { #expect(positions[n] != positions[n - 1], "frame \(n) did not move") }
        // It bounces: it reaches both sides of its travel in 60 frames.
        #expect(positions.map(\.0).min() == 0 && positions.map(\.0).max() == w - 16)
        try harness.finish()
    }

    /// Reads the seven-segment number in a frame (``SevenSegments``), each segment sampled at its
    /// centre in `layout`: `lit(x, y)` says whether a pixel is white.
    static func readCounter(_ layout: FramePainter.CounterLayout, lit: (Int, Int) -> Bool) -> Int? {
        SevenSegments.read(count: layout.digits, centre: { i, s in
            let r = layout.segment(s, of: layout.cell(i))
            return ((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2)
        }, lit: lit)
    }

    @Test(arguments: [PixelFormat.bgra, .i420])
    func counterShowsEachFrameNumber(_ pf: PixelFormat) throws {
        let (w, h) = (160, 90)
        let harness = try Self.harness(##""width": \##(w), "height": \##(h), "frames": 120, "pattern": "counter", "color": "#000000", "pixelFormat": "\##(pf.rawValue)""##)
        let frames = try harness.pullAll()
        #expect(frames.count == 120)
        let layout = FramePainter.CounterLayout(width: w, height: h, digits: 4)
        #expect(layout.digitWidth >= 20)
        for (n, f) in frames.enumerated() {
            let b = f.bytes
            let read = Self.readCounter(layout) { x, y in pf == .bgra ? b[(y * w + x) * 4 + 1] > 128 : b[y * w + x] > 128 }
            #expect(read == n, "frame \(n) reads \(String(describing: read))")
            // Nothing is drawn outside the digits.
            let first = layout.cell(0), last = layout.cell(3)
            let outside = pf == .bgra ? b[0] == 0 && b[(w * h - 1) * 4] == 0 && b[((first.y0 - 1) * w + first.x0) * 4] == 0 && b[(last.y1 * w + last.x1) * 4] == 0
                : b[0] == 16 && b[w * h - 1] == 16 && b[(first.y0 - 1) * w + first.x0] == 16 && b[last.y1 * w + last.x1] == 16
            #expect(outside, "frame \(n)")
        }
        try harness.finish()
    }

    /// The counter survives H.264: decoded back with ffmpeg, each frame of the file reads as its
    /// number, so none was dropped, repeated or reordered.
    @Test func counterReadsBackFromAnEncodedMovie() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (w, h, count) = (320, 180, 45)
        let movie = folder.appendingPathComponent("counter.mp4").path
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "f": { "type": "generate.frames", "params": { "width": \(w), "height": \(h), "fps": 15, "frames": \(count), "pattern": "counter" } },
                "h264": { "type": "encode.h264" }, "file": { "type": "sink.mp4", "params": { "path": "\(movie)" } } },
              "edges": [ "f.out -> h264.in", "h264.out -> file.video" ] }
            """)
        #expect(try GraphRun(graph).run().status == .completed)
        let raw = folder.appendingPathComponent("frames.gray").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", movie, "-f", "rawvideo", "-pix_fmt", "gray", raw])
        let gray = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        #expect(gray.count == w * h * count)
        let layout = FramePainter.CounterLayout(width: w, height: h, digits: 4)
        for n in 0..<min(count, gray.count / (w * h)) {
            let base = n * w * h
            #expect(Self.readCounter(layout) { x, y in gray[base + y * w + x] > 128 } == n, "frame \(n)")
        }
    }

    // MARK: Parameters

    static func problems(_ params: String) -> [String] {
        do {
            _ = try GraphLoader(registry: .builtIn).load(json: """
                { "version": 1, "nodes": { "f": { "type": "generate.frames", "params": { \(params) } }, "s": { "type": "sink.app" } }, "edges": [ "f.out -> s.in" ] }
                """)
            return []
        } catch {
            #expect(error.code == .invalidGraph)
            return error.problems.map(\.description)
        }
    }

    @Test func badParametersAreRefusedWhereTheyAre() {
        #expect(Self.problems(#""width": 8"#) == ["nodes.f.params.width: 8 is out of range (16 to 7680)"])
        #expect(Self.problems(#""fps": 0"#) == ["nodes.f.params.fps: 0 is out of range (1 to 240)"])
        #expect(Self.problems(#""frames": 10, "duration": 2"#) == ["nodes.f.params.frames: give duration or frames, not both"])
        #expect(Self.problems(#""frames": 0"#) == ["nodes.f.params.frames: 0 is out of range (1 to 100000000)"])
        #expect(Self.problems(#""pattern": "countr""#).first?.hasPrefix(#"nodes.f.params.pattern: "countr" is not one of "gradient", "box", "counter", "solid"; did you mean "counter"?"#) == true)
        #expect(Self.problems(#""color": "red""#).first?.hasPrefix("nodes.f.params.color:") == true)
        #expect(Self.problems(#""color": "red""#).first?.contains("#rrggbb") == true)
        #expect(Self.problems(#""pixelFormat": "yuy2""#).first?.hasPrefix("nodes.f.params.pixelFormat:") == true)
        #expect(Self.problems(#""frames": 10, "pattern": "box", "pixelFormat": "nv12""#) == [])
    }

    @Test func aDurationShorterThanHalfAFrameIsRefused() throws {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "f": { "type": "generate.frames", "params": { "fps": 10, "duration": 0.04 } }, "s": { "type": "sink.app" } }, "edges": [ "f.out -> s.in" ] }
            """)
        #expect(throws: GraphError(.invalidGraph, at: "nodes.f.params.duration",
                                   "duration 0.04 s is less than half a frame at 10 fps; give at least 0.05 s, or frames", node: "f")) {
            _ = try GraphRun(graph)
        }
    }

    // MARK: Pool

    /// A steady stream reuses a few pooled frames: 300 frames of 1280×720 pulled one by one
    /// allocate no more than the edge and the sink hold at once. Holding every frame instead makes
    /// the pool allocate one per frame, which shows the count counts allocations.
    @Test func aSteadyStreamReusesAFewFrames() throws {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "f": { "type": "generate.frames", "params": { "frames": 300, "pattern": "box" } },
              "s": { "type": "sink.app", "params": { "maxBuffers": 4 } } }, "edges": [ "f.out -> s.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("s")
        var pulled = 0
        while let frame = output.copyNextSampleBuffer(timeout: 30) {
            #expect(frame.byteCount == 1280 * 720 * 4)
            pulled += 1
        }
        #expect(run.wait().status == .completed)
        #expect(pulled == 300)
        let node = try #require(run.node("f") as? FrameGeneratorNode)
        #expect(node.framesDrawn == 300)
        #expect(node.buffersAllocated >= 1 && node.buffersAllocated <= 16, "\(node.buffersAllocated) frames allocated for 300")

        let held = try Self.harness(#""width": 32, "height": 16, "frames": 40"#)
        let all = try held.pullAll()
        #expect(all.count == 40)
        #expect((held.node as? FrameGeneratorNode)?.buffersAllocated == 40)
        try held.finish()
    }
}

extension Array {
    func repeated(_ times: Int) -> [Element] { Array([[Element]](repeating: self, count: times).joined()) }
}
