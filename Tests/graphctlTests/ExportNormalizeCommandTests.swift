import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphctl export … --normalize`: the sound measured by a first run, then through
/// effect.normalize at the gain found before the AAC encoder: a quiet and a loud input brought to
/// the target under the ceiling by ffmpeg's ebur128, as an M4A, beside the pictures, and of a
/// range; and what it refuses, with exit status 64.
@Suite(.media, .timeLimit(.minutes(10))) struct ExportNormalizeCommandTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of `size` H.264 at 25 frames a second with stereo AAC made from `sound` (a lavfi source).
    func movie(_ name: String, sound: String, seconds: Int = 4, size: String = "800x450") throws -> String {
        let p = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(size):r=25:d=\(seconds)", "-f", "lavfi", "-i", sound,
                                         "-ac", "2", "-ar", "48000", "-c:v", "libx264", "-g", "25", "-c:a", "aac", "-b:a", "192k", "-shortest", p])
        return p
    }

    static let inputs = [
        // About -36 LUFS: a gain of some 20 dB, the peaks far under the ceiling.
        "quiet": "sine=frequency=440:sample_rate=48000:d=4,volume=-33dB",
        // About -8 LUFS with peaks near 0 dBFS: turned down.
        "loud": "anoisesrc=d=4:c=pink:a=0.9:r=48000",
    ]

    @Test(arguments: [("quiet", -16.0, -1.0), ("loud", -23.0, -2.0)])
    func reachesTheTargetUnderTheCeiling(_ input: String, _ target: Double, _ ceiling: Double) throws {
        let source = try movie("\(input).mp4", sound: Self.inputs[input]!)
        let before = try FFmpegLoudness.measure(source)
        #expect(abs(before.integrated - target) > 5, "the input is not already at the target: \(before)")
        let output = path("\(input)-normalized.m4a")
        var arguments = ["export", source, output, "--preset", "appleM4A", "--normalize", "--quiet"]
        if target != -16 { arguments += ["--target=\(target)", "--true-peak=\(ceiling)"] }
        let r = try Graphctl.run(arguments)
        #expect(r.status == 0 && r.stderr == "" && r.stdout == "", "\(r.stderr)")
        let after = try FFmpegLoudness.measure(output)
        #expect(abs(after.integrated - target) <= 0.5, "\(before) -> \(after)")
        #expect(after.truePeak <= ceiling + 0.1, "\(after)")
        let probe = try MediaProbe(output)
        #expect(probe.stream("video") == nil && probe.stream("audio")?.codecName == "aac")
        #expect(abs(probe.duration - 4) < 0.1, "\(probe.duration)")
    }

    @Test func whatItCannotNormalizeIsRefusedWith64() throws {
        let source = try movie("in.mp4", sound: Self.inputs["quiet"]!)
        let mute = path("mute.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=1", "-c:v", "libx264", mute])
        let refused: [([String], String)] = [
            ([source, path("o.mp4"), "--preset", "passthrough", "--normalize"], "passthrough copies it as stored"),
            ([source, path("o.mp4"), "--preset", "640x480", "--normalize", "--target=-4"], "--target takes a number from -70 to -5"),
            ([source, path("o.mp4"), "--preset", "640x480", "--normalize", "--target=-71"], "--target takes a number from -70 to -5"),
            ([source, path("o.mp4"), "--preset", "640x480", "--normalize", "--true-peak=0.5"], "--true-peak takes a number from -20 to 0"),
            ([source, path("o.mp4"), "--preset", "640x480", "--target=-20"], "--target is a setting of --normalize"),
            ([mute, path("o.mp4"), "--preset", "appleM4A", "--normalize"], "has no sound"),
        ]
        for (arguments, message) in refused {
            let r = try Graphctl.run(["export"] + arguments + ["--quiet"])
            #expect(r.status == 64 && r.stderr.contains(message), "\(arguments): \(r.status) \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["in.mp4", "mute.mp4"])
    }

    /// Beside the pictures: the sound is measured first, so nothing waits for the whole of it (in
    /// one run with two passes the muxer held the pictures waiting for the sound, and a minute of
    /// 720p stalled); 20 s of pictures is more than the queues between decoder and muxer hold.
    @Test func besideThePicturesNothingWaits() throws {
        let source = try movie("av.mp4", sound: "anoisesrc=d=20:c=pink:a=0.9:r=48000", seconds: 20, size: "320x240")
        let output = path("av-normalized.mp4")
        let r = try Graphctl.run(["export", source, output, "--preset", "640x480", "--normalize", "--target=-20", "--quiet"], limit: .seconds(240))
        #expect(r.status == 0 && r.stderr == "", "\(r.status) \(r.stderr)")
        let after = try FFmpegLoudness.measure(output)
        #expect(abs(after.integrated + 20) <= 0.5 && after.truePeak <= -1 + 0.1, "\(after)")
        let probe = try MediaProbe(output)
        #expect(probe.stream("video")?.frameCount == 500, "\(String(describing: probe.stream("video")))")
        #expect(abs((probe.stream("audio")?.duration ?? 0) - 20) < 0.05, "\(String(describing: probe.stream("audio")))")
    }

    /// A range: the range's sound is what is measured and what comes out, to its end (in one run
    /// with two passes 2.14 s of 2.5 came out).
    @Test func aRangesSoundIsMeasuredAndKeptWhole() throws {
        // Loud for 2 s, then quiet: the range (from 2.5 s) is all quiet, so a gain measured on the
        // whole file would miss the target by some 20 dB.
        let source = try movie("steps.mp4", sound: "anoisesrc=d=6:c=pink:a=0.9:r=48000,volume='if(lt(t,2),1,0.05)':eval=frame", seconds: 6)
        let output = path("range.m4a")
        let r = try Graphctl.run(["export", source, output, "--preset", "appleM4A", "--normalize", "--start", "2.5", "--duration", "2.5", "--quiet"])
        #expect(r.status == 0 && r.stderr == "", "\(r.status) \(r.stderr)")
        let after = try FFmpegLoudness.measure(output)
        #expect(abs(after.integrated + 16) <= 0.5 && after.truePeak <= -1 + 0.1, "\(after)")
        let probe = try MediaProbe(output)
        #expect(abs(probe.duration - 2.5) < 0.05, "\(probe.duration)")
    }

    /// A float WAV at +80 dBFS: the first run's gain (about −92 dB) is passed on whole to the
    /// second (it was refused, 65: "-92.31 is out of range (-80 to 80)", while `normalize` of the
    /// same file succeeded).
    @Test func aFloatSoundFarPastFullScaleIsBroughtDown() throws {
        let source = path("loud.wav"), output = path("loud.m4a")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:d=3,volume=80dB",
                                         "-c:a", "pcm_f32le", source])
        let r = try Graphctl.run(["export", source, output, "--preset", "appleM4A", "--normalize", "--quiet"])
        #expect(r.status == 0 && r.stderr == "", "\(r.status) \(r.stderr)")
        let after = try FFmpegLoudness.measure(output)
        #expect(abs(after.integrated + 16) <= 0.5 && after.truePeak <= -1 + 0.1, "\(after)")
    }
}
