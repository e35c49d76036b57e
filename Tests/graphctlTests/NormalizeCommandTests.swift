import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `graphctl normalize` and effect.normalize, end to end: the target reached on speech, music
/// and a sweep (by our meter and by ffmpeg's ebur128), the limiter on a peaky signal, live mode's
/// convergence, every sample kept, and the errors with their exit codes.
@Suite(.media) struct NormalizeCommandTests {
    let folder = try! TestMedia.temporaryFolder()
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A 48 kHz stereo float WAV made by ffmpeg from a lavfi source.
    func make(_ name: String, _ source: String) throws -> String {
        let file = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", source, "-ac", "2", "-ar", "48000", "-c:a", "pcm_f32le", "-y", file])
        return file
    }

    static let signals = [
        // Speech-like: pink-noise bursts of 0.9 s, 0.4 s pauses of silence (gated out).
        "speech": "anoisesrc=d=12:c=pink:a=0.15:r=48000,volume='if(lt(mod(t\\,1.3)\\,0.9)\\,1\\,0)':eval=frame",
        // Music-like: an A major chord swelling and fading every 4 s.
        "music": "aevalsrc='(0.05+0.3*(0.5+0.5*sin(2*PI*0.25*t)))*(sin(2*PI*220*t)+sin(2*PI*277.18*t)+sin(2*PI*329.63*t))/3':s=48000:d=12",
        // A sine sweep, 50 Hz to 8 kHz over 10 s.
        "sweep": "aevalsrc='0.3*sin(2*PI*(50*t+396.5*t*t))':s=48000:d=10",
    ]

    /// The report `--json` prints.
    func normalize(_ arguments: [String]) throws -> NormalizationReport {
        let r = try Graphctl.run(["normalize"] + arguments + ["--json"])
        #expect(r.status == 0, "\(r.stderr)")
        struct Printed: Decodable { var report: NormalizationReport }
        return try JSONDecoder().decode(Printed.self, from: Data(r.stdout.utf8)).report
    }

    /// The file decoded to 16-bit WAV: its size is the sample count's.
    func decodedBytes(_ file: String) throws -> Int {
        let wav = file + ".decoded.wav"
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-c:a", "pcm_s16le", "-y", wav])
        return try FileManager.default.attributesOfItem(atPath: wav)[.size] as! Int
    }

    @Test(arguments: ["speech", "music", "sweep"])
    func reachesTheTargetUnderTheCeiling(_ signal: String) throws {
        let input = try make("\(signal).wav", Self.signals[signal]!)
        let output = path("\(signal).mka")
        let report = try normalize([input, output])
        let ours = try #require(report.output.integratedLUFS), ourPeak = try #require(report.output.truePeakDBTP)
        #expect(abs(ours + 16) <= 0.5, "\(report)")
        #expect(ourPeak <= -1 + 0.1, "\(report)")
        #expect(abs(report.gainDB - (-16 - report.input.integratedLUFS!)) < 0.01, "one gain, target − measured")
        let theirs = try FFmpegLoudness.measure(output)
        #expect(abs(theirs.integrated + 16) <= 0.5, "\(theirs)")
        #expect(theirs.truePeak <= -1 + 0.1, "\(theirs)")
        // FLAC keeps every sample: as many out as in.
        #expect(try decodedBytes(output) == decodedBytes(input))
    }

    /// Transients 15 dB over the body: −12 LUFS needs the limiter. It engages, the true peak
    /// stays under the ceiling by both meters, and the target is still reached.
    @Test func theLimiterHoldsTheCeilingOnALoudPeakySignal() throws {
        let input = try make("peaky.wav", "aevalsrc='0.05*sin(2*PI*220*t)+0.05*sin(2*PI*277*t)+0.9*exp(-60*mod(t\\,0.5))*sin(2*PI*3000*t+1)':s=48000:d=6")
        let output = path("peaky.mka")
        let report = try normalize([input, output, "--target=-12"])
        #expect(report.limitedSeconds > 0)
        #expect(abs(try #require(report.output.integratedLUFS) + 12) <= 0.5, "\(report)")
        let analyzed = try Graphctl.run("analyze", output, "--only", "loudness", "--json")
        let peak = try JSONParser.parse(analyzed.stdout)["loudness"]?["truePeakDBTP"]
        guard case .number(let ourPeak)? = peak else { Issue.record("\(analyzed.stdout)\(analyzed.stderr)"); return }
        #expect(ourPeak <= -1 + 0.1, "\(ourPeak)")
        let theirs = try FFmpegLoudness.measure(output)
        #expect(theirs.truePeak <= -1 + 0.1, "\(theirs)")
        #expect(abs(theirs.integrated + 12) <= 0.5, "\(theirs)")
    }

    /// Live: a quiet 8 s, then 10 dB louder for 12 s. The first gain comes from the first
    /// window, so the start is on target; after the step the gain follows at 2 dB/s what the last
    /// 10 s measured, 3 s ahead of what leaves: from 15 s on it is on target again.
    @Test func liveModeConverges() throws {
        let input = try make("step.wav", "anoisesrc=d=20:c=pink:a=0.05:r=48000,volume='if(lt(t\\,8)\\,1\\,3.1623)':eval=frame")
        let output = path("step.mka")
        let report = try normalize([input, output, "--live"])
        #expect(report.mode == "live")
        #expect(try decodedBytes(output) == decodedBytes(input))
        for (start, length) in [(0.5, 7.0), (15.0, 5.0)] {
            let part = path("step-\(Int(start)).wav")
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-ss", "\(start)", "-t", "\(length)", "-i", output, "-y", part])
            let figures = try FFmpegLoudness.measure(part)
            #expect(abs(figures.integrated + 16) <= 1, "\(start) s on: \(figures)")
            #expect(figures.truePeak <= -1 + 0.1)
        }
    }

    /// AAC keeps the input's length through its edit list (ffmpeg honours the end of none, so
    /// the edit's duration is read), Opus through its pre-skip and end trimming (decoded whole).
    @Test(arguments: ["m4a", "opus"])
    func lossyOutputsKeepTheLength(_ ext: String) throws {
        let input = try make("music.wav", Self.signals["music"]!)
        let output = path("music.\(ext)")
        let report = try normalize([input, output, "--preset", "streaming"])
        #expect(abs(try #require(report.output.integratedLUFS) + 14) <= 0.5)
        if ext == "opus" {
            #expect(try decodedBytes(output) == decodedBytes(input))
        } else {
            let duration = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", output])
            #expect(abs((Double(duration.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - 12) <= 0.001, "\(duration)")
        }
    }

    /// Lossless outputs: every sample the input had, and as the node gave them (FLAC of the
    /// float samples rounds to 24 bits; WAV keeps the floats), on target.
    @Test(arguments: ["flac", "wav"])
    func losslessOutputsKeepEverySample(_ ext: String) throws {
        let input = try make("speech.wav", Self.signals["speech"]!)
        let output = path("speech-normalized.\(ext)")
        let report = try normalize([input, output, "--preset", "podcast"])
        #expect(try decodedBytes(output) == decodedBytes(input))
        let theirs = try FFmpegLoudness.measure(output)
        #expect(abs(theirs.integrated + 16) <= 0.5 && theirs.truePeak <= -1 + 0.1, "\(theirs)")
        #expect(abs(try #require(report.output.integratedLUFS) - theirs.integrated) <= 0.1)
        let probe = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,duration_ts", "-of", "csv=p=0", output])
        let samples = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", input])
        // The header says the length: STREAMINFO's total written again at the end, the WAV's data size.
        #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "\(ext == "flac" ? "flac" : "pcm_f32le"),\(samples.trimmingCharacters(in: .whitespacesAndNewlines))")
    }

    @Test func refusalsSayWhatAndExitWithTheirCodes() throws {
        let input = try make("tone.wav", "sine=f=440:d=1:sample_rate=48000")
        let own = path("tone.mka")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", input, "-c:a", "flac", "-y", own])
        let video = path("silent-film.mp4")
        try TestMedia.gstLaunch("videotestsrc num-buffers=10 ! x264enc ! mp4mux ! filesink location=\(video)")
        // 2 s at 1 kHz, 8 KB read in one block: the refusal was lost on its way up ("nothing to write").
        let slow = path("slow.wav")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=f=100:d=2:sample_rate=1000", "-c:a", "pcm_f32le", "-y", slow])
        let cases: [([String], Int32, String)] = [
            ([video, path("a.m4a")], 70, "\"\(video)\" has no audio track: there is no sound to normalize"),
            ([slow, path("a.m4a")], 70, "\"\(slow)\" has audio at 1000 Hz, and its input \"in\" takes rates (Hz) of 4000 to 768000"),
            ([input, path("a.m4a"), "--target=5"], 64, "--target takes a number from -70 to -5"),
            ([input, path("a.m4a"), "--target=-80"], 64, "--target takes a number from -70 to -5"),
            ([input, path("a.m4a"), "--true-peak=0.5"], 64, "--true-peak takes a number from -20 to 0"),
            ([input, path("a.aiff")], 64, "does not end in .m4a, .mp4, .opus, .ogg, .flac, .mka or .wav"),
            ([path("missing.wav"), path("a.m4a")], 66, "cannot read"),
            ([own, own], 65, "is the file being normalized (IN)"),
        ]
        for (arguments, status, words) in cases {
            let r = try Graphctl.run(["normalize"] + arguments)
            #expect(r.status == status, "\(arguments): \(r.stderr)")
            #expect(r.stderr.contains(words), "\(arguments): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: path("a.m4a")))
    }

    /// A signal mid-run cancels: 130 at once, nothing under OUT's name (an earlier file there
    /// stays as it was), no temporary file left.
    @Test func aSignalCancelsAndLeavesNothing() throws {
        let input = try make("long.wav", "anoisesrc=d=120:c=pink:a=0.1:r=48000")
        let output = path("long.mka")
        try Data("earlier".utf8).write(to: URL(fileURLWithPath: output))
        let run = try Graphctl.start(["normalize", input, output])
        Thread.sleep(forTimeInterval: 1.5)
        let stop = run.stop(by: SIGINT)
        let r = stop.result
        #expect(r.status == 130, "\(r.stderr)")
        #expect(stop.taken < 1.5, "\(stop.description)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "earlier")
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".partial") }
        #expect(left.isEmpty, "\(left)")
    }

    /// graphs/normalize.json, run as it is with its input and outputs set: the M4A at the graph's
    /// -16 LUFS by ffmpeg, and the node's report written beside it.
    @Test func theExampleGraphNormalizes() throws {
        let input = try make("music.wav", Self.signals["music"]!)
        let output = path("graph.m4a")
        let r = try Graphctl.run("run", Graphctl.graph("normalize.json"), "--quiet", "--set", "src.path=\(input)",
                                 "--set", "file.path=\(output)", "--set", "norm.json=\(path("graph.json"))")
        #expect(r.status == 0, "\(r.stderr)")
        let report = try JSONDecoder().decode(NormalizationReport.self, from: Data(contentsOf: URL(fileURLWithPath: path("graph.json"))))
        #expect(report.mode == "two-pass" && report.targetLUFS == -16)
        let theirs = try FFmpegLoudness.measure(output)
        #expect(abs(theirs.integrated + 16) <= 0.5 && theirs.truePeak <= -1 + 0.1, "\(theirs)")
    }
}
