import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// Nodes.docc's "Measuring media" example, as written there, on a file made here: 1 s of tone,
/// 1 s of silence, 1 s of tone, and a picture that cuts at 1.5 s. What it prints is what the
/// file holds.
@Suite(.media) struct MeasuringMediaExampleTests {
    @Test func theArticlesExampleMeasuresWhatTheFileHolds() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("talk.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "color=c=black:s=160x120:r=25:d=1.5", "-f", "lavfi", "-i", "color=c=white:s=160x120:r=25:d=1.5",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:d=3,volume='if(between(t,1,2),0,1)':eval=frame",
                                         "-filter_complex", "[0:v][1:v]concat=n=2:v=1[v]", "-map", "[v]", "-map", "2:a",
                                         "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-y", path])
        // The article's code, its path the file's.
        var b = GraphBuilder(name: "measure")
        let source = b.add("src", FileSourceNode.self) { $0[\.path] = path }
        let decode = b.add("dec", DecodeNode.self) { $0[\.sampleFormat] = .value(.f32le) }
        let loudness = b.add("loudness", LoudnessNode.self)
        let silence = b.add("silence", SilenceNode.self) { p in
            p[\.threshold] = -50
            p[\.minimumDuration] = 0.5
        }
        let scenes = b.add("scenes", ScenesNode.self) { $0[\.threshold] = 10 }
        b.connect(source.output(), to: decode.input())
        b.connect(decode.output("audio"), to: loudness.input())
        b.connect(decode.output("audio"), to: silence.input())
        b.connect(decode.output("video"), to: scenes.input())

        let run = try GraphRun(try b.build(registry: .builtIn))
        try run.start()
        let report = run.wait()
        #expect(report.status == .completed, "\(String(describing: report.error))")

        let measured = try #require((run.node("loudness") as? LoudnessNode)?.measurement)
        // As ffmpeg's ebur128 measures the same file.
        let theirs = try FFmpegLoudness.measure(path)
        #expect(abs((measured.integratedLUFS ?? 0) - theirs.integrated) <= 0.1, "\(measured) vs \(theirs)")
        let silences = (run.node("silence") as? SilenceNode)?.report?.silences ?? []
        #expect(silences.count == 1 && abs((silences.first?.start ?? 0) - 1) < 0.03 && abs((silences.first?.end ?? 0) - 2) < 0.03, "\(silences)")
        let cuts = (run.node("scenes") as? ScenesNode)?.report?.cuts.map(\.time) ?? []
        #expect(cuts.count == 1 && abs((cuts.first ?? 0) - 1.5) < 0.041, "\(cuts)")
    }
}
