import CKernels
import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// analysis.black and analysis.scenes on H.264 made by ffmpeg with known black stretches and
/// cuts (25 fps): every event within one frame; and no black on a dark noisy floor just above
/// the threshold.
@Suite struct VideoDetectorsTests {
    let folder = try! TestMedia.temporaryFolder()
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// testsrc 0–2 s, black 2–3 s, red 3–5 s, black 5–5.52 s, testsrc2 5.52–7 s.
    func makeVideo(codec: String = "libx264") throws -> String {
        let file = path("cuts-\(codec).mp4")
        let size = "s=320x240:r=25"
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=\(size):d=2", "-f", "lavfi", "-i", "color=black:\(size):d=1",
                                             "-f", "lavfi", "-i", "color=red:\(size):d=2", "-f", "lavfi", "-i", "color=black:\(size):d=0.52",
                                             "-f", "lavfi", "-i", "testsrc2=\(size):d=1.48",
                                             "-filter_complex", "[0][1][2][3][4]concat=n=5:v=1:a=0,format=yuv420p", "-c:v", codec,
                                             "-bf", "3", "-y", file] + (codec == "libx265" ? ["-x265-params", "log-level=error"] : []))
        return file
    }

    func run(_ file: String, node: String, pixelFormat: String = "i420", readOnlyFrames: Bool = false) throws {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
              "dec": { "type": "decode", "params": { "pixelFormat": "\(pixelFormat)", "readOnlyFrames": \(readOnlyFrames) } }, "a": \(node) },
              "edges": [ "src.out -> dec.in", "dec.video -> a.in" ] }
            """)
        try GraphRun(graph).run()
    }

    @Test(.media, arguments: ["i420", "bgra"])
    func findsEveryBlackStretchWithinOneFrame(_ pixelFormat: String) throws {
        let video = try makeVideo(), json = path("black-\(pixelFormat).json")
        try run(video, node: #"{ "type": "analysis.black", "params": { "minimumDuration": 0.4, "json": "\#(json)" } }"#, pixelFormat: pixelFormat)
        let report = try JSONDecoder().decode(BlackReport.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        let expected: [(Double, Double)] = [(2, 3), (5, 5.52)]
        #expect(report.blacks.count == 2, "\(report.blacks)")
        for (event, (start, end)) in zip(report.blacks, expected) {
            #expect(abs(event.start - start) <= 0.04 + 1e-6 && abs(event.end - end) <= 0.04 + 1e-6, "\(event) expected \(start)–\(end)")
        }
        #expect(report.frames == 175)
    }

    /// The scene score's sum, sixteen bytes at a time, is the plain sum to the unit: on lengths
    /// around its blocks (16 bytes, 128 × 16 bytes) and on the worst case (every difference 255).
    @Test func sumOfAbsoluteDifferencesIsExact() {
        var state: UInt64 = 3
        for n in [0, 1, 15, 16, 17, 2047, 2048, 2049, 2063, 4096 + 5, 40_003] {
            let a = (0..<n).map { _ in state = state &* 6_364_136_223_846_793_005 &+ 1; return UInt8(truncatingIfNeeded: state >> 56) }
            let b = (0..<n).map { _ in state = state &* 6_364_136_223_846_793_005 &+ 1; return UInt8(truncatingIfNeeded: state >> 56) }
            let plain = zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }
            let fast = a.withUnsafeBufferPointer { pa in b.withUnsafeBufferPointer { pb in SceneDetector.sumOfAbsoluteDifferences(pa, pb) } }
            #expect(fast == plain, "\(n) bytes")
            let black = [UInt8](repeating: 0, count: n), white = [UInt8](repeating: 255, count: n)
            let most = black.withUnsafeBufferPointer { pa in white.withUnsafeBufferPointer { pb in SceneDetector.sumOfAbsoluteDifferences(pb, pa) } }
            #expect(most == 255 * n, "\(n) bytes")
        }
    }

    /// The luma thumbnail's kernel takes byte 2x of row 2y, for odd and even sizes around its
    /// 32-byte steps and rows spaced wider than they are, and reads nothing past the last pixel
    /// it needs: each frame ends where an unreadable page begins (a read beyond it would crash).
    @Test func lumaThumbnailKernelTakesEverySecondPixelOfEverySecondRow() throws {
        var state: UInt64 = 7
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        for (width, height, pad) in [(1, 1, 0), (2, 2, 0), (3, 3, 5), (31, 3, 0), (32, 4, 1), (33, 5, 0), (63, 2, 3), (64, 3, 0), (65, 1, 0), (1921, 9, 64)] {
            let stride = width + pad, (w, h) = ((width + 1) / 2, (height + 1) / 2)
            let needed = 2 * (h - 1) * stride + 2 * (w - 1) + 1
            let pages = (needed + page - 1) / page
            let memory = try #require(mmap(nil, (pages + 1) * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0))
            #expect(memory != MAP_FAILED)
            defer { munmap(memory, (pages + 1) * page) }
            #expect(mprotect(memory + pages * page, page, PROT_NONE) == 0)
            let frame = (memory + pages * page - needed).assumingMemoryBound(to: UInt8.self)
            for i in 0..<needed { state = state &* 6_364_136_223_846_793_005 &+ 1; frame[i] = UInt8(truncatingIfNeeded: state >> 56) }
            var out = [UInt8](repeating: 0, count: w * h)
            out.withUnsafeMutableBufferPointer { gk_luma_half(frame, stride, w, h, $0.baseAddress) }
            let plain = (0..<h).flatMap { y in (0..<w).map { x in frame[2 * y * stride + 2 * x] } }
            #expect(out == plain, "\(width)x\(height), stride \(stride)")
        }
    }

    /// Decoded as usual, and with the frames shared read-only with libavcodec (gkavdec, what
    /// `graphctl analyze` does), H.264 and HEVC with B-frames.
    @Test(.media, arguments: [("libx264", false), ("libx264", true), ("libx265", true)])
    func findsEveryCutWithinOneFrameAndWritesChapters(_ codec: String, _ readOnlyFrames: Bool) throws {
        let video = try makeVideo(codec: codec), json = path("scenes-\(codec)-\(readOnlyFrames).json"), vtt = path("chapters-\(codec)-\(readOnlyFrames).vtt")
        try run(video, node: #"{ "type": "analysis.scenes", "params": { "threshold": 10, "scores": true, "json": "\#(json)", "vtt": "\#(vtt)" } }"#,
                readOnlyFrames: readOnlyFrames)
        let report = try JSONDecoder().decode(ScenesReport.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
        let expected = [2, 3, 5, 5.52]
        #expect(report.cuts.count == expected.count, "\(report.cuts)")
        for (cut, time) in zip(report.cuts, expected) { #expect(abs(cut.time - time) <= 0.04 + 1e-6, "\(cut) expected \(time)") }
        #expect(report.scores?.count == 174)
        let chapters = try String(contentsOfFile: vtt, encoding: .utf8)
        #expect(chapters.hasPrefix("WEBVTT\n\n1\n00:00:00.000 --> 00:00:02.000\nScene 1\n"), "\(chapters)")
        #expect(chapters.hasSuffix("\n5\n00:00:05.520 --> 00:00:07.000\nScene 5\n"), "\(chapters)")
    }

    /// Shared frames are the same pictures: every frame's score is the same, to the bit, whether
    /// decode copies each frame (avdec) or hands on libavcodec's own (gkavdec).
    @Test(.media, arguments: ["libx264", "libx265"])
    func sharedFramesScoreAsCopiedOnesDo(_ codec: String) throws {
        let video = try makeVideo(codec: codec)
        var scores: [[Double]] = []
        for shared in [false, true] {
            let json = path("scores-\(codec)-\(shared).json")
            try run(video, node: #"{ "type": "analysis.scenes", "params": { "scores": true, "json": "\#(json)" } }"#, readOnlyFrames: shared)
            let report = try JSONDecoder().decode(ScenesReport.self, from: Data(contentsOf: URL(fileURLWithPath: json)))
            scores.append(report.scores?.map(\.score) ?? [])
        }
        #expect(scores[0].count == 174)
        #expect(scores[0] == scores[1])
    }

    /// I420 frames at 16 + 0.1 × 219 = 37.9 … a dark floor of luma 39 to 44, noisy: never black
    /// at threshold 0.1, always black at 0.15; and their small changes are no cuts.
    @Test(.media) func noBlackOrCutsOnANoiseFloorJustAboveTheThreshold() throws {
        func frames() -> [SampleBuffer] {
            var state: UInt64 = 7
            let format = MediaFormat.VideoFormat(pixelFormat: .i420, width: 64, height: 48, frameRate: FrameRate(25))
            return (0..<50).map { i in
                var bytes = [UInt8](repeating: 128, count: 64 * 48 * 3 / 2)
                for p in 0..<(64 * 48) {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    bytes[p] = UInt8(39 + Int(state >> 61))  // 39 to 46
                }
                return SampleBuffer(format: .rawVideo(format), bytes: bytes, presentationTime: MediaTime(value: Int64(i), timescale: 25),
                                    duration: MediaTime(value: 1, timescale: 25))
            }
        }
        for (threshold, blacks) in [(0.1, 0), (0.15, 1)] {
            let h = try NodeHarness(#"{ "type": "analysis.black", "params": { "threshold": \#(threshold), "minimumDuration": 0.1 } }"#, outputs: [])
            try h.push(frames())
            try h.finish()
            #expect(try #require((h.node as? BlackNode)?.report).blacks.count == blacks)
        }
        let h = try NodeHarness(#"{ "type": "analysis.scenes", "params": { "threshold": 10 } }"#, outputs: [])
        try h.push(frames())
        try h.finish()
        #expect(try #require((h.node as? ScenesNode)?.report).cuts.isEmpty)
    }
}
