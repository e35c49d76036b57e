import AVFoundation
import GraphKitTesting
import Testing
import TestSupport

/// AVOutputSettingsAssistant: a preset's settings with Apple's keys, the picture fitted to the
/// source's shape, taken by the writer as any settings.
@Suite struct AVOutputSettingsAssistantTests {
    static func videoFormat(_ width: Int32, _ height: Int32) throws -> CMVideoFormatDescription {
        var made: CMVideoFormatDescription?
        #expect(CMVideoFormatDescriptionCreate(allocator: nil, codecType: kCMVideoCodecType_H264, width: width, height: height,
                                               extensions: nil, formatDescriptionOut: &made) == noErr)
        return try #require(made)
    }

    @Test func presetsFitTheSourceAndTheWriterTakesThem() throws {
        #expect(AVOutputSettingsAssistant.availableOutputSettingsPresets().contains(.hevc7680x4320))
        #expect(AVOutputSettingsAssistant(preset: AVOutputSettingsPreset("AVOutputSettingsPresetMVHEVC960x960")) == nil)
        let assistant = try #require(AVOutputSettingsAssistant(preset: .preset1280x720))
        func size(_ a: AVOutputSettingsAssistant) -> (Int, Int) {
            let v = a.videoSettings ?? [:]
            return (v[AVVideoWidthKey] as? Int ?? 0, v[AVVideoHeightKey] as? Int ?? 0)
        }
        #expect(size(assistant) == (1280, 720), "no source: the preset's box")
        assistant.sourceVideoFormat = try Self.videoFormat(1920, 1080)
        #expect(size(assistant) == (1280, 720))
        assistant.sourceVideoFormat = try Self.videoFormat(1080, 1920)
        #expect(size(assistant) == (720, 1280), "a portrait source fits the box turned")
        assistant.sourceVideoFormat = try Self.videoFormat(1440, 1080)
        #expect(size(assistant) == (960, 720), "4:3 in a 16:9 box keeps its shape")
        assistant.sourceVideoFormat = try Self.videoFormat(320, 240)
        #expect(size(assistant) == (320, 240), "never enlarged")
        assistant.sourceVideoAverageFrameDuration = CMTime(value: 1, timescale: 25)
        let compression = try #require(assistant.videoSettings?[AVVideoCompressionPropertiesKey] as? [String: Any])
        #expect(compression[AVVideoExpectedSourceFrameRateKey] as? Int == 25 && compression[AVVideoMaxKeyFrameIntervalKey] as? Int == 50)
        #expect(compression[AVVideoAverageBitRateKey] as? Int == Int((320.0 * 240 * 4.05).rounded()))
        #expect(assistant.outputFileType == .mov)

        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("out.mov"), fileType: assistant.outputFileType)
        for preset in AVOutputSettingsAssistant.availableOutputSettingsPresets() {
            let a = try #require(AVOutputSettingsAssistant(preset: preset))
            #expect(writer.canApply(outputSettings: a.videoSettings, forMediaType: .video), "\(preset.rawValue)")
            #expect(writer.canApply(outputSettings: a.audioSettings, forMediaType: .audio), "\(preset.rawValue)")
        }
        let hevc = try #require(AVOutputSettingsAssistant(preset: .hevc1920x1080)?.videoSettings)
        let h264 = try #require(AVOutputSettingsAssistant(preset: .preset1920x1080)?.videoSettings)
        #expect(hevc[AVVideoCodecKey] as? AVVideoCodecType == .hevc)
        // The writer's own rule: HEVC codes at half H.264's rate for the size.
        func bitRate(_ v: [String: Any]) -> Int? { (v[AVVideoCompressionPropertiesKey] as? [String: Any])?[AVVideoAverageBitRateKey] as? Int }
        #expect(bitRate(hevc).map { $0 * 2 } == bitRate(h264).map { $0 / 2 * 2 } && bitRate(h264) == Int((1920.0 * 1080 * 10.1).rounded()))
        for level in [AVVideoProfileLevelH264Baseline30, AVVideoProfileLevelH264Baseline31, AVVideoProfileLevelH264Main30,
                      AVVideoProfileLevelH264Main31, AVVideoProfileLevelH264Main32] {
            #expect(writer.canApply(outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 640, AVVideoHeightKey: 480,
                                                     AVVideoCompressionPropertiesKey: [AVVideoProfileLevelKey: level]], forMediaType: .video), "\(level)")
        }
    }

    @Test func videoFormatDescriptionsAreMadeForCodecsAndPixelFormats() throws {
        let h264 = try Self.videoFormat(1920, 1080)
        #expect(CMFormatDescriptionGetMediaSubType(h264) == kCMVideoCodecType_H264)
        #expect(CMVideoFormatDescriptionGetDimensions(h264).width == 1920 && CMVideoFormatDescriptionGetDimensions(h264).height == 1080)
        var made: CMVideoFormatDescription?
        #expect(CMVideoFormatDescriptionCreate(allocator: nil, codecType: kCVPixelFormatType_32BGRA, width: 64, height: 48,
                                               extensions: [kCMFormatDescriptionExtension_FullRangeVideo: true] as CFDictionary,
                                               formatDescriptionOut: &made) == noErr)
        let bgra = try #require(made)
        #expect(CMFormatDescriptionGetMediaSubType(bgra) == kCVPixelFormatType_32BGRA)
        #expect(CMFormatDescriptionGetExtension(bgra, extensionKey: kCMFormatDescriptionExtension_FullRangeVideo) as? Bool == true)
        for (code, w, h) in [(kCMVideoCodecType_H264, Int32(0), Int32(48)), (kCMVideoCodecType_HEVC, 64, 20_000), (kCVPixelFormatType_64RGBAHalf, 64, 48)] {
            #expect(CMVideoFormatDescriptionCreate(allocator: nil, codecType: code, width: w, height: h, extensions: nil,
                                                   formatDescriptionOut: &made) == kCMFormatDescriptionError_InvalidParameter && made == nil)
        }
    }
}
