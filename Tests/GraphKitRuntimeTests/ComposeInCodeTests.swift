import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// The README's "compose a graph in code" example, run for real: PCM appended from Swift,
/// encoded to AAC and written to an M4A (what AVAssetWriter does), then read back.
@Suite(.media) struct ComposeInCodeTests {
    @Test func appendPCMFromCodeIntoAnM4A() async throws {
        let path = try TestMedia.temporaryFolder().appendingPathComponent("tone.m4a").path
        let graph = try GraphLoader(registry: .builtIn).load([
            "version": 1,
            "nodes": [
                "feed": ["type": "source.app"],
                "aac": ["type": "encode.aac", "params": ["bitrate": 128_000]],
                "file": ["type": "sink.mp4", "params": ["path": .string(path)]],
            ],
            "edges": ["feed.out -> aac.in", "aac.out -> file.audio"],
        ])
        let run = try GraphRun(graph)
        try run.start()
        let input = try run.input("feed")
        for buffer in TestMedia.sine(frequency: 440, sampleRate: 48_000, channels: 2, seconds: 2) {
            try await input.append(buffer)  // suspends while the graph is full
        }
        input.markAsFinished()
        let report = await run.report()
        #expect(report.status == .completed)
        #expect(report.outputs.first?.status == .completed)

        let probe = try MediaProbe(path)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(probe.stream("audio")?.sampleRate == 48_000)
        #expect(probe.stream("audio")?.channels == 2)
        #expect(abs(probe.duration - 2) < 0.043)
    }

    @Test func readDecodedSamplesLikeAnAssetReader() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("in.wav").path
        try TestMedia.writeWAV(wav, seconds: 1, sampleRate: 44_100, channels: 1)
        let graph = try GraphLoader(registry: .builtIn).load([
            "version": 1,
            "nodes": [
                "src": ["type": "source.file", "params": ["path": .string(wav)]],
                "dec": ["type": "decode", "params": ["sampleFormat": "f32le"]],
                "out": ["type": "sink.app"],
            ],
            "edges": ["src.out -> dec.in", "dec.audio -> out.in"],
        ])
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("out")
        var frames = 0
        while let sample = output.copyNextSampleBuffer() {
            #expect(sample.format == .pcm(.init(sampleRate: 44_100, channels: 1, sampleFormat: .f32le)))
            frames += sample.frameCount
        }
        #expect(run.wait().status == .completed)
        #expect(frames == 44_100)
    }
}
