@testable import Assets
import Foundation
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// AssetExportSession.loudnessNormalization (ExportNormalization.swift): the sound of an M4A
/// export brought to the target under the ceiling (ffmpeg's ebur128), and the exports it refuses
/// before anything is written.
@Suite(.media, .timeLimit(.minutes(5))) struct ExportNormalizationTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// 3 s of 320x240 H.264 with a quiet stereo AAC tone (about -36 LUFS).
    func source() throws -> String {
        let p = path("source.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=3", "-f", "lavfi", "-i",
                                         "sine=frequency=440:sample_rate=48000:d=3,volume=-33dB", "-ac", "2", "-c:v", "libx264", "-c:a", "aac", p])
        return p
    }

    @Test func theSoundReachesTheTargetUnderTheCeiling() async throws {
        let session = try AssetExportSession(asset: try Asset(path: try source()), preset: .appleM4A)
        session.outputPath = path("out.m4a")
        session.loudnessNormalization = LoudnessNormalization(targetLUFS: -20, truePeakDBTP: -3)
        try await session.export()
        #expect(session.status == .completed)
        let after = try FFmpegLoudness.measure(path("out.m4a"))
        #expect(abs(after.integrated + 20) <= 0.5 && after.truePeak <= -3 + 0.1, "\(after)")
    }

    /// With pictures and a range: the sound measured by a run of its own, then exported at that
    /// gain beside the pictures, to the range's end.
    @Test func withPicturesAndARange() async throws {
        let session = try AssetExportSession(asset: try Asset(path: try source()), preset: .sd640x480)
        session.outputPath = path("out.mp4")
        session.timeRange = MediaTimeRange(start: MediaTime(seconds: 0.4), duration: MediaTime(seconds: 2))
        session.loudnessNormalization = LoudnessNormalization(targetLUFS: -18)
        try await session.export()
        #expect(session.status == .completed && session.progress == 1)
        let after = try FFmpegLoudness.measure(path("out.mp4"))
        #expect(abs(after.integrated + 18) <= 0.5 && after.truePeak <= -1 + 0.1, "\(after)")
        let probe = try MediaProbe(path("out.mp4"))
        #expect(probe.stream("video")?.frameCount == 50, "\(String(describing: probe.stream("video")))")
        #expect(abs((probe.stream("audio")?.duration ?? 0) - 2) < 0.05, "\(String(describing: probe.stream("audio")))")
    }

    /// Cancelled while the sound is measured, the export ends cancelled with nothing written.
    @Test func cancelledWhileMeasuring() async throws {
        let session = try AssetExportSession(asset: try Asset(path: try source()), preset: .appleM4A)
        session.outputPath = path("out.m4a")
        session.loudnessNormalization = LoudnessNormalization()
        let export = Task { try await session.export() }
        while session.status == .unknown { try await Task.sleep(for: .milliseconds(1)) }
        session.cancelExport()
        await #expect(throws: GraphError.self) { try await export.value }
        #expect(session.status == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: path("out.m4a")))
    }

    @Test func theDefaultsAreEffectNormalizes() {
        let normalization = LoudnessNormalization()
        #expect(normalization.targetLUFS == -16 && normalization.truePeakDBTP == -1)
    }

    @Test(arguments: [(ExportPreset.passthrough, LoudnessNormalization(), "copies it as stored"),
                      (.appleM4A, LoudnessNormalization(targetLUFS: -4), "loudnessNormalization.targetLUFS"),
                      (.appleM4A, LoudnessNormalization(truePeakDBTP: .nan), "loudnessNormalization.truePeakDBTP")])
    func refusedBeforeAnythingIsWritten(_ preset: ExportPreset, _ normalization: LoudnessNormalization, _ said: String) async throws {
        let session = try AssetExportSession(asset: try Asset(path: try source()), preset: preset)
        session.outputPath = path("out.m4a")
        session.outputFileType = .m4a
        session.loudnessNormalization = normalization
        await #expect {
            try await session.export()
        } throws: { error in
            guard let error = error as? GraphError else { return false }
            return error.code == .usage && "\(error)".contains(said)
        }
        #expect(session.status == .failed)
        #expect(!FileManager.default.fileExists(atPath: path("out.m4a")))
    }
}
