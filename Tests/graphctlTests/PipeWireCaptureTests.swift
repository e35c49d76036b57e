import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// Capture from PipeWire with no hardware: a PipeWire, WirePlumber and D-Bus of the suite's own
/// (``PipeWireTestDaemon``, private runtime folder, stopped by PID), `gst-launch-1.0 …
/// pipewiresink mode=provide` processes as the camera and the microphone, and graphctl run in
/// that runtime folder (a child process: the test process's own environment stays as it is, so
/// no other suite's device listing sees these devices). Skipped only where PipeWire's programs
/// are missing; scripts/install-deps.sh installs them.
@Suite(.media, .serialized, .enabled(if: PipeWireTestDaemon.missing == nil, "\(PipeWireTestDaemon.missing ?? "")"))
struct PipeWireCaptureTests {
    /// Runs graphctl against the daemon, killed past `limit`.
    static func graphctl(_ daemon: PipeWireTestDaemon, _ arguments: [String], limit: Duration = .seconds(60)) throws -> Graphctl.Result {
        try RunningGraphctl(arguments, environment: daemon.environment).wait(limit: limit)
    }

    static func write(_ graph: String, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent("graph-\(UUID().uuidString).json").path
        try graph.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func cameraGraph(_ device: String, seconds: Double, to movie: String) -> String {
        """
        { "version": 1, "nodes": {
            "camera": { "type": "capture.video", "params": { "device": "\(device)", "width": 320, "height": 240, "fps": 30, "duration": \(seconds), "pixelFormat": "i420" } },
            "h264": { "type": "encode.h264" }, "file": { "type": "sink.mp4", "params": { "path": "\(movie)" } } },
          "edges": [ "camera.out -> h264.in", "h264.out -> file.video" ] }
        """
    }

    /// The frames of a movie as 8-bit gray pictures (ffmpeg), `width` × `height` each.
    static func grayFrames(_ movie: String, width: Int, height: Int, in folder: URL) throws -> [[UInt8]] {
        let raw = folder.appendingPathComponent("frames-\(UUID().uuidString).gray").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", movie, "-f", "rawvideo", "-pix_fmt", "gray", raw])
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        return stride(from: 0, to: bytes.count - width * height + 1, by: width * height).map { Array(bytes[$0..<($0 + width * height)]) }
    }

    /// (a) The device list has the PipeWire camera and microphone, under `pipewire:` names; a
    /// camera that is not there fails, naming the node and the device (exit 70), in bounded time.
    /// Listing uses GStreamer's PipeWire device provider, after which PipeWire 0.3.65 would not
    /// link a `pipewiresink mode=provide` node again (measured): so the recording tests below
    /// do not list first.
    @Test(.timeLimit(.minutes(2)), .disabled("unfinished (issue 52): passed 2 runs of 5; in the others `graphctl devices` crashed at a thread's exit (glibc: unaligned tcache chunk) or listed no PipeWire node; see the h-pw report"))
    func devicesListsPipeWireNodesAndAMissingOneIsRefused() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        try daemon.provide(camera: "gk-test-cam")
        try daemon.provide(microphone: "gk-test-mic")
        let listed = try Self.graphctl(daemon, ["devices", "--json"])
        #expect(listed.status == 0, "\(listed.stderr)")
        let devices = try JSONDecoder().decode([CaptureDevice].self, from: Data(listed.stdout.utf8))
        #expect(devices.contains(CaptureDevice(kind: .camera, name: "GraphKit-test-gk-test-cam", device: "pipewire:gk-test-cam")), "\(devices)")
        #expect(devices.contains(CaptureDevice(kind: .microphone, name: "GraphKit-test-gk-test-mic", device: "pipewire:gk-test-mic")), "\(devices)")
        let text = try Self.graphctl(daemon, ["devices"])
        #expect(text.stdout.contains("device: pipewire:gk-test-cam") && text.stdout.contains("device: pipewire:gk-test-mic"), "\(text.stdout)")

        let folder = daemon.folder
        let started = Date()
        let r = try Self.graphctl(daemon, ["run", try Self.write(Self.cameraGraph("pipewire:gk-absent", seconds: 1, to: folder.appendingPathComponent("no.mp4").path), in: folder)],
                                  limit: .seconds(30))
        #expect(r.status == 70)
        #expect(r.stderr.contains("node \"camera\"") && r.stderr.contains("camera \"pipewire:gk-absent\" sent nothing within 5 s: PipeWire has no such node"), "\(r.stderr)")
        // Measured: 30 s, the watch's 5 s and then pipewiresrc's own wait while the run stops.
        #expect(Date().timeIntervalSince(started) < 40)
    }

    /// (b) Two seconds of the PipeWire camera through H.264 into an MP4: 60 frames at 320×240,
    /// a picture (not black) that moves.
    @Test(.timeLimit(.minutes(3)), .disabled("unfinished (issue 52): in a graphctl run pipewiresrc reaches \"streaming\", linked by WirePlumber, and no buffer comes out (gst-launch-1.0 with the same elements gets them), and SilentSourceWatch did not end that run; see the h-pw report"))
    func cameraRecordsTwoSecondsOfMovingPicture() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        try daemon.provide(camera: "gk-test-cam", width: 640, height: 480)
        let movie = daemon.folder.appendingPathComponent("camera.mp4").path
        let r = try Self.graphctl(daemon, ["run", try Self.write(Self.cameraGraph("pipewire:gk-test-cam", seconds: 2, to: movie), in: daemon.folder)])
        #expect(r.status == 0, "\(r.stderr)")
        let probe = try MediaProbe(movie, countFrames: true)
        let video = try #require(probe.stream("video"))
        #expect(video.codecName == "h264" && video.width == 320 && video.height == 240)
        #expect((58...60).contains(video.frameCount ?? 0), "\(video.frameCount ?? 0) frames")
        #expect(abs(probe.duration - 2) < 0.1, "\(probe.duration) s")
        let frames = try Self.grayFrames(movie, width: 320, height: 240, in: daemon.folder)
        let first = try #require(frames.first), last = try #require(frames.last)
        let mean = first.reduce(0) { $0 + Int($1) } / first.count
        #expect(mean > 60, "mean luma \(mean): black?")
        let changed = zip(first, last).filter { abs(Int($0) - Int($1)) > 24 }.count
        #expect(changed > first.count / 20, "\(changed) pixels changed between the first and the last frame")
    }

    /// (b) Two seconds of the PipeWire microphone (a 1 kHz sine) through AAC into an M4A: its
    /// length, and the tone's frequency counted from the decoded samples.
    @Test(.timeLimit(.minutes(3)), .disabled("unfinished (issue 52): in a graphctl run pipewiresrc reaches \"streaming\", linked by WirePlumber, and no buffer comes out (gst-launch-1.0 with the same elements gets them), and SilentSourceWatch did not end that run; see the h-pw report"))
    func microphoneRecordsTwoSecondsOfTheTone() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        try daemon.provide(microphone: "gk-test-mic", frequency: 1000)
        let folder = daemon.folder, m4a = daemon.folder.appendingPathComponent("mic.m4a").path
        let graph = """
            { "version": 1, "nodes": {
                "mic": { "type": "capture.audio", "params": { "device": "pipewire:gk-test-mic", "sampleRate": 48000, "channels": 1, "duration": 2 } },
                "aac": { "type": "encode.aac" }, "file": { "type": "sink.mp4", "params": { "path": "\(m4a)" } } },
              "edges": [ "mic.out -> aac.in", "aac.out -> file.audio" ] }
            """
        let r = try Self.graphctl(daemon, ["run", try Self.write(graph, in: folder)])
        #expect(r.status == 0, "\(r.stderr)")
        let probe = try MediaProbe(m4a)
        let audio = try #require(probe.stream("audio"))
        #expect(audio.codecName == "aac" && audio.sampleRate == 48000 && audio.channels == 1)
        // To the buffer: PipeWire's quantum (1024 samples here, 21 ms) past the two seconds at most.
        #expect(probe.duration >= 1.99 && probe.duration <= 2.05, "\(probe.duration) s")
        let raw = folder.appendingPathComponent("mic.s16").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", m4a, "-f", "s16le", "-ac", "1", "-ar", "48000", raw])
        let samples = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        try #require(samples.count >= 72_000, "\(samples.count) samples")
        let middle = Array(samples[24_000..<72_000])  // one second, away from the ends
        let upward = zip(middle, middle.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        #expect((995...1005).contains(upward), "\(upward) Hz")
        #expect((middle.max() ?? 0) > 8000, "peak \(middle.max() ?? 0)")
    }

    /// A camera that goes away mid-run ends the stream within the silence limit (3 s) and a few
    /// seconds more, not never: graphctl exits 0 with a warning naming the node's device, and
    /// the movie holds what came before.
    @Test(.timeLimit(.minutes(3)), .disabled("unfinished (issue 52): in a graphctl run pipewiresrc reaches \"streaming\", linked by WirePlumber, and no buffer comes out (gst-launch-1.0 with the same elements gets them), and SilentSourceWatch did not end that run; see the h-pw report"))
    func aCameraThatGoesAwayEndsTheRunInBoundedTime() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        let provider = try daemon.provide(camera: "gk-vanishing-cam")
        let movie = daemon.folder.appendingPathComponent("vanish.mp4").path
        let run = try RunningGraphctl(["run", try Self.write(Self.cameraGraph("pipewire:gk-vanishing-cam", seconds: 60, to: movie), in: daemon.folder),
                                       "--progress", "always"], environment: daemon.environment)
        try run.waitForPosition(atLeast: 1.5)
        provider.stop()
        let killed = Date()
        let r = run.wait(limit: .seconds(30))
        let took = Date().timeIntervalSince(killed)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(took < 10, "ended \(took) s after the camera went away")
        #expect(r.stderr.contains("camera \"pipewire:gk-vanishing-cam\" sent nothing for 3 s: it went away"), "\(r.stderr)")
        let frames = try MediaProbe(movie, countFrames: true).stream("video")?.frameCount ?? 0
        #expect(frames >= 40 && frames <= 30 * 8, "\(frames) frames")
    }
}
