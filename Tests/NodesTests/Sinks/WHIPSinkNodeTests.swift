import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// sink.whip against a WHIP endpoint made with GStreamer's webrtcbin (Tests/Fixtures/whip-server.py),
/// started and stopped by its PID on 127.0.0.1: what a live camera and microphone send arrives and
/// decodes, the session is ended with a DELETE; a refusal, a server that is not there or never
/// answers, each fails the run within its timeout naming the endpoint, never its token or query.
@Suite(.media, .timeLimit(.minutes(2))) struct WHIPSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// The endpoint on `port`, recording to `prefix`-video.mkv and -audio.mkv.
    func endpoint(on port: Int, _ options: [String] = []) throws -> LoopbackServer {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/whip-server.py").path
        let server = try LoopbackServer("/usr/bin/python3", [script, "--port", "\(port)", "--output", path("received")] + options,
                                        output: path("server.out"), log: path("server.log"))
        #expect(LoopbackServer.waitForTCPListener(port: port, within: 10), "\(server.logText)")
        return server
    }

    func graph(url: String, extra: String = "", video: Bool = true, audio: Bool = true, seconds: Double = 4) throws -> Graph {
        try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                \(video ? #""camera": { "type": "capture.video", "params": { "width": 320, "height": 240, "fps": 30, "duration": \#(seconds) } }, "h264": { "type": "encode.h264", "params": { "keyframeInterval": 60 } },"# : "")
                \(audio ? #""mic": { "type": "capture.audio", "params": { "sampleRate": 48000, "channels": 2, "duration": \#(seconds) } }, "opus": { "type": "encode.opus" },"# : "")
                "out": { "type": "sink.whip", "params": { "url": "\(url)" \(extra) } } },
              "edges": [ \(video ? #""camera.out -> h264.in", "h264.out -> out.video""# : "") \(video && audio ? "," : "")
                         \(audio ? #""mic.out -> opus.in", "opus.out -> out.audio""# : "") ] }
            """)
    }


    /// Packets of `kind` ("video" or "audio") in what the endpoint recorded, whether the first is a
    /// key frame, and what ffprobe says decoding them (nothing when each decodes).
    func received(_ kind: String) throws -> (packets: Int, keyFirst: Bool, errors: String) {
        let file = path("received-\(kind).mkv")
        let flags = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "packet=flags", "-of", "csv=p=0", file])
            .split(separator: "\n")
        // Decoded by ffprobe: every packet a frame, and nothing said (the recording's own times,
        // the endpoint's, are not checked).
        let decoded = try TestMedia.runTool("sh", ["-c", "ffprobe -v error -count_frames -show_entries stream=nb_read_frames -of csv=p=0 '\(file)' 2>&1"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return (flags.count, flags.first?.hasPrefix("K") == true, decoded == "\(flags.count)" ? "" : decoded)
    }

    /// A live camera (6 s at 30 fps) and microphone, H.264 and Opus: the run completes; the
    /// endpoint took one session and had it DELETEd at the end; the video it recorded starts on
    /// a key frame and decodes without an error, and holds what was sent once the connection was
    /// up (the frames made while it came up are dropped as a live source's are: about a second
    /// alone, up to 2.6 s with the suite's other tests on both cores, so at least 2 s of the 6
    /// are asked); the sound likewise.
    @Test func aLiveCameraAndMicrophoneArriveAndTheSessionIsEnded() throws {
        let port = try LoopbackServer.freePort(udp: false)
        let server = try endpoint(on: port)
        defer { server.stop() }
        let run = try GraphRun(try graph(url: "http://127.0.0.1:\(port)/whip", seconds: 6))
        try run.start()
        let report = try #require(RemuxChecks.ended(run, within: 40))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        server.stop()
        let log = (try? String(contentsOfFile: path("server.out"), encoding: .utf8)) ?? ""
        #expect(log.contains("session ") && log.contains("deleted ") && log.contains("ended "), "\(log)")
        let video = try received("video"), audio = try received("audio")
        print("WHIP: \(video.packets) of 180 frames, \(audio.packets) of 300 Opus packets; report \(report.nodes.map { "\($0.id) \($0.buffersOut)" })")
        #expect(video.keyFirst && video.errors.isEmpty, "\(video)")
        #expect(video.packets >= 60, "\(video.packets) frames of 180")
        #expect(audio.packets >= 100 && audio.errors.isEmpty, "\(audio)")
    }

    /// A token the endpoint does not take: the run fails (70) within its timeout, saying the
    /// endpoint refused with 401 and to check the token; neither token is shown.
    @Test func aRefusedTokenFailsSayingSo() throws {
        let port = try LoopbackServer.freePort(udp: false)
        let server = try endpoint(on: port, ["--token", "right-token-4711"])
        defer { server.stop() }
        let run = try GraphRun(try graph(url: "http://127.0.0.1:\(port)/whip", extra: #", "token": "wrong-token-0815""#, audio: false))
        try run.start()
        let report = try #require(RemuxChecks.ended(run, within: 30))
        #expect(report.status == .failed)
        let error = try #require(report.error)
        #expect(error.code == .runFailed)
        let text = "\(error)"
        #expect(text.contains("\"http://127.0.0.1:\(port)/…\"") && text.contains("HTTP 401") && text.contains("check the token"), "\(text)")
        #expect(!text.contains("token-0815") && !text.contains("token-4711"), "\(text)")
    }

    /// Nothing listening there, with a password and a query in the URL: the run fails within its
    /// timeout naming the endpoint without either.
    @Test func nothingListeningFailsNamingTheEndpointWithoutItsSecrets() throws {
        let port = try LoopbackServer.freePort(udp: false)
        let started = Date()
        let run = try GraphRun(try graph(url: "http://user:pass-9911@127.0.0.1:\(port)/whip?key=query-7722", extra: #", "timeout": 3"#, audio: false))
        try run.start()
        let report = try #require(RemuxChecks.ended(run, within: 20))
        #expect(Date().timeIntervalSince(started) < 8)
        #expect(report.status == .failed)
        let text = "\(String(describing: report.error))"
        #expect(text.contains("\"http://127.0.0.1:\(port)/…\"") && text.contains("Cannot send the offer"), "\(text)")
        #expect(!text.contains("pass-9911") && !text.contains("query-7722") && !text.contains("/whip"), "\(text)")
    }

    /// A server that takes the connection and never answers: the run fails when the timeout
    /// passes; one that answers garbage fails at once, saying it is not HTTP. And a cancel while
    /// the first waits ends the run within a second.
    @Test func aServerThatNeverAnswersOrAnswersGarbageFails() throws {
        let silentListener = try SilentListener()
        defer { withExtendedLifetime(silentListener) {} }
        let silent = silentListener.port
        var started = Date()
        let run = try GraphRun(try graph(url: "http://127.0.0.1:\(silent)/whip", extra: #", "timeout": 2"#, audio: false, seconds: 20))
        try run.start()
        let report = try #require(RemuxChecks.ended(run, within: 20))
        let took = Date().timeIntervalSince(started)
        #expect(report.status == .failed && took < 6, "\(took) s: \(String(describing: report.error))")
        #expect("\(String(describing: report.error))".contains("did not answer within 2 s"), "\(String(describing: report.error))")

        let cancelled = try GraphRun(try graph(url: "http://127.0.0.1:\(silent)/whip", extra: #", "timeout": 30"#, audio: false, seconds: 20))
        try cancelled.start()
        usleep(1_500_000)
        started = Date()
        cancelled.cancel()
        let cancelReport = try #require(RemuxChecks.ended(cancelled, within: 10))
        #expect(Date().timeIntervalSince(started) < 1.5 && cancelReport.status == .cancelled)

        let garbage = try GarbageServer()
        defer { garbage.stop() }
        let run2 = try GraphRun(try graph(url: "http://127.0.0.1:\(garbage.port)/whip", extra: #", "timeout": 5"#, audio: false))
        try run2.start()
        let report2 = try #require(RemuxChecks.ended(run2, within: 20))
        #expect(report2.status == .failed)
        let text = "\(String(describing: report2.error))"
        #expect(text.contains("not HTTP") || text.contains("headers pass"), "\(text)")
    }

    /// An https:// endpoint whose certificate a test authority signed: without that authority the
    /// run fails saying the certificate is not trusted and where to give its authority; with it
    /// in `certificateAuthority` the session is made over TLS and ended with a DELETE. (In this
    /// order: GIO's TLS resumes a session it has made with the same server, without checking the
    /// certificate again.)
    @Test func anHTTPSEndpointIsTrustedThroughItsAuthority() throws {
        let certificates = try TestCertificates(in: folder)
        let pem = try certificates.server("whip", for: ["IP:127.0.0.1"])
        let port = try LoopbackServer.freePort(udp: false)
        let server = try endpoint(on: port, ["--certificate", pem])
        defer { server.stop() }
        let untrusted = try GraphRun(try graph(url: "https://127.0.0.1:\(port)/whip", audio: false, seconds: 2))
        try untrusted.start()
        let refused = try #require(RemuxChecks.ended(untrusted, within: 30))
        #expect(refused.status == .failed)
        let text = "\(String(describing: refused.error))"
        #expect(text.contains("failed TLS") && text.contains("certificateAuthority"), "\(text)")

        let trusted = try GraphRun(try graph(url: "https://127.0.0.1:\(port)/whip", extra: #", "certificateAuthority": "\#(certificates.authority)""#,
                                             audio: false, seconds: 2))
        try trusted.start()
        let report = try #require(RemuxChecks.ended(trusted, within: 30))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let log = (try? String(contentsOfFile: path("server.out"), encoding: .utf8)) ?? ""
        #expect(log.contains("session ") && log.contains("deleted "), "\(log)")

    }

    /// An endpoint that answers 201 but never connects (no ICE on its side): the run fails when
    /// the timeout passes, saying no WebRTC connection came, and the session it made is DELETEd
    /// all the same.
    @Test func aSessionThatNeverConnectsFailsAndIsDeleted() throws {
        let port = try LoopbackServer.freePort(udp: false)
        let server = try endpoint(on: port, ["--answer-only"])
        defer { server.stop() }
        let started = Date()
        let run = try GraphRun(try graph(url: "http://127.0.0.1:\(port)/whip", extra: #", "timeout": 3"#, audio: false, seconds: 20))
        try run.start()
        let report = try #require(RemuxChecks.ended(run, within: 30))
        #expect(report.status == .failed && Date().timeIntervalSince(started) < 10)
        #expect("\(String(describing: report.error))".contains("No WebRTC connection"), "\(String(describing: report.error))")
        var log = ""
        for _ in 0..<50 where !log.contains("deleted ") {
            log = (try? String(contentsOfFile: path("server.out"), encoding: .utf8)) ?? ""
            usleep(100_000)
        }
        #expect(log.contains("session ") && log.contains("deleted "), "\(log)")
    }

    /// What the graph says wrong is refused when it is loaded (65), at the parameter or port.
    @Test func aBadURLOrAACIsRefusedAtLoad() throws {
        func refusal(_ nodes: String, _ edges: String) -> String? {
            do {
                _ = try GraphRun(try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { \#(nodes) }, "edges": [ \#(edges) ] }"#))
                return nil
            } catch {
                return error.code == .invalidGraph ? "\(error)" : "not 65: \(error)"
            }
        }
        let ftp = refusal(#""mic": { "type": "capture.audio" }, "opus": { "type": "encode.opus" }, "out": { "type": "sink.whip", "params": { "url": "ftp://127.0.0.1/whip" } }"#,
                          #""mic.out -> opus.in", "opus.out -> out.audio""#)
        #expect(ftp?.contains("nodes.out.params.url") == true, "\(String(describing: ftp))")
        let aac = refusal(#""mic": { "type": "capture.audio" }, "aac": { "type": "encode.aac" }, "out": { "type": "sink.whip", "params": { "url": "http://127.0.0.1/whip" } }"#,
                          #""mic.out -> aac.in", "aac.out -> out.audio""#)
        #expect(aac != nil && aac?.hasPrefix("not 65") == false, "\(String(describing: aac))")
        let badToken = refusal(#""mic": { "type": "capture.audio" }, "opus": { "type": "encode.opus" }, "out": { "type": "sink.whip", "params": { "url": "http://127.0.0.1/whip", "token": "zz yy" } }"#,
                               #""mic.out -> opus.in", "opus.out -> out.audio""#)
        #expect(badToken?.contains("nodes.out.params.token") == true && badToken?.contains("zz yy") == false, "\(String(describing: badToken))")
        let plainWithAuthority = refusal(#""mic": { "type": "capture.audio" }, "opus": { "type": "encode.opus" }, "out": { "type": "sink.whip", "params": { "url": "http://127.0.0.1/whip", "certificateAuthority": "/etc/hostname" } }"#,
                                         #""mic.out -> opus.in", "opus.out -> out.audio""#)
        #expect(plainWithAuthority?.contains("nodes.out.params.certificateAuthority") == true, "\(String(describing: plainWithAuthority))")
    }
}
