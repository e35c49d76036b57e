import Foundation
import Glibc
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// What `source.rtsp` refuses when the graph is loaded, before anything runs: each at its
/// parameter, never quoting a credential. No media: the fast tier.
@Suite struct RTSPSourceNodeLoadTests {
    /// The problems the loader and the node (as `graphctl validate` makes it) find.
    func problems(_ params: String) -> [String] {
        do {
            try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { "n": { "type": "source.rtsp", "params": { \#(params) } }, "file": { "type": "sink.mp4", "params": { "path": "out.mp4" } } }, "edges": [ "n.video -> file.video" ] }"#).checkNodes()
            return []
        } catch {
            return error.problems.map(\.description)
        }
    }

    @Test func aGoodGraphLoads() {
        #expect(problems(#""url": "rtsp://127.0.0.1:8554/stream""#) == [])
        #expect(problems(#""url": "rtsp://admin:hunter2@camera.local/Streaming/Channels/101?transportmode=unicast", "transport": "udp", "latency": 0, "timeout": 3"#) == [])
        #expect(problems(#""url": "rtsp://[::1]:554/live", "user": "admin", "password": "hunter2""#) == [])
    }

    /// Another scheme, a bad port: refused at the URL, shown without its credentials.
    @Test func aURLSourceRTSPCannotUseIsRefusedWithoutItsCredentials() {
        let scheme = problems(#""url": "http://admin:hunter2@127.0.0.1:322/stream""#)
        #expect(scheme.count == 1 && scheme.first?.hasPrefix("nodes.n.params.url: expected rtsp://[USER:PASSWORD@]HOST[:PORT]/PATH, or rtsps:// (TLS)") == true, "\(scheme)")
        #expect(scheme.allSatisfy { !$0.contains("hunter2") && !$0.contains("admin") }, "\(scheme)")
        let port = problems(#""url": "rtsp://admin:hunter2@127.0.0.1:99999/stream""#)
        #expect(port == ["nodes.n.params.url: rtsp://127.0.0.1:99999/stream has no port from 1 to 65535"], "\(port)")
    }

    /// rtsps:// (TLS) loads; over UDP it would send the stream unencrypted, so it takes tcp
    /// only; certificateAuthority is for rtsps:// and must be readable.
    @Test func rtspsTakesTCPAndItsAuthorityFile() throws {
        #expect(problems(#""url": "rtsps://admin:hunter2@127.0.0.1:322/stream""#) == [])
        let udp = problems(#""url": "rtsps://127.0.0.1:322/stream", "transport": "udp""#)
        #expect(udp.first?.hasPrefix("nodes.n.params.transport: rtsps:// carries the stream inside its TLS connection: transport must be tcp") == true, "\(udp)")
        let plain = problems(#""url": "rtsp://127.0.0.1/stream", "certificateAuthority": "/etc/ssl/certs/ca-certificates.crt""#)
        #expect(plain.first?.hasPrefix("nodes.n.params.certificateAuthority: certificateAuthority is for an rtsps:// URL") == true, "\(plain)")
        // An unreadable file is the run's (66, as every input file), found as the node is made.
        let graph = try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { "n": { "type": "source.rtsp", "params": { "url": "rtsps://127.0.0.1/stream", "certificateAuthority": "/nonexistent/ca.pem" } }, "file": { "type": "sink.mp4", "params": { "path": "out.mp4" } } }, "edges": [ "n.video -> file.video" ] }"#)
        let spec = try #require(graph.nodes.first { $0.id == "n" })
        do {
            _ = try RTSPSourceNode(context: NodeContext(id: "n", parameters: spec.parameters, connectedInputs: [], connectedOutputs: ["video"]))
            Issue.record("an unreadable certificateAuthority was taken")
        } catch {
            #expect(error.code == .inputUnreadable)
            #expect(error.description.contains("nodes.n.params.certificateAuthority") && error.description.contains("cannot read \"/nonexistent/ca.pem\""), "\(error)")
        }
    }

    /// Credentials in the URL and as parameters at once, a user without a password, a bad
    /// %-escape: each refused where it is, the password never quoted.
    @Test func credentialsAreGivenOnceAndNeverQuoted() {
        let twice = problems(#""url": "rtsp://admin:hunter2@127.0.0.1/stream", "user": "admin", "password": "other-secret""#)
        #expect(twice.first?.hasPrefix("nodes.n.params.user: credentials are given twice") == true, "\(twice)")
        #expect(twice.allSatisfy { !$0.contains("hunter2") && !$0.contains("other-secret") })
        let alone = problems(#""url": "rtsp://127.0.0.1/stream", "password": "hunter2""#)
        #expect(alone.count == 1 && alone.allSatisfy { !$0.contains("hunter2") }, "\(alone)")
        let escape = problems(#""url": "rtsp://admin:hun%zzter2@127.0.0.1/stream""#)
        #expect(escape.first?.hasPrefix("nodes.n.params.url: the user or password in rtsp://127.0.0.1/stream has a malformed %-escape") == true, "\(escape)")
        #expect(escape.allSatisfy { !$0.contains("hun%zzter2") })
        // A sign is no hex digit: "%+4" is malformed, not byte 4.
        let signed = problems(#""url": "rtsp://admin:hun%+4ter2@127.0.0.1/stream""#)
        #expect(signed.first?.hasPrefix("nodes.n.params.url: the user or password in rtsp://127.0.0.1/stream has a malformed %-escape") == true, "\(signed)")
    }
}

/// `source.rtsp` on loopback against GStreamer's RTSP server (RTSPTestServer), started here on a port the system picks and stopped by its PID; the recordings
/// read back with ffmpeg. Every wait has a limit of its own.
@Suite(.media, .timeLimit(.minutes(3))) struct RTSPSourceNodeTests {
    /// How long a recording of a few seconds may take to end: about 6 s alone, and up to five
    /// times that in the whole suite on 2 cores (recordsOpusWithoutReEncoding once passed 30 s
    /// there). A run that is stuck, not slow, still fails it (RemuxChecks.ended says which).
    static let recordingBound = 60.0

    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// A file to serve: `seconds` of H.264 (25 fps, B-frames) and AAC, as ffmpeg makes them.
    func h264AAC(seconds: Int) throws -> String {
        let path = folder.appendingPathComponent("served-\(seconds).mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + RemuxChecks.Source.testsrc + RemuxChecks.Source.tone44k + RemuxChecks.Source.picture
                              + ["-c:v", "libx264", "-bf", "2", "-c:a", "aac", "-t", "\(seconds)", "-y", path])
        return path
    }

    /// The RTSP server serving `file` at rtsp://127.0.0.1:PORT/stream, once it said "ready".
    func serve(_ file: String, _ options: [String] = []) throws -> (LoopbackServer, Int) {
        try RTSPTestServer.start(serving: file, options, in: folder)
    }

    /// `source.rtsp → sink.mp4` with `params`, both ports unless `audio` is false, started.
    func record(_ params: String, into out: String, audio: Bool = true, fragmented: Bool = false) throws -> GraphRun {
        let edges = ["\"in.video -> file.video\""] + (audio ? ["\"in.audio -> file.audio\""] : [])
        let file = #""path": "\#(out)""# + (fragmented ? #", "fragmentInterval": 1"# : "")
        let graph = try GraphLoader(registry: .builtIn).load(json: #"{ "version": 1, "nodes": { "in": { "type": "source.rtsp", "params": { \#(params) } }, "file": { "type": "sink.mp4", "params": { \#(file) } } }, "edges": [ \#(edges.joined(separator: ", ")) ] }"#)
        let run = try GraphRun(graph)
        try run.start()
        return run
    }

    /// ffprobe's start time of each stream of `path`, by type.
    func startTimes(_ path: String) throws -> [String: Double] {
        let lines = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,start_time", "-of", "csv=p=0", path])
        var times: [String: Double] = [:]
        for line in lines.split(separator: "\n") {
            let fields = line.split(separator: ",")
            if fields.count == 2, let t = Double(fields[1]) { times[String(fields[0])] = t }
        }
        return times
    }

    /// Every received packet is the served one at its place: a run of the served packets. With
    /// `firstKeyFrameMayGrow`, the first may hold more than was stored: GStreamer 1.26's H.264
    /// depayloader puts the parameter sets the server sent in band into the first key frame (the
    /// pictures are compared decoded, ``expectSamePictures(_:_:)``).
    func expectIdenticalRun(_ received: [String], of served: [String], _ what: String, firstKeyFrameMayGrow: Bool = false) {
        var received = received[...], first = served.firstIndex(of: received.first ?? "")
        if first == nil, firstKeyFrameMayGrow, received.count > 1, let second = served.firstIndex(of: received[received.startIndex + 1]), second > 0 {
            received = received.dropFirst()
            first = second
        }
        let start = first ?? 0
        #expect(Array(served[start..<min(served.count, start + received.count)]) == Array(received), "\(what): packets differ from those served")
        if received.count != served.count { print("\(what): received packets \(start)..<\(start + received.count) of \(served.count)") }
    }

    /// The recorded video's first group of pictures (the key frame whose packet may have grown,
    /// and what is predicted from it) decodes to the served pictures. (Not the whole: ffmpeg
    /// decodes the recording's last B-frames otherwise than the file's, whose edit list differs.)
    func expectSamePictures(_ served: String, _ out: String) throws {
        let sent = try RemuxChecks.frames(served, "v"), got = Array(try RemuxChecks.frames(out, "v").prefix(10))
        let start = sent.firstIndex(of: got.first ?? "") ?? 0
        #expect(got.count == 10 && Array(sent[start..<min(sent.count, start + got.count)]) == got, "the first pictures differ from those served")
    }

    /// A 4 s file served over TCP, over UDP and over `auto` (UDP here) and recorded to MP4 until the server ends the
    /// stream: at least 99 % of the frames arrive, each H.264 packet as the server sent it (no
    /// re-encoding), AAC likewise, and audio and video start within one frame (40 ms).
    @Test(arguments: ["tcp", "udp", "auto"])
    func recordsToMP4WithoutReEncoding(_ transport: String) throws {
        let served = try h264AAC(seconds: 4)
        let (server, port) = try serve(served)
        defer { server.stop() }
        let out = folder.appendingPathComponent("camera-\(transport).mp4").path
        let run = try record(#""url": "rtsp://127.0.0.1:\#(port)/stream", "transport": "\#(transport)""#, into: out)
        let report = try #require(RemuxChecks.ended(run, within: RTSPSourceNodeTests.recordingBound))
        #expect(report.status == .completed, "\(String(describing: report.error)) \(report.error?.cause ?? "")")
        let sentVideo = try RemuxChecks.packets(served, "v"), gotVideo = try RemuxChecks.packets(out, "v")
        #expect(sentVideo.count == 100)
        #expect(gotVideo.count * 100 >= sentVideo.count * 99, "\(gotVideo.count) of \(sentVideo.count) frames over \(transport)")
        expectIdenticalRun(gotVideo, of: sentVideo, "H.264 over \(transport)", firstKeyFrameMayGrow: true)
        try expectSamePictures(served, out)
        let sentAudio = RemuxChecks.aacPacketsPassed(of: try RemuxChecks.packets(served, "a"))[0], gotAudio = try RemuxChecks.packets(out, "a")
        #expect(gotAudio.count * 100 >= sentAudio.count * 99, "\(gotAudio.count) of \(sentAudio.count) AAC packets over \(transport)")
        expectIdenticalRun(gotAudio, of: sentAudio, "AAC over \(transport)")
        let starts = try startTimes(out)
        let (v, a) = (try #require(starts["video"]), try #require(starts["audio"]))
        #expect(abs(v - a) <= 0.040, "video starts at \(v) s, audio at \(a) s over \(transport)")
        print("RTSP over \(transport): \(gotVideo.count)/\(sentVideo.count) frames, \(gotAudio.count)/\(sentAudio.count) AAC packets, start video \(v) s audio \(a) s")
    }

    /// HEVC passes as it was sent too (video alone, from a Matroska file with B-frames, 100 frames).
    @Test func recordsHEVCWithoutReEncoding() throws {
        // 4 s (100 frames), so that 99 % allows the one frame a loaded machine may lose at the end.
        let served = folder.appendingPathComponent("hevc.mkv").path
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + RemuxChecks.Source.hevc.arguments + ["-t", "4", "-y", served])
        try expectPassedAsSent(served, ["--video", "h265", "--audio", "none"], stream: "video", codec: "hevc")
    }

    /// Opus audio passes as it was sent too (H.264 + Opus from a Matroska file into MP4).
    @Test func recordsOpusWithoutReEncoding() throws {
        let served = folder.appendingPathComponent("h264-opus.mkv").path
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + RemuxChecks.Source.testsrc + RemuxChecks.Source.tone48k + RemuxChecks.Source.picture
                              + ["-c:v", "libx264", "-bf", "2", "-c:a", "libopus", "-b:a", "64k", "-t", "4", "-y", served])
        try expectPassedAsSent(served, ["--audio", "opus"], stream: "audio", codec: "opus")
    }

    /// Serves `served` with the server's `options`, records it to MP4 until the stream ends, and
    /// expects its `stream` (`audio`, `video`) in `codec`, at least 99 % of the packets, each as sent.
    func expectPassedAsSent(_ served: String, _ options: [String], stream: String, codec: String) throws {
        let (server, port) = try serve(served, options)
        defer { server.stop() }
        let out = folder.appendingPathComponent("\(codec).mp4").path
        let run = try record(#""url": "rtsp://127.0.0.1:\#(port)/stream""#, into: out, audio: !options.contains("none"))
        let report = try #require(RemuxChecks.ended(run, within: RTSPSourceNodeTests.recordingBound))
        #expect(report.status == .completed, "\(String(describing: report.error)) \(report.error?.cause ?? "")")
        #expect(try MediaProbe(out).stream(stream)?.codecName == codec)
        let sent = try RemuxChecks.packets(served, String(stream.prefix(1))), got = try RemuxChecks.packets(out, String(stream.prefix(1)))
        #expect(got.count * 100 >= sent.count * 99, "\(got.count) of \(sent.count) \(codec) packets")
        expectIdenticalRun(got, of: sent, codec)
        print("RTSP \(codec): \(got.count)/\(sent.count) packets")
    }

    /// A server that asks for a user and password: the right ones (as parameters) record; wrong
    /// ones (in the URL) fail the run at once (70) saying 401, naming the URL without them; no
    /// file is left under the output's name.
    @Test func credentialsTheServerRefusesFailClearly() throws {
        let served = try h264AAC(seconds: 2)
        let (server, port) = try serve(served, ["--user", "viewer", "--password", "c0rrect-horse"])
        defer { server.stop() }
        let good = folder.appendingPathComponent("good.mp4").path
        let run = try record(#""url": "rtsp://127.0.0.1:\#(port)/stream", "user": "viewer", "password": "c0rrect-horse""#, into: good)
        let report = try #require(RemuxChecks.ended(run, within: RTSPSourceNodeTests.recordingBound))
        #expect(report.status == .completed, "\(String(describing: report.error)) \(report.error?.cause ?? "")")
        #expect(try RemuxChecks.packets(good, "v").count >= 49)

        let never = folder.appendingPathComponent("never.mp4").path
        let started = Date()
        let refused = try #require(RemuxChecks.ended(try record(#""url": "rtsp://viewer:wr0ng-pass%21@127.0.0.1:\#(port)/stream""#, into: never), within: 15))
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(refused.status == .failed)
        let error = try #require(refused.error)
        #expect(error.code == .runFailed)
        #expect(error.message.contains("the RTSP server \"rtsp://127.0.0.1:\(port)/stream\" refused the user and password (401 Unauthorized)"), "\(error.message)")
        for secret in ["wr0ng-pass", "viewer:"] {
            #expect(!"\(error)".contains(secret) && !(error.cause ?? "").contains(secret), "\(error) \(error.cause ?? "")")
        }
        #expect(!FileManager.default.fileExists(atPath: never))

        // The right credentials and a path the server does not serve: 404, said so.
        let missing = try #require(RemuxChecks.ended(try record(#""url": "rtsp://127.0.0.1:\#(port)/nothing-here", "user": "viewer", "password": "c0rrect-horse""#, into: never), within: 15))
        #expect(missing.error?.message.contains("\"rtsp://127.0.0.1:\(port)/nothing-here\" has no stream at that path (404 Not Found)") == true, "\(String(describing: missing.error))")
        #expect(!FileManager.default.fileExists(atPath: never))
    }

    /// A port that takes the connection and never answers: the run fails within its timeout
    /// (2 s here), saying so; a port where nothing listens fails at once. Neither leaves a file.
    @Test func aServerThatNeverAnswersFailsWithinTheTimeout() throws {
        let silent = try SilentListener()
        defer { withExtendedLifetime(silent) {} }
        let port = silent.port
        let out = folder.appendingPathComponent("never.mp4").path
        let started = Date()
        let report = try #require(RemuxChecks.ended(try record(#""url": "rtsp://admin:hunter2@127.0.0.1:\#(port)/stream", "timeout": 2"#, into: out), within: 15))
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds >= 1.5 && seconds < 6, "\(seconds) s")
        #expect(report.status == .failed)
        #expect(report.error?.code == .runFailed)
        #expect(report.error?.message.contains("\"rtsp://127.0.0.1:\(port)/stream\" did not answer within 2 s") == true, "\(String(describing: report.error))")
        #expect(!"\(String(describing: report.error))".contains("hunter2") && !(report.error?.cause ?? "").contains("hunter2"))
        #expect(!FileManager.default.fileExists(atPath: out))

        let closed = try LoopbackServer.freePort(udp: false)
        // A fragmented recording, written under its name from the start, leaves nothing either
        // when nothing arrived.
        let refused = try #require(RemuxChecks.ended(try record(#""url": "rtsp://127.0.0.1:\#(closed)/stream""#, into: out, fragmented: true), within: 15))
        #expect(refused.error?.message.contains("\"rtsp://127.0.0.1:\(closed)/stream\" could not be reached") == true, "\(String(describing: refused.error))")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A server that accepts, then answers with garbage (from its first byte, or after a
    /// plausible status line): the run fails (70) within the timeout, naming the URL without its
    /// credentials, leaving no file; never a hang.
    @Test(arguments: ["", "RTSP/1.0 200 OK\r\nCSeq: 1\r\n"])
    func aServerThatSendsGarbageFailsClearly(_ preface: String) throws {
        let server = try GarbageServer(preface: preface)
        defer { server.stop() }
        let out = folder.appendingPathComponent("garbage.mp4").path
        let started = Date()
        let report = try #require(RemuxChecks.ended(try record(#""url": "rtsp://admin:hunter2@127.0.0.1:\#(server.port)/stream", "timeout": 2"#, into: out), within: 20))
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(report.status == .failed)
        #expect(report.error?.code == .runFailed)
        #expect(report.error?.message.contains("\"rtsp://127.0.0.1:\(server.port)/stream\"") == true, "\(String(describing: report.error))")
        #expect(!"\(String(describing: report.error))".contains("hunter2") && !(report.error?.cause ?? "").contains("hunter2"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// graphs/rtsp-record.json and graphs/rtsp-hls.json as shipped, pointed at the test server
    /// and a folder of the test's: the fragmented MP4 holds the packets as served; the HLS
    /// package's segments start on the camera's own key frames (nothing re-encoded, no encoder to
    /// ask) and play every frame.
    @Test func theExampleGraphsRecordACameraWithoutReEncoding() throws {
        let served = try h264AAC(seconds: 4)
        let (server, port) = try serve(served)
        defer { server.stop() }
        let graphs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../graphs").standardized
        let url = try GraphLoader.Override(parsing: "camera.url=rtsp://127.0.0.1:\(port)/stream")
        let mp4 = folder.appendingPathComponent("record.mp4").path
        let record = try GraphRun(try GraphLoader(registry: .builtIn).load(contentsOf: graphs.appendingPathComponent("rtsp-record.json").path,
                                                                           overrides: [url, try .init(parsing: "file.path=\(mp4)")]))
        try record.start()
        let recorded = try #require(RemuxChecks.ended(record, within: 30))
        #expect(recorded.status == .completed, "\(String(describing: recorded.error)) \(recorded.error?.cause ?? "")")
        let sent = try RemuxChecks.packets(served, "v"), got = try RemuxChecks.packets(mp4, "v")
        #expect(got.count * 100 >= sent.count * 99, "\(got.count) of \(sent.count) frames")
        expectIdenticalRun(got, of: sent, "rtsp-record.json", firstKeyFrameMayGrow: true)
        try expectSamePictures(served, mp4)

        let live = folder.appendingPathComponent("live")
        let hls = try GraphRun(try GraphLoader(registry: .builtIn).load(contentsOf: graphs.appendingPathComponent("rtsp-hls.json").path,
                                                                        overrides: [url, try .init(parsing: "hls.folder=\(live.path)")]))
        try hls.start()
        let published = try #require(RemuxChecks.ended(hls, within: 30))
        #expect(published.status == .completed, "\(String(describing: published.error)) \(published.error?.cause ?? "")")
        let playlist = try #require(try FileManager.default.contentsOfDirectory(atPath: live.path).first { $0.hasSuffix(".m3u8") })
        let path = live.appendingPathComponent(playlist).path
        let check = try HLSPlaylistCheck(path: path)
        #expect(check.problems.isEmpty, "\(check.problems)")
        #expect(check.segments.count >= 2, "\(check.segments)")
        #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(path, check).isEmpty)
        let frames = try HLSPlaylistCheck.framesThroughHlsdemux(path)
        #expect(frames * 100 >= sent.count * 99, "\(frames) of \(sent.count) frames through HLS")
        print("RTSP examples: rtsp-record \(got.count)/\(sent.count) frames; rtsp-hls \(check.segments.count) segments, \(frames)/\(sent.count) frames")
    }

    /// graphs/rtsp-segments.json as shipped, its files cut every second instead of five minutes:
    /// one file a second or so, each starting with one of the camera's key frames (12 frames
    /// apart) and decoding alone to every frame it holds; together, the packets as served.
    @Test func theSegmentsExampleCutsTheCameraOnItsKeyFrames() throws {
        let served = try h264AAC(seconds: 4)
        let (server, port) = try serve(served)
        defer { server.stop() }
        let graphs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../graphs").standardized
        let pattern = folder.appendingPathComponent("camera/rec-%05d.mp4").path
        let run = try GraphRun(try GraphLoader(registry: .builtIn).load(
            contentsOf: graphs.appendingPathComponent("rtsp-segments.json").path,
            overrides: [try .init(parsing: "camera.url=rtsp://127.0.0.1:\(port)/stream"), try .init(parsing: "files.path=\(pattern)"),
                        // (The test server's stream ends with its file: not a camera to ask again.)
                        try .init(parsing: "files.segmentDuration=1"), try .init(parsing: "camera.reconnect=0")]))
        try run.start()
        let report = try #require(RemuxChecks.ended(run, within: RTSPSourceNodeTests.recordingBound))
        #expect(report.status == .completed, "\(String(describing: report.error)) \(report.error?.cause ?? "")")
        let files = report.outputs.map(\.path)
        #expect(files.count >= 3 && files.count <= 5, "\(files)")
        var got: [String] = []
        for file in files {
            let hashes = try RemuxChecks.packets(file, "v")
            let flags = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=flags", "-of", "csv=p=0", file])
            #expect(flags.hasPrefix("K"), "\(file) starts with a key frame")
            let decoded = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries", "stream=nb_read_frames",
                                                            "-of", "csv=p=0", file]).trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(decoded == "\(hashes.count)", "\(file) decodes alone to \(decoded) of its \(hashes.count) frames")
            #expect(try RemuxChecks.packets(file, "a").count > 0, "\(file) has sound")
            got += hashes
        }
        let sent = try RemuxChecks.packets(served, "v")
        #expect(got.count * 100 >= sent.count * 99, "\(got.count) of \(sent.count) frames")
        expectIdenticalRun(got, of: sent, "rtsp-segments.json", firstKeyFrameMayGrow: true)
        print("RTSP segments example: \(files.count) files, \(got.count)/\(sent.count) frames")
    }

    /// A/V sync of an RTSP camera recorded: a flash and its beep at every second, served and
    /// recorded to MP4 without re-encoding, arrive together as they left: each beep within one
    /// frame (40 ms) of where it was from its flash in the source (as ffmpeg plays both).
    @Test func aFlashAndItsBeepArriveTogether() throws {
        let served = try FlashAndBeep.make(in: folder)
        let (server, port) = try serve(served)
        defer { server.stop() }
        let out = folder.appendingPathComponent("flash-beep-recorded.mp4").path
        let run = try record(#""url": "rtsp://127.0.0.1:\#(port)/stream""#, into: out)
        defer { run.cancel() }
        let report = try #require(RemuxChecks.ended(run, within: RTSPSourceNodeTests.recordingBound))
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let (sent, got, skew) = try FlashAndBeep.change(from: served, to: out)
        #expect(sent.count >= 3 && got.count >= 3 && skew <= 0.040, "beeps from their flashes: sent \(sent), received \(got)")
        print("RTSP A/V sync: beeps from flashes sent \(sent), received \(got), worst change \(skew) s")
    }

    /// rtsps:// against the test server serving RTSPS with a certificate the test's authority
    /// signed for 127.0.0.1: with that authority as certificateAuthority the camera is recorded
    /// as over plain RTSP, every packet as served.
    @Test func recordsOverTLS() throws {
        let certificates = try TestCertificates(in: folder)
        let served = try h264AAC(seconds: 4)
        let (server, port) = try serve(served, ["--tls", try certificates.server("camera", for: ["IP:127.0.0.1"])])
        defer { server.stop() }
        let out = folder.appendingPathComponent("tls.mp4").path
        let run = try record(#""url": "rtsps://127.0.0.1:\#(port)/stream", "certificateAuthority": "\#(certificates.authority)""#, into: out)
        defer { run.cancel() }
        let report = try #require(RemuxChecks.ended(run, within: RTSPSourceNodeTests.recordingBound))
        #expect(report.status == .completed, "\(String(describing: report.error)) \(report.error?.cause ?? "")")
        let sent = try RemuxChecks.packets(served, "v"), got = try RemuxChecks.packets(out, "v")
        #expect(got.count * 100 >= sent.count * 99, "\(got.count) of \(sent.count) frames over TLS")
        expectIdenticalRun(got, of: sent, "H.264 over rtsps", firstKeyFrameMayGrow: true)
        print("RTSPS: \(got.count)/\(sent.count) frames")
    }

    /// A certificate the system's authorities do not trust (a camera's own), or one for another
    /// host: the run fails (70) saying what is wrong with it and what to give, naming the URL
    /// without its credentials, and leaves no file. A plain RTSP server at an rtsps:// URL fails
    /// too, within the timeout, never a hang.
    @Test func anUntrustedCertificateFailsSayingWhy() throws {
        let certificates = try TestCertificates(in: folder)
        let served = try h264AAC(seconds: 4)
        let out = folder.appendingPathComponent("untrusted.mp4").path
        let (server, port) = try serve(served, ["--tls", try certificates.server("camera", for: ["IP:127.0.0.1"])])
        defer { server.stop() }
        let unknown = try #require(RemuxChecks.ended(try record(#""url": "rtsps://admin:hunter2@127.0.0.1:\#(port)/stream""#, into: out), within: 20))
        #expect(unknown.status == .failed && unknown.error?.code == .runFailed)
        #expect(unknown.error?.message.contains("the RTSP server \"rtsps://127.0.0.1:\(port)/stream\" presented a certificate that is not trusted: it is signed by an authority that is not trusted: give the authority that signed it (or the certificate itself) as certificateAuthority") == true,
                "\(String(describing: unknown.error))")
        let shown = "\(String(describing: unknown.error)) \(unknown.error?.cause ?? "")"
        #expect(!shown.contains("hunter2"), "\(shown)")
        #expect(!FileManager.default.fileExists(atPath: out))

        let (elsewhere, otherPort) = try serve(served, ["--tls", try certificates.server("other", for: ["DNS:camera.example"])])
        defer { elsewhere.stop() }
        let wrongHost = try #require(RemuxChecks.ended(try record(#""url": "rtsps://127.0.0.1:\#(otherPort)/stream", "certificateAuthority": "\#(certificates.authority)""#, into: out), within: 20))
        #expect(wrongHost.error?.message.contains("presented a certificate that is not trusted: it is not for this host") == true, "\(String(describing: wrongHost.error))")
        #expect(!FileManager.default.fileExists(atPath: out))

        let (plain, plainPort) = try serve(served)
        defer { plain.stop() }
        let started = Date()
        let notTLS = try #require(RemuxChecks.ended(try record(#""url": "rtsps://127.0.0.1:\#(plainPort)/stream", "timeout": 3"#, into: out), within: 20))
        #expect(notTLS.status == .failed && notTLS.error?.code == .runFailed, "\(String(describing: notTLS.error))")
        #expect(notTLS.error?.message.contains("could not be reached over TLS (nothing answered there, or what answered does not speak TLS)") == true,
                "\(String(describing: notTLS.error))")
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(!FileManager.default.fileExists(atPath: out))
        print("RTSPS refusals: \(String(describing: unknown.error?.message)) | \(String(describing: wrongHost.error?.message)) | \(String(describing: notTLS.error?.message))")
    }

    /// Stopped while it records (SIGINT does this): the run ends within a second, stopped, and
    /// the MP4 is finalized with what arrived.
    @Test func stoppingARecordingFinalizesItWithinASecond() throws {
        let served = try h264AAC(seconds: 10)
        let (server, port) = try serve(served)
        defer { server.stop() }
        let out = folder.appendingPathComponent("stopped.mp4").path
        let run = try record(#""url": "rtsp://127.0.0.1:\#(port)/stream""#, into: out)
        defer { run.cancel() }
        // Stopped once it records (a second of media at the file), not after a fixed wait: on a
        // loaded machine the first packets can come late.
        let recording = Date().addingTimeInterval(20)
        while Date() < recording, run.progress.position < 1 { usleep(20_000) }
        let started = Date()
        run.stop()
        let report = try #require(RemuxChecks.ended(run, within: 5))
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds < 1.0, "\(seconds) s")
        #expect(report.status == .stopped, "\(String(describing: report.error))")
        let frames = try RemuxChecks.packets(out, "v").count
        #expect(frames > 25 && frames < 250, "\(frames) frames")
        print("RTSP stop: ended \(seconds) s after stop(), \(frames) frames kept")
    }

    /// A camera whose audio track begins 8 s after its video (or never: IP cameras announce
    /// audio they do not send). The video is recorded meanwhile: a sink no longer waits for its
    /// first sample before the others go on (it used to hold the video at its first frame until
    /// the audio came). Stopped then, end of stream sent to rtspsrc goes only through the pads it
    /// has, so the parts the late track would feed get theirs directly: the run ends within a
    /// second (it used to wait for ever), the MP4 complete with the video.
    @Test(.timeLimit(.minutes(2))) func aTrackThatHasNotBegunHoldsNothingBack() throws {
        let served = folder.appendingPathComponent("late-audio.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error"] + RemuxChecks.Source.testsrc + ["-itsoffset", "8"] + RemuxChecks.Source.tone44k
                              + RemuxChecks.Source.picture + ["-c:v", "libx264", "-c:a", "aac", "-t", "10", "-y", served])
        let (server, port) = try serve(served)
        defer { server.stop() }
        let out = folder.appendingPathComponent("late-audio-recorded.mp4").path
        let run = try record(#""url": "rtsp://127.0.0.1:\#(port)/stream""#, into: out)
        defer { run.cancel() }
        let recording = Date().addingTimeInterval(6)
        while Date() < recording, run.progress.position < 2 { usleep(20_000) }
        #expect(run.progress.position >= 2, "\(run.progress.position) s recorded")
        let started = Date()
        run.stop()
        let report = try #require(RemuxChecks.ended(run, within: 5))
        #expect(Date().timeIntervalSince(started) < 1.0, "\(Date().timeIntervalSince(started)) s")
        #expect(report.status == .stopped, "\(report.status) \(String(describing: report.error))")
        let frames = try RemuxChecks.frames(out, "v").count
        #expect(frames >= 25 && frames < 200, "\(frames) frames")
        print("RTSP stop before the audio began: \(report.status), \(frames) frames")
    }

    /// Stopped while the server, asked to play, has sent nothing (the graph plays at once: its
    /// sinks do not wait for a first sample): nothing was written, so the run is cancelled, as
    /// one stopped before it plays, within a second, and leaves no file (whatever the machine's
    /// load made of the handshake by then). It used to fail, "nothing to write".
    @Test(.timeLimit(.minutes(2))) func stoppingBeforeAnythingCameCancelsTheRun() throws {
        let (server, port) = try RTSPTestServer.startMute(in: folder)
        defer { server.stop() }
        let out = folder.appendingPathComponent("nothing-came.mp4").path
        let run = try record(#""url": "rtsp://127.0.0.1:\#(port)/stream", "timeout": 30"#, into: out)
        defer { run.cancel() }
        usleep(1_500_000)
        let started = Date()
        run.stop()
        let report = try #require(RemuxChecks.ended(run, within: 5))
        #expect(Date().timeIntervalSince(started) < 1.0, "\(Date().timeIntervalSince(started)) s")
        #expect(report.status == .cancelled, "\(report.status) \(String(describing: report.error))")
        #expect(!FileManager.default.fileExists(atPath: out))
        print("RTSP stopped before anything came: \(report.status), \(String(describing: report.error))")
    }

    /// A camera that agrees to play and sends nothing (over TCP rtspsrc would wait for ever):
    /// the run fails (70) once `timeout` has passed, naming the URL without its credentials,
    /// and leaves no file.
    @Test(.timeLimit(.minutes(2))) func aCameraThatSendsNothingFailsWithinTheTimeout() throws {
        let (server, port) = try RTSPTestServer.startMute(in: folder)
        defer { server.stop() }
        let out = folder.appendingPathComponent("mute.mp4").path
        let started = Date()
        let run = try record(#""url": "rtsp://admin:hunter2@127.0.0.1:\#(port)/stream", "timeout": 2"#, into: out, audio: false)
        defer { run.cancel() }
        let report = try #require(RemuxChecks.ended(run, within: 20))
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds >= 2 && seconds < 8, "\(seconds) s")
        #expect(report.status == .failed)
        #expect(report.error?.code == .runFailed)
        #expect(report.error?.message.contains("the RTSP server \"rtsp://127.0.0.1:\(port)/stream\" was asked to play the stream but sent nothing within 2 s") == true,
                "\(String(describing: report.error))")
        #expect(!"\(String(describing: report.error))".contains("hunter2"))
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A camera that hangs mid-stream (its connection open, its requests answered, no packet
    /// more): after `timeout` seconds without one the stream ends there, as a server that closes
    /// it does; the recording is complete with what came, and the report names the stall as a gap
    /// not resumed.
    @Test(.timeLimit(.minutes(2))) func aCameraThatStallsEndsTheRecordingWithAGap() throws {
        let served = try h264AAC(seconds: 10)
        let (server, port) = try serve(served, ["--stall-after", "2"])
        defer { server.stop() }
        let out = folder.appendingPathComponent("stalled.mp4").path
        let started = Date()
        let run = try record(#""url": "rtsp://127.0.0.1:\#(port)/stream", "timeout": 2"#, into: out)
        defer { run.cancel() }
        let report = try #require(RemuxChecks.ended(run, within: RTSPSourceNodeTests.recordingBound))
        let seconds = Date().timeIntervalSince(started)
        #expect(seconds >= 4 && seconds < 10, "\(seconds) s")
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(report.outputs.first?.status == .completed)
        let gaps = report.gaps
        #expect(gaps.count == 1 && gaps.first?.node == "in", "\(gaps)")
        if let gap = gaps.first?.gap {
            #expect(!gap.resumed && gap.seconds >= 2 && gap.seconds < 3, "\(gap)")
            #expect(gap.start > 1 && gap.start < 3, "\(gap)")
        }
        let frames = try RemuxChecks.frames(out, "v").count
        #expect(frames > 25 && frames <= 75, "\(frames) frames")
        print("RTSP stall: ended \(seconds) s after start, \(frames) frames, gaps \(gaps)")
    }

    /// A server that goes away in the middle of the stream (its process ended) ends the stream:
    /// the run completes at once, the MP4 whole with what arrived, not a failure and not a hang
    /// (rtspsrc says "Could not read from resource" as a warning, then ends its streams).
    @Test func aServerThatGoesAwayEndsTheRecording() throws {
        let served = try h264AAC(seconds: 10)
        let (server, port) = try serve(served)
        defer { server.stop() }
        let out = folder.appendingPathComponent("server-gone.mp4").path
        let run = try record(#""url": "rtsp://127.0.0.1:\#(port)/stream""#, into: out)
        defer { run.cancel() }
        usleep(2_500_000)
        server.stop()
        let gone = Date()
        let report = try #require(RemuxChecks.ended(run, within: 10))
        #expect(Date().timeIntervalSince(gone) < 2, "\(Date().timeIntervalSince(gone)) s")
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(report.outputs.first?.status == .completed)
        let frames = try RemuxChecks.frames(out, "v").count
        #expect(frames > 25 && frames < 250, "\(frames) frames")
    }
}
