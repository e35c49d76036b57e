import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphctl analyze` and graphs/analyze.json, end to end: the table, --json, and the errors
/// with their exit codes.
@Suite(.media) struct AnalyzeCommandTests {
    let folder = try! TestMedia.temporaryFolder()
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Sound and picture: a 1 kHz tone at −23 dBFS with a silence from 1 to 2 s, over testsrc
    /// with a black second from 1 to 2 s; 3 s at 25 fps.
    func makeMovie() throws -> String {
        let file = path("movie.mkv")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error",
            "-f", "lavfi", "-i", "aevalsrc=0.0708*sin(2*PI*1000*t)*(1-between(t\\,1\\,2)):s=48000:c=stereo:d=3",
            "-f", "lavfi", "-i", "testsrc=s=160x120:r=25:d=1", "-f", "lavfi", "-i", "color=black:s=160x120:r=25:d=1",
            "-f", "lavfi", "-i", "testsrc=s=160x120:r=25:d=1", "-filter_complex", "[1][2][3]concat=n=3:v=1:a=0,format=yuv420p[v]",
            "-map", "[v]", "-map", "0:a", "-c:v", "libx264", "-c:a", "flac", "-y", file])
        return file
    }

    @Test func printsEveryMeasurementAsATableAndAsJSON() throws {
        let movie = try makeMovie()
        let table = try Graphctl.run("analyze", movie, "--silence-duration", "0.5")
        #expect(table.status == 0, "\(table.stderr)")
        #expect(table.stdout.contains("loudness   integrated "), "\(table.stdout)")
        #expect(table.stdout.contains("silence    1 (under -60.0 dBFS for 0.500 s or more)\n"), "\(table.stdout)")
        #expect(table.stdout.contains("black      1 "), "\(table.stdout)")
        #expect(table.stdout.contains("scenes     2 cuts"), "\(table.stdout)")
        let r = try Graphctl.run("analyze", movie, "--json", "--only", "loudness,silence,black")
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONParser.parse(r.stdout)
        #expect(json["file"] == .string(movie))
        guard case .number(let integrated)? = json["loudness"]?["integratedLUFS"] else { Issue.record("\(r.stdout)"); return }
        // −23 dBFS for 2 s of 3; the blocks across the silence's edges are under −23 but above
        // the relative gate, so they count: ffmpeg's ebur128 reads −23.71 on the same signal.
        #expect(abs(integrated + 23.71) <= 0.1, "\(integrated)")
        #expect(json["scenes"] == nil)
        guard case .array(let silences)? = json["silence"]?["silences"], case .number(let start)? = silences.first?["start"] else {
            Issue.record("\(r.stdout)"); return
        }
        #expect(abs(start - 1) <= 0.01)
    }

    @Test func loudnessOfAFileWithoutSoundNamesTheFile() throws {
        let video = path("silent-film.mp4")
        try TestMedia.gstLaunch("videotestsrc num-buffers=10 ! x264enc ! mp4mux ! filesink location=\(video)")
        let r = try Graphctl.run("analyze", video, "--only", "loudness")
        #expect(r.status == 70)
        #expect(r.stderr.contains("\"\(video)\" has no audio track: loudness measures its sound"), "\(r.stderr)")
        // Without --only, what the file allows is measured.
        let all = try Graphctl.run("analyze", video)
        #expect(all.status == 0, "\(all.stderr)")
        #expect(!all.stdout.contains("loudness") && all.stdout.contains("black "), "\(all.stdout)")
    }

    @Test func thresholdsOutOfRangeAreUsageErrorsNamingTheOption() throws {
        let r = try Graphctl.run("analyze", "whatever.wav", "--silence-threshold", "5")
        #expect(r.status == 64)
        #expect(r.stderr.contains("--silence-threshold takes a number from -120 to 0"), "\(r.stderr)")
        let scene = try Graphctl.run("analyze", "whatever.wav", "--scene-threshold", "nan")
        #expect(scene.status == 64 && scene.stderr.contains("--scene-threshold takes a finite number from 0 to 100"), "\(scene.stderr)")
        let only = try Graphctl.run("analyze", "whatever.wav", "--only", "loudnes")
        #expect(only.status == 64 && only.stderr.contains("--only takes loudness, silence, black or scenes"), "\(only.stderr)")
        for empty in ["", ","] {
            let none = try Graphctl.run("analyze", "whatever.wav", "--only", empty)
            #expect(none.status == 64 && none.stderr.contains("--only takes loudness, silence, black or scenes"), "\(none.stderr)")
        }
        let missing = try Graphctl.run("analyze", path("none.wav"))
        #expect(missing.status == 66 && missing.stderr.contains("cannot read \"\(path("none.wav"))\""), "\(missing.stderr)")
    }

    /// In a graph, a threshold out of range is an invalid graph (65) at the parameter.
    @Test func theGraphRefusesAThresholdOutOfRange() throws {
        let r = try Graphctl.run("validate", Graphctl.graph("analyze.json"), "--set", "silence.threshold=3")
        #expect(r.status == 65)
        #expect(r.stderr.contains("silence.threshold"), "\(r.stderr)")
    }

    @Test func theExampleGraphMeasuresAFile() throws {
        let movie = try makeMovie()
        var sets: [String] = ["--set", "src.path=\(movie)"]
        for (node, param, name) in [("loud", "json", "l.json"), ("silence", "json", "s.json"), ("black", "json", "b.json"),
                                    ("scenes", "json", "c.json"), ("scenes", "vtt", "c.vtt")] {
            sets += ["--set", "\(node).\(param)=\(path(name))"]
        }
        let r = try Graphctl.run(["run", Graphctl.graph("analyze.json")] + sets)
        #expect(r.status == 0, "\(r.stderr)")
        for name in ["l.json", "s.json", "b.json", "c.json", "c.vtt"] { #expect(FileManager.default.fileExists(atPath: path(name)), "\(name)") }
    }
}
