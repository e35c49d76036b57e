import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// graphs/frames.json end to end: drawn frames to an H.264 QuickTime movie, run as a user runs
/// it (from a folder of their own, writing out/frames.mov there).
@Suite(.media) struct FramesGraphTests {
    @Test func framesGraphWritesFiveSecondsOfH264InAMovie() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let r = try Graphctl.run("run", Graphctl.graph("frames.json"), in: folder)
        #expect(r.status == 0, "\(r.stderr)")
        let movie = folder.appendingPathComponent("out/frames.mov").path
        let probe = try MediaProbe(movie, countFrames: true)
        let video = try #require(probe.stream("video"))
        #expect(video.codecName == "h264")
        #expect(video.width == 1280 && video.height == 720)
        #expect(video.frameCount == 150)
        #expect(video.frameRate == 30)
        #expect(abs((video.duration ?? 0) - 5) < 0.001)
        #expect(abs(probe.duration - 5) < 0.001)
        #expect(probe.streams.count == 1)
        // A QuickTime movie, not an MP4 named .mov: the file type's brand is "qt  ".
        let head = [UInt8](try Data(contentsOf: URL(fileURLWithPath: movie)).prefix(12))
        #expect(String(decoding: head[4..<12], as: UTF8.self) == "ftypqt  ")

        // The counter's digits read back from the first, second, middle and last frames.
        let picked = [0, 1, 75, 149]
        let gray = folder.appendingPathComponent("picked.gray").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", movie, "-vf", "select='" + picked.map { "eq(n\\,\($0))" }.joined(separator: "+") + "'",
                                         "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "gray", gray])
        let pixels = [UInt8](try Data(contentsOf: URL(fileURLWithPath: gray)))
        let size = 1280 * 720
        #expect(pixels.count == size * picked.count)
        let layout = FramePainter.CounterLayout(width: 1280, height: 720, digits: 4)
        for (i, n) in picked.enumerated() where pixels.count >= (i + 1) * size {
            #expect(Self.readCounter(layout) { x, y in pixels[i * size + y * 1280 + x] > 128 } == n, "frame \(n)")
        }
    }

    /// Both lengths at once: refused before anything runs, at the parameter, with the exit status
    /// of an invalid graph.
    @Test func bothLengthsAreRefusedWhereTheyAre() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let shipped = try String(contentsOfFile: Graphctl.graph("frames.json"), encoding: .utf8)
        for (name, from, to, problem) in [
            ("both", #""duration": 5"#, #""duration": 5, "frames": 100"#, "nodes.frames.params.frames: give duration or frames, not both"),
            ("narrow", #""width": 1280"#, #""width": 8"#, "nodes.frames.params.width: 8 is out of range (16 to 7680)"),
        ] {
            let path = folder.appendingPathComponent("\(name).json").path
            try shipped.replacingOccurrences(of: from, with: to).write(toFile: path, atomically: true, encoding: .utf8)
            let r = try Graphctl.run("run", path, in: folder)
            #expect(r.status == 65)
            #expect(r.stderr == "error: \(path): \(problem)\n")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("out").path))
        // A --set of one length replaces the file's other.
        let set = try Graphctl.run("validate", Graphctl.graph("frames.json"), "--set", "frames.frames=10")
        #expect(set.status == 0, "\(set.stderr)")
    }

    /// Reads the seven-segment number in a frame (``SevenSegments``), each segment sampled at its
    /// centre in `layout`: `lit(x, y)` says whether a pixel is white.
    static func readCounter(_ layout: FramePainter.CounterLayout, lit: (Int, Int) -> Bool) -> Int? {
        SevenSegments.read(count: layout.digits, centre: { i, s in
            let r = layout.segment(s, of: layout.cell(i))
            return ((r.x0 + r.x1) / 2, (r.y0 + r.y1) / 2)
        }, lit: lit)
    }
}
