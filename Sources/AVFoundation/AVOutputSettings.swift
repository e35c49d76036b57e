import Assets
import GraphKitCore

// The keys and constants of AVFoundation's settings dictionaries (AVAudioSettings.h,
// AVVideoSettings.h), with Apple's string values, and their reading into GraphKit's settings.

// MARK: Audio keys

public let AVFormatIDKey = "AVFormatIDKey"
public let AVSampleRateKey = "AVSampleRateKey"
public let AVNumberOfChannelsKey = "AVNumberOfChannelsKey"
public let AVChannelLayoutKey = "AVChannelLayoutKey"
public let AVEncoderBitRateKey = "AVEncoderBitRateKey"
public let AVEncoderBitRatePerChannelKey = "AVEncoderBitRatePerChannelKey"
/// Accepted and ignored: the AAC encoder has one quality.
public let AVEncoderAudioQualityKey = "AVEncoderAudioQualityKey"
/// Accepted and ignored: the AAC encoder runs at a constant bit rate.
public let AVEncoderBitRateStrategyKey = "AVEncoderBitRateStrategyKey"
/// The bits a sample FLAC and ALAC keep: 16 or 24 here (Apple's ALAC also takes 20 and 32, refused
/// by name). The lossy codecs have no sample depth: for them it is accepted and ignored, as on
/// Apple's platforms.
public let AVEncoderBitDepthHintKey = "AVEncoderBitDepthHintKey"
public let AVLinearPCMBitDepthKey = "AVLinearPCMBitDepthKey"
public let AVLinearPCMIsFloatKey = "AVLinearPCMIsFloatKey"
public let AVLinearPCMIsBigEndianKey = "AVLinearPCMIsBigEndianKey"
public let AVLinearPCMIsNonInterleaved = "AVLinearPCMIsNonInterleaved"
public let AVAudioBitRateStrategy_Constant = "AVAudioBitRateStrategy_Constant"
public let AVAudioBitRateStrategy_Variable = "AVAudioBitRateStrategy_Variable"


/// AVFoundation's audio quality levels (for `AVEncoderAudioQualityKey`).
public enum AVAudioQuality: Int, Sendable {
    case min = 0, low = 0x20, medium = 0x40, high = 0x60, max = 0x7F
}

// MARK: Video keys

public let AVVideoCodecKey = "AVVideoCodecKey"
public let AVVideoWidthKey = "AVVideoWidthKey"
public let AVVideoHeightKey = "AVVideoHeightKey"
public let AVVideoCompressionPropertiesKey = "AVVideoCompressionPropertiesKey"
public let AVVideoAverageBitRateKey = "AverageBitRate"
public let AVVideoMaxKeyFrameIntervalKey = "MaxKeyFrameInterval"
public let AVVideoMaxKeyFrameIntervalDurationKey = "MaxKeyFrameIntervalDuration"
public let AVVideoProfileLevelKey = "ProfileLevel"
public let AVVideoExpectedSourceFrameRateKey = "ExpectedFrameRate"
public let AVVideoAverageNonDroppableFrameRateKey = "AverageNonDroppableFrameRate"
public let AVVideoAllowFrameReorderingKey = "AllowFrameReordering"
public let AVVideoH264EntropyModeKey = "H264EntropyMode"
public let AVVideoH264EntropyModeCAVLC = "CAVLC"
public let AVVideoH264EntropyModeCABAC = "CABAC"
public let AVVideoScalingModeKey = "AVVideoScalingModeKey"
public let AVVideoScalingModeFit = "AVVideoScalingModeFit"
public let AVVideoScalingModeResize = "AVVideoScalingModeResize"
public let AVVideoScalingModeResizeAspect = "AVVideoScalingModeResizeAspect"
public let AVVideoScalingModeResizeAspectFill = "AVVideoScalingModeResizeAspectFill"
/// The colour the encoded stream states (its VUI): a dictionary of all three of
/// `AVVideoColorPrimariesKey`, `AVVideoTransferFunctionKey` and `AVVideoYCbCrMatrixKey`. Written
/// by the H.264 encoder, which also converts RGB frames with the matrix; refused for other codecs.
public let AVVideoColorPropertiesKey = "AVVideoColorPropertiesKey"
public let AVVideoColorPrimariesKey = "ColorPrimaries"
public let AVVideoTransferFunctionKey = "TransferFunction"
public let AVVideoYCbCrMatrixKey = "YCbCrMatrix"
public let AVVideoColorPrimaries_ITU_R_709_2 = "ITU_R_709_2"
public let AVVideoColorPrimaries_EBU_3213 = "EBU_3213"
public let AVVideoColorPrimaries_SMPTE_C = "SMPTE_C"
public let AVVideoColorPrimaries_P3_D65 = "P3_D65"
public let AVVideoColorPrimaries_ITU_R_2020 = "ITU_R_2020"
public let AVVideoTransferFunction_ITU_R_709_2 = "ITU_R_709_2"
public let AVVideoTransferFunction_SMPTE_ST_2084_PQ = "SMPTE_ST_2084_PQ"
public let AVVideoTransferFunction_ITU_R_2100_HLG = "ITU_R_2100_HLG"
public let AVVideoTransferFunction_Linear = "Linear"
public let AVVideoYCbCrMatrix_ITU_R_709_2 = "ITU_R_709_2"
public let AVVideoYCbCrMatrix_ITU_R_601_4 = "ITU_R_601_4"
public let AVVideoYCbCrMatrix_ITU_R_2020 = "ITU_R_2020"
public let AVVideoPixelAspectRatioKey = "AVVideoPixelAspectRatioKey"
public let AVVideoCleanApertureKey = "AVVideoCleanApertureKey"
public let AVVideoProfileLevelH264BaselineAutoLevel = "H264_Baseline_AutoLevel"
public let AVVideoProfileLevelH264MainAutoLevel = "H264_Main_AutoLevel"
public let AVVideoProfileLevelH264HighAutoLevel = "H264_High_AutoLevel"
public let AVVideoProfileLevelH264Baseline30 = "H264_Baseline_3_0"
public let AVVideoProfileLevelH264Baseline31 = "H264_Baseline_3_1"
public let AVVideoProfileLevelH264Baseline41 = "H264_Baseline_4_1"
public let AVVideoProfileLevelH264Main30 = "H264_Main_3_0"
public let AVVideoProfileLevelH264Main31 = "H264_Main_3_1"
public let AVVideoProfileLevelH264Main32 = "H264_Main_3_2"
public let AVVideoProfileLevelH264Main41 = "H264_Main_4_1"
public let AVVideoProfileLevelH264High40 = "H264_High_4_0"
public let AVVideoProfileLevelH264High41 = "H264_High_4_1"
/// The H.264 codec name before `AVVideoCodecType` (deprecated by Apple, still common).
public let AVVideoCodecH264 = "avc1"

/// A video codec, as AVFoundation's.
public struct AVVideoCodecType: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public static let h264 = AVVideoCodecType("avc1")
    /// HEVC, written as `hvc1` (`encode.hevc`).
    public static let hevc = AVVideoCodecType("hvc1")
    /// VP9 (`kCMVideoCodecType_VP9`, `'vp09'`). Not Apple's: AVFoundation's writer encodes no VP9,
    /// and GraphKit's does; the value is Core Media's codec type for it.
    public static let vp9 = AVVideoCodecType("vp09")
    /// AV1 (`kCMVideoCodecType_AV1`, `'av01'`). Not Apple's: AVFoundation's writer encodes no AV1,
    /// and GraphKit's does; the value is Core Media's codec type for it.
    public static let av1 = AVVideoCodecType("av01")
    /// HEVC with an alpha channel; refused by the writer (its HEVC is Main, no alpha layer).
    public static let hevcWithAlpha = AVVideoCodecType("muxa")
    public static let jpeg = AVVideoCodecType("jpeg")
    public static let proRes422 = AVVideoCodecType("apcn")
    public static let proRes4444 = AVVideoCodecType("ap4h")
}

// MARK: Reading settings

/// What an input's settings dictionary asks for, or why it cannot be honoured.
enum WriterSettings {
    case encode(any OutputSettings)
    /// `outputSettings: nil`: samples are written as they are.
    case passthrough

    static let audioKeys: Set<String> = [AVFormatIDKey, AVSampleRateKey, AVNumberOfChannelsKey, AVChannelLayoutKey, AVEncoderBitRateKey,
                                         AVEncoderBitRatePerChannelKey, AVEncoderAudioQualityKey, AVEncoderBitRateStrategyKey,
                                         AVEncoderBitDepthHintKey]
    static let videoKeys: Set<String> = [AVVideoCodecKey, AVVideoWidthKey, AVVideoHeightKey, AVVideoCompressionPropertiesKey,
                                         AVVideoScalingModeKey, AVVideoColorPropertiesKey, AVVideoPixelAspectRatioKey, AVVideoCleanApertureKey]
    static let compressionKeys: Set<String> = [AVVideoAverageBitRateKey, AVVideoMaxKeyFrameIntervalKey, AVVideoMaxKeyFrameIntervalDurationKey,
                                               AVVideoProfileLevelKey, AVVideoExpectedSourceFrameRateKey, AVVideoAverageNonDroppableFrameRateKey,
                                               AVVideoAllowFrameReorderingKey, AVVideoH264EntropyModeKey]

    /// Reads `settings` for `mediaType`; throws a message naming the key at fault.
    static func read(_ settings: [String: Any]?, mediaType: AVMediaType) throws(SettingsError) -> WriterSettings {
        guard let settings else { return .passthrough }
        switch mediaType {
        case .audio: return .encode(try audio(settings))
        case .video: return .encode(try video(settings))
        default: throw SettingsError("GraphKit writes audio and video tracks only, not \(mediaType.rawValue)")
        }
    }

    /// The audio formats the writer encodes, by `AVFormatIDKey`.
    static let audioCodecs: [AudioFormatID: AudioCodec] = [
        kAudioFormatMPEG4AAC: .aac, kAudioFormatOpus: .opus, kAudioFormatFLAC: .flac, kAudioFormatAppleLossless: .alac,
    ]
    /// The video codecs the writer encodes, by `AVVideoCodecKey`.
    static let videoCodecs: [String: VideoCodec] = [
        AVVideoCodecType.h264.rawValue: .h264, AVVideoCodecType.hevc.rawValue: .hevc,
        AVVideoCodecType.vp9.rawValue: .vp9, AVVideoCodecType.av1.rawValue: .av1,
    ]

    static func audio(_ s: [String: Any]) throws(SettingsError) -> AudioSettings {
        for key in s.keys where !audioKeys.contains(key) {
            let hint = key.hasPrefix("AVLinearPCM") ? " (linear PCM keys are for PCM output, which GraphKit's writer does not make: it encodes AAC)" : ""
            throw SettingsError("the audio settings have \(key), which GraphKit does not take\(hint)")
        }
        guard let id = settingsInteger(s[AVFormatIDKey]).flatMap(AudioFormatID.init(exactly:)) else {
            throw SettingsError("the audio settings need AVFormatIDKey (kAudioFormatMPEG4AAC)")
        }
        guard let codec = audioCodecs[id] else {
            throw SettingsError("AVFormatIDKey is '\(id.fourCharacters)'; GraphKit's writer encodes AAC (kAudioFormatMPEG4AAC), "
                                + "Opus (kAudioFormatOpus), FLAC (kAudioFormatFLAC) and ALAC (kAudioFormatAppleLossless)")
        }
        guard let rate = settingsInteger(s[AVSampleRateKey]), rate > 0 else {
            throw SettingsError("the audio settings need AVSampleRateKey, a whole number of hertz (such as 48000)")
        }
        var channels = settingsInteger(s[AVNumberOfChannelsKey])
        if let layout = s[AVChannelLayoutKey] {
            guard let data = layout as? Data, let layout = AudioChannelLayout(bytes: data) else {
                throw SettingsError("AVChannelLayoutKey must be the bytes of an AudioChannelLayout (Data)")
            }
            let count = layout.channelCount
            if let c = channels, count != 0, c != count {
                throw SettingsError("AVChannelLayoutKey's layout has \(count) channels but AVNumberOfChannelsKey says \(c)")
            }
            if channels == nil, count > 0 { channels = count }
        }
        guard let channels, channels > 0 else { throw SettingsError("the audio settings need AVNumberOfChannelsKey") }
        var bitRate = settingsInteger(s[AVEncoderBitRateKey])
        if bitRate == nil, let perChannel = settingsInteger(s[AVEncoderBitRatePerChannelKey]) { bitRate = perChannel * channels }
        if s[AVEncoderBitRateKey] != nil && bitRate == nil { throw SettingsError("AVEncoderBitRateKey must be a whole number of bits per second") }
        var bitDepth: Int?
        if let hint = s[AVEncoderBitDepthHintKey], codec == .flac || codec == .alac {
            guard let bits = settingsInteger(hint), bits == 16 || bits == 24 else {
                throw SettingsError("AVEncoderBitDepthHintKey is \(hint); GraphKit's \(codec == .flac ? "FLAC" : "ALAC") encoder keeps 16 or 24 bits a sample")
            }
            bitDepth = bits
        }
        return AudioSettings(codec: codec, sampleRate: rate, channels: channels, bitRate: bitRate, bitDepth: bitDepth)
    }

    static func video(_ s: [String: Any]) throws(SettingsError) -> VideoSettings {
        for key in s.keys where !videoKeys.contains(key) {
            throw SettingsError("the video settings have \(key), which GraphKit does not take")
        }
        let codec: String? = switch s[AVVideoCodecKey] {
        case let c as AVVideoCodecType: c.rawValue
        case let c as String: c
        default: nil
        }
        guard let codec else { throw SettingsError("the video settings need AVVideoCodecKey (AVVideoCodecType.h264)") }
        guard let videoCodec = videoCodecs[codec] else {
            throw SettingsError("AVVideoCodecKey is \(codec); GraphKit's writer encodes H.264, HEVC, VP9 and AV1 (AVVideoCodecType.h264, .hevc, .vp9, .av1)")
        }
        guard let width = settingsInteger(s[AVVideoWidthKey]), width > 0 else { throw SettingsError("the video settings need AVVideoWidthKey, a positive whole number") }
        guard let height = settingsInteger(s[AVVideoHeightKey]), height > 0 else { throw SettingsError("the video settings need AVVideoHeightKey, a positive whole number") }
        var settings = VideoSettings(codec: videoCodec, width: width, height: height)
        if let c = s[AVVideoColorPropertiesKey] {
            guard videoCodec == .h264 else {
                throw SettingsError("AVVideoColorPropertiesKey is written by GraphKit's H.264 encoder only, not \(videoCodec.rawValue); leave it out or use AVVideoCodecType.h264")
            }
            settings.colorimetry = try colorimetry(c)
        }
        if let c = s[AVVideoCompressionPropertiesKey] {
            guard let props = c as? [String: Any] else { throw SettingsError("AVVideoCompressionPropertiesKey must be a dictionary") }
            for key in props.keys where !compressionKeys.contains(key) {
                throw SettingsError("the compression properties have \(key), which GraphKit does not take")
            }
            if let v = props[AVVideoAverageBitRateKey] {
                guard let rate = settingsInteger(v), rate > 0 else { throw SettingsError("AVVideoAverageBitRateKey must be a positive whole number of bits per second") }
                settings.averageBitRate = rate
            }
            if let v = props[AVVideoMaxKeyFrameIntervalKey] {
                guard let interval = settingsInteger(v), interval > 0 else { throw SettingsError("AVVideoMaxKeyFrameIntervalKey must be a positive whole number of frames") }
                settings.keyframeInterval = interval
            }
            if let v = props[AVVideoMaxKeyFrameIntervalDurationKey], settings.keyframeInterval == nil {
                // In frames, at the expected frame rate (30 when not given).
                guard let seconds = settingsNumber(v), seconds > 0 else { throw SettingsError("AVVideoMaxKeyFrameIntervalDurationKey must be a positive number of seconds") }
                let fps = settingsNumber(props[AVVideoExpectedSourceFrameRateKey]) ?? 30
                settings.keyframeInterval = max(1, Int((seconds * fps).rounded()))
            }
            if let v = props[AVVideoProfileLevelKey] {
                let profile = v as? String
                switch videoCodec {
                case .h264:
                    // "H264_<Profile>_<Level>": the profile is kept; x264 picks the level the
                    // stream needs, as VideoToolbox's AutoLevel does.
                    let name = profile.flatMap { $0.hasPrefix("H264_") ? $0.dropFirst(5).split(separator: "_").first : nil }
                    switch name {
                    case "Baseline", "ConstrainedBaseline": settings.h264Profile = .baseline
                    case "Main": settings.h264Profile = .main
                    case "High": settings.h264Profile = .high
                    default:
                        throw SettingsError("AVVideoProfileLevelKey \(profile.map { "\"\($0)\"" } ?? "of this type") is not an H.264 profile GraphKit encodes: use a Baseline, Main or High one (AVVideoProfileLevelH264MainAutoLevel…)")
                    }
                case .hevc:
                    // kVTProfileLevel_HEVC_Main_AutoLevel (8-bit) or Main10 (10-bit samples).
                    switch profile {
                    case "HEVC_Main_AutoLevel": settings.tenBit = false
                    case "HEVC_Main10_AutoLevel": settings.tenBit = true
                    default:
                        throw SettingsError("AVVideoProfileLevelKey for HEVC must be HEVC_Main_AutoLevel or HEVC_Main10_AutoLevel (kVTProfileLevel_HEVC_Main_AutoLevel, …Main10…): the writer encodes HEVC Main or Main 10")
                    }
                case .vp9, .av1:
                    throw SettingsError("AVVideoProfileLevelKey is for H.264 and HEVC; leave it out for \(videoCodec.rawValue)")
                }
            }
        }
        return settings
    }
}

extension WriterSettings {
    /// GStreamer's colorimetry numbers (range:matrix:transfer:primaries) for Apple's values.
    static let primaries = [AVVideoColorPrimaries_ITU_R_709_2: 1, AVVideoColorPrimaries_EBU_3213: 3, AVVideoColorPrimaries_SMPTE_C: 4,
                            AVVideoColorPrimaries_ITU_R_2020: 7, AVVideoColorPrimaries_P3_D65: 11]
    static let transfers = [AVVideoTransferFunction_Linear: 1, AVVideoTransferFunction_ITU_R_709_2: 5,
                            AVVideoTransferFunction_SMPTE_ST_2084_PQ: 14, AVVideoTransferFunction_ITU_R_2100_HLG: 15]
    static let matrices = [AVVideoYCbCrMatrix_ITU_R_709_2: 3, AVVideoYCbCrMatrix_ITU_R_601_4: 4, AVVideoYCbCrMatrix_ITU_R_2020: 6]

    /// `AVVideoColorPropertiesKey`'s dictionary as the encoder's colorimetry (video range, as
    /// Apple's encoders write 4:2:0); all three keys are needed, as AVFoundation requires.
    static func colorimetry(_ value: Any) throws(SettingsError) -> String {
        guard let props = value as? [String: Any] else { throw SettingsError("AVVideoColorPropertiesKey must be a dictionary") }
        for key in props.keys where ![AVVideoColorPrimariesKey, AVVideoTransferFunctionKey, AVVideoYCbCrMatrixKey].contains(key) {
            throw SettingsError("the colour properties have \(key), which GraphKit does not take")
        }
        func pick(_ key: String, _ table: [String: Int]) throws(SettingsError) -> Int {
            guard let name = props[key] as? String else {
                throw SettingsError("AVVideoColorPropertiesKey needs \(key), a string (all three of AVVideoColorPrimariesKey, AVVideoTransferFunctionKey, AVVideoYCbCrMatrixKey)")
            }
            guard let n = table[name] else {
                throw SettingsError("\(key) \"\(name)\" is not one GraphKit writes: use \(table.keys.sorted().joined(separator: ", "))")
            }
            return n
        }
        let p = try pick(AVVideoColorPrimariesKey, primaries), t = try pick(AVVideoTransferFunctionKey, transfers)
        let m = try pick(AVVideoYCbCrMatrixKey, matrices)
        // GStreamer's name where it has one, as its caps write it (a YUV input labelled the same
        // then matches the encoder's caps string for string).
        let numbers = "2:\(m):\(t):\(p)"
        return ["2:3:5:1": "bt709", "2:6:14:7": "bt2100-pq", "2:6:15:7": "bt2100-hlg"][numbers] ?? numbers
    }
}

struct SettingsError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
