import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphs/thumbnails.json`, run end to end by graphctl on a video ffmpeg makes here: ten
/// JPEG pictures (ffmpeg's decode of the keyframe at or before each time), their sprite sheet
/// and its WebVTT index; and a run of many pictures that SIGINT stops at once, keeping the
/// pictures taken.
@Suite(.media, .timeLimit(.minutes(10))) struct ThumbnailsGraphTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// 20 s of 320x240 H.264 at 25 fps, a keyframe every 2 s, frame N's luma 20 + (9N mod 180)
    /// plus a ramp across: neighbouring frames differ by 9 levels.
    func video() throws -> String {
        let p = path("source.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i",
                                         "color=c=black:s=320x240:r=25:d=20,format=yuv420p,geq=lum='mod(N*9\\,180)+20+X/16':cb=128:cr=128",
                                         "-c:v", "libx264", "-crf", "10", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", p])
        return p
    }

    /// A picture's luma as ffmpeg reads it, and ffmpeg's own decode of the keyframe at or before
    /// `seconds` (no accurate seek), scaled to the same 160x120.
    func luma(_ arguments: [String]) throws -> [UInt8] {
        let out = path("luma-\(UUID().uuidString).raw")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y"] + arguments + ["-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", out])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    static func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
        guard a.count == b.count, !a.isEmpty else { return .infinity }
        return Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(a.count)
    }

    @Test func theGraphWritesTenPicturesTheirSpriteSheetAndItsIndex() throws {
        let source = try video()
        let out = path("thumbnails")
        let r = try Graphctl.run("run", Graphctl.graph("thumbnails.json"), "--set", "thumbs.path=\(source)", "--set", "thumbs.folder=\(out)",
                                 "--set", "thumbs.sprite=\(out)/sprite.jpg", "--set", "thumbs.vtt=\(out)/sprite.vtt")
        #expect(r.status == 0, "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out).sorted()
        #expect(files == ["sprite.jpg", "sprite.vtt"] + (1...10).map { String(format: "thumb-%04d.jpg", $0) }, "\(files)")
        // Picture i at 2i s: the keyframe there, as ffmpeg decodes it.
        for i in [0, 3, 9] {
            let ours = try luma(["-i", "\(out)/thumb-\(String(format: "%04d", i + 1)).jpg"])
            let theirs = try luma(["-noaccurate_seek", "-ss", "\(2 * i)", "-i", source, "-vf", "scale=160:120"])
            #expect(Self.meanDifference(ours, theirs) < 3, "picture \(i + 1): \(Self.meanDifference(ours, theirs))")
        }
        let size = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0:s=x", "\(out)/sprite.jpg"])
        #expect(size.trimmingCharacters(in: .whitespacesAndNewlines) == "800x240")
        let cues = try String(contentsOfFile: "\(out)/sprite.vtt", encoding: .utf8).components(separatedBy: "\n\n").dropFirst()
        #expect(cues.count == 10)
        #expect(cues.first?.hasPrefix("00:00:00.000 --> 00:00:02.000\nsprite.jpg#xywh=0,0,160,120") == true, "\(cues.first ?? "")")
        #expect(cues.last?.hasPrefix("00:00:18.000 --> 00:00:20.000\nsprite.jpg#xywh=640,120,160,120") == true, "\(cues.last ?? "")")
    }

    /// SIGINT while the most pictures are taken (10,000, a picture a second of the run's media
    /// as the progress line shows it) stops the run at once: exit 0, the pictures taken written
    /// with their sheet and index, nothing else left (no temporary file).
    @Test func sigintStopsAtOnceKeepingThePicturesTaken() throws {
        let source = try video()
        let out = path("many")
        let graphctl = try Graphctl.start(["run", Graphctl.graph("thumbnails.json"), "--set", "thumbs.path=\(source)", "--set", "thumbs.count=10000",
                                           "--set", "thumbs.width=32", "--set", "thumbs.folder=\(out)", "--set", "thumbs.sprite=\(out)/sprite.jpg",
                                           "--set", "thumbs.vtt=\(out)/sprite.vtt", "--progress", "always"])
        try graphctl.waitForPosition(atLeast: 3)
        graphctl.send(SIGINT)
        let r = graphctl.wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("stopped in"), "\(r.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: out)
        let pictures = files.filter { $0.hasPrefix("thumb-") }.count
        #expect(pictures >= 3 && pictures < 10_000 && files.count == pictures + 2, "\(files.count) files")
        #expect(!files.contains { $0.hasPrefix(".") }, "a temporary file was left")
        let cues = try String(contentsOfFile: "\(out)/sprite.vtt", encoding: .utf8).components(separatedBy: "\n\n").dropFirst()
        #expect(cues.count == pictures)
    }
}
