import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `effect.scale`: frames of any size, changing mid-stream, out at one size, fitted (shape kept,
/// black bars) or stretched; on small BGRA frames whose every pixel is known.
@Suite struct ScaleNodeTests {
    /// Rows of the picture in a frame (opaque white) and of the bars (opaque black).
    static func rows(_ out: SampleBuffer) -> [String] {
        guard case .rawVideo(let v)? = out.format else { return [] }
        let px = VideoTestFrames.pixels(out).pixels
        return (0..<v.height).map { y in
            let row = px[(y * v.width)..<((y + 1) * v.width)]
            if row.allSatisfy({ $0 == [255, 255, 255, 255] }) { return "white" }
            if row.allSatisfy({ $0 == [0, 0, 0, 255] }) { return "black" }
            return "mixed"
        }
    }

    static func white(_ w: Int, _ h: Int) throws -> SampleBuffer { try VideoTestFrames.frame(w, h) { _, _ in (255, 255, 255, 255) } }

    @Test(.media) func fitKeepsTheShapeWithBlackBarsAndTakesSizesThatChange() throws {
        let h = try NodeHarness(#"{ "type": "effect.scale", "params": { "width": 16, "height": 16 } }"#)
        // 32x16 (2:1) into 16x16: a 16x8 picture, 4 rows of bars above and below.
        try h.push(try Self.white(32, 16))
        let wide = try #require(h.pull())
        #expect(wide.format == .rawVideo(VideoTestFrames.format(16, 16)))
        #expect(Self.rows(wide) == Array(repeating: "black", count: 4) + Array(repeating: "white", count: 8) + Array(repeating: "black", count: 4))
        // Then 8x16 (1:2): an 8x16 picture, 4 columns of bars at each side.
        var tall = try Self.white(8, 16)
        tall.presentationTime = MediaTime(value: 1, timescale: 30)
        try h.push(tall)
        let pillar = try #require(h.pull())
        #expect(pillar.format == .rawVideo(VideoTestFrames.format(16, 16)))
        let px = VideoTestFrames.pixels(pillar).pixels
        for y in 0..<16 {
            let row = px[(y * 16)..<(y * 16 + 16)].map { $0 == [255, 255, 255, 255] ? "w" : $0 == [0, 0, 0, 255] ? "b" : "?" }.joined()
            #expect(row == "bbbbwwwwwwwwbbbb", "row \(y): \(row)")
        }
        try h.finish()
    }

    @Test(.media) func stretchFillsTheFrame() throws {
        let h = try NodeHarness(#"{ "type": "effect.scale", "params": { "width": 16, "height": 16, "mode": "stretch" } }"#)
        try h.push(try Self.white(32, 16))
        let out = try #require(h.pull())
        #expect(out.format == .rawVideo(VideoTestFrames.format(16, 16)))
        #expect(Self.rows(out) == Array(repeating: "white", count: 16))
        try h.finish()
    }

    @Test func theSizeIsRequiredAndChecked() {
        let loader = GraphLoader(registry: .builtIn)
        func problems(_ params: String) -> [String] {
            do {
                _ = try loader.load(json: #"{ "version": 1, "nodes": { "s": { "type": "effect.scale", "params": { \#(params) } } } }"#)
                return []
            } catch {
                return error.problems.map(\.description).filter { !$0.contains("not connected") }
            }
        }
        #expect(problems(#""width": 16"#).contains { $0.contains("nodes.s.params.height") && $0.contains("required") })
        #expect(problems(#""width": 16, "height": 1"#).contains { $0.contains("nodes.s.params.height") && $0.contains("out of range") })
        #expect(problems(#""width": 16, "height": 16, "mode": "crop""#).contains { $0.contains("nodes.s.params.mode") })
    }
}
