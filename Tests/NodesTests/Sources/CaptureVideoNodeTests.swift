import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

@Suite struct CaptureVideoNodeTests {
    @Test(.media) func testPatternGivesExactFramesAndTimestamps() throws {
        let h = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 64, "height": 48, "fps": 25, "duration": 0.4, "live": false } }"#)
        let frames = try h.pullAll()
        #expect(frames.count == 10)
        #expect(frames.first?.format == .rawVideo(.init(pixelFormat: .bgra, width: 64, height: 48, frameRate: FrameRate(25))))
        for (i, f) in frames.enumerated() {
            #expect(f.presentationTime == MediaTime(value: Int64(i), timescale: 25))
            #expect(f.byteCount == 64 * 48 * 4)
        }
        #expect(frames[0].bytes != frames[9].bytes)  // it moves
    }

    /// A duration under half a frame is one frame: it was none, which the test source took as
    /// no limit, and the capture never ended.
    @Test(.media, .timeLimit(.minutes(10)))
    func aDurationUnderHalfAFrameGivesOneFrame() throws {
        let h = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 64, "height": 48, "fps": 30, "duration": 0.01, "live": false } }"#)
        #expect(try h.pullAll().count == 1)
        try h.finish()
    }

    @Test(.media) func aMissingCameraFailsNamingIt() {
        #expect(throws: GraphError(.runFailed, at: "nodes.node.params.device", "no camera at \"/dev/video99\"", node: "node")) {
            try NodeHarness(#"{ "type": "capture.video", "params": { "device": "/dev/video99" } }"#)
        }
    }

    // MARK: The clock pattern

    /// The stamp's own arithmetic: what is written reads back, a wrong bit or marker reads as
    /// nothing, and 40 bits resolve to the time nearest the reader's clock across a wrap.
    @Test func clockStampCellsReadBackAndCheckThemselves() throws {
        let (w, h) = (320, 40)
        let side = try #require(ClockStamp.side(width: w, height: h))
        #expect(side == 4)  // 320 / 54 = 5, rounded down to even
        #expect(ClockStamp.side(width: 1280, height: 720) == 16 && ClockStamp.side(width: 107, height: 720) == nil)
        #expect(ClockStamp.cells == 52 && ClockStamp.check(0x31_2345_6789) == ClockStamp.check(0x31_2345_6789))
        for value: UInt64 in [0, 1, 0xFF_FFFF_FFFF, 1_790_000_123_456 & ClockStamp.mask] {
            let cells = ClockStamp.cells(of: value)
            func brightness(_ flip: Int?) -> (Int, Int) -> UInt8 {
                { x, y in
                    let i = x / side - 1
                    guard y / side == 1, i >= 0, i < cells.count else { return 0 }
                    return cells[i] != (i == flip) ? 255 : 0
                }
            }
            #expect(ClockStamp.read(width: w, height: h, brightness: brightness(nil)) == value)
            for flip in [0, 5, 30, 51] {  // a marker, a value and a check cell
                #expect(ClockStamp.read(width: w, height: h, brightness: brightness(flip)) == nil, "cell \(flip) flipped")
            }
        }
        let now: UInt64 = 1_790_000_123_456
        #expect(ClockStamp.milliseconds(now & ClockStamp.mask, near: now) == now)
        #expect(ClockStamp.milliseconds((now - 250) & ClockStamp.mask, near: now) == now - 250)
        #expect(ClockStamp.milliseconds((now + 3) & ClockStamp.mask, near: now) == now + 3)
        let wrap = (ClockStamp.mask + 1) * 2  // just after the low bits wrapped
        #expect(ClockStamp.milliseconds(ClockStamp.mask - 9, near: wrap + 10) == wrap - 10)
    }

    /// The brightness of pixel (x, y) of a frame: luma, or green in RGB.
    static func brightness(_ b: [UInt8], _ pf: PixelFormat, width w: Int) -> (Int, Int) -> UInt8 {
        { x, y in pf == .bgra || pf == .rgba ? b[(y * w + x) * 4 + 1] : b[y * w + x] }
    }

    /// Live frames carry the wall clock of the moment each left the source: every one reads
    /// back in every pixel format, no later than it was pulled and at most tens of milliseconds
    /// before, a frame's time apart; the row's band is black, the picture beside it moves.
    @Test(.media, .timeLimit(.minutes(2)), arguments: PixelFormat.eightBit.sorted { $0.rawValue < $1.rawValue })
    func clockPatternStampsEachFrameWithTheWallClock(_ pf: PixelFormat) throws {
        let (w, h, fps, count) = (320, 96, 25, 20)
        let started = ClockStamp.now()
        let harness = try NodeHarness(#"{ "type": "capture.video", "params": { "width": \#(w), "height": \#(h), "fps": \#(fps), "duration": 0.8, "pattern": "clock", "pixelFormat": "\#(pf.rawValue)" } }"#)
        var stamps: [UInt64] = [], ages: [Int] = [], pictures: Set<[UInt8]> = []
        let side = try #require(ClockStamp.side(width: w, height: h))
        while let f = harness.pull() {
            let pulled = ClockStamp.now(), b = f.bytes
            let light = Self.brightness(b, pf, width: w)
            let stamp = try #require(ClockStamp.read(width: w, height: h, brightness: light), "frame \(stamps.count)")
            let ms = ClockStamp.milliseconds(stamp, near: pulled)
            stamps.append(ms)
            ages.append(Int(pulled) - Int(ms))
            let black: UInt8 = pf == .bgra || pf == .rgba ? 0 : 16
            #expect(light(0, 0) == black && light(side * (ClockStamp.cells + 2) - 1, side * 3 - 1) == black && light(side / 2, side + side / 2) == black)
            pictures.insert((0..<w).map { light($0, h - 1) })  // the picture's bottom row
        }
        #expect(pictures.count > 1)  // it moves
        #expect(stamps.count == count)
        #expect(stamps.first.map { $0 >= started } == true)
        // Pulled at once: a frame waits in the harness only while the test reads the one before.
        #expect(ages.allSatisfy { $0 >= 0 && $0 <= 60 }, "ages \(ages) ms")
        let gaps = zip(stamps.dropFirst(), stamps).map { Int($0) - Int($1) }.sorted()
        #expect(gaps.count == count - 1 && abs(gaps[gaps.count / 2] - 1000 / fps) <= 5, "gaps \(gaps) ms")
        try harness.finish()
    }

    /// The stamp survives H.264 at encode.h264's automatic bit rate: decoded with ffmpeg, every
    /// frame reads, and the stamps advance as the frames' own times do.
    @Test(.media, .timeLimit(.minutes(2)))
    func clockStampReadsBackAfterH264() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (w, h, fps, count) = (640, 360, 30, 45)
        let movie = folder.appendingPathComponent("clock.mp4").path
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "camera": { "type": "capture.video", "params": { "width": \(w), "height": \(h), "fps": \(fps), "duration": 1.5, "pattern": "clock", "pixelFormat": "i420" } },
                "h264": { "type": "encode.h264" }, "file": { "type": "sink.mp4", "params": { "path": "\(movie)" } } },
              "edges": [ "camera.out -> h264.in", "h264.out -> file.video" ] }
            """)
        let started = ClockStamp.now()
        #expect(try GraphRun(graph).run().status == .completed)
        let ended = ClockStamp.now()
        let raw = folder.appendingPathComponent("frames.gray").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", movie, "-f", "rawvideo", "-pix_fmt", "gray", raw])
        let gray = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        #expect(gray.count == w * h * count)
        var stamps: [UInt64] = []
        for n in 0..<min(count, gray.count / (w * h)) {
            let base = n * w * h
            let stamp = try #require(ClockStamp.read(width: w, height: h) { x, y in gray[base + y * w + x] }, "frame \(n)")
            stamps.append(ClockStamp.milliseconds(stamp, near: ended))
        }
        #expect(stamps.allSatisfy { $0 >= started && $0 <= ended })
        // Frame n left the source n / fps after frame 0, give or take the scheduler.
        for (n, ms) in stamps.enumerated() {
            #expect(abs(Int(ms) - Int(stamps[0]) - n * 1000 / fps) <= 25, "frame \(n): \(Int(ms) - Int(stamps[0])) ms after frame 0")
        }
    }

    @Test(.media) func clockPatternRefusesFramesTooSmallForItsRow() {
        #expect(throws: GraphError(.invalidGraph, at: "nodes.node.params.width",
                                   "the clock pattern needs frames at least 108 pixels wide and 6 high; these are 100x720", node: "node")) {
            try NodeHarness(#"{ "type": "capture.video", "params": { "width": 100, "pattern": "clock" } }"#)
        }
    }
}
