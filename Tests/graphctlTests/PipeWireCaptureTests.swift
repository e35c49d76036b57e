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

    /// The device list has the PipeWire camera and microphone, under `pipewire:` names, every
    /// time, and short recordings (each looks its camera up first) end well every time: with
    /// GStreamer's PipeWire provider, which GraphKit no longer uses, `graphctl devices` crashed
    /// 11 times in 40 (0.3.65) or every time (1.4), and recordings 2 in 50. A node that is not
    /// there is refused before the run, naming the node and what PipeWire has (exit 70), at once.
    @Test(.timeLimit(.minutes(2)))
    func devicesListsPipeWireNodesAndAMissingOneIsRefused() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        try daemon.provide(camera: "gk-test-cam")
        try daemon.provide(microphone: "gk-test-mic")
        for _ in 0..<10 {
            let listed = try Self.graphctl(daemon, ["devices", "--json"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let devices = try JSONDecoder().decode([CaptureDevice].self, from: Data(listed.stdout.utf8))
            #expect(devices.contains(CaptureDevice(kind: .camera, name: "GraphKit-test-gk-test-cam", device: "pipewire:gk-test-cam")), "\(devices)")
            #expect(devices.contains(CaptureDevice(kind: .microphone, name: "GraphKit-test-gk-test-mic", device: "pipewire:gk-test-mic")), "\(devices)")
        }
        for i in 0..<5 {
            let movie = daemon.folder.appendingPathComponent("short-\(i).mp4").path
            let r = try Self.graphctl(daemon, ["run", try Self.write(Self.cameraGraph("pipewire:gk-test-cam", seconds: 0.3, to: movie), in: daemon.folder)])
            #expect(r.status == 0, "run \(i): \(r.stderr)")
        }
        let text = try Self.graphctl(daemon, ["devices"])
        #expect(text.stdout.contains("device: pipewire:gk-test-cam") && text.stdout.contains("device: pipewire:gk-test-mic"), "\(text.stdout)")

        let folder = daemon.folder
        let started = Date()
        let r = try Self.graphctl(daemon, ["run", try Self.write(Self.cameraGraph("pipewire:gk-absent", seconds: 1, to: folder.appendingPathComponent("no.mp4").path), in: folder)],
                                  limit: .seconds(30))
        #expect(r.status == 70)
        #expect(r.stderr.contains("nodes.camera.params.device") && r.stderr.contains("no camera \"pipewire:gk-absent\": PipeWire lists pipewire:gk-test-cam"), "\(r.stderr)")
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("no.mp4").path))
        // A microphone's name is not a camera.
        let wrong = try Self.graphctl(daemon, ["run", try Self.write(Self.cameraGraph("pipewire:gk-test-mic", seconds: 1, to: folder.appendingPathComponent("no.mp4").path), in: folder)])
        #expect(wrong.status == 70 && wrong.stderr.contains("no camera \"pipewire:gk-test-mic\""), "\(wrong.stderr)")
    }

    /// Two seconds of the PipeWire camera through H.264 into an MP4: 60 frames at 320×240,
    /// SMPTE's bars where they belong, and a picture that changes from frame to frame (the snow).
    @Test(.timeLimit(.minutes(3)))
    func cameraRecordsTwoSecondsOfMovingPicture() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        try daemon.provide(camera: "gk-test-cam")
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
        func luma(_ f: [UInt8], _ x: Int, _ y: Int) -> Int { Int(f[y * 320 + x]) }
        // The first bar is light grey (Y 180 of 75% white), the last blue (Y 29), both in every frame.
        for f in [first, last] {
            #expect(abs(luma(f, 20, 60) - 180) < 16 && abs(luma(f, 300, 60) - 29) < 16, "bars \(luma(f, 20, 60)), \(luma(f, 300, 60))")
        }
        // The snow (bottom right) changes between frames; the bars do not.
        let snow = (190..<235).flatMap { y in (250..<315).map { (y, $0) } }
        let changed = snow.filter { abs(luma(first, $1, $0) - luma(last, $1, $0)) > 24 }.count
        #expect(changed > snow.count / 3, "\(changed) of \(snow.count) snow pixels changed")
    }

    /// Two seconds of the PipeWire microphone (PipeWire's 440 Hz sine) through AAC into an M4A:
    /// its length, and the tone's frequency counted from the decoded samples.
    @Test(.timeLimit(.minutes(3)))
    func microphoneRecordsTwoSecondsOfTheTone() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        try daemon.provide(microphone: "gk-test-mic")
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
        #expect((437...443).contains(upward), "\(upward) Hz")
        #expect((middle.max() ?? 0) > 16_000, "peak \(middle.max() ?? 0)")
    }

    /// A camera that goes away mid-run ends the stream within the silence limit (3 s) and a few
    /// seconds more, not never: graphctl exits 0 with a warning naming the node's device, and
    /// the movie holds what came before.
    @Test(.timeLimit(.minutes(3)))
    func aCameraThatGoesAwayEndsTheRunInBoundedTime() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        try daemon.provide(camera: "gk-vanishing-cam")
        let movie = daemon.folder.appendingPathComponent("vanish.mp4").path
        let run = try RunningGraphctl(["run", try Self.write(Self.cameraGraph("pipewire:gk-vanishing-cam", seconds: 60, to: movie), in: daemon.folder),
                                       "--progress", "always"], environment: daemon.environment)
        try run.waitForPosition(atLeast: 1.5)
        try daemon.remove("gk-vanishing-cam")
        let removed = Date()
        let r = run.wait(limit: .seconds(30))
        let took = Date().timeIntervalSince(removed)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(took < 6, "ended \(took) s after the camera went away")
        #expect(r.stderr.contains("camera \"pipewire:gk-vanishing-cam\" sent nothing for 3 s: it went away"), "\(r.stderr)")
        let frames = try MediaProbe(movie, countFrames: true).stream("video")?.frameCount ?? 0
        #expect(frames >= 40 && frames <= 30 * 8, "\(frames) frames")
    }

    /// With no session manager nothing links the stream, and pipewiresrc waits 30 s inside its
    /// state change. The run fails at the watch's 5 s naming the device, and a signal during the
    /// wait stops it at once; no file is left either way.
    @Test(.timeLimit(.minutes(2)))
    func anUnlinkedCameraFailsInFiveSecondsAndASignalStopsItAtOnce() throws {
        let daemon = try PipeWireTestDaemon()
        defer { daemon.stop() }
        try daemon.provide(camera: "gk-test-cam")
        daemon.stopSessionManager()
        let movie = daemon.folder.appendingPathComponent("unlinked.mp4").path
        let graph = try Self.write(Self.cameraGraph("pipewire:gk-test-cam", seconds: 2, to: movie), in: daemon.folder)
        let started = Date()
        let r = try Self.graphctl(daemon, ["run", graph])
        let took = Date().timeIntervalSince(started)
        #expect(r.status == 70)
        #expect(r.stderr.contains("node \"camera\"") && r.stderr.contains("camera \"pipewire:gk-test-cam\" sent nothing within 5 s"), "\(r.stderr)")
        #expect(took > 4.5 && took < 8, "failed after \(took) s")
        #expect(!FileManager.default.fileExists(atPath: movie))

        let run = try RunningGraphctl(["run", graph], environment: daemon.environment)
        Thread.sleep(forTimeInterval: 1.5)
        let stop = run.stop(by: SIGINT, limit: .seconds(30))
        let stopped = stop.result
        #expect(stop.taken < 1, "\(stop.description)")
        #expect(stopped.status == 130, "\(stopped.stderr)")
        #expect(!FileManager.default.fileExists(atPath: movie))
    }
}
