import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `source.srt` as a caller whose peer goes away, on loopback: an ffmpeg sender started here
/// sends a live MPEG-TS over UDP to `srt-live-transmit`, which relays it as an SRT listener and is
/// stopped and restarted by its PID (the peer leaving and coming back); the sender runs on, so
/// what was sent while the relay was down is lost, as a camera's would be. Each wait has a limit
/// of its own, so nothing hangs.
@Suite(.media, .timeLimit(.minutes(2))) struct SRTSourceReconnectTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// Live H.264 (a key frame a second, no B-frames) and AAC for `seconds`, sent in real time to
    /// UDP `port` on 127.0.0.1.
    func sender(to port: Int, seconds: Int) throws -> LoopbackServer {
        try LoopbackServer("ffmpeg", ["-v", "error", "-re", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                                      "-c:v", "libx264", "-bf", "0", "-g", "25", "-c:a", "aac", "-t", "\(seconds)",
                                      "-f", "mpegts", "udp://127.0.0.1:\(port)?pkt_size=1316"],
                           output: "/dev/null", log: folder.appendingPathComponent("ffmpeg.log").path)
    }

    /// srt-live-transmit relaying UDP `udp` as an SRT listener on `port`, listening.
    func relay(_ udp: Int, _ port: Int, _ n: Int) throws -> LoopbackServer {
        let peer = try LoopbackServer("srt-live-transmit", ["udp://127.0.0.1:\(udp)", "srt://127.0.0.1:\(port)?mode=listener"],
                                      output: "/dev/null", log: folder.appendingPathComponent("slt\(n).log").path)
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        return peer
    }

    /// `source.srt` (a caller to `port`, or a listener on it, `reconnect` seconds) → demux →
    /// sink.mp4 `out`, started.
    func record(_ port: Int, reconnect: Int, mode: String = "caller", into out: String) throws -> GraphRun {
        let graph = try GraphLoader(registry: .builtIn).load(json: #"""
            { "version": 1, "nodes": { "in": { "type": "source.srt", "params": { "url": "srt://127.0.0.1:\#(port)", "mode": "\#(mode)", "reconnect": \#(reconnect) } },
              "demux": { "type": "demux" }, "file": { "type": "sink.mp4", "params": { "path": "\#(out)" } } },
              "edges": [ "in.out -> demux.in", "demux.video -> file.video", "demux.audio -> file.audio" ] }
            """#)
        let run = try GraphRun(graph)
        try run.start()
        return run
    }

    /// Frames ffmpeg decodes from the file's video, and its video duration in seconds.
    func decoded(_ path: String) throws -> (frames: Int, seconds: Double) {
        let out = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries", "stream=nb_read_frames,duration", "-of", "csv=p=0", path])
        let fields = out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        return (Int(fields.last ?? "") ?? 0, Double(fields.first ?? "") ?? 0)
    }

    /// The peer stopped for 3 s and restarted, three times in one run: the run goes on, the
    /// recording is complete and plays, with the gaps in its times, and the report names each
    /// gap (where, how long, resumed).
    @Test func aPeerGoneThreeTimesForThreeSecondsIsWaitedFor() throws {
        let udp = try LoopbackServer.freePort(udp: true), port = try LoopbackServer.freePort(udp: true)
        var peer = try relay(udp, port, 0)
        defer { peer.stop() }
        let source = try sender(to: udp, seconds: 40)
        defer { source.stop() }
        let out = folder.appendingPathComponent("reconnected.mp4").path
        let run = try record(port, reconnect: 10, into: out)
        defer { run.cancel() }
        usleep(2_500_000)
        for n in 1...3 {
            peer.stop()
            usleep(3_000_000)
            peer = try relay(udp, port, n)
            usleep(4_000_000)
        }
        run.stop()
        let report = try #require(RemuxChecks.ended(run, within: 10))
        #expect(report.status == .stopped, "\(String(describing: report.error))")
        let gaps = report.gaps.map(\.gap)
        #expect(gaps.count == 3, "\(gaps)")
        #expect(report.gaps.allSatisfy { $0.node == "in" })
        #expect(gaps.allSatisfy { $0.resumed && $0.seconds >= 2.5 && $0.seconds < 6.5 }, "\(gaps)")
        // In order, each after the one before, within the stream.
        #expect(zip(gaps, gaps.dropFirst()).allSatisfy { $1.start > $0.start + $0.seconds }, "\(gaps)")
        #expect(report.outputs.first?.status == .completed, "\(report.outputs)")
        let (frames, seconds) = try decoded(out)
        // About 10 s of the ~19 s sent arrived (25 fps); the file spans the gaps.
        #expect(frames >= 150, "\(frames) frames")
        #expect(seconds >= 14, "\(seconds) s")
        #expect(try MediaProbe(out).stream("audio")?.codecName == "aac")
    }

    /// A listener takes the next caller: a camera (ffmpeg, an SRT caller) sends 3 s, goes away for
    /// 3 s and calls again for 3 s; the run goes on through the gap, reports it, and ends
    /// `reconnect` seconds after the second caller left, the recording complete with both parts.
    @Test func aListenerTakesItsNextCaller() throws {
        let port = try LoopbackServer.freePort(udp: true)
        let out = folder.appendingPathComponent("listened.mp4").path
        let run = try record(port, reconnect: 6, mode: "listener", into: out)
        defer { run.cancel() }
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        func call(_ n: Int) throws {
            let camera = try LoopbackServer("ffmpeg", ["-v", "error", "-re", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25",
                                                       "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                                                       "-c:v", "libx264", "-bf", "0", "-g", "25", "-c:a", "aac", "-t", "3",
                                                       "-f", "mpegts", "srt://127.0.0.1:\(port)?pkt_size=1316"],
                                            output: "/dev/null", log: folder.appendingPathComponent("caller\(n).log").path)
            #expect(camera.waitForExit(within: 10), "caller \(n) still sending")
        }
        try call(1)
        usleep(3_000_000)
        try call(2)
        let report = try #require(RemuxChecks.ended(run, within: 10))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let gaps = report.gaps.map(\.gap)
        #expect(gaps.count == 2 && gaps.first?.resumed == true && gaps.last?.resumed == false, "\(gaps)")
        #expect((gaps.first?.seconds ?? 0) >= 2.5, "\(gaps)")
        let (frames, seconds) = try decoded(out)
        // Of each caller's 75 frames about 45 arrive (90 here): its first second goes to SRT's
        // handshake and the demuxer's wait for the stream's tables and a key frame.
        #expect(frames >= 80, "\(frames) frames: more than one caller's")
        #expect(seconds >= 7, "\(seconds) s: both callers' pictures, the gap between in the times")
    }

    /// A peer that does not come back within `reconnect` ends the stream: the run completes, the
    /// recording kept, the last gap reported as not resumed.
    @Test func aPeerThatNeverComesBackEndsTheStream() throws {
        let udp = try LoopbackServer.freePort(udp: true), port = try LoopbackServer.freePort(udp: true)
        let peer = try relay(udp, port, 0)
        defer { peer.stop() }
        let source = try sender(to: udp, seconds: 20)
        defer { source.stop() }
        let out = folder.appendingPathComponent("ended.mp4").path
        let run = try record(port, reconnect: 2, into: out)
        defer { run.cancel() }
        usleep(3_000_000)
        peer.stop()
        let stopped = Date()
        let report = try #require(RemuxChecks.ended(run, within: 10))
        let waited = Date().timeIntervalSince(stopped)
        #expect(waited >= 2 && waited < 4, "\(waited) s")
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let gaps = report.gaps.map(\.gap)
        #expect(gaps.count == 1 && gaps.first?.resumed == false && (gaps.first?.seconds ?? 0) >= 2, "\(gaps)")
        #expect(report.outputs.first?.status == .completed)
        #expect(try decoded(out).frames >= 40)
    }

    /// Waiting for a peer to come back, the run stops within a second when asked (as SIGINT
    /// does: the recording finished) or cancelled (nothing left under the output's name).
    @Test(arguments: [true, false]) func aRunWaitingForItsPeerStopsPromptly(_ cancel: Bool) throws {
        let udp = try LoopbackServer.freePort(udp: true), port = try LoopbackServer.freePort(udp: true)
        let peer = try relay(udp, port, 0)
        defer { peer.stop() }
        let source = try sender(to: udp, seconds: 20)
        defer { source.stop() }
        let out = folder.appendingPathComponent("waiting.mp4").path
        let run = try record(port, reconnect: 60, into: out)
        defer { run.cancel() }
        usleep(2_500_000)
        peer.stop()
        usleep(4_000_000)  // past a reconnect attempt (SRT's connect timeout is 3 s)
        let asked = Date()
        if cancel { run.cancel() } else { run.stop() }
        let report = try #require(RemuxChecks.ended(run, within: 5))
        #expect(Date().timeIntervalSince(asked) < 1, "\(Date().timeIntervalSince(asked)) s")
        #expect(report.status == (cancel ? .cancelled : .stopped), "\(String(describing: report.error))")
        #expect(FileManager.default.fileExists(atPath: out) == !cancel)
        if !cancel { #expect(try decoded(out).frames >= 25) }
    }

    /// A peer that never answered at all fails within SRT's connect timeout, as without
    /// `reconnect`, naming the URL; nothing is left under the output's name.
    @Test func aPeerThatNeverAnswersFailsWithinTheConnectTimeout() throws {
        let port = try LoopbackServer.freePort(udp: true)
        let out = folder.appendingPathComponent("never.mp4").path
        let started = Date()
        let run = try record(port, reconnect: 30, into: out)
        let report = try #require(RemuxChecks.ended(run, within: 15))
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds >= 2.5 && seconds < 6, "\(seconds) s")
        #expect(report.status == .failed)
        #expect(report.error?.code == .runFailed)
        #expect(report.error?.message.contains("\"srt://127.0.0.1:\(port)\" could not be reached") == true, "\(String(describing: report.error))")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// Without `reconnect`, a caller whose listener ends the stream after sending it ends its
    /// run's input cleanly: the run completes, the recording whole (GraphKit's own sink.srt as
    /// the listener, which closes when its file is sent).
    @Test func aCallerEndsCleanlyWhenItsListenerEndsTheStream() throws {
        let input = folder.appendingPathComponent("three.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                                         "-c:v", "libx264", "-bf", "0", "-g", "25", "-c:a", "aac", "-t", "3", "-y", input])
        let port = try LoopbackServer.freePort(udp: true)
        let sender = try GraphRun(try GraphLoader(registry: .builtIn).load(json: #"""
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\#(input)" } }, "demux": { "type": "demux" },
              "out": { "type": "sink.srt", "params": { "url": "srt://127.0.0.1:\#(port)", "mode": "listener" } } },
              "edges": [ "src.out -> demux.in", "demux.video -> out.video", "demux.audio -> out.audio" ] }
            """#))
        try sender.start()
        defer { sender.cancel() }
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        let out = folder.appendingPathComponent("whole.mp4").path
        let receiver = try record(port, reconnect: 0, into: out)
        defer { receiver.cancel() }
        let sent = try #require(RemuxChecks.ended(sender, within: 20))
        #expect(sent.status == .completed, "\(String(describing: sent.error))")
        let got = try #require(RemuxChecks.ended(receiver, within: 10))
        #expect(got.status == .completed, "\(String(describing: got.error))")
        #expect(got.gaps.isEmpty)
        #expect(got.outputs.first?.status == .completed)
        #expect(try decoded(out).frames >= 25)
    }
}
