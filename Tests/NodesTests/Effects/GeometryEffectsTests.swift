import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite struct GeometryEffectsTests {
    @Test(.media) func cropRectanglesKeepTheWidthWhenTheyCan() {
        #expect(CropNode.rectangle(width: 720, height: 1280, aspect: (3, 4)) == (0, 160, 720, 960))
        #expect(CropNode.rectangle(width: 1920, height: 1080, aspect: (1, 1)) == (420, 0, 1080, 1080))
        #expect(CropNode.rectangle(width: 1280, height: 720, aspect: (9, 16)) == (438, 0, 404, 720))  // 405 made even
        #expect(CropNode.rectangle(width: 8, height: 12, aspect: (3, 4)) == (0, 1, 8, 10))
    }

    @Test(.media) func cropChangesTheSizeBeforeTheFirstFrameAndKeepsTheRightPixels() throws {
        let h = try NodeHarness(#"{ "type": "effect.crop", "params": { "aspect": "3:4" } }"#)
        try h.push(try VideoTestFrames.frame(8, 12) { x, y in (UInt8(x), UInt8(y), 7, 255) })
        let out = try #require(h.pull())
        #expect(out.format == .rawVideo(VideoTestFrames.format(8, 10)))
        #expect(VideoTestFrames.pixels(out).pixels == (1..<11).flatMap { y in (0..<8).map { x in [UInt8(x), UInt8(y), 7, 255] } })
        try h.finish()
    }

    @Test(.media) func cropToARectangle() throws {
        let h = try NodeHarness(#"{ "type": "effect.crop", "params": { "x": 2, "y": 1, "width": 4, "height": 2 } }"#)
        try h.push(try VideoTestFrames.frame(8, 4) { x, y in (UInt8(x), UInt8(y), 0, 255) })
        let out = try #require(h.pull())
        #expect(out.format == .rawVideo(VideoTestFrames.format(4, 2)))
        #expect(VideoTestFrames.pixels(out).pixels == (1..<3).flatMap { y in (2..<6).map { x in [UInt8(x), UInt8(y), 0, 255] } })
        try h.finish()
    }

    @Test(.media, arguments: [("90", [[0, 1], [0, 0]] as [[Int]]), ("270", [[2, 0], [2, 1]])])
    func rotateSwapsWidthAndHeight(_ degrees: String, _ firstColumnSources: [[Int]]) throws {
        // A 3×2 frame becomes 2×3. Clockwise, the new top row comes from the old left column,
        // bottom up; counter-clockwise, from the old right column, top down.
        let h = try NodeHarness(#"{ "type": "effect.rotate", "params": { "degrees": "\#(degrees)" } }"#)
        try h.push(try VideoTestFrames.frame(3, 2) { x, y in (UInt8(x), UInt8(y), 0, 255) })
        let out = try #require(h.pull())
        #expect(out.format == .rawVideo(VideoTestFrames.format(2, 3)))
        let px = VideoTestFrames.pixels(out).pixels
        #expect([Int(px[0][0]), Int(px[0][1])] == firstColumnSources[0])
        #expect([Int(px[1][0]), Int(px[1][1])] == firstColumnSources[1])
        try h.finish()
    }

    @Test func cropParametersAreChecked() {
        let loader = GraphLoader(registry: .builtIn)
        func problems(_ params: String) -> [String] {
            do {
                _ = try loader.load(json: #"{ "version": 1, "nodes": { "c": { "type": "effect.crop", "params": { \#(params) } } } }"#)
                return []
            } catch {
                return error.problems.map(\.description).filter { !$0.contains("not connected") }
            }
        }
        #expect(problems(#""aspect": "4by3""#) == [#"nodes.c.params.aspect: expected "W:H" with whole numbers above 0, got "4by3""#])
        #expect(problems(#""x": 1"#) == ["nodes.c.params.y: give aspect, or all of x, y, width and height (missing: y, width, height)"])
        #expect(problems(#""aspect": "1:1", "x": 0, "y": 0, "width": 4, "height": 4"#) == ["nodes.c.params.x: give aspect, or x, y, width and height, not both"])
        #expect(problems("") == ["nodes.c.params: give aspect, or all of x, y, width and height"])
    }
}
