import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// Drawn RGB frames through encode.h264 (GraphKit's own RGB-to-I420 converter, then x264) come
/// back as the same colours when a player decodes them: the matrix the converter used is the one
/// the stream says (BT.601 below 720 lines, BT.709 from 720 up, as GStreamer chooses), for
/// BGRA and RGBA alike; YUV frames (I420, NV12) pass through it untouched.
@Suite(.media) struct EncodeColourTests {
    @Test(arguments: [(320, 240, "bgra", "smpte170m"), (1280, 720, "rgba", "bt709"), (1280, 720, "bgra", "bt709"),
                      (320, 240, "i420", "smpte170m"), (1280, 720, "nv12", "bt709")])
    func solidColoursSurviveTheEncode(width: Int, height: Int, pixelFormat: String, matrix: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        for colour in ["#ff0000", "#00ff00", "#0000ff", "#203040", "#f0e0d0"] {
            let graph = folder.appendingPathComponent("g.json")
            let movie = folder.appendingPathComponent("out.mp4").path
            try #"""
            { "version": 1, "nodes": {
                "frames": { "type": "generate.frames", "params": { "pattern": "solid", "color": "\#(colour)", "width": \#(width), "height": \#(height), "frames": 3, "pixelFormat": "\#(pixelFormat)" } },
                "h264": { "type": "encode.h264", "params": { "bitrate": 4000000 } },
                "file": { "type": "sink.mp4", "params": { "path": "\#(movie)" } } },
              "edges": ["frames.out -> h264.in", "h264.out -> file.video"] }
            """#.write(to: graph, atomically: true, encoding: .utf8)
            let r = try Graphctl.run("run", graph.path, "--quiet")
            try #require(r.status == 0, "\(r.stderr)")
            let tags = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=color_space,color_range", "-of", "csv=p=0", movie])
            #expect(tags.trimmingCharacters(in: .whitespacesAndNewlines) == "tv,\(matrix)", "\(colour): \(tags)")
            let rgb = folder.appendingPathComponent("frame.rgb").path
            _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", movie, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", rgb])
            let pixels = [UInt8](try Data(contentsOf: URL(fileURLWithPath: rgb)))
            try #require(pixels.count == width * height * 3)
            let want = [1, 3, 5].map { Int(colour.dropFirst($0).prefix(2), radix: 16)! }
            // The centre pixel, away from any edge.
            let centre = ((height / 2) * width + width / 2) * 3
            let got = (0..<3).map { Int(pixels[centre + $0]) }
            #expect(zip(got, want).allSatisfy { abs($0 - $1) <= 4 }, "\(width)x\(height) \(pixelFormat) \(colour): decoded as \(got)")
        }
    }
}
