import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `sink.flac`: a bare FLAC file, of a FLAC stream remuxed (every sample, bit for bit) or encoded
/// (STREAMINFO written again at the end: the total sample count is in the header); a cancelled run
/// leaves nothing.
@Suite(.media, .timeLimit(.minutes(5))) struct FLACSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    @Test func aRemuxedStreamKeepsEverySample() throws {
        let input = try RemuxChecks.Source.flac.make(in: folder)
        let out = folder.appendingPathComponent("remuxed.flac").path
        let report = try RemuxChecks.run(input, into: "sink.flac", at: out, ports: ["audio"])
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(try MediaProbe(out).formatName == "flac")
        let (md5, samples) = try RemuxChecks.audio(input)
        let remuxed = try RemuxChecks.audio(out)
        #expect(samples >= 88_200 && remuxed.samples == samples, "\(remuxed.samples) samples of \(samples)")
        #expect(remuxed.md5 == md5)
    }

    @Test func anEncodedStreamsHeaderSaysItsLength() throws {
        let input = folder.appendingPathComponent("in.wav").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:d=3", "-ac", "2", "-c:a", "pcm_s16le", "-y", input])
        let out = folder.appendingPathComponent("encoded.flac").path
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(input)" } },
              "dec": { "type": "decode", "params": { "sampleFormat": "s16le" } }, "enc": { "type": "encode.flac" },
              "file": { "type": "sink.flac", "params": { "path": "\(out)" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> enc.in", "enc.out -> file.audio" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let report = run.wait()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        // ffprobe's duration_ts of a bare FLAC is STREAMINFO's total samples (0 there: N/A).
        let samples = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,duration_ts", "-of", "csv=p=0", out])
        #expect(samples.trimmingCharacters(in: .whitespacesAndNewlines) == "flac,144000")
        #expect(try RemuxChecks.audio(out).md5 == RemuxChecks.audio(input).md5)
    }

    @Test func aCancelledRunLeavesNothing() throws {
        let input = try RemuxChecks.Source.flac.make(in: folder)
        let samples = try RemuxChecks.demuxed(input, "audio")
        let out = folder.appendingPathComponent("out/tone.flac")
        let (report, left) = try RemuxChecks.cancelMidRun(#"{ "type": "sink.flac", "params": { "path": "\#(out.path)" } }"#, port: "audio",
                                                          samples: samples, temporary: folder.appendingPathComponent("out/.tone.flac.partial").path)
        #expect(report.status == .cancelled)
        #expect(left == [])
    }
}
