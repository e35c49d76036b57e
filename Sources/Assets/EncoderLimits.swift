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
            let width = Limit(H264EncoderNode.width), height = Limit(H264EncoderNode.height)
            guard width.allows(video.width), height.allows(video.height) else {
                return "VideoSettings \(video.width)x\(video.height) cannot be encoded: H.264 here needs \(width.phrase("width")) and \(height.phrase("height"))"
            }
            let bitrate = Limit(H264EncoderNode.bitrate), interval = Limit(H264EncoderNode.keyframeInterval)
            if let rate = video.averageBitRate, !bitrate.allows(rate) {
                return "averageBitRate \(rate) is out of range (\(bitrate.span) bits per second)"
            }
            if let frames = video.keyframeInterval, !interval.allows(frames) {
                return "keyframeInterval \(frames) is out of range (\(interval.span) frames)"
            }
        case let audio as AudioSettings:
            let rate = Limit(AACEncoderNode.sampleRate), channels = Limit(AACEncoderNode.channels), bitrate = Limit(AACEncoderNode.bitrate)
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

    /// An integer parameter's range and step, as its node declares them.
    struct Limit {
        let range: ClosedRange<Int>
        let multipleOf: Int

        init(_ parameter: some ParameterDeclaration) {
            guard case .integer(let range) = parameter.descriptor.kind else {
                preconditionFailure("\(parameter.name) is declared \(parameter.descriptor.kind.typeName), not an integer range")
            }
            self.range = range
            multipleOf = parameter.descriptor.multipleOf
        }

        func allows(_ value: Int) -> Bool { range.contains(value) && value % multipleOf == 0 }

        var span: String { "\(range.lowerBound) to \(range.upperBound)" }

        /// "an even width from 2 to 7680".
        func phrase(_ noun: String) -> String {
            switch multipleOf {
            case 1: "a \(noun) from \(span)"
            case 2: "an even \(noun) from \(span)"
            default: "a \(noun) from \(span) that is a multiple of \(multipleOf)"
            }
        }
    }
}
