import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// Apple's names for the codecs past H.264 and AAC in an input's settings: AVVideoCodecType.hevc,
/// kAudioFormatOpus, kAudioFormatFLAC and kAudioFormatAppleLossless (and GraphKit's VP9 and AV1
/// names, which Apple's writer has not), each read as its codec; what the file cannot hold
/// refused with the reason, as AVFoundation's canAdd says no.
@Suite struct AVOutputSettingsCodecsTests {
    static func audio(_ id: AudioFormatID, rate: Int = 48000) -> [String: Any] {
        [AVFormatIDKey: id, AVSampleRateKey: rate, AVNumberOfChannelsKey: 2]
    }

    @Test func appleNamesPickTheirCodecs() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("out.mp4"), fileType: .mp4)
        for codec in [AVVideoCodecType.hevc, .vp9, .av1] {
            #expect(writer.canApply(outputSettings: [AVVideoCodecKey: codec, AVVideoWidthKey: 320, AVVideoHeightKey: 240], forMediaType: .video),
                    "\(codec.rawValue)")
        }
        #expect(writer.canApply(outputSettings: Self.audio(kAudioFormatOpus), forMediaType: .audio))
        #expect(writer.canApply(outputSettings: Self.audio(kAudioFormatAppleLossless), forMediaType: .audio))
        // Opus codes at 48 kHz; FLAC goes into MP4 and M4A (a fLaC track, as ffmpeg writes it),
        // not QuickTime.
        #expect(!writer.canAdd(AVAssetWriterInput(mediaType: .audio, outputSettings: Self.audio(kAudioFormatOpus, rate: 44100))))
        #expect(writer.canAdd(AVAssetWriterInput(mediaType: .audio, outputSettings: Self.audio(kAudioFormatOpus))))
        #expect(writer.canAdd(AVAssetWriterInput(mediaType: .audio, outputSettings: Self.audio(kAudioFormatFLAC))))
        let m4a = try AVAssetWriter(outputURL: folder.appendingPathComponent("out.m4a"), fileType: .m4a)
        #expect(m4a.canAdd(AVAssetWriterInput(mediaType: .audio, outputSettings: Self.audio(kAudioFormatFLAC))))
        let mov = try AVAssetWriter(outputURL: folder.appendingPathComponent("out.mov"), fileType: .mov)
        let flac = AVAssetWriterInput(mediaType: .audio, outputSettings: Self.audio(kAudioFormatFLAC))
        #expect(!mov.canAdd(flac))
        mov.add(flac)
        #expect(mov.status == .failed)
        let message = mov.error.map { $0.localizedDescription } ?? ""
        #expect(message.contains("FLAC is written in MP4 and M4A files, not QuickTime (.mov)"), "\(message)")
        #expect(kAudioFormatOpus == 0x6F70_7573 && kAudioFormatFLAC == 0x666C_6163 && kAudioFormatAppleLossless == 0x616C_6163)
    }
}
