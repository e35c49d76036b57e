import GraphKitCore
import Nodes

/// What a writer input's settings may be, read from the encoders' own parameter declarations
/// (`encode.h264`'s width, height, bitrate and keyframeInterval; `encode.aac`'s sampleRate,
/// channels and bitrate; the same of each other codec's node), and which codecs the writer's
/// file can hold, read from `sink.mp4`'s input declarations, so that ``AssetWriter/add(_:)``
/// refuses what the graph would, with the same ranges, and no range is written twice.
enum EncoderLimits {
    /// Why `settings` cannot be encoded into a file of `fileType`, or nil when they can.
    static func problem(with settings: any OutputSettings, fileType: FileType) -> String? {
        switch settings {
        case let video as VideoSettings:
            let limits = VideoLimits(video.codec)
            if let refusal = refusal(of: limits.format, named: limits.name, port: "video") { return refusal }
            guard limits.width.allows(video.width), limits.height.allows(video.height) else {
                return "VideoSettings \(video.width)x\(video.height) cannot be encoded: \(limits.name) here needs \(limits.width.phrase("width")) and \(limits.height.phrase("height"))"
            }
            if let rate = video.averageBitRate, !limits.bitrate.allows(rate) {
                return "averageBitRate \(rate) is out of range (\(limits.bitrate.span) bits per second)"
            }
            if let frames = video.keyframeInterval, !limits.keyframeInterval.allows(frames) {
                return "keyframeInterval \(frames) is out of range (\(limits.keyframeInterval.span) frames)"
            }
        case let audio as AudioSettings:
            let limits = AudioLimits(audio.codec)
            if let refusal = refusal(of: limits.format, named: limits.name, port: "audio") { return refusal }
            if audio.codec == .flac, let refusal = MP4SinkNode.refusal(ofFLACIn: fileType == .mov ? .mov : .mp4, fragmented: false) {
                return refusal
            }
            guard limits.sampleRate?.allows(audio.sampleRate) ?? (audio.sampleRate == OpusEncoderNode.sampleRate) else {
                return "AudioSettings sampleRate \(audio.sampleRate) cannot be encoded to \(limits.name): choose \(limits.sampleRate?.span ?? "\(OpusEncoderNode.sampleRate)") Hz"
            }
            guard limits.channels.allows(audio.channels) else {
                return "AudioSettings channels \(audio.channels) cannot be encoded to \(limits.name) here: choose \(limits.channels.span)"
            }
            if let bits = audio.bitRate {
                guard let bitrate = limits.bitrate else {
                    return "bitRate \(bits) is for lossy codecs; \(limits.name) is lossless: leave bitRate nil"
                }
                if !bitrate.allows(bits) { return "bitRate \(bits) is out of range (\(bitrate.span) bits per second)" }
            }
        default:
            break
        }
        return nil
    }

    /// Why the writer's file cannot hold `format`, from what `sink.mp4`'s `port` declares it
    /// takes; nil when it can.
    static func refusal(of format: FormatSet, named name: String, port: String) -> String? {
        guard let accepted = MP4SinkNode.descriptor.inputs.first(where: { $0.name == port })?.formats,
              !accepted.intersects(format) else { return nil }
        return "\(name) cannot be written to an MP4, MOV or M4A file here: its writer (sink.mp4) takes \(port) as \(accepted)"
    }

    /// A video codec's encoder's declared limits.
    struct VideoLimits {
        let name: String
        let format: FormatSet
        let width, height, bitrate, keyframeInterval: DeclaredRange

        init(_ codec: VideoCodec) {
            switch codec {
            case .h264: self.init("H.264", .h264, H264EncoderNode.self)
            case .hevc: self.init("HEVC", .video(.hevc), HEVCEncoderNode.self)
            case .vp9: self.init("VP9", .video(.vp9), VP9EncoderNode.self)
            case .av1: self.init("AV1", .video(.av1), AV1EncoderNode.self)
            }
        }

        init<N: VideoEncoderParameters>(_ name: String, _ format: FormatSet, _ node: N.Type) {
            (self.name, self.format) = (name, format)
            (width, height) = (DeclaredRange(N.width), DeclaredRange(N.height))
            (bitrate, keyframeInterval) = (DeclaredRange(N.bitrate), DeclaredRange(N.keyframeInterval))
        }
    }

    /// An audio codec's encoder's declared limits; no bit rate for a lossless codec, no rate
    /// range for Opus (it codes at 48 kHz, ``OpusEncoderNode/sampleRate``, only).
    struct AudioLimits {
        let name: String
        let format: FormatSet
        let sampleRate: DeclaredRange?
        let channels: DeclaredRange
        let bitrate: DeclaredRange?

        init(_ codec: AudioCodec) {
            switch codec {
            case .aac:
                (name, format) = ("AAC", .aac)
                (sampleRate, channels) = (DeclaredRange(AACEncoderNode.sampleRate), DeclaredRange(AACEncoderNode.channels))
                bitrate = DeclaredRange(AACEncoderNode.bitrate)
            case .opus:
                (name, format) = ("Opus", .audio(.opus))
                (sampleRate, channels) = (nil, DeclaredRange(OpusEncoderNode.channels))
                bitrate = DeclaredRange(OpusEncoderNode.bitrate)
            case .flac:
                (name, format) = ("FLAC", .audio(.flac))
                (sampleRate, channels) = (DeclaredRange(FLACEncoderNode.sampleRate), DeclaredRange(FLACEncoderNode.channels))
                bitrate = nil
            case .alac:
                (name, format) = ("ALAC", .audio(.alac))
                (sampleRate, channels) = (DeclaredRange(ALACEncoderNode.sampleRate), DeclaredRange(ALACEncoderNode.channels))
                bitrate = nil
            }
        }
    }
}
