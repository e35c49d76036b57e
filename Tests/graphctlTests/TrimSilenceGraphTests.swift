import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// graphs/trim-silence.json end to end through graphctl (source.file → decode → effect.trimSilence
/// → AAC → M4A) on a file made by ffmpeg with known silences, and the node's refusals.
@Suite(.media) struct TrimSilenceGraphTests {
    let folder = try! TestMedia.temporaryFolder()
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// 1.5 s of silence, a tone to 2.5 s, silence to 4.5 s, a tone to 6 s, silence to 8 s: 48 kHz stereo WAV.
    func speech() throws -> String {
        let file = path("speech.wav")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i",
            "aevalsrc=0.5*sin(2*PI*440*t)*(between(t\\,1.5\\,2.5)+between(t\\,4.5\\,6)):s=48000:d=8", "-ac", "2", "-y", file])
        return file
    }

    /// The first time at which a sample of `file`, decoded by ffmpeg, reaches −50 dBFS.
    func soundStart(_ file: String) throws -> Double? {
        let raw = file + ".raw"
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-f", "s16le", "-ac", "1", "-ar", "48000", "-y", raw])
        let samples = try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
        return samples.firstIndex { abs(Int($0)) >= 104 }.map { Double($0) / 48_000 }  // 10^(−50/20) × 32768
    }

    @Test func theExampleTrimsBothEndsAndKeepsThePause() throws {
        let (output, report) = (path("trimmed.m4a"), path("trim.json"))
        let r = try Graphctl.run("run", Graphctl.graph("trim-silence.json"), "--set", "src.path=\(try speech())",
                                 "--set", "file.path=\(output)", "--set", "trim.json=\(report)")
        #expect(r.status == 0, "\(r.stderr)")
        // 0.1 s + 1 s + 2 s + 1.5 s + 0.1 s.
        let media = try MediaProbe(output)
        #expect(abs(media.duration - 4.7) <= 0.01, "\(media.duration)")
        let start = try #require(try soundStart(output))
        #expect(abs(start - 0.1) <= 0.01, "\(start)")
        let trimmed = try JSONDecoder().decode(SilenceTrimReport.self, from: Data(contentsOf: URL(fileURLWithPath: report)))
        #expect(abs(trimmed.trimmedStartSeconds - 1.4) <= 0.001 && abs(trimmed.trimmedEndSeconds - 1.9) <= 0.001, "\(trimmed)")
        #expect(abs(trimmed.keptSeconds - 4.7) <= 0.001 && trimmed.inputSeconds == 8, "\(trimmed)")
        // The pause between the tones is there, whole.
        let analyzed = try Graphctl.run("analyze", output, "--only", "silence", "--json")
        #expect(analyzed.status == 0, "\(analyzed.stderr)")
        let silences = try JSONParser.parse(analyzed.stdout)["silence"]?["silences"]
        guard case .array(let events)? = silences, events.count == 1, case .number(let from)? = events[0]["start"],
              case .number(let to)? = events[0]["end"] else {
            Issue.record("expected one silence: \(analyzed.stdout)")
            return
        }
        #expect(abs(from - 1.1) <= 0.01 && abs(to - 3.1) <= 0.01, "\(from)–\(to)")
    }

    @Test func onlyTheEndWithNoPadding() throws {
        let output = path("end.m4a")
        let r = try Graphctl.run("run", Graphctl.graph("trim-silence.json"), "--set", "src.path=\(try speech())", "--set", "file.path=\(output)",
                                 "--set", "trim.json=", "--set", "trim.ends=end", "--set", "trim.padding=0")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(abs(try MediaProbe(output).duration - 6) <= 0.01)
        let start = try #require(try soundStart(output))
        #expect(abs(start - 1.5) <= 0.01, "\(start)")
    }

    /// In the graph file and through `--set`: 65 before anything runs, naming the node and the parameter.
    @Test func aThresholdOutOfRangeIsRefusedAtLoad() throws {
        let graph = path("loud.json")
        try String(contentsOfFile: Graphctl.graph("trim-silence.json"), encoding: .utf8)
            .replacingOccurrences(of: #""threshold": -50"#, with: #""threshold": 6"#).write(toFile: graph, atomically: true, encoding: .utf8)
        let r = try Graphctl.run("validate", graph)
        #expect(r.status == 65)
        #expect(r.stderr == "error: \(graph): nodes.trim.params.threshold: 6 is out of range (-120 to 0)\n", "\(r.stderr)")
        let set = try Graphctl.run("run", Graphctl.graph("trim-silence.json"), "--set", "trim.threshold=-121")
        #expect(set.status == 65)
        #expect(set.stderr == "error: --set trim.threshold: -121 is out of range (-120 to 0)\n", "\(set.stderr)")
    }

    @Test func anAllSilentInputFails70NamingTheNodeAndLeavesNoFile() throws {
        let input = path("silence.wav"), output = path("silence.m4a")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "anullsrc=r=48000:cl=stereo", "-t", "3", "-y", input])
        let r = try Graphctl.run("run", Graphctl.graph("trim-silence.json"), "--set", "src.path=\(input)", "--set", "file.path=\(output)",
                                 "--set", "trim.json=")
        #expect(r.status == 70, "\(r.stderr)")
        #expect(r.stderr.contains("trim") && r.stderr.contains("silent throughout"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}
