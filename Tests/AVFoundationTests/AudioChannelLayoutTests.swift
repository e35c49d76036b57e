import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// CoreAudioTypes' channel layouts as settings name them (`AVChannelLayoutKey`: an
/// AudioChannelLayout's bytes): a tag's channel count, a bitmap's, a description count's; Apple's
/// tag values; the writer reading the count from each and refusing a layout that disagrees with
/// `AVNumberOfChannelsKey`. And `AVEncoderBitDepthHintKey` choosing the bits ALAC keeps.
@Suite struct AudioChannelLayoutTests {
    static func bytes(_ layout: AudioChannelLayout) -> Data {
        var l = layout
        return Data(bytes: &l, count: MemoryLayout<AudioChannelLayout>.size)
    }

    @Test func tagsBitmapsAndDescriptionsSayTheirChannelCount() {
        // Apple's values (CoreAudioBaseTypes.h): the layout number in the high 16 bits, the count low.
        #expect(kAudioChannelLayoutTag_MPEG_5_1_D == 0x007C_0006 && kAudioChannelLayoutTag_MPEG_7_1_C == 0x0080_0008)
        #expect(kAudioChannelLayoutTag_MPEG_2_0 == kAudioChannelLayoutTag_Stereo && kAudioChannelLayoutTag_AAC_5_1 == kAudioChannelLayoutTag_MPEG_5_1_D)
        #expect(kAudioChannelLayoutTag_UseChannelBitmap == 0x0001_0000 && kAudioChannelLayoutTag_UseChannelDescriptions == 0)
        #expect(MemoryLayout<AudioChannelLayout>.size == 32, "tag, bitmap, count, one 20-byte description: CoreAudio's C layout")
        var layout = AudioChannelLayout()
        layout.mChannelLayoutTag = kAudioChannelLayoutTag_MPEG_3_0_B
        #expect(layout.channelCount == 3)
        layout = AudioChannelLayout(mChannelLayoutTag: kAudioChannelLayoutTag_UseChannelBitmap,
                                    mChannelBitmap: [.bit_Left, .bit_Right, .bit_Center, .bit_LFEScreen],
                                    mNumberChannelDescriptions: 0, mChannelDescriptions: AudioChannelDescription())
        #expect(layout.channelCount == 4 && layout.mChannelBitmap.rawValue == 0xF)
        layout = AudioChannelLayout(mChannelLayoutTag: kAudioChannelLayoutTag_UseChannelDescriptions, mChannelBitmap: AudioChannelBitmap(rawValue: 0),
                                    mNumberChannelDescriptions: 2, mChannelDescriptions: AudioChannelDescription())
        #expect(layout.channelCount == 2)
        // Read back from the bytes settings carry, whole or as the tag alone.
        #expect(AudioChannelLayout(bytes: Self.bytes(layout))?.channelCount == 2)
        #expect(AudioChannelLayout(bytes: Data([6, 0, 0x7C, 0]))?.channelCount == 6)
        #expect(AudioChannelLayout(bytes: Data([6, 0])) == nil)
        // Channels by speaker label, in order; a discrete layout's count is its tag's.
        let centre = AudioChannelDescription(mChannelLabel: kAudioChannelLabel_Center, mChannelFlags: .allOff, mCoordinates: (0, 0, 0))
        #expect(centre.mChannelLabel == 3 && centre.mChannelFlags.isEmpty && kAudioChannelLabel_Unknown == 0xFFFF_FFFF)
        #expect(AudioChannelFlags.meters.rawValue == 4)
        layout.mChannelLayoutTag = kAudioChannelLayoutTag_DiscreteInOrder | 5
        #expect(layout.channelCount == 5)
        #expect([kAudioFormatMPEGLayer3, kAudioFormatMPEG4AAC_LD, kAudioFormatMPEG4AAC_HE_V2, kAudioFormatMPEG4AAC_ELD].map(\.fourCharacters)
                == [".mp3", "aacl", "aacp", "aace"])
    }

    @Test func theWriterTakesTheLayoutsCount() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("out.m4a"), fileType: .m4a)
        func settings(_ layout: AudioChannelLayout, channels: Int?) -> [String: Any] {
            var s: [String: Any] = [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000, AVChannelLayoutKey: Self.bytes(layout)]
            if let channels { s[AVNumberOfChannelsKey] = channels }
            return s
        }
        var stereo = AudioChannelLayout()
        stereo.mChannelLayoutTag = kAudioChannelLayoutTag_UseChannelBitmap
        stereo.mChannelBitmap = [.bit_Left, .bit_Right]
        #expect(writer.canApply(outputSettings: settings(stereo, channels: nil), forMediaType: .audio), "the bitmap's two bits give the count")
        #expect(writer.canApply(outputSettings: settings(stereo, channels: 2), forMediaType: .audio))
        let refused = AVAssetWriterInput(mediaType: .audio, outputSettings: settings(stereo, channels: 1))
        #expect(!writer.canAdd(refused))
        writer.add(refused)
        let message = writer.error.map { $0.localizedDescription } ?? ""
        #expect(message.contains("AVChannelLayoutKey's layout has 2 channels but AVNumberOfChannelsKey says 1"), "\(message)")
        let other = try AVAssetWriter(outputURL: folder.appendingPathComponent("apac.m4a"), fileType: .m4a)
        #expect(!other.canApply(outputSettings: [AVFormatIDKey: kAudioFormatAPAC, AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 2], forMediaType: .audio))
    }

    /// ALAC keeps 24 bits when asked with AVEncoderBitDepthHintKey, 16 from 16-bit input
    /// otherwise (ffprobe's bits_per_raw_sample); a depth it cannot keep is refused by name.
    @Test(.media, .timeLimit(.minutes(2))) func theBitDepthHintChoosesWhatALACKeeps() async throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        func write(_ name: String, hint: Int?) async throws -> String {
            let url = folder.appendingPathComponent(name)
            let writer = try AVAssetWriter(outputURL: url, fileType: .m4a)
            var settings: [String: Any] = [AVFormatIDKey: kAudioFormatAppleLossless, AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 1]
            if let hint { settings[AVEncoderBitDepthHintKey] = hint }
            let input = AVAssetWriterInput(mediaType: .audio, outputSettings: settings)
            writer.add(input)
            try #require(writer.startWriting(), "\(String(describing: writer.error))")
            writer.startSession(atSourceTime: .zero)
            let format = try CMSampleBufferCreateTests.monoPCM()
            for n in 0..<8 {
                while !input.isReadyForMoreMediaData { try await Task.sleep(for: .milliseconds(1)) }
                #expect(input.append(try CMSampleBufferCreateTests.sine(from: n * 1024, frames: 1024, format: format)))
            }
            input.markAsFinished()
            await writer.finishWriting()
            #expect(writer.status == .completed, "\(String(describing: writer.error))")
            return try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=bits_per_raw_sample",
                                                     "-of", "csv=p=0", url.path]).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(try await write("default.m4a", hint: nil) == "16")
        #expect(try await write("deep.m4a", hint: 24) == "24")
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("odd.m4a"), fileType: .m4a)
        let odd = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatAppleLossless, AVSampleRateKey: 48_000,
                                                                        AVNumberOfChannelsKey: 1, AVEncoderBitDepthHintKey: 20])
        writer.add(odd)
        #expect((writer.error.map { $0.localizedDescription } ?? "").contains("AVEncoderBitDepthHintKey is 20"))
        // AAC has no sample depth: the hint is accepted and ignored, as on Apple's platforms.
        #expect(writer.canApply(outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 1,
                                                 AVEncoderBitDepthHintKey: 16], forMediaType: .audio))
    }
}
