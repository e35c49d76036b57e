import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes

/// `demux`: a file's AAC and H.264 as stored; graphs/remux.json remuxes without re-encoding.
@Suite(.timeLimit(.minutes(10))) struct DemuxNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func packets(_ path: String, stream: String) throws -> [String] {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:\(stream):0", "-c", "copy", "-f", "framemd5", "-"])
            .split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",").suffix(2).joined(separator: ",") }
    }

    /// graphs/remux.json as shipped, with its paths overridden: the video's packets come out
    /// byte-identical, and the audio's within its edit list (see docs/GRAPH-FORMAT.md).
    @Test func remuxGraphKeepsThePackets() throws {
        let source = folder.appendingPathComponent("in.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25", "-f", "lavfi", "-i", "sine=duration=2",
                                         "-t", "2", "-c:v", "libx264", "-bf", "2", "-pix_fmt", "yuv420p", "-c:a", "aac", "-y", source])
        let out = folder.appendingPathComponent("remuxed.mp4").path
        let graphFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../graphs/remux.json").standardized.path
        let graph = try GraphLoader(registry: .builtIn).load(contentsOf: graphFile, overrides: [
            try .init(parsing: "src.path=\(source)"), try .init(parsing: "file.path=\(out)"),
        ])
        let run = try GraphRun(graph)
        try run.start()
        let report = run.wait()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.codecName == "h264" && probe.stream("audio")?.codecName == "aac")
        let videoIn = try packets(source, stream: "v"), videoOut = try packets(out, stream: "v")
        #expect(videoIn.count == 50 && videoOut == videoIn)
        let audioIn = try packets(source, stream: "a"), audioOut = try packets(out, stream: "a")
        // GStreamer's MP4 demuxer gives the packets within the track's edit list: the priming
        // packet before it is not passed; the last packet, which the edit ends inside, 1.22's
        // drops and 1.26's passes (1.24's was not measured: either is taken), docs/GRAPH-FORMAT.md.
        let minor = GStreamer.version.minor
        let expected = minor < 24 ? [Array(audioIn.dropFirst().dropLast())]
            : minor < 26 ? [Array(audioIn.dropFirst().dropLast()), Array(audioIn.dropFirst())] : [Array(audioIn.dropFirst())]
        #expect(expected.contains(audioOut), "GStreamer 1.\(minor): \(audioIn.count) packets in, \(audioOut.count) out; last \(audioIn.suffix(2)) vs \(audioOut.suffix(2))")
    }

    /// A codec demux does not pass is refused by name when the stream appears.
    @Test func anotherCodecIsRefusedByName() throws {
        let mp3 = folder.appendingPathComponent("tone.mp3").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "libmp3lame", "-y", mp3])
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(mp3)" } },
              "demux": { "type": "demux" }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> demux.in", "demux.audio -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("out")
        while output.copyNextSampleBuffer() != nil {}
        let report = run.wait()
        #expect(report.status == .failed)
        let message = report.error?.description ?? ""
        #expect(message.contains("not AAC") && message.contains("demux"), "\(message)")
    }
}
