import Foundation
import GraphKitTesting
import Testing
import TestSupport

/// `capture.video` from a V4L2 camera, through GStreamer's v4l2src, on a machine without one:
/// the camera is Tests/Fixtures/fake-v4l2 preloaded into graphctl (320x240 YUYV at 30 frames a
/// second, a bright bar moving 4 pixels a frame).
@Suite(.media, .timeLimit(.minutes(2))) struct V4L2CaptureTests {
    let folder: URL
    let camera: FakeV4L2Camera
    init() throws {
        folder = try TestMedia.temporaryFolder()
        camera = try FakeV4L2Camera(in: folder)
    }

    func graph(width: Int, height: Int, fps: Int, seconds: Int, to movie: String) throws -> String {
        let path = folder.appendingPathComponent("camera-\(width).json").path
        try #"""
        { "version": 1, "nodes": {
            "camera": { "type": "capture.video", "params": { "device": "\#(camera.devicePath)", "width": \#(width), "height": \#(height), "fps": \#(fps), "duration": \#(seconds) } },
            "h264": { "type": "encode.h264" },
            "file": { "type": "sink.mp4", "params": { "path": "\#(movie)" } } },
          "edges": ["camera.out -> h264.in", "h264.out -> file.video"] }
        """#.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Row `y` of frame `n`'s luma.
    func lumaRow(_ movie: String, frame n: Int, width: Int, height: Int, y: Int) throws -> [UInt8] {
        let raw = folder.appendingPathComponent("frame\(n).yuv").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", movie, "-vf", "select=eq(n\\,\(n))", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", raw])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
        #expect(bytes.count == width * height)
        return Array(bytes[(y * width)..<((y + 1) * width)])
    }

    /// The presentation times of the movie's frames, in seconds.
    func frameTimes(_ movie: String) throws -> [Double] {
        try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time", "-of", "csv=p=0", movie])
            .split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// The middle of the bright bar on a row.
    func bar(_ row: [UInt8]) -> Double {
        let bright = row.indices.filter { row[$0] > 180 }
        return bright.isEmpty ? -1 : Double(bright.reduce(0, +)) / Double(bright.count)
    }

    /// Two seconds at the camera's own format: about 60 frames of it, the bar 4 pixels on for
    /// each 1/30 s between two frames' times, as the camera drew it (a loaded machine may
    /// thin a burst of late frames, so the times, not the frame numbers, say how far).
    @Test func aCameraIsRecordedAsItGivesItsFrames() throws {
        let movie = folder.appendingPathComponent("camera.mp4").path
        let result = try RunningGraphctl(["run", try graph(width: 320, height: 240, fps: 30, seconds: 2, to: movie), "--quiet"],
                                         environment: camera.environment()).wait()
        #expect(result.status == 0, "\(result.stderr)")
        let probe = try MediaProbe(movie, countFrames: true)
        let video = try #require(probe.stream("video"))
        #expect(video.width == 320 && video.height == 240)
        #expect((55...60).contains(video.frameCount ?? 0), "\(String(describing: video.frameCount)) frames")
        let first = bar(try lumaRow(movie, frame: 5, width: 320, height: 240, y: 120))
        let later = bar(try lumaRow(movie, frame: 15, width: 320, height: 240, y: 120))
        let times = try frameTimes(movie)
        try #require(times.count > 15)
        let steps = ((times[15] - times[5]) * 30).rounded()
        #expect(first >= 0 && abs((later - first) - 4 * steps) <= 4, "the bar moved from \(first) to \(later) in \(steps) frame times")
    }

    /// A smaller size and rate than the camera's: scaled and thinned to what was asked.
    @Test func aCameraIsScaledAndThinnedToTheAskedFormat() throws {
        let movie = folder.appendingPathComponent("small.mp4").path
        let result = try RunningGraphctl(["run", try graph(width: 160, height: 120, fps: 15, seconds: 2, to: movie), "--quiet"],
                                         environment: camera.environment()).wait()
        #expect(result.status == 0, "\(result.stderr)")
        let video = try #require(try MediaProbe(movie, countFrames: true).stream("video"))
        #expect(video.width == 160 && video.height == 120 && (26...31).contains(video.frameCount ?? 0), "\(String(describing: video.frameCount)) frames")
    }

    /// A camera another program holds: exit 75 (EX_TEMPFAIL), naming the node and the device
    /// and saying it is busy, and no movie.
    @Test func aCameraInUseFailsAsBusy() throws {
        let movie = folder.appendingPathComponent("busy.mp4").path
        let result = try RunningGraphctl(["run", try graph(width: 320, height: 240, fps: 30, seconds: 2, to: movie)],
                                         environment: camera.environment(busyAttempts: 1_000_000)).wait()
        #expect(result.status == 75, "\(result.stderr)")
        #expect(result.stderr.contains("node \"camera\"") && result.stderr.contains(camera.devicePath) && result.stderr.contains("busy"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: movie))
    }
}
