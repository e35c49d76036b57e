import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `demux` on a live stream that ends before it says what it holds (issue 73, class 5): an SRT
/// peer sending an idle encoder's null packets, or noise with MPEG-TS's sync bytes, that leaves
/// before any program table. The demuxer makes no pads, so its end reached no output, and the
/// run waited for ever (still running 40 s after the peer left). Now it fails 3 s after the
/// stream's end, naming the input and the track that never came, and writes nothing. `decode`
/// on the same stream did the same, and does the same now.
@Suite(.media, .timeLimit(.minutes(2))) struct DemuxStreamEndTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 2,000 transport packets: null packets (PID 0x1FFF), or noise on PIDs no table names.
    func stream(_ kind: String) throws -> String {
        var bytes: [UInt8] = []
        var random = SplitMix(seed: 73)
        for n in 0..<2_000 {
            let pid = kind == "null" ? 0x1FFF : 0x100 + Int(random.next() % 0x1E00)
            bytes += [0x47, UInt8(pid >> 8), UInt8(pid & 0xFF), UInt8(0x10 | n & 0x0F)]
            bytes += kind == "null" ? [UInt8](repeating: 0xFF, count: 184) : (0..<184).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        }
        let path = folder.appendingPathComponent("\(kind).ts").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Through `demux` (a recording as sent) and `decode` (a transcode), each the same.
    @Test(arguments: ["null", "noise"], ["demux", "decode"]) func aStreamThatEndsBeforeItsTablesEndsTheRun(_ kind: String, _ node: String) throws {
        let port = try LoopbackServer.freePort(udp: true)
        let out = folder.appendingPathComponent("out.mp4").path
        let encoder = node == "demux" ? "" : #", "enc": { "type": "encode.h264" }"#
        let middle = node == "demux" ? #""demux.video -> file.video""# : #""demux.video -> enc.in", "enc.out -> file.video""#
        let graph = try GraphLoader(registry: .builtIn).load(json: #"""
            { "version": 1, "nodes": { "in": { "type": "source.srt", "params": { "url": "srt://127.0.0.1:\#(port)", "mode": "listener" } },
              "demux": { "type": "\#(node)" }\#(encoder), "file": { "type": "sink.mp4", "params": { "path": "\#(out)" } } },
              "edges": [ "in.out -> demux.in", \#(middle) ] }
            """#)
        let run = try GraphRun(graph)
        defer { run.cancel() }
        try run.start()
        // The peer: a caller sending the packets at 200 kB/s, stopped (its process killed) 2 s in.
        let peer = try LoopbackServer("gst-launch-1.0", ["-q", "filesrc", "location=\(try stream(kind))", "!", "identity", "sync=true", "datarate=200000",
                                                         "!", "srtsink", "uri=srt://127.0.0.1:\(port)", "mode=caller"],
                                      output: "/dev/null", log: folder.appendingPathComponent("peer.log").path)
        usleep(2_000_000)
        peer.stop()
        let left = ContinuousClock.now
        // SRT sees the peer gone at once (or within its idle timeout, 5 s); then 3 s.
        let report = try #require(RemuxChecks.ended(run, within: 20), "the run was still going 20 s after the peer left")
        #expect((ContinuousClock.now - left) < .seconds(15))
        #expect(report.status == .failed && report.error?.code == .runFailed, "\(report.status): \(String(describing: report.error))")
        #expect(report.error?.message.contains("ended before its video track appeared") == true, "\(String(describing: report.error))")
        #expect(report.error?.message.contains("srt://127.0.0.1:\(port)") == true, "\(String(describing: report.error))")
        #expect(!FileManager.default.fileExists(atPath: out))
    }
}
