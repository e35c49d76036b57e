import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// AAC written by sink.mp4 is gapless, as ffmpeg and AVFoundation write it: an edit list skips
/// the encoder's priming (measured while encoding) and ends after the input's last sample.
@Suite(.media) struct GaplessAACTests {
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

    /// Every decoder with a frame size: a source whose length is no multiple of any codec's
    /// frame (100,001 samples, at 48 kHz), encoded by ffmpeg, transcoded to AAC in M4A. The last,
    /// partial frame of the input must survive: the edit list skips the priming and lasts the
    /// input's count, the AAC samples reach that far, ffmpeg's decode of the output (which
    /// honours the edit's start, not its end) holds every input sample and at most one frame of
    /// padding more, lined up with the input to the sample, and the input's tail is there.
    /// Before: a demuxer's segment ended the encoder's input, and the muxer dropped the frame
    /// the priming pushed past it (ALAC, Vorbis, Opus lost their last samples: 132,300 of ALAC
    /// came out 132,096); Matroska's millisecond stamps made the priming measure 1,037.
    @Test(arguments: [("aac", "m4a", ["-c:a", "aac"]), ("mp3", "mp3", ["-c:a", "libmp3lame"]),
                      ("vorbis", "ogg", ["-c:a", "libvorbis"]), ("opus", "opus", ["-c:a", "libopus"]),
                      ("flac", "flac", ["-c:a", "flac"]), ("flac-in-matroska", "mka", ["-c:a", "flac"]),
                      ("alac", "m4a", ["-c:a", "alac"]), ("ac3", "ac3", ["-c:a", "ac3"]), ("pcm", "wav", ["-c:a", "pcm_s16le"])])
    func theLastPartialFrameSurvivesATranscode(_ codec: String, _ ext: String, _ arguments: [String]) throws {
        // Matroska stamps to the millisecond, which at 44.1 kHz falls between samples.
        let rate = codec == "flac-in-matroska" ? 44_100 : 48_000, samples = 100_001
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("source.wav").path, input = folder.appendingPathComponent("in.\(ext)").path
        let m4a = folder.appendingPathComponent("out.m4a").path
        try Self.noise(wav, rate: rate, samples: samples)
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", wav] + arguments + [input])
        // What the input holds: every source sample, except raw AC-3, whose stream says nothing of
        // its padding (it decodes to whole frames of 1,536, as ffmpeg decodes it).
        let count = codec == "ac3" ? (samples + 1535) / 1536 * 1536 : samples
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(input)", "--set", "file.path=\(m4a)")
        try #require(r.status == 0, "\(codec): \(r.stderr)")

        let track = try Self.audioTrack(m4a)
        let edits = try #require(track.edits, "\(codec): no edit list")
        #expect(edits == [MP4Track.Edit(duration: UInt64(count), mediaTime: 1024)], "\(codec): \(edits)")
        #expect(track.sampleTableDuration >= 1024 + UInt64(count), "\(codec): \(track.sampleTableDuration) AAC samples")
        let source = try TranscodeAudioTests.decode(wav, channels: 1), decoded = try TranscodeAudioTests.decode(m4a, channels: 1)
        #expect(decoded.count >= count && decoded.count < count + 1024, "\(codec): \(decoded.count) samples for \(count)")
        // Where the input's decoder puts the source (0, but for raw AC-3's 256 of decoder delay,
        // which ffmpeg keeps too): the output has each sample there.
        let lag = TestMedia.lag(of: try TranscodeAudioTests.decode(input, channels: 1), against: source)
        #expect(TestMedia.lag(of: decoded, against: source) == lag, "\(codec)")
        // The last 200 source samples (inside every codec's last frame) are there, at their level.
        let tail = (samples - 200)..<samples, shifted = (tail.lowerBound + lag)..<(tail.upperBound + lag)
        let level = { (s: ArraySlice<Int16>) in TranscodeAudioTests.level(Array(s), channel: 0, of: 1) }
        let there = decoded.count >= shifted.upperBound
        #expect(there && abs(level(decoded[shifted]) - level(source[tail])) < 3,
                "\(codec): the tail at \(there ? level(decoded[shifted]) : -.infinity) dB, the source's \(level(source[tail])) dB")
    }
}
