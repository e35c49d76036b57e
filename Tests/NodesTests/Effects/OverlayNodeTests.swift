import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// The overlay draws with GStreamer's Pango and gdk-pixbuf elements: check where it drew, by
/// pixels, not how the glyphs look.
@Suite(.media) struct OverlayNodeTests {
    static func black(_ w: Int, _ h: Int) throws -> SampleBuffer {
        try VideoTestFrames.frame(w, h) { _, _ in (0, 0, 0, 255) }
    }

    /// Pixels that are no longer black, as (x, y).
    static func drawn(_ b: SampleBuffer, width: Int) -> [(Int, Int)] {
        VideoTestFrames.pixels(b).pixels.enumerated().compactMap { i, p in
            p[0] > 40 || p[1] > 40 || p[2] > 40 ? (i % width, i / width) : nil
        }
    }

    @Test(arguments: [("left", "top"), ("right", "bottom")])
    func textGoesWhereItIsAligned(_ halign: String, _ valign: String) throws {
        let h = try NodeHarness(#"{ "type": "effect.overlay", "params": { "text": "GraphKit", "halign": "\#(halign)", "valign": "\#(valign)", "fontSize": 16 } }"#)
        try h.push(try Self.black(320, 120))
        let out = try #require(h.pull())
        let px = Self.drawn(out, width: 320)
        #expect(px.count > 100)
        let meanX = Double(px.map(\.0).reduce(0, +)) / Double(px.count), meanY = Double(px.map(\.1).reduce(0, +)) / Double(px.count)
        #expect(halign == "left" ? meanX < 120 : meanX > 200)
        #expect(valign == "top" ? meanY < 50 : meanY > 70)
        try h.finish()
    }

    /// Pango markup's special characters are drawn as written: as markup, "Q&A <1>" is an error
    /// and Pango drew nothing at all.
    @Test(arguments: ["text", "timestamp", "frameNumber"])
    func markupCharactersAreDrawnAsWritten(_ show: String) throws {
        let plain = try NodeHarness(#"{ "type": "effect.overlay", "params": { "show": "\#(show)", "text": "QA 1 ", "fontSize": 24 } }"#)
        try plain.push(try Self.black(320, 60))
        let reference = Self.drawn(try #require(plain.pull()), width: 320).count
        try plain.finish()
        let h = try NodeHarness(#"{ "type": "effect.overlay", "params": { "show": "\#(show)", "text": "Q&A <1> ", "fontSize": 24 } }"#)
        try h.push(try Self.black(320, 60))
        let px = Self.drawn(try #require(h.pull()), width: 320)
        #expect(reference > 100)
        #expect(px.count > reference)  // the same text and "&", "<", ">" besides
        try h.finish()
    }

    @Test func frameNumbersChangeFromFrameToFrame() throws {
        let h = try NodeHarness(#"{ "type": "effect.overlay", "params": { "show": "frameNumber", "fontSize": 16 } }"#)
        var a = try Self.black(200, 60), b = try Self.black(200, 60)
        a.presentationTime = .zero
        b.presentationTime = MediaTime(value: 1, timescale: 30)
        try h.push([a, b])
        let first = try #require(h.pull()), second = try #require(h.pull())
        #expect(!Self.drawn(first, width: 200).isEmpty)
        #expect(first.bytes != second.bytes)
        try h.finish()
    }

    @Test func aPNGWatermark() throws {
        let folder = try TestMedia.temporaryFolder()
        let png = folder.appendingPathComponent("mark.png").path
        try TestMedia.gstLaunch("videotestsrc num-buffers=1 pattern=white ! video/x-raw,width=20,height=10 ! pngenc ! filesink location=\(png)")
        let h = try NodeHarness(#"{ "type": "effect.overlay", "params": { "show": "image", "image": "\#(png)", "halign": "left", "valign": "top" } }"#)
        try h.push(try Self.black(100, 50))
        let px = Self.drawn(try #require(h.pull()), width: 100)
        #expect(px.count == 200)  // the 20×10 mark, whole
        #expect(px.allSatisfy { $0.0 < 25 && $0.1 < 15 })
        try h.finish()
        #expect(throws: GraphError(.inputUnreadable, at: "nodes.node.params.image", "cannot read \"/nonexistent.png\"", node: "node")) {
            try NodeHarness(#"{ "type": "effect.overlay", "params": { "show": "image", "image": "/nonexistent.png" } }"#)
        }
    }

    /// An image aligned right, bottom or centre lies inside the frame, as text does: it was
    /// placed with its corner at 98% (or 50%) of the frame, so "right" showed 2% of it.
    @Test(arguments: [("center", "center", 128, 96), ("right", "bottom", 249, 187), ("left", "bottom", 6, 187), ("right", "top", 249, 4)])
    func anImageGoesWhereItIsAligned(_ halign: String, _ valign: String, _ x: Int, _ y: Int) throws {
        let folder = try TestMedia.temporaryFolder()
        let png = folder.appendingPathComponent("mark.png").path
        try TestMedia.gstLaunch("videotestsrc num-buffers=1 pattern=white ! video/x-raw,width=64,height=48 ! pngenc ! filesink location=\(png)")
        let h = try NodeHarness(#"{ "type": "effect.overlay", "params": { "show": "image", "image": "\#(png)", "halign": "\#(halign)", "valign": "\#(valign)" } }"#)
        try h.push(try Self.black(320, 240))
        let px = Self.drawn(try #require(h.pull()), width: 320)
        try h.finish()
        #expect(px.count == 64 * 48, "\(halign) \(valign): \(px.count) pixels drawn")  // whole, inside the frame
        #expect(px.map(\.0).min() == x && px.map(\.1).min() == y, "\(halign) \(valign): at (\(px.map(\.0).min() ?? -1), \(px.map(\.1).min() ?? -1))")
    }
}
