import Foundation
import GraphKitTesting
import Testing
import TestSupport

/// The programs in examples/ compile with the package and run here, each on real media, and
/// what they write is checked.
@Suite(.media, .timeLimit(.minutes(10))) struct ExamplesTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// The built example: beside the test bundle (the build's products folder).
    func example(_ name: String) throws -> String {
        let candidates = [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
                          URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../.build/debug").standardized]
        for dir in candidates {
            let path = dir.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: "\(name) (build the package first)"])
    }

    @Test func framesToMovie() throws {
        let out = folder.appendingPathComponent("drawn.mp4").path
        let printed = try TestMedia.runTool(try example("example-frames-to-movie"), [out, "45"])
        #expect(printed.contains("wrote 45 frames"))
        let video = try #require(try MediaProbe(out, countFrames: true).stream("video"))
        #expect(video.codecName == "h264" && video.width == 640 && video.height == 360 && video.frameCount == 45)
    }

    @Test func peakLevel() throws {
        let wav = folder.appendingPathComponent("half.wav").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=d=1", "-af", "volume=0.5", "-y", wav])
        let printed = try TestMedia.runTool(try example("example-peak-level"), [wav])
        // ffmpeg's sine is at 1/8 of full scale; halved, 1/16: -24.08 dBFS.
        #expect(printed.contains("peak 0.0625") && printed.contains("-24.08"), "\(printed)")
        #expect(printed.contains("44100 frames"))
    }

    @Test func liveSource() throws {
        let out = folder.appendingPathComponent("live.mov").path
        let printed = try TestMedia.runTool(try example("example-live-source"), [out, "1"])
        #expect(printed.contains("captured 30 frames"), "\(printed)")
        let frames = try #require(try MediaProbe(out, countFrames: true).stream("video")?.frameCount)
        // Every frame is written or dropped and counted; on an idle machine none is dropped.
        #expect(frames > 0 && printed.contains("wrote \(frames),"), "\(printed)")
    }

    @Test func customNodeTestedWithNodeHarness() throws {
        let printed = try TestMedia.runTool(try example("example-custom-node"), [])
        #expect(printed.contains("4000 samples inverted, as expected"))
    }
}
