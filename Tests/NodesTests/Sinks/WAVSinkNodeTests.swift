import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `sink.wav`: decoded PCM written as WAV keeps every sample, as 16-bit integers or 32-bit
/// floats, the header's sizes written at the end; a cancelled run leaves nothing.
@Suite(.media, .timeLimit(.minutes(5))) struct WAVSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// `source.file → decode (sampleFormat) → sink.wav`, the run's report.
    func write(_ input: String, _ sampleFormat: String, to out: String) throws -> RunReport {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(input)" } },
              "dec": { "type": "decode", "params": { "sampleFormat": "\(sampleFormat)" } },
              "file": { "type": "sink.wav", "params": { "path": "\(out)" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> file.audio" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        return run.wait()
    }

    @Test(arguments: [("s16le", "pcm_s16le"), ("f32le", "pcm_f32le")])
    func everySampleAsTheGraphGaveIt(_ sampleFormat: String, _ codec: String) throws {
        // 2.5 s of 44.1 kHz stereo 16-bit: its samples are exact in both integer and float.
        let input = folder.appendingPathComponent("in.wav").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:d=2.5", "-ac", "2", "-c:a", "pcm_s16le", "-y", input])
        let out = folder.appendingPathComponent("out/\(sampleFormat).wav").path
        let report = try write(input, sampleFormat, to: out)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let probe = try MediaProbe(out)
        #expect(probe.formatName == "wav" && probe.stream("audio")?.codecName == codec && probe.stream("audio")?.channels == 2)
        // The header's data size says the length: ffprobe reads it from there.
        let samples = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", out])
        #expect(samples.trimmingCharacters(in: .whitespacesAndNewlines) == "110250")
        let pcm = { (path: String) throws -> String in
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", path, "-c:a", "pcm_s16le", "-f", "md5", "-"])
        }
        #expect(try pcm(out) == pcm(input))
    }

    /// Cancelled while it writes: nothing under the final name, no temporary file.
    @Test func aCancelledRunLeavesNothing() throws {
        // 2 s of 48 kHz mono 16-bit noise in 0.1 s buffers.
        let format = MediaFormat.pcm(.init(sampleRate: 48_000, channels: 1, sampleFormat: .s16le))
        let samples = (0..<20).map { n in
            let pcm = (0..<4_800).map { _ in Int16.random(in: -8_000...8_000) }
            return SampleBuffer(format: format, bytes: pcm.withUnsafeBytes { Array($0) },
                                presentationTime: MediaTime(value: Int64(n * 4_800), timescale: 48_000),
                                duration: MediaTime(value: 4_800, timescale: 48_000))
        }
        let out = folder.appendingPathComponent("out/voice.wav")
        let (report, left) = try RemuxChecks.cancelMidRun(#"{ "type": "sink.wav", "params": { "path": "\#(out.path)" } }"#, port: "audio",
                                                          samples: samples, temporary: folder.appendingPathComponent("out/.voice.wav.partial").path)
        #expect(report.status == .cancelled)
        #expect(left == [])
    }
}
