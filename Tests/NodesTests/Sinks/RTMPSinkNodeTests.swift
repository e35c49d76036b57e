import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `sink.rtmp` against nginx with libnginx-mod-rtmp, started here with a configuration of its own
/// on a port the system picks (recording what it receives), stopped by its PID.
@Suite(.media, .timeLimit(.minutes(2))) struct RTMPSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// `seconds` (2) of the live test camera (30 frames a second) and microphone, encoded and pushed.
    func push(to url: String, timeout: Int = 10, seconds: Int = 2, reconnect: Int = 0) throws -> GraphRun {
        let graph = try GraphLoader(registry: .builtIn).load(json: #"""
            { "version": 1, "nodes": {
              "camera": { "type": "capture.video", "params": { "width": 320, "height": 240, "fps": 30, "duration": \#(seconds) } },
              "mic": { "type": "capture.audio", "params": { "duration": \#(seconds) } },
              "h264": { "type": "encode.h264", "params": { "keyframeInterval": 30 } }, "aac": { "type": "encode.aac" },
              "out": { "type": "sink.rtmp", "params": { "url": "\#(url)", "timeout": \#(timeout), "reconnect": \#(reconnect) } } },
              "edges": [ "camera.out -> h264.in", "h264.out -> out.video", "mic.out -> aac.in", "aac.out -> out.audio" ] }
            """#)
        let run = try GraphRun(graph)
        try run.start()
        return run
    }


    /// nginx with the RTMP module on `port`, recording each stream it takes to
    /// `folder/KEY.flv` (`unique`: each publish to `folder/KEY-SECONDS.flv`), once it listens.
    func nginx(on port: Int, unique: Bool = false) throws -> LoopbackServer {
        let config = folder.appendingPathComponent("nginx.conf").path
        try """
            load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
            daemon off;
            master_process off;
            pid \(folder.path)/nginx.pid;
            error_log \(folder.path)/error.log;
            events { worker_connections 64; }
            rtmp { server { listen 127.0.0.1:\(port); application live { live on; record all; record_path \(folder.path); record_unique \(unique ? "on" : "off"); } } }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        let nginx = try LoopbackServer("nginx", ["-c", config, "-p", folder.path], output: "/dev/null", log: folder.appendingPathComponent("nginx.log").path)
        #expect(LoopbackServer.waitForTCPListener(port: port, within: 5), "\(nginx.logText)")
        return nginx
    }

    /// The server stopped for 3 s and started again, three times in one push: the run goes on,
    /// the report names each outage as a gap it came back from, and what nginx recorded of each
    /// connection (a file a publish) starts with a key frame and decodes without an error.
    @Test func aServerThatGoesAwayThreeTimesIsConnectedToAgain() throws {
        let port = try LoopbackServer.freePort(udp: false)
        var server = try nginx(on: port, unique: true)
        // A timeout of 3 s: a new connection that neither fails nor is accepted (a loaded machine)
        // is replaced after 3 s, within the 12 s allowed.
        let run = try push(to: "rtmp://127.0.0.1:\(port)/live/key", timeout: 3, seconds: 24, reconnect: 12)
        defer { run.cancel() }
        for _ in 0..<3 {
            usleep(2_500_000)
            server.stop()
            usleep(3_000_000)
            server = try nginx(on: port, unique: true)
        }
        let report = try #require(RemuxChecks.ended(run, within: 40))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        usleep(1_000_000)
        server.stop()
        let gaps = report.gaps.map(\.gap)
        #expect(gaps.count == 3 && gaps.allSatisfy { $0.resumed && $0.seconds >= 2.5 && $0.seconds < 6 }, "\(gaps)")
        let recordings = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("key-") && $0.hasSuffix(".flv") }.sorted()
        #expect(recordings.count == 4, "\(recordings)")
        var frames = 0
        for name in recordings {
            let path = folder.appendingPathComponent(name).path
            let flags = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=flags", "-of", "csv=p=0", path])
            #expect(flags.hasPrefix("K"), "\(name) starts with a key frame")
            let errors = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-f", "null", "-"])
            #expect(errors.isEmpty, "\(name): \(errors.prefix(300))")
            frames += flags.split(separator: "\n").count
        }
        print("RTMP reconnect: gaps \(gaps.map { "\($0.seconds) s" }), \(recordings.count) recordings, \(frames) of 720 frames")
    }

    /// A server that goes away and is not back within `reconnect` fails the run, naming it
    /// without the stream key, `reconnect` seconds after it went (and the gap is in the report).
    @Test func aServerNotBackInTimeFailsTheRun() throws {
        let port = try LoopbackServer.freePort(udp: false)
        let server = try nginx(on: port)
        let run = try push(to: "rtmp://127.0.0.1:\(port)/live/secretkey", seconds: 20, reconnect: 2)
        defer { run.cancel() }
        usleep(2_000_000)
        server.stop()
        let gone = ContinuousClock.now
        let report = try #require(RemuxChecks.ended(run, within: 20))
        let took = (ContinuousClock.now - gone).inSeconds
        #expect(report.status == .failed && report.error?.code == .runFailed)
        let message = report.error?.message ?? ""
        #expect(message.contains("the RTMP server \"rtmp://127.0.0.1:\(port)/live/…\" went away and was not back within 2 s") && !message.contains("secretkey"), "\(message)")
        #expect(took >= 2 && took < 4.5, "failed \(took) s after the server went away")
        #expect(report.gaps.map(\.gap.resumed) == [false], "\(report.gaps)")
    }

    /// A stream that ends while the server is away (a push of 6 s, the server gone at 3): the
    /// run completes at the stream's end, not `reconnect` seconds later, its last gap not resumed.
    @Test func aStreamThatEndsWhileTheServerIsAwayCompletes() throws {
        let port = try LoopbackServer.freePort(udp: false)
        let server = try nginx(on: port)
        let started = Date()
        let run = try push(to: "rtmp://127.0.0.1:\(port)/live/key", timeout: 3, seconds: 6, reconnect: 30)
        defer { run.cancel() }
        usleep(3_000_000)
        server.stop()
        let report = try #require(RemuxChecks.ended(run, within: 20))
        let took = Date().timeIntervalSince(started)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(took < 10, "ended \(took) s after the push began")
        #expect(report.gaps.map(\.gap.resumed) == [false], "\(report.gaps)")
    }

    /// Waits (at most 10 s) until nginx's recording at `path` has stopped growing for half a
    /// second: a loaded machine writes the last frames late.
    func settle(_ path: String) {
        var last = -1, still = 0
        for _ in 0..<100 where still < 5 {
            let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
            still = size == last && size > 0 ? still + 1 : 0
            last = size
            usleep(100_000)
        }
    }

    /// What nginx records of the push is every frame sent (its own count: what the encoder made,
    /// less nothing), H.264 and AAC.
    @Test func nginxReceivesEveryFrame() throws {
        let port = try LoopbackServer.freePort(udp: false)
        let nginx = try nginx(on: port)
        defer { nginx.stop() }
        // A timeout shorter than the push: the watchdog that fails a server which never accepts
        // the stream must see this one's acceptance and leave it be.
        let run = try push(to: "rtmp://127.0.0.1:\(port)/live/secretkey", timeout: 1)
        let report = try #require(RemuxChecks.ended(run, within: 30))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let recorded = folder.appendingPathComponent("secretkey.flv").path
        settle(recorded)
        nginx.stop()
        let probe = try MediaProbe(recorded)
        #expect(probe.stream("video")?.codecName == "h264")
        #expect(probe.stream("audio")?.codecName == "aac")
        let frames = try RemuxChecks.frames(recorded, "v").count
        #expect(frames * 100 >= 60 * 99, "\(frames) frames of 60")
    }

    /// A/V sync through RTMP: a flash and its beep at every second (H.264 and AAC as they are,
    /// from a file through demux, not live: pushed as fast as it is read), pushed to nginx and
    /// recorded there, arrive whole and together as they left: every frame, decoding to the
    /// source's pictures, each beep within one frame (40 ms) of where it was from its flash.
    @Test func aFlashAndItsBeepArriveTogether() throws {
        let input = try FlashAndBeep.make(in: folder)
        let port = try LoopbackServer.freePort(udp: false)
        let nginx = try nginx(on: port)
        defer { nginx.stop() }
        let graph = try GraphLoader(registry: .builtIn).load(json: #"""
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\#(input)" } }, "demux": { "type": "demux" },
              "out": { "type": "sink.rtmp", "params": { "url": "rtmp://127.0.0.1:\#(port)/live/sync" } } },
              "edges": [ "src.out -> demux.in", "demux.video -> out.video", "demux.audio -> out.audio" ] }
            """#)
        let run = try GraphRun(graph)
        try run.start()
        let report = try #require(RemuxChecks.ended(run, within: 30))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let recorded = folder.appendingPathComponent("sync.flv").path
        settle(recorded)
        nginx.stop()
        // A file, not live, pushed as fast as it is read: every frame arrives (100 of 4 s).
        #expect(try RemuxChecks.frames(recorded, "v") == RemuxChecks.frames(input, "v"))
        let (sent, got, skew) = try FlashAndBeep.change(from: input, to: recorded)
        #expect(sent.count >= 3 && got.count >= 3 && skew <= 0.040, "beeps from their flashes: sent \(sent), received \(got)")
        print("RTMP A/V sync: beeps from flashes sent \(sent), received \(got), worst change \(skew) s")
    }

    /// Nothing listens there: the run fails (70) within its timeout, naming the server and the
    /// application, never the stream key.
    @Test func anUnreachableServerFailsClearly() throws {
        let port = try LoopbackServer.freePort(udp: false)
        let started = Date()
        let run = try push(to: "rtmp://127.0.0.1:\(port)/live/secretkey", timeout: 3)
        let report = try #require(RemuxChecks.ended(run, within: 15))
        #expect(Date().timeIntervalSince(started) < 8)
        #expect(report.status == .failed)
        let error = try #require(report.error)
        #expect(error.code == .runFailed)
        #expect(error.message.contains("\"rtmp://127.0.0.1:\(port)/live/…\""), "\(error.message)")
        #expect(!"\(error)".contains("secretkey") && !(error.cause ?? "").contains("secretkey"))
    }

    /// A server that accepts the connection, then answers with garbage (no RTMP handshake): the
    /// run fails (70) within its timeout, naming the server, never the stream key; no hang.
    @Test func aServerThatSendsGarbageFailsClearly() throws {
        let server = try GarbageServer()
        defer { server.stop() }
        let started = Date()
        let run = try push(to: "rtmp://127.0.0.1:\(server.port)/live/secretkey", timeout: 3)
        let report = try #require(RemuxChecks.ended(run, within: 20))
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(report.status == .failed)
        let error = try #require(report.error)
        #expect(error.code == .runFailed)
        #expect(error.message.contains("\"rtmp://127.0.0.1:\(server.port)/live/…\""), "\(error.message)")
        #expect(!"\(error)".contains("secretkey") && !(error.cause ?? "").contains("secretkey"))
    }

    /// Another scheme, a user, a query or no stream: refused at load (65), the URL quoted
    /// without its user, query and what follows the application (a key).
    @Test(arguments: [("http://h/live/k", "http://h/live/…"), ("rtmp://u:secretkey@h/live/k", "rtmp://h/live/…"),
                      ("rtmp://h/secretkey", "rtmp://h/…"), ("rtmp://h/live/k?secretkey=1", "rtmp://h/live/…")])
    func aMalformedURLIsRefusedQuotedWithoutItsSecrets(_ url: String, _ shown: String) {
        #expect(throws: GraphError.self) { try push(to: url) }
        do { _ = try push(to: url) } catch let error as GraphError {
            #expect(error.code == .invalidGraph)
            #expect(error.problems.first?.location == "nodes.out.params.url")
            #expect(error.message.contains("got \"\(shown)\""), "\(error.message)")
            #expect(!"\(error)".contains("secretkey"))
        } catch {
            Issue.record("not a GraphError: \(error)")
        }
    }
}
