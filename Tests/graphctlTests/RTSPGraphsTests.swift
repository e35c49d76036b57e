import Foundation
import Glibc
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// graphs/rtsp-record.json run by graphctl as a user runs it, against the loopback RTSP server
/// (RTSPTestServer, started and stopped by its PID), with a user and password: a SIGINT ends the
/// recording within about a second with a complete file, and a refused password exits 70; in
/// neither is the password printed, logged (`--verbose`) or written into the statistics.
@Suite(.media, .timeLimit(.minutes(2))) struct RTSPGraphsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    static let password = "c0rrect-h0rse"

    /// 10 s of H.264 + AAC (250 frames), served with basic authentication.
    func serve() throws -> (LoopbackServer, Int) {
        let file = folder.appendingPathComponent("served.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=sample_rate=44100",
                                         "-pix_fmt", "yuv420p", "-g", "12", "-c:v", "libx264", "-bf", "2", "-c:a", "aac", "-t", "10", "-y", file])
        return try RTSPTestServer.start(serving: file, ["--user", "viewer", "--password", Self.password], in: folder)
    }

    func record(_ url: String, into out: String, stats: String) throws -> RunningGraphctl {
        try Graphctl.start(["run", Graphctl.graph("rtsp-record.json"), "--set", "camera.url=\(url)", "--set", "file.path=\(out)",
                            "--verbose", "--stats", stats, "--progress", "always"])
    }

    func expectNoPassword(_ result: Graphctl.Result, stats: String) {
        let written = (try? String(contentsOfFile: stats, encoding: .utf8)) ?? ""
        for (what, text) in [("stdout", result.stdout), ("stderr", result.stderr), ("statistics", written)] {
            #expect(!text.contains(Self.password) && !text.contains("wr0ng") && !text.contains("viewer:"), "\(what) shows a credential: \(text)")
        }
    }

    @Test func aSIGINTFinalizesTheRecordingWithinASecond() throws {
        let (server, port) = try serve()
        defer { server.stop() }
        let out = folder.appendingPathComponent("camera.mp4").path, stats = folder.appendingPathComponent("stats.json").path
        let run = try record("rtsp://viewer:\(Self.password)@127.0.0.1:\(port)/stream", into: out, stats: stats)
        try run.waitForPosition(atLeast: 2)
        let stop = run.stop(by: SIGINT)
        let result = stop.result
        #expect(result.status == 0, "\(result.stderr)")
        #expect(stop.taken < 1.5, "\(stop.description)")
        let frames = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_packets", "-select_streams", "v", "-show_entries", "stream=nb_read_packets",
                                                       "-of", "csv=p=0", out]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect((Int(frames) ?? 0) >= 40, "\(frames) frames")
        expectNoPassword(result, stats: stats)
        print("RTSP graphctl: exit \(result.status) \(stop.seconds) s after SIGINT, \(frames) frames")
    }

    @Test func aRefusedPasswordExits70WithoutPrintingIt() throws {
        let (server, port) = try serve()
        defer { server.stop() }
        let out = folder.appendingPathComponent("never.mp4").path, stats = folder.appendingPathComponent("stats.json").path
        let result = try record("rtsp://viewer:wr0ng-pass@127.0.0.1:\(port)/stream", into: out, stats: stats).wait(limit: .seconds(30))
        #expect(result.status == 70, "\(result.stderr)")
        #expect(result.stderr.contains("the RTSP server \"rtsp://127.0.0.1:\(port)/stream\" refused the user and password (401 Unauthorized)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        expectNoPassword(result, stats: stats)
    }
}
