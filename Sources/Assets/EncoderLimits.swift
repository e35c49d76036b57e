import GraphKitCore
import Nodes

/// What a writer input's settings may be, read from the encoders' own parameter declarations
/// (`encode.h264`'s width, height, bitrate and keyframeInterval; `encode.aac`'s sampleRate,
/// channels and bitrate), so that ``AssetWriter/add(_:)`` refuses what the graph would, with the
/// same ranges, and no range is written twice.
enum EncoderLimits {
    /// Why `settings` cannot be encoded, or nil when they can.
    static func problem(with settings: any OutputSettings) -> String? {
        switch settings {
        case let video as VideoSettings:
            let width = DeclaredRange(H264EncoderNode.width), height = DeclaredRange(H264EncoderNode.height)
            guard width.allows(video.width), height.allows(video.height) else {
                return "VideoSettings \(video.width)x\(video.height) cannot be encoded: H.264 here needs \(width.phrase("width")) and \(height.phrase("height"))"
            }
            let bitrate = DeclaredRange(H264EncoderNode.bitrate), interval = DeclaredRange(H264EncoderNode.keyframeInterval)
            if let rate = video.averageBitRate, !bitrate.allows(rate) {
                return "averageBitRate \(rate) is out of range (\(bitrate.span) bits per second)"
            }
            if let frames = video.keyframeInterval, !interval.allows(frames) {
                return "keyframeInterval \(frames) is out of range (\(interval.span) frames)"
            }
        case let audio as AudioSettings:
            let rate = DeclaredRange(AACEncoderNode.sampleRate), channels = DeclaredRange(AACEncoderNode.channels), bitrate = DeclaredRange(AACEncoderNode.bitrate)
            guard rate.allows(audio.sampleRate) else {
                return "AudioSettings sampleRate \(audio.sampleRate) cannot be encoded to AAC: choose \(rate.span) Hz"
            }
            guard channels.allows(audio.channels) else {
                return "AudioSettings channels \(audio.channels) cannot be encoded to AAC here: choose \(channels.span)"
            }
            if let bits = audio.bitRate, !bitrate.allows(bits) {
                return "bitRate \(bits) is out of range (\(bitrate.span) bits per second)"
            }
        default:
            break
        }
        return nil
    }
}
