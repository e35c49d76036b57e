import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `source.rtsp`'s `reconnect` against the test RTSP server (Tests/Fixtures/rtsp-server.py)
/// stopped and started again on its port: the run goes on through each outage, the recording
/// holds every session and decodes, the report names each gap; a camera not back in time ends
/// the recording; a stop while it is away finishes the file at once.
@Suite(.media, .timeLimit(.minutes(3))) struct RTSPReconnectTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// `seconds` of 160x120 H.264 (B-frames, a key frame every 12 frames) and AAC.
    func served(seconds: Int) throws -> String {
        let path = folder.appendingPathComponent("served.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + RemuxChecks.Source.testsrc + RemuxChecks.Source.tone44k + RemuxChecks.Source.picture
                              + ["-c:v", "libx264", "-bf", "2", "-c:a", "aac", "-t", "\(seconds)", "-y", path])
        return path
    }

    /// The camera recorded into `out` with `reconnect` and a `timeout` of 3 s, started.
    func record(_ port: Int, reconnect: Int, into out: String) throws -> GraphRun {
        let run = try GraphRun(try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "camera": { "type": "source.rtsp", "params": { "url": "rtsp://127.0.0.1:\(port)/stream", "reconnect": \(reconnect), "timeout": 3 } },
                "file": { "type": "sink.mp4", "params": { "path": "\(out)" } } },
              "edges": [ "camera.video -> file.video", "camera.audio -> file.audio" ] }
            """))
        try run.start()
        return run
    }

    /// Each video packet's decode time in `path`, in order.
    func decodeTimes(_ path: String) throws -> [Double] {
        try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=dts_time", "-of", "csv=p=0", path])
            .split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
    }

    @Test func aCameraThatGoesAwayThreeTimesIsRecordedAcrossTheGaps() throws {
        let file = try served(seconds: 40)
        var (server, port) = try RTSPTestServer.start(serving: file, in: folder)
        defer { server.stop() }
        let out = folder.appendingPathComponent("across.mp4").path
        let run = try record(port, reconnect: 8, into: out)
        defer { run.cancel() }
        for _ in 0..<3 {
            usleep(2_500_000)
            server.stop()
            usleep(3_000_000)
            server = try RTSPTestServer.start(serving: file, in: folder, port: port).server
        }
        usleep(2_500_000)
        run.stop()
        let report = try #require(RemuxChecks.ended(run, within: 10))
        #expect(report.status == .stopped, "\(String(describing: report.error))")
        let gaps = report.gaps.map(\.gap)
        #expect(gaps.count == 3 && gaps.allSatisfy { $0.resumed && $0.seconds >= 2.5 && $0.seconds < 6 }, "\(gaps)")
        let times = try decodeTimes(out)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 }, "decode times go back")
        let decoded = try RemuxChecks.frames(out, "v").count
        #expect(decoded == times.count && decoded > 150, "\(decoded) frames decoded of \(times.count)")
        #expect(try RemuxChecks.packets(out, "a").count > 200)
        print("RTSP reconnect: gaps \(gaps.map { "\($0.seconds) s" }), \(decoded) frames")
    }

    @Test func aCameraNotBackInTimeEndsTheRecording() throws {
        let (server, port) = try RTSPTestServer.start(serving: try served(seconds: 20), in: folder)
        defer { server.stop() }
        let out = folder.appendingPathComponent("ended.mp4").path
        let run = try record(port, reconnect: 2, into: out)
        defer { run.cancel() }
        usleep(2_500_000)
        server.stop()
        let gone = Date()
        let report = try #require(RemuxChecks.ended(run, within: 10))
        let took = Date().timeIntervalSince(gone)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(took >= 2 && took < 4, "ended \(took) s after the camera went")
        #expect(report.gaps.map(\.gap.resumed) == [false], "\(report.gaps)")
        let frames = try RemuxChecks.frames(out, "v").count
        #expect(frames > 25 && frames < 100, "\(frames) frames")
    }

    @Test func aStopWhileTheCameraIsAwayFinishesTheRecording() throws {
        let (server, port) = try RTSPTestServer.start(serving: try served(seconds: 20), in: folder)
        defer { server.stop() }
        let out = folder.appendingPathComponent("stopped.mp4").path
        let run = try record(port, reconnect: 30, into: out)
        defer { run.cancel() }
        usleep(2_500_000)
        server.stop()
        usleep(1_500_000)
        let stopping = Date()
        run.stop()
        let report = try #require(RemuxChecks.ended(run, within: 10))
        #expect(Date().timeIntervalSince(stopping) < 1, "\(Date().timeIntervalSince(stopping)) s to stop")
        #expect(report.status == .stopped && report.outputs.first?.status == .completed, "\(String(describing: report.error))")
        #expect(report.gaps.map(\.gap.resumed) == [false], "\(report.gaps)")
        #expect(try RemuxChecks.frames(out, "v").count > 25)
    }
}
