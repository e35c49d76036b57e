import Assets
import Foundation
import GraphKitCore

/// A named set of output settings (`AVOutputSettingsAssistant(preset:)`), as AVFoundation's.
public struct AVOutputSettingsPreset: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let preset640x480 = AVOutputSettingsPreset("AVOutputSettingsPreset640x480")
    public static let preset960x540 = AVOutputSettingsPreset("AVOutputSettingsPreset960x540")
    public static let preset1280x720 = AVOutputSettingsPreset("AVOutputSettingsPreset1280x720")
    public static let preset1920x1080 = AVOutputSettingsPreset("AVOutputSettingsPreset1920x1080")
    public static let preset3840x2160 = AVOutputSettingsPreset("AVOutputSettingsPreset3840x2160")
    public static let hevc1920x1080 = AVOutputSettingsPreset("AVOutputSettingsPresetHEVC1920x1080")
    public static let hevc3840x2160 = AVOutputSettingsPreset("AVOutputSettingsPresetHEVC3840x2160")
    public static let hevc7680x4320 = AVOutputSettingsPreset("AVOutputSettingsPresetHEVC7680x4320")

    /// The box the picture fits in, and the codec.
    var shape: (width: Int, height: Int, codec: AVVideoCodecType)? {
        switch self {
        case .preset640x480: (640, 480, .h264)
        case .preset960x540: (960, 540, .h264)
        case .preset1280x720: (1280, 720, .h264)
        case .preset1920x1080: (1920, 1080, .h264)
        case .preset3840x2160: (3840, 2160, .h264)
        case .hevc1920x1080: (1920, 1080, .hevc)
        case .hevc3840x2160: (3840, 2160, .hevc)
        case .hevc7680x4320: (7680, 4320, .hevc)
        default: nil
        }
    }
}

/// Settings for an `AVAssetWriterInput` from a preset, as AVFoundation's
/// `AVOutputSettingsAssistant`: the preset's codec and box, the picture fitted in it with the
/// source's aspect when ``sourceVideoFormat`` is given (never enlarged, even sizes: an export
/// preset's fit), the bit rate the writer's encoder picks for the size, a keyframe at least
/// every 2 s; AAC at 128 kbit/s, the source's rate up to 48 kHz and at most two channels. The
/// dictionaries are Apple's keys, so the writer reads them as any other settings.
open class AVOutputSettingsAssistant: @unchecked Sendable {
    // Unchecked: open, as AVFoundation's; its sources are in a Mutex.
    public let preset: AVOutputSettingsPreset
    private struct Sources {
        var video: CMVideoFormatDescription?
        var audio: CMAudioFormatDescription?
        var averageFrameDuration = CMTime.invalid
        var minFrameDuration = CMTime.invalid
    }
    private let sources = Guarded(Sources())

    /// The assistant of `preset`; nil for a preset GraphKit has not.
    public init?(preset: AVOutputSettingsPreset) {
        guard preset.shape != nil else { return nil }
        self.preset = preset
    }

    public class func availableOutputSettingsPresets() -> [AVOutputSettingsPreset] {
        [.preset640x480, .preset960x540, .preset1280x720, .preset1920x1080, .preset3840x2160, .hevc1920x1080, .hevc3840x2160, .hevc7680x4320]
    }

    public var sourceVideoFormat: CMVideoFormatDescription? {
        get { sources.withLock { $0.video } }
        set { sources.withLock { $0.video = newValue } }
    }
    public var sourceAudioFormat: CMAudioFormatDescription? {
        get { sources.withLock { $0.audio } }
        set { sources.withLock { $0.audio = newValue } }
    }
    /// The source's frame duration: its rate becomes the expected frame rate (30 when invalid).
    public var sourceVideoAverageFrameDuration: CMTime {
        get { sources.withLock { $0.averageFrameDuration } }
        set { sources.withLock { $0.averageFrameDuration = newValue } }
    }
    public var sourceVideoMinFrameDuration: CMTime {
        get { sources.withLock { $0.minFrameDuration } }
        set { sources.withLock { $0.minFrameDuration = newValue } }
    }

    /// QuickTime movies, as Apple's assistant recommends for its presets.
    public var outputFileType: AVFileType { .mov }

    public var videoSettings: [String: Any]? {
        guard let shape = preset.shape else { return nil }
        let (source, duration) = sources.withLock { ($0.video, $0.averageFrameDuration) }
        var (width, height) = (shape.width, shape.height)
        if let source {
            let d = CMVideoFormatDescriptionGetDimensions(source)
            if d.width > 0, d.height > 0 { (width, height) = ExportPreset.fit(width: Int(d.width), height: Int(d.height), in: (shape.width, shape.height)) }
        }
        let seconds = duration.isNumeric && duration.seconds > 0 ? duration.seconds : 1.0 / 30
        let rate = min(240, max(1, (1 / seconds).rounded()))
        let codec: VideoCodec = shape.codec == .h264 ? .h264 : .hevc
        var compression: [String: Any] = [
            AVVideoAverageBitRateKey: codec.automaticBitRate(width: width, height: height),
            AVVideoExpectedSourceFrameRateKey: Int(rate),
            AVVideoMaxKeyFrameIntervalKey: Int(rate * 2),
        ]
        compression[AVVideoProfileLevelKey] = shape.codec == .h264 ? AVVideoProfileLevelH264HighAutoLevel : "HEVC_Main_AutoLevel"
        return [AVVideoCodecKey: shape.codec, AVVideoWidthKey: width, AVVideoHeightKey: height, AVVideoCompressionPropertiesKey: compression]
    }

    public var audioSettings: [String: Any]? {
        var rate = 44_100.0, channels = 2
        if let source = sourceAudioFormat, let asbd = CMAudioFormatDescriptionGetStreamBasicDescription(source)?.pointee {
            if asbd.mSampleRate > 0 { rate = min(asbd.mSampleRate, 48_000) }
            if asbd.mChannelsPerFrame > 0 { channels = min(Int(asbd.mChannelsPerFrame), 2) }
        }
        return [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: rate, AVNumberOfChannelsKey: channels, AVEncoderBitRateKey: 128_000]
    }
}
