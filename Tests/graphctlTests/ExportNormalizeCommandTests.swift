import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphctl export … --normalize`: the sound through effect.normalize (two passes) before the
/// AAC encoder, a quiet and a loud input brought to the target under the ceiling by ffmpeg's
/// ebur128, as an M4A; and what it refuses, with exit status 64 (a preset with video among them:
/// the two passes hold the sound, and the muxer the pictures waiting for it).
@Suite(.media, .timeLimit(.minutes(10))) struct ExportNormalizeCommandTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// 4 s of 800x450 H.264 with stereo AAC made from `sound` (a lavfi source).
    func movie(_ name: String, sound: String) throws -> String {
        let p = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=800x450:r=25:d=4", "-f", "lavfi", "-i", sound,
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
            ([source, path("o.mp4"), "--preset", "640x480", "--normalize"], "export the sound alone"),
            ([source, path("o.m4a"), "--preset", "appleM4A", "--normalize", "--start", "1", "--duration", "2.5"], "of a time range is not supported yet"),
        ]
        for (arguments, message) in refused {
            let r = try Graphctl.run(["export"] + arguments + ["--quiet"])
            #expect(r.status == 64 && r.stderr.contains(message), "\(arguments): \(r.status) \(r.stderr)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["in.mp4", "mute.mp4"])
    }
}
