import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Testing
import TestSupport

/// PCM of every channel count AAC takes, written as AVAssetWriter writes it: past stereo, the
/// appended samples' caps said no speaker positions, GStreamer's converter refused them, and the
/// twelfth append failed with "Internal data stream error".
@Suite(.media, .timeLimit(.minutes(10))) struct AssetWriterChannelsTests {
    /// Samples of `given` channels into a file of `channels` (mixed down where they differ).
    @Test(arguments: [(3, 3), (4, 4), (5, 5), (6, 6), (6, 2), (8, 2), (6, 1)])
    func everyChannelCountIsWritten(given: Int, channels: Int) async throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("ch\(given)-\(channels).m4a").path
        let writer = try AssetWriter(outputPath: out, fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 48_000, channels: channels))
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        for b in TestMedia.sine(sampleRate: 48_000, channels: given, seconds: 1) { try await audio.append(b) }
        audio.markAsFinished()
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        let probe = try MediaProbe(out)
        #expect(probe.streams.map(\.channels) == [channels])
        #expect(abs(probe.duration - 1) < 0.001, "duration \(probe.duration)")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", out, "-f", "null", "-"])
    }
}
