import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport
@testable import Nodes

/// graphs/record.json and friends, end to end. Frame counts use live: false, which is
/// deterministic in a debug build; the live path has its own test.
@Suite(.media) struct VideoGraphTests {
    @Test func recordGraphWritesInterleavedH264AndAAC() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("record.mp4").path
        let r = try Graphctl.run("run", Graphctl.graph("record.json"), "--set", "camera.live=false", "--set", "mic.live=false",
                                 "--set", "camera.duration=2", "--set", "mic.duration=2", "--set", "file.path=\(out)")
        #expect(r.status == 0, "\(r.stderr)")
        let probe = try MediaProbe(out, countFrames: true)
        let video = try #require(probe.stream("video"))
        #expect(video.codecName == "h264")
        #expect(video.width == 720 && video.height == 960)
        #expect(video.frameRate == 30)
        #expect(abs((video.frameCount ?? 0) - 60) <= 2)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(abs(probe.duration - 2) <= 0.1)
        #expect(probe.topLevelBoxes.firstIndex(of: "moov")! < probe.topLevelBoxes.firstIndex(of: "mdat")!)
    }

    /// A phone's portrait video is stored landscape with a display rotation. By default the
    /// transcode keeps it, as AVFoundation keeps a track's transform: the output's display matrix
    /// says the input's rotation (ffprobe reads the same), over the frames as stored. Both the
    /// stored size and the rotation come out as they went in, for each right angle.
    @Test(arguments: [90, 180, 270])
    func aRotatedVideoKeepsItsOrientation(_ degrees: Int) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rotated = try RotatedVideo.make(degrees, in: folder)
        let out = folder.appendingPathComponent("out.mp4").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--set", "src.path=\(rotated)", "--set", "file.path=\(out)")
        #expect(r.status == 0, "\(r.stderr)")
        let input = try RotatedVideo.geometry(rotated), output = try RotatedVideo.geometry(out)
        #expect(input.rotation != 0)
        #expect(output.width == 160 && output.height == 120)
        #expect(output.rotation == input.rotation, "input \(input), output \(output)")
    }

    /// An odd frame size cannot be H.264 4:2:0: the run fails saying so and how to crop, and
    /// writes nothing (x264 said only "Can not initialize x264 encoder"); cropped, it works.
    @Test func anOddFrameSizeIsRefusedWithTheCropThatFixesIt() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("odd.mp4").path, out = folder.appendingPathComponent("out.mp4").path
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=161x97:rate=30000/1001:duration=1",
                                             "-f", "lavfi", "-i", "sine=duration=1", "-c:v", "libx264", "-pix_fmt", "yuv444p", "-c:a", "aac", input])
        let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--set", "src.path=\(input)", "--set", "file.path=\(out)")
        #expect(r.status == 70)
        #expect(r.stderr.contains("161x97 video cannot be encoded: H.264 (4:2:0) needs an even width and height; crop it to 160x96 first"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["odd.mp4"])
        let graph = folder.appendingPathComponent("crop.json").path
        try #"""
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\#(input)" } },
              "dec": { "type": "decode" }, "crop": { "type": "effect.crop", "params": { "x": 0, "y": 0, "width": 160, "height": 96 } },
              "h264": { "type": "encode.h264" }, "file": { "type": "sink.mp4", "params": { "path": "\#(out)" } } },
              "edges": [ "src.out -> dec.in", "dec.video -> crop.in", "crop.out -> h264.in", "h264.out -> file.video" ] }
            """#.write(toFile: graph, atomically: true, encoding: .utf8)
        let cropped = try Graphctl.run("run", graph)
        #expect(cropped.status == 0, "\(cropped.stderr)")
        let geometry = try RotatedVideo.geometry(out)
        #expect(geometry.width == 160 && geometry.height == 96)
    }

    /// sink.mp4's `videoTransform` is the video track's display matrix as given (what
    /// AVAssetWriterInput.transform writes): over the input's own rotation, which it replaces.
    /// What a file cannot hold, or a matrix with no video to hold it, is refused before the run.
    @Test func videoTransformIsTheTracksDisplayMatrix() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rotated = try RotatedVideo.make(90, in: folder)
        let out = folder.appendingPathComponent("out.mp4").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--set", "src.path=\(rotated)", "--set", "file.path=\(out)",
                                 "--set", "file.videoTransform=-1 0 0 -1 160 120")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try RotatedVideo.geometry(out) == (160, 120, -180))  // ffprobe: counter-clockwise
        for (value, complaint) in [("0 1 -1 0", "six numbers"), ("1e9 0 0 1 0 0", "each within ±32768")] {
            let bad = try Graphctl.run("validate", Graphctl.graph("transcode-video.json"), "--set", "file.videoTransform=\(value)")
            #expect(bad.status == 65, "\(bad.stderr)")
            #expect(bad.stderr.contains("videoTransform") && bad.stderr.contains(complaint), "\(bad.stderr)")
        }
        let fragmented = try Graphctl.run("validate", Graphctl.graph("transcode-video.json"), "--set", "file.videoTransform=0 1 -1 0 0 0",
                                          "--set", "file.fragmentInterval=1")
        #expect(fragmented.status == 65 && fragmented.stderr.contains("fragmented file"), "\(fragmented.stderr)")
        let sound = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(rotated)",
                                     "--set", "file.path=\(folder.path)/a.m4a", "--set", "file.videoTransform=0 1 -1 0 0 0")
        #expect(sound.status == 65, "\(sound.stderr)")
        #expect(sound.stderr.contains("nodes.file.params.videoTransform") && sound.stderr.contains("video input is not connected"), "\(sound.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "\(folder.path)/a.m4a"))
        let validated = try Graphctl.run("validate", Graphctl.graph("transcode-audio.json"), "--set", "file.videoTransform=0 1 -1 0 0 0")
        #expect(validated.status == 65 && validated.stderr.contains("video input is not connected"), "validate refuses what run would: \(validated.stderr)")
    }

    /// A mirrored display matrix (a selfie camera's), which GStreamer's demuxer does not read:
    /// decode reads it from the index, and the output's matrix is the input's.
    @Test(arguments: [DisplayOrientation.flipRotate0, .flipRotate90, .flipRotate180, .flipRotate270])
    func aMirroredVideoKeepsItsOrientation(_ orientation: DisplayOrientation) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = try RotatedVideo.make(0, in: folder)
        try Self.setOrientation(orientation, of: input)
        #expect(try Self.orientation(of: input) == orientation)
        let out = folder.appendingPathComponent("out.mp4").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--set", "src.path=\(input)", "--set", "file.path=\(out)")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try Self.orientation(of: out) == orientation)
        // Turned and mirrored in the pixels instead, the output says upright.
        let turned = folder.appendingPathComponent("turned.mp4").path
        let t = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--set", "src.path=\(input)",
                                 "--set", "dec.autorotate=true", "--set", "file.path=\(turned)")
        #expect(t.status == 0, "\(t.stderr)")
        #expect(try Self.orientation(of: turned) == .rotate0)
        let geometry = try RotatedVideo.geometry(turned)
        #expect(orientation.degrees % 180 == 0 ? geometry.width == 160 : geometry.width == 120, "\(geometry)")
    }

    static func moov(_ path: String) throws -> (MP4Movie, offset: Int) {
        let source = try #require(FileBytes(path: path))
        let extent = try #require(try MP4File(source).boxes.first { $0.type == "moov" })
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let (offset, end) = (Int(extent.offset), Int(extent.offset + extent.size))
        return (try MP4Movie(parsing: bytes[offset..<end]), offset)
    }

    static func orientation(of path: String) throws -> DisplayOrientation? {
        try moov(path).0.tracks(handler: "vide").first?.track.orientation
    }

    /// Sets the video track's display matrix in place, as a phone writes it.
    static func setOrientation(_ orientation: DisplayOrientation, of path: String) throws {
        var (movie, offset) = try moov(path)
        let (index, track) = try #require(movie.tracks(handler: "vide").first)
        var edited = track
        edited.setOrientation(orientation)
        movie.moov.children[index] = edited.box
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data(movie.moov.bytes))
        try handle.close()
    }


    /// With decode's autorotate, the picture is turned as ffmpeg turns it (120x160, the same
    /// picture as ffmpeg's own rotated decode of the input) and the output says no rotation,
    /// so nothing turns it twice.
    @Test func autorotateTurnsTheFramesAsFFmpegDoes() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rotated = try RotatedVideo.make(90, in: folder)
        let out = folder.appendingPathComponent("out.mp4").path
        // At a bit rate that keeps the first frame close to its source (the automatic one, 77 kb/s
        // here, leaves x264's average-rate control a coarse first frame): the picture's
        // orientation is the subject, not the encoder's rate control.
        let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--set", "src.path=\(rotated)",
                                 "--set", "dec.autorotate=true", "--set", "h264.bitrate=1000000", "--set", "file.path=\(out)")
        #expect(r.status == 0, "\(r.stderr)")
        let geometry = try RotatedVideo.geometry(out)
        #expect(geometry.width == 120 && geometry.height == 160 && geometry.rotation == 0, "\(geometry)")
        // The first frame's luma, from ffmpeg's autorotated input and from our output.
        func firstFrame(_ path: String) throws -> [UInt8] {
            let raw = path + ".gray"
            _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", raw])
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        }
        let rotatedInput = try firstFrame(rotated), got = try firstFrame(out)
        #expect(rotatedInput.count == 120 * 160 && got.count == rotatedInput.count)
        // The graph mirrors each row after decoding.
        let expected = stride(from: 0, to: rotatedInput.count, by: 120).flatMap { rotatedInput[$0..<min($0 + 120, rotatedInput.count)].reversed() }
        func meanDifference(_ a: [UInt8], _ b: [UInt8]) -> Double {
            Double(zip(a, b).reduce(0) { $0 + abs(Int($1.0) - Int($1.1)) }) / Double(max(1, b.count))
        }
        let same = meanDifference(expected, got)
        #expect(same < 4, "mean luma difference \(same)")
        // Turned the other way (180° off), the picture differs far more.
        #expect(meanDifference(expected, got.reversed()) > 4 * max(same, 1))
    }

    @Test func transcodeVideoGraphRewritesAFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let input = folder.appendingPathComponent("in.mp4").path
        try TestMedia.gstLaunch("videotestsrc num-buffers=30 ! video/x-raw,width=160,height=120,framerate=30/1 ! x264enc ! mp4mux name=m ! filesink location=\(input) "
                                + "audiotestsrc num-buffers=44 ! audioconvert ! avenc_aac ! m.")
        let out = folder.appendingPathComponent("out.mp4").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--set", "src.path=\(input)", "--set", "file.path=\(out)")
        #expect(r.status == 0, "\(r.stderr)")
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.codecName == "h264")
        #expect(probe.stream("video")?.frameCount == 30)
        #expect(probe.stream("video")?.width == 160)
        #expect(probe.stream("audio")?.codecName == "aac")
    }

    @Test func liveRecordingCountsEveryFrame() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("live.mp4").path, stats = folder.appendingPathComponent("stats.json").path
        let r = try Graphctl.run("run", Graphctl.graph("record.json"), "--set", "camera.duration=2", "--set", "mic.duration=2",
                                 "--set", "camera.width=320", "--set", "camera.height=240", "--set", "file.path=\(out)", "--stats", stats)
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats)))
        let captured = report.nodes.first { $0.id == "camera" }!.buffersOut
        let edge = report.edges.first { $0.from == "camera.out" }!
        #expect(edge.queued)  // a live source's edge drops rather than waits
        let written = try MediaProbe(out, countFrames: true).stream("video")?.frameCount ?? -1
        #expect(captured == 60)
        #expect(captured == written + edge.drops, "captured \(captured), written \(written), dropped \(edge.drops)")
    }

    /// Killed once two fragments are whole on disk, the file still plays: every video frame of
    /// those fragments is read back.
    @Test func sigkillWithFragmentsLeavesAReadableFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("frag.mp4").path
        let graphctl = try Graphctl.start(["run", Graphctl.graph("record-fragmented.json"), "--set", "file.path=\(out)",
                                           "--set", "camera.width=320", "--set", "camera.height=240", "--set", "file.fragmentInterval=0.5",
                                           "--progress", "always"])
        try graphctl.wait(until: "two fragments with video were whole in \(out)") { _ in
            MP4Fragments(path: out).videoSamples > 0 && MP4Fragments(path: out).fragments >= 2
        }
        graphctl.send(SIGKILL)
        let r = graphctl.wait()
        #expect(r.status == SIGKILL)  // Process reports the signal that ended it
        let written = MP4Fragments(path: out)  // final now: nobody writes it any more
        #expect(written.videoSamples > 0)
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.codecName == "h264")
        #expect((probe.stream("video")?.frameCount ?? 0) >= written.videoSamples, "\(written.videoSamples) frames in whole fragments")
    }

    /// A camera with a key frame every 20 s (issue 73, class 4), fragments of 1 s: they are cut
    /// without a key frame once they hold 2 s, so a `kill -9` 5 s in keeps what was recorded up
    /// to the last cut (it kept 1,121 bytes and no packet: no fragment before the second key
    /// frame). Every frame of the whole fragments decodes from the one key frame.
    @Test func sigkillOfALongGOPRecordingKeepsItsFragments() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("long-gop.mp4").path
        let graphctl = try Graphctl.start(["run", Graphctl.graph("record-fragmented.json"), "--set", "file.path=\(out)",
                                           "--set", "camera.width=320", "--set", "camera.height=240", "--set", "h264.keyframeInterval=600",
                                           "--set", "file.fragmentInterval=1", "--progress", "always"])
        let started = Date()
        try graphctl.wait(until: "4 s of video in whole fragments in \(out)") { _ in MP4Fragments(path: out).videoSamples >= 120 }
        // Before the second key frame (20 s), which was the first cut.
        #expect(Date().timeIntervalSince(started) < 15, "\(Date().timeIntervalSince(started)) s")
        graphctl.send(SIGKILL)
        #expect(graphctl.wait().status == SIGKILL)
        let written = MP4Fragments(path: out)
        #expect(written.fragments >= 2 && written.videoSamples >= 120, "\(written.fragments) fragments, \(written.videoSamples) frames")
        let probe = try MediaProbe(out, countFrames: true)
        #expect((probe.stream("video")?.frameCount ?? 0) >= written.videoSamples, "\(written.videoSamples) frames in whole fragments")
    }

    /// graphs/record.json at 320x240 with no duration: it runs until stopped or killed. The
    /// progress line is on, so a test can wait for media to reach the file.
    func startUnboundedRecording(to out: String, _ more: [String] = []) throws -> RunningGraphctl {
        try Graphctl.start(["run", Graphctl.graph("record.json"), "--set", "file.path=\(out)", "--set", "camera.duration=0",
                            "--set", "mic.duration=0", "--set", "camera.width=320", "--set", "camera.height=240",
                            "--progress", "always"] + more)
    }

    @Test func sigkillWithoutFragmentsLeavesNothingUnderTheName() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("whole.mp4").path
        let graphctl = try startUnboundedRecording(to: out)
        try graphctl.waitForPosition(atLeast: 1)  // a second of media has reached the muxer
        graphctl.send(SIGKILL)
        #expect(graphctl.wait().status == SIGKILL)
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent(".whole.mp4.partial").path))  // killed mid-write
        // The next run to the same target removes what the killed one left.
        let again = try Graphctl.run("run", Graphctl.graph("record.json"), "--set", "file.path=\(out)", "--set", "camera.live=false",
                                     "--set", "mic.live=false", "--set", "camera.duration=0.5", "--set", "mic.duration=0.5",
                                     "--set", "camera.width=320", "--set", "camera.height=240")
        #expect(again.status == 0, "\(again.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["whole.mp4"])
    }

    /// Ctrl-C once two seconds of media are recorded: the file keeps all that reached it, as the
    /// run's statistics count it, and at least what the progress line showed before the signal.
    @Test func interruptingAnUnboundedRecordingKeepsWhatWasRecorded() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("int.mp4").path, stats = folder.appendingPathComponent("stats.json").path
        let graphctl = try startUnboundedRecording(to: out, ["--stats", stats])
        let shown = try graphctl.waitForPosition(atLeast: 2)
        graphctl.send(SIGINT)
        let r = graphctl.wait()
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats)))
        #expect(report.status == .stopped)
        #expect(report.mediaSeconds >= shown - 0.05)  // the line shows tenths, rounded
        let probe = try MediaProbe(out)
        #expect(probe.stream("video")?.codecName == "h264")
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(abs(probe.duration - report.mediaSeconds) <= 0.05, "file \(probe.duration) s, run \(report.mediaSeconds) s")
    }

    @Test func devicesSaysPlainlyWhatItFinds() throws {
        let r = try Graphctl.run("devices")
        #expect(r.status == 0)
        #expect(r.stdout.contains("Cameras:") && r.stdout.contains("Microphones:"))
    }
}
