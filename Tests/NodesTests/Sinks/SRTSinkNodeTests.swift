import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `sink.srt` and `source.srt` on loopback, against `srt-live-transmit` (Debian's srt-tools) and
/// against each other, on ports the system picks; every peer started here is stopped by its PID.
/// Each wait has a limit of its own, so nothing hangs: a run that has not ended in time fails
/// the test and is cancelled.
@Suite(.media, .timeLimit(.minutes(2))) struct SRTSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 2 s of H.264 (50 frames, 25 fps, B-frames) and AAC, as ffmpeg makes them.
    func source() throws -> String { try RemuxChecks.Source.h264AAC.make(in: folder) }

    func graph(_ nodes: String, _ edges: [String]) throws -> Graph {
        try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { \#(nodes) }, "edges": [ \#(edges.map { "\"\($0)\"" }.joined(separator: ", ")) ] }"#)
    }

    /// `source.file → demux → sink.srt` with `params` (url, mode…), started.
    func send(_ file: String, _ params: String) throws -> GraphRun {
        let run = try GraphRun(try graph(#""src": { "type": "source.file", "params": { "path": "\#(file)" } }, "demux": { "type": "demux" }, "out": { "type": "sink.srt", "params": { \#(params) } }"#,
                                         ["src.out -> demux.in", "demux.video -> out.video", "demux.audio -> out.audio"]))
        try run.start()
        return run
    }

    /// `source.srt → demux → sink.mp4` with `params`, started.
    func receive(_ params: String, into out: String) throws -> GraphRun {
        let run = try GraphRun(try graph(#""in": { "type": "source.srt", "params": { \#(params) } }, "demux": { "type": "demux" }, "file": { "type": "sink.mp4", "params": { "path": "\#(out)" } }"#,
                                         ["in.out -> demux.in", "demux.video -> file.video", "demux.audio -> file.audio"]))
        try run.start()
        return run
    }


    /// Sent as a caller to srt-live-transmit listening: every frame arrives, and decodes to the
    /// source's pictures (the packets passed as they were: no re-encoding); every AAC packet that
    /// GStreamer's MP4 demuxer passes (1.22 leaves out the first and last, outside the edit list).
    @Test func aCallerSendsEveryFrameToSrtLiveTransmit() throws {
        let input = try source()
        let port = try LoopbackServer.freePort(udp: true)
        let received = folder.appendingPathComponent("received.ts").path
        let peer = try LoopbackServer("srt-live-transmit", ["srt://127.0.0.1:\(port)?mode=listener", "file://con"],
                                      output: received, log: folder.appendingPathComponent("slt.log").path)
        defer { peer.stop() }
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        let run = try send(input, #""url": "srt://127.0.0.1:\#(port)", "latency": 200"#)
        let report = try #require(RemuxChecks.ended(run, within: 30))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        peer.stop()
        let frames = try RemuxChecks.frames(input, "v")
        #expect(frames.count == 50)
        #expect(try RemuxChecks.frames(received, "v") == frames)
        let passed = RemuxChecks.aacPacketsPassed(of: try RemuxChecks.packets(input, "a")).map(\.count)
        let audioOut = try RemuxChecks.packets(received, "a").count
        #expect(passed.contains(audioOut), "\(audioOut) AAC packets, where the demuxer passes \(passed)")
    }

    /// A/V sync through SRT: a flash and its beep at every second, sent as a caller to
    /// srt-live-transmit as they are (demux) and encoded again (decode, encode.h264, encode.aac,
    /// whose encoder delay must not move the sound), arrive together as they left: each beep
    /// within 5 ms of where it was from its flash in the source, as ffmpeg plays both.
    @Test(arguments: [false, true]) func aFlashAndItsBeepArriveTogether(encoded: Bool) throws {
        let input = try FlashAndBeep.make(in: folder)
        let port = try LoopbackServer.freePort(udp: true)
        let received = folder.appendingPathComponent("flash-beep.ts").path
        let peer = try LoopbackServer("srt-live-transmit", ["srt://127.0.0.1:\(port)?mode=listener", "file://con"],
                                      output: received, log: folder.appendingPathComponent("slt.log").path)
        defer { peer.stop() }
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        let run: GraphRun
        if encoded {
            run = try GraphRun(try graph(#""src": { "type": "source.file", "params": { "path": "\#(input)" } }, "dec": { "type": "decode", "params": { "pixelFormat": "i420" } }, "h264": { "type": "encode.h264", "params": { "keyframeInterval": 25 } }, "aac": { "type": "encode.aac" }, "out": { "type": "sink.srt", "params": { "url": "srt://127.0.0.1:\#(port)" } }"#,
                                         ["src.out -> dec.in", "dec.video -> h264.in", "dec.audio -> aac.in", "h264.out -> out.video", "aac.out -> out.audio"]))
            try run.start()
        } else {
            run = try send(input, #""url": "srt://127.0.0.1:\#(port)""#)
        }
        let report = try #require(RemuxChecks.ended(run, within: 30))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        peer.stop()
        let (sent, got, skew) = try FlashAndBeep.change(from: input, to: received)
        // Encoded again, the AAC encoder's priming takes the place of input it leaves out
        // (MPEG-TS has no edit list to skip it): 21.3 ms late before it did.
        #expect(sent.count >= 3 && got.count >= 3 && skew <= 0.005, "beeps from their flashes: sent \(sent), received \(got)")
        print("SRT A/V sync (\(encoded ? "encoded again" : "as sent")): beeps from flashes sent \(sent), received \(got), worst change \(skew) s")
    }

    /// GraphKit to GraphKit, encrypted (AES-256): a listener receives what a caller sends and
    /// records it to MP4 without re-encoding; what arrives decodes frame for frame as the source
    /// does, with no gap; the receiving run ends when the sender leaves.
    ///
    /// Known issue: the receiver misses the stream's first group of pictures (38 of 50 frames
    /// here), though srt-live-transmit receives all 50 from the same sender: GStreamer's mpegtsmux
    /// starts a B-frame stream's decode times before its first PCR, and tsdemux + h264parse drop
    /// that first group (docs/GRAPH-FORMAT.md).
    @Test func aRoundTripPassesFramesUnchanged() throws {
        let input = try source()
        let port = try LoopbackServer.freePort(udp: true)
        let out = folder.appendingPathComponent("received.mp4").path
        let secret = #""passphrase": "correct horse battery", "keyLength": 32"#
        let url = #""url": "srt://127.0.0.1:\#(port)""#
        // The listener first, so the caller finds it (a caller gives up after 3 s).
        let receiver = try receive("\(url), \"mode\": \"listener\", \(secret)", into: out)
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        let sender = try send(input, "\(url), \"mode\": \"caller\", \(secret)")
        let sent = try #require(RemuxChecks.ended(sender, within: 30))
        let got = try #require(RemuxChecks.ended(receiver, within: 15))
        #expect(sent.status == .completed, "\(String(describing: sent.error))")
        #expect(got.status == .completed, "\(String(describing: got.error))")
        let frames = try RemuxChecks.frames(input, "v")
        let received = try RemuxChecks.frames(out, "v")
        #expect(received.count >= frames.count / 2, "\(received.count) frames of \(frames.count)")
        // A run of the source's frames, each as it was.
        let start = frames.firstIndex(of: received.first ?? "") ?? 0
        #expect(Array(frames[start..<min(frames.count, start + received.count)]) == received)
        #expect(try MediaProbe(out).stream("audio")?.codecName == "aac")
        withKnownIssue("the receiver misses the first group of pictures", isIntermittent: true) {
            #expect(received.count * 100 >= frames.count * 99, "\(received.count) frames of \(frames.count)")
        }
    }

    /// A listener sending a file waits for its caller with the clock running, then sends what it
    /// owes in a burst: the receiver times the transport stream by its own PTS (not through its
    /// PCR and the packets' arrival, which bent the audio back by up to 52 ms and failed the MP4
    /// writer), so what it records rises evenly. Stopped while the stream still comes (a caller
    /// whose listener ends the stream ends cleanly: SRTSourceReconnectTests).
    @Test func aBurstFromAWaitingListenerKeepsTheStreamsTimes() throws {
        let input = folder.appendingPathComponent("six.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                                         "-c:v", "libx264", "-bf", "0", "-g", "25", "-c:a", "aac", "-t", "6", "-y", input])
        let port = try LoopbackServer.freePort(udp: true)
        let url = #""url": "srt://127.0.0.1:\#(port)""#
        let sender = try send(input, "\(url), \"mode\": \"listener\"")
        defer { sender.cancel() }
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        usleep(1_200_000)  // the listener's clock runs meanwhile
        let out = folder.appendingPathComponent("burst.mp4").path
        let receiver = try receive("\(url), \"mode\": \"caller\"", into: out)
        usleep(3_000_000)
        receiver.stop()
        let got = try #require(RemuxChecks.ended(receiver, within: 15))
        #expect(got.status == .completed || got.status == .stopped, "\(String(describing: got.error))")
        let times = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "packet=pts_time", "-of", "csv=p=0", out])
            .split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        #expect(times.count >= 50, "\(times.count) audio packets")
        let steps = zip(times, times.dropFirst()).map { $1 - $0 }
        #expect(steps.allSatisfy { abs($0 - 1024.0 / 48_000) < 0.002 }, "\(steps.filter { abs($0 - 1024.0 / 48_000) >= 0.002 })")
    }

    /// A wrong or missing passphrase is refused by the peer during the handshake: the run fails
    /// at once (70) saying so, naming the URL, never the passphrase.
    @Test(arguments: [#", "passphrase": "not the right one""#, ""])
    func aPassphraseTheListenerRefusesFailsClearly(_ ours: String) throws {
        let port = try LoopbackServer.freePort(udp: true), udp = try LoopbackServer.freePort(udp: true)
        let peer = try LoopbackServer("srt-live-transmit", ["udp://127.0.0.1:\(udp)", "srt://127.0.0.1:\(port)?mode=listener&passphrase=thelistenerssecret"],
                                      output: "/dev/null", log: folder.appendingPathComponent("slt.log").path)
        defer { peer.stop() }
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        let started = Date()
        let run = try receive(#""url": "srt://127.0.0.1:\#(port)"\#(ours)"#, into: folder.appendingPathComponent("never.mp4").path)
        let report = try #require(RemuxChecks.ended(run, within: 10))
        #expect(Date().timeIntervalSince(started) < 6)
        #expect(report.status == .failed)
        let error = try #require(report.error)
        #expect(error.code == .runFailed)
        let stated = ours.isEmpty ? error.message.contains("requires a passphrase") || error.message.contains("may require a passphrase, and none is given")
            : error.message.contains("passphrase differs") || error.message.contains("passphrase may differ")
        // GStreamer 1.26's srtsrc, run to run, gives no reason for the refusal (the node says
        // what it may be) or reports the rejected handshake as a peer that never answered: that
        // is said as it is, naming the URL.
        let unanswered = GStreamer.version.minor >= 24 && !ours.isEmpty && error.message.contains("\"srt://127.0.0.1:\(port)\" could not be reached")
        #expect(error.message.contains("\"srt://127.0.0.1:\(port)\" refused the connection") && stated || unanswered, "\(error.message)")
        #expect(!"\(error)".contains("not the right one") && !(error.cause ?? "").contains("not the right one"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("never.mp4").path))
    }

    /// A caller to a port nobody listens on fails after SRT's connect timeout (3 s), naming the
    /// URL; the sink and the source alike.
    @Test(arguments: ["source", "sink"])
    func aCallerNobodyAnswersFailsWithinTheConnectTimeout(_ side: String) throws {
        let port = try LoopbackServer.freePort(udp: true)
        let started = Date()
        let run = side == "source" ? try receive(#""url": "srt://127.0.0.1:\#(port)""#, into: folder.appendingPathComponent("never.mp4").path)
            : try send(try source(), #""url": "srt://127.0.0.1:\#(port)""#)
        let report = try #require(RemuxChecks.ended(run, within: 15))
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds >= 2.5 && seconds < 8, "\(seconds) s")
        #expect(report.status == .failed)
        #expect(report.error?.code == .runFailed)
        #expect(report.error?.message.contains("\"srt://127.0.0.1:\(port)\" could not be reached") == true, "\(String(describing: report.error))")
    }

    /// The live camera (H.264, a key frame a second) sent by a caller with `reconnect`, for
    /// `seconds`, started.
    func sendCamera(to port: Int, reconnect: Int, seconds: Int) throws -> GraphRun {
        let run = try GraphRun(try graph(#"""
            "camera": { "type": "capture.video", "params": { "width": 160, "height": 120, "fps": 25, "duration": \#(seconds) } },
            "h264": { "type": "encode.h264", "params": { "keyframeInterval": 25 } },
            "out": { "type": "sink.srt", "params": { "url": "srt://127.0.0.1:\#(port)", "reconnect": \#(reconnect) } }
            """#, ["camera.out -> h264.in", "h264.out -> out.video"]))
        try run.start()
        return run
    }

    /// srt-live-transmit listening on `port`, writing what it receives to `out`, listening.
    func listener(_ port: Int, writing out: String) throws -> LoopbackServer {
        let peer = try LoopbackServer("srt-live-transmit", ["srt://127.0.0.1:\(port)?mode=listener", "file://con"],
                                      output: out, log: out + ".log")
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        return peer
    }

    /// A caller with `reconnect` whose listener goes away for 3 s calls it again: the run goes
    /// on and completes, the second listener receives the rest (decodable pictures from the next
    /// key frame, which carries the parameter sets), and the report names the gap (from when SRT
    /// declared the connection broken, its peer idle timeout of 5 s after the peer went quiet, to
    /// the new connection). A listener not back in time fails the run naming the URL, within
    /// that timeout and `reconnect`.
    @Test func aCallerWithReconnectCallsItsListenerAgain() throws {
        let port = try LoopbackServer.freePort(udp: true)
        let first = folder.appendingPathComponent("first.ts").path, second = folder.appendingPathComponent("second.ts").path
        var peer = try listener(port, writing: first)
        defer { peer.stop() }
        let run = try sendCamera(to: port, reconnect: 10, seconds: 15)
        defer { run.cancel() }
        usleep(2_500_000)
        peer.stop()
        usleep(3_000_000)
        peer = try listener(port, writing: second)
        let report = try #require(RemuxChecks.ended(run, within: 20))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let gaps = report.gaps.map(\.gap)
        #expect(gaps.count == 1 && gaps.first?.resumed == true && (gaps.first?.seconds ?? 0) >= 2.5, "\(gaps)")
        peer.stop()
        func decodable(_ path: String) throws -> Int {
            // (The first video stream's: a receiver's file may list the program's streams twice.)
            Int(try TestMedia.runTool("ffprobe", ["-v", "quiet", "-select_streams", "v:0", "-count_frames", "-show_entries", "stream=nb_read_frames",
                                                  "-of", "csv=p=0", path]).split(separator: "\n").first ?? "") ?? 0
        }
        #expect(try decodable(first) >= 25)
        #expect(try decodable(second) >= 25, "the pictures after the gap arrive and decode")

        let port2 = try LoopbackServer.freePort(udp: true)
        let gone = try listener(port2, writing: folder.appendingPathComponent("gone.ts").path)
        let lost = try sendCamera(to: port2, reconnect: 2, seconds: 20)
        defer { lost.cancel() }
        usleep(2_000_000)
        gone.stop()
        let stopped = Date()
        let failed = try #require(RemuxChecks.ended(lost, within: 10))
        #expect(Date().timeIntervalSince(stopped) < 10, "SRT's 5 s peer idle timeout, then 2 s")
        #expect(failed.status == .failed)
        #expect(failed.error?.message.contains("\"srt://127.0.0.1:\(port2)\": its peer went away and was not back within 2 s") == true,
                "\(String(describing: failed.error))")
    }

    /// A peer that answers every handshake with garbage is no peer: the caller fails as above,
    /// within the connect timeout, naming the URL; nothing is left under the output's name.
    @Test(arguments: ["source", "sink"])
    func aPeerThatAnswersWithGarbageFailsWithinTheConnectTimeout(_ side: String) throws {
        let peer = try GarbageServer(udp: true)
        defer { peer.stop() }
        let out = folder.appendingPathComponent("garbage.mp4").path
        let started = Date()
        let run = side == "source" ? try receive(#""url": "srt://127.0.0.1:\#(peer.port)""#, into: out)
            : try send(try source(), #""url": "srt://127.0.0.1:\#(peer.port)""#)
        let report = try #require(RemuxChecks.ended(run, within: 15))
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds < 8, "\(seconds) s")
        #expect(report.status == .failed)
        #expect(report.error?.code == .runFailed)
        #expect(report.error?.message.contains("\"srt://127.0.0.1:\(peer.port)\"") == true, "\(String(describing: report.error))")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A listener nobody calls waits; stopping the run ends it within a second (nothing was
    /// written: it is cancelled).
    @Test func aWaitingListenerStopsAtOnce() throws {
        let port = try LoopbackServer.freePort(udp: true)
        let out = folder.appendingPathComponent("never.mp4").path
        let run = try receive(#""url": "srt://127.0.0.1:\#(port)", "mode": "listener""#, into: out)
        #expect(LoopbackServer.waitForUDPListener(port: port, within: 5))
        let started = Date()
        run.stop()
        let report = try #require(RemuxChecks.ended(run, within: 5))
        #expect(Date().timeIntervalSince(started) < 1.5)
        #expect(report.status == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
