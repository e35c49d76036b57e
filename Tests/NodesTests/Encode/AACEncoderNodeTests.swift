import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct AACEncoderNodeTests {
    @Test func encodesOneSecondToAACFramesOf1024Samples() throws {
        let h = try NodeHarness(#"{ "type": "encode.aac", "params": { "bitrate": 64000 } }"#)
        try h.push(TestMedia.sine(sampleRate: 44_100, channels: 2, seconds: 1))
        let out = try h.pullAll()
        #expect(out.first?.format == .aac(sampleRate: 44_100, channels: 2))
        // 44100 frames make 43.07 AAC frames; the encoder flushes the last partial one.
        #expect((44...45).contains(out.count))
        let times = out.compactMap(\.presentationTime)
        #expect(times.count == out.count)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        // GStreamer keeps nanoseconds: a 1024-frame duration is exact to the nanosecond, not the frame.
        #expect(out.dropLast().allSatisfy { abs($0.duration!.seconds - 1024.0 / 44_100) < 1e-9 })
        // About 64 kb/s: 8000 bytes a second, give or take the encoder's rate control.
        let bytes = out.reduce(0) { $0 + $1.byteCount }
        #expect((5000...11000).contains(bytes))
    }

    @Test func theOtherEncoderIsAMissingPluginWhenNotInstalled() throws {
        if GStreamer.hasElement("voaacenc") {
            let h = try NodeHarness(#"{ "type": "encode.aac", "params": { "encoder": "voaacenc" } }"#)
            try h.push(TestMedia.sine(seconds: 0.5))
            #expect(try h.pullAll().count > 10)
        } else {
            #expect(throws: GraphError(.missingPlugin, at: "node \"node\"",
                                       "GStreamer element \"voaacenc\" is not installed; install the Debian package gstreamer1.0-plugins-bad",
                                       node: "node")) {
                try NodeHarness(#"{ "type": "encode.aac", "params": { "encoder": "voaacenc" } }"#)
            }
        }
    }

    /// AAC takes at most 96 kHz (and only the standard rates): a file at another rate is
    /// resampled to the encoder's nearest, 96 kHz above it, as FFmpeg's command line does. It
    /// failed with a link error blaming the decoder.
    @Test(.timeLimit(.minutes(10)), arguments: [192_000, 176_400, 100_000])
    func ratesTheEncoderDoesNotTakeAreResampled(_ rate: Int) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("hi.wav").path, m4a = folder.appendingPathComponent("hi.m4a").path
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=sample_rate=\(rate):d=1",
                                             "-c:a", "pcm_s24le", wav])
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } },
              "dec": { "type": "decode" }, "aac": { "type": "encode.aac" },
              "file": { "type": "sink.mp4", "params": { "path": "\(m4a)" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> aac.in", "aac.out -> file.audio" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        #expect(run.wait().status == .completed)
        let probe = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries",
                                                      "stream=codec_name,sample_rate:format=duration", "-of", "default=nw=1", m4a])
        #expect(probe.contains("codec_name=aac") && probe.contains("sample_rate=96000"), "\(probe)")
        let duration = probe.split(separator: "\n").first { $0.hasPrefix("duration=") }.flatMap { Double($0.dropFirst(9)) }
        #expect(abs((duration ?? 0) - 1) < 0.001, "\(probe)")
        // And it decodes, all of it.
        let decoded = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", m4a, "-f", "null", "-"])
        #expect(decoded.isEmpty)
    }
}
