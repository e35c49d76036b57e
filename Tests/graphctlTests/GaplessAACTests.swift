import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes

/// AAC written by sink.mp4 is gapless, as ffmpeg and AVFoundation write it: an edit list skips
/// the encoder's priming (measured while encoding) and ends after the input's last sample.
@Suite struct GaplessAACTests {
    /// White noise (so that a shift by any number of samples shows), mono 16-bit.
    static func noise(_ path: String, rate: Int, samples: Int) throws {
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "anoisesrc=r=\(rate):a=0.3:seed=7",
                                             "-af", "atrim=end_sample=\(samples)", "-c:a", "pcm_s16le", path])
    }

    static func audioTrack(_ path: String) throws -> MP4Track {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let moov = try #require(try MP4Box.parse(bytes[...]).first { $0.type == "moov" })
        return try #require(MP4Movie(moov: moov).tracks(handler: "soun").first?.track)
    }

    @Test(arguments: [(8000, 3000, true), (22050, 1023, true), (44100, 132_300, true), (48000, 100_001, false)])
    func theFileLastsAsLongAsTheInputAndStartsOnItsFirstSample(rate: Int, samples: Int, faststart: Bool) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("in.wav").path, m4a = folder.appendingPathComponent("out.m4a").path
        try Self.noise(wav, rate: rate, samples: samples)
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(wav)",
                                 "--set", "file.path=\(m4a)", "--set", "file.faststart=\(faststart)")
        try #require(r.status == 0, "\(r.stderr)")

        // The edit: after the priming (what the samples hold beyond the input), the input's count.
        let track = try Self.audioTrack(m4a)
        let edits = try #require(track.edits)
        let priming = Int(track.sampleTableDuration) - samples
        #expect(priming > 0 && priming < 4096, "priming \(priming)")
        #expect(edits == [MP4Track.Edit(duration: UInt64(samples), mediaTime: Int64(priming))], "\(edits)")
        #expect(track.mediaTimescale == rate)

        // ffprobe's duration is the input's, to the sample.
        let probe = try MediaProbe(m4a)
        #expect(abs(probe.duration - Double(samples) / Double(rate)) <= 1 / Double(rate), "\(probe.duration)")

        // ffmpeg's decode starts on the input's first sample. FFmpeg 5.1 honours the edit's start
        // but not its end (its own files decode with their padding too), so its count may run
        // up to one frame over.
        let input = try TranscodeAudioTests.decode(wav, channels: 1), decoded = try TranscodeAudioTests.decode(m4a, channels: 1)
        #expect(decoded.count >= samples && decoded.count < samples + 1024, "\(decoded.count) samples for \(samples)")
        if samples > 8192 { #expect(TestMedia.lag(of: decoded, against: input) == 0) }
        let indexFirst = probe.topLevelBoxes.firstIndex(of: "moov")! < probe.topLevelBoxes.firstIndex(of: "mdat")!
        #expect(indexFirst == faststart)
    }
}
