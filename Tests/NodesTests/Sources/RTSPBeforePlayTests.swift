import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `source.rtsp` before PLAY (issue 73, class 2): rtspsrc's timeouts cover each read, so a
/// server answering a header line a second, or headers without end, kept a run for ever; one
/// redirecting to itself was asked 71,585 times a minute; an SDP of 1,000 tracks had 366,260
/// SETUPs and no PLAY. The whole exchange before PLAY is now timed from the first request
/// (`timeout`), and requests of a kind are bounded: each fails (70) within the budget and a
/// second or two, naming the server without its credentials, and writes nothing; so does one
/// that sends more than 4 MiB before PLAY (endless headers, a 2 GB body). rtspsrc does
/// not leave a read that is fed a line a second: the node cuts its connection (``PeerSockets``).
extension RTSPSourceNodeTests {
    @Test(.timeLimit(.minutes(2)), arguments: [
        ("slow-headers", "did not answer within 2 s: it had not agreed to play the stream 2 s after the first request (the last sent: OPTIONS)"),
        // Headers or a body as fast as they go: 4 MiB, or on a loaded machine (rtspsrc reading
        // slowly, the kernel's window full) the 2 s, whichever comes first.
        ("endless-headers", "sent more than 4 MiB before it agreed to play the stream (the last request: OPTIONS)|did not answer within 2 s"),
        ("huge-body", "sent more than 4 MiB before it agreed to play the stream (the last request: DESCRIBE)|did not answer within 2 s"),
        // (Each redirect is asked again from OPTIONS.)
        ("redirect", "had to be sent 9 OPTIONS requests before it would play the stream, more than 8: it redirects or refuses over and over"),
        ("many-tracks", "had to be sent 17 SETUP requests before it would play the stream, one a track, more than the 16 tracks source.rtsp sets up"),
    ])
    func aServerThatNeverReachesPlayFailsWithinTheBudget(_ mode: String, _ why: String) throws {
        let (server, port) = try RTSPTestServer.startHostile(mode, in: folder)
        defer { server.stop() }
        let out = folder.appendingPathComponent("\(mode).mp4").path
        let started = Date()
        let run = try record(#""url": "rtsp://admin:hunter2@127.0.0.1:\#(port)/stream", "timeout": 2"#, into: out, audio: false)
        defer { run.cancel() }
        let report = try #require(RemuxChecks.ended(run, within: 20))
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds < 5, "\(mode): \(seconds) s")
        #expect(report.status == .failed && report.error?.code == .runFailed, "\(mode): \(report.status)")
        #expect(report.error?.message.contains("the RTSP server \"rtsp://127.0.0.1:\(port)/stream\"") == true
                && why.split(separator: "|").contains { report.error?.message.contains($0) == true }, "\(mode): \(String(describing: report.error))")
        #expect(!"\(String(describing: report.error))".contains("hunter2"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// What fuzz-rtsp found, replayed (Tests/Fixtures/rtsp-scripts, by rtsp-script-server.py):
    /// a description of no track, its last lines past its Content-Length, then nothing more.
    /// rtspsrc failed ("SDP contains no streams") and waited on its connection for a message
    /// (54 s, the session's keep-alive), with its lock held, so the run's stop waited too. A
    /// session whose server sent no packet now has its connection cut as the run ends.
    @Test(.timeLimit(.minutes(2))) func aRunFailedByTheServersDescriptionEndsAtOnce() throws {
        let script = URL(fileURLWithPath: RTSPTestServer.script).deletingLastPathComponent()
            .appendingPathComponent("rtsp-scripts/no-streams-then-silence.bin").path
        let (server, port) = try RTSPTestServer.startFixture("rtsp-script-server.py", [script], in: folder)
        defer { server.stop() }
        let out = folder.appendingPathComponent("script.mp4").path
        let started = Date()
        let run = try record(#""url": "rtsp://admin:hunter2@127.0.0.1:\#(port)/stream", "timeout": 1"#, into: out, audio: false)
        defer { run.cancel() }
        let report = try #require(RemuxChecks.ended(run, within: 20))
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(report.status == .failed && report.error?.code == .runFailed)
        #expect(report.error?.message.contains("the RTSP server \"rtsp://127.0.0.1:\(port)/stream\" gave an answer source.rtsp cannot use: SDP contains no streams") == true,
                "\(String(describing: report.error))")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
