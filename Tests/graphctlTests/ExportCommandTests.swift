import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphctl export IN OUT --preset P`: what it writes (ffprobe), what it says, and its exit
/// statuses for a preset, range or extension it cannot use (64), an input it cannot read (66)
/// and an output that exists (73); nothing is left at OUT when it refuses.
@Suite(.media, .timeLimit(.minutes(10))) struct ExportCommandTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// 3 s of 640x360 H.264 with AAC.
    func movie() throws -> String {
        let p = path("in.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=640x360:r=25:d=3", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=3", "-c:v", "libx264", "-g", "25", "-c:a", "aac", p])
        return p
    }

    @Test func exportsWithAPresetAndSaysHowFarItIs() throws {
        let source = try movie()
        let r = try Graphctl.run("export", source, path("small.mp4"), "--preset", "640x480")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "")
        #expect(r.stderr.hasSuffix("exporting: 100%\n"), "\(r.stderr)")
        let probe = try MediaProbe(path("small.mp4"))
        #expect(probe.stream("video")?.codecName == "h264" && probe.stream("video")?.width == 640 && probe.stream("video")?.height == 360)
        #expect(probe.stream("audio")?.codecName == "aac" && abs(probe.duration - 3) < 0.05)
        let boxes = MediaProbe.boxes(path("small.mp4"))
        #expect((boxes.firstIndex(of: "moov") ?? .max) < (boxes.firstIndex(of: "mdat") ?? -1), "index first by default: \(boxes)")

        // A range, copied as stored, into a QuickTime file with its index last; quiet.
        let q = try Graphctl.run("export", source, path("part.mov"), "--preset", "passthrough", "--start", "1", "--duration", "1.5",
                                 "--no-faststart", "--quiet")
        #expect(q.status == 0 && q.stderr == "" && q.stdout == "", "\(q.stderr)")
        let brand = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=major_brand", "-of", "csv=p=0", path("part.mov")])
        #expect(brand.trimmingCharacters(in: .whitespacesAndNewlines) == "qt")
        #expect(abs(try MediaProbe(path("part.mov")).duration - 1.5) < 0.03)
        let part = MediaProbe.boxes(path("part.mov"))
        #expect((part.firstIndex(of: "mdat") ?? .max) < (part.firstIndex(of: "moov") ?? -1), "\(part)")
    }

    /// A range re-encoded: the run seeks through the muxer, whose GStreamer 1.22 base class
    /// asserts on the seek (its output's segment is in bytes) though it passes it on; --quiet
    /// leaves stderr empty, that line included.
    @Test func aRangeReencodedSaysNothingWhenQuiet() throws {
        let source = try movie()
        let r = try Graphctl.run("export", source, path("range.mp4"), "--preset", "640x480", "--start", "1", "--duration", "1.5", "--quiet")
        #expect(r.status == 0 && r.stderr == "" && r.stdout == "", "\(r.stderr)")
        #expect(abs(try MediaProbe(path("range.mp4")).duration - 1.5) < 0.05)
    }

    @Test func whatItCannotUseIsRefusedWithItsStatus() throws {
        let source = try movie()
        let badPreset = try Graphctl.run("export", source, path("out.mp4"), "--preset", "720p")
        #expect(badPreset.status == 64)
        #expect(badPreset.stderr.contains("error: --preset: \"720p\" is not a preset: choose one of 1280x720, 1920x1080, 3840x2160, 640x480, 960x540, appleM4A, hevc1920x1080, hevc3840x2160, hevcHighestQuality, highestQuality, lowQuality, mediumQuality, passthrough"),
                "\(badPreset.stderr)")
        let badType = try Graphctl.run("export", source, path("out.avi"), "--preset", "passthrough")
        #expect(badType.status == 64 && badType.stderr.contains("does not end in .mp4, .mov or .m4a"), "\(badType.stderr)")
        let late = try Graphctl.run("export", source, path("out.mp4"), "--preset", "passthrough", "--start", "5")
        #expect(late.status == 64 && late.stderr.contains("timeRange") && late.stderr.contains("past the end"), "\(late.stderr)")
        let missing = try Graphctl.run("export", path("nothing.mp4"), path("out.mp4"), "--preset", "passthrough")
        #expect(missing.status == 66 && missing.stderr.contains("nothing.mp4"), "\(missing.stderr)")
        FileManager.default.createFile(atPath: path("taken.mp4"), contents: Data("mine".utf8))
        let taken = try Graphctl.run("export", source, path("taken.mp4"), "--preset", "passthrough")
        #expect(taken.status == 73 && taken.stderr.contains("exists already"), "\(taken.stderr)")
        #expect(try String(contentsOfFile: path("taken.mp4"), encoding: .utf8) == "mine")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["in.mp4", "taken.mp4"])
    }
}
