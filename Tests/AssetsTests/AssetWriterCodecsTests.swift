import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Testing
import TestSupport

/// The codecs past H.264 and AAC through AssetWriter, as AVAssetWriter writes them: each setting
/// picks its encoder node, a file type that cannot hold a codec refuses it at add, naming the
/// input and the reason, and the encoders' own ranges hold.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetWriterCodecsTests {
    /// HEVC video and each audio codec the MP4 writer holds: ffprobe names what was asked, and
    /// every frame and sample is there.
    @Test(arguments: [(AudioCodec.opus, "opus"), (.alac, "alac"), (.flac, "flac")])
    func hevcWithEachAudioCodec(codec: AudioCodec, name: String) async throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("out.mp4").path
        let writer = try AssetWriter(outputPath: out, fileType: .mp4)
        let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(codec: .hevc, width: 64, height: 48, keyframeInterval: 10))
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: codec, sampleRate: 48_000, channels: 2))
        try writer.add(video)
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        let frames = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 64, "height": 48, "duration": 1, "live": false, "pattern": "ball" } }"#).pullAll()
        for frame in frames { try await video.append(frame) }
        video.markAsFinished()
        for b in TestMedia.sine(sampleRate: 48_000, channels: 2, seconds: 1) { try await audio.append(b) }
        audio.markAsFinished()
        try await writer.finishWriting()
        #expect(writer.status == .completed, "\(writer.error?.description ?? "")")
        let probe = try MediaProbe(out, countFrames: true)
        #expect(probe.stream("video")?.codecName == "hevc" && probe.stream("video")?.frameCount == 30)
        #expect(probe.stream("audio")?.codecName == name && probe.stream("audio")?.sampleRate == 48_000)
        let tag = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", out])
        #expect(tag.trimmingCharacters(in: .whitespacesAndNewlines) == "hvc1")
    }

    /// FLAC through the writer into an M4A (kAudioFormatFLAC's file, as Apple's writer makes it):
    /// ffprobe names FLAC (`fLaC`), and ffmpeg decodes the appended samples exactly, as many.
    @Test func flacIntoAnM4ADecodesTheAppendedSamples() async throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("lossless.m4a").path
        let writer = try AssetWriter(outputPath: out, fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .flac, sampleRate: 44_100, channels: 2))
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        let frames = 44_100 + 333
        let input = TestMedia.pcm(sampleRate: 44_100, channels: 2, frames: frames) { f, c in Int16(truncatingIfNeeded: f &* (7 + 5 * c) &+ c * 1000) }
        for b in input { try await audio.append(b) }
        audio.markAsFinished()
        try await writer.finishWriting()
        #expect(writer.status == .completed, "\(writer.error?.description ?? "")")
        let tag = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name,codec_tag_string", "-of", "csv=p=0", out])
        #expect(tag.trimmingCharacters(in: .whitespacesAndNewlines) == "flac,fLaC")
        let raw = folder.appendingPathComponent("decoded.raw").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out, "-f", "s16le", raw])
        let decoded = try Data(contentsOf: URL(fileURLWithPath: raw))
        #expect(decoded.count == frames * 4, "\(decoded.count / 4) samples for \(frames)")
        #expect([UInt8](decoded) == input.flatMap(\.bytes))
    }

    /// What the file cannot hold is refused when the input is added, naming the input and why;
    /// settings past an encoder's declared range likewise.
    @Test func whatTheFileCannotHoldIsRefusedAtAdd() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // FLAC: MP4 and M4A hold it, QuickTime does not.
        for type in [FileType.mp4, .m4a] {
            let writer = try AssetWriter(outputPath: folder.appendingPathComponent("out.\(type.rawValue)").path, fileType: type)
            #expect(writer.canAdd(AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .flac, sampleRate: 48_000, channels: 2))))
        }
        let mov = try AssetWriter(outputPath: folder.appendingPathComponent("out.mov").path, fileType: .mov)
        let flac = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .flac, sampleRate: 48_000, channels: 2))
        #expect(!mov.canAdd(flac))
        #expect(refusal { try mov.add(flac) }.hasPrefix("FLAC is written in MP4 and M4A files, not QuickTime (.mov)"))
        var thrown: GraphError?
        do { try mov.add(flac) } catch { thrown = error }
        #expect(thrown?.description.hasPrefix("audio input: ") == true, "\(String(describing: thrown))")  // the input at fault
        let writer = try AssetWriter(outputPath: folder.appendingPathComponent("limits.mp4").path, fileType: .mp4)
        let opus44 = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .opus, sampleRate: 44_100, channels: 2))
        #expect(refusal { try writer.add(opus44) } == "AudioSettings sampleRate 44100 cannot be encoded to Opus: choose 48000 Hz")
        let alac6 = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .alac, sampleRate: 48_000, channels: 6))
        #expect(refusal { try writer.add(alac6) } == "AudioSettings channels 6 cannot be encoded to ALAC here: choose 1 to 2")
        let lossy = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(codec: .alac, sampleRate: 48_000, channels: 2, bitRate: 128_000))
        #expect(refusal { try writer.add(lossy) } == "bitRate 128000 is for lossy codecs; ALAC is lossless: leave bitRate nil")
        let tiny = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(codec: .hevc, width: 8, height: 8))
        #expect(refusal { try writer.add(tiny) } == "VideoSettings 8x8 cannot be encoded: HEVC here needs an even width from 16 to 8192 and an even height from 16 to 4320")
        let av1 = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(codec: .av1, width: 64, height: 48, keyframeInterval: 0))
        #expect(refusal { try writer.add(av1) } == "keyframeInterval 0 is out of range (1 to 1000 frames)")
        #expect(writer.canAdd(AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(codec: .vp9, width: 64, height: 48))))
    }
}
