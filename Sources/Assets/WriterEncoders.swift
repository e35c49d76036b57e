import GraphKitCore
import Nodes

/// The encoder a writer input's settings choose, added to the writer's graph: one place that
/// maps `outputSettings` to a node, so a codec is added here and nowhere else in the writer.
enum WriterEncoders {
    /// The encoder's ports, to connect between the input's source and the muxer.
    struct Ports {
        var input: PortRef
        var output: PortRef
    }

    /// Adds the encoder `settings` ask for, as node `id`; nil for samples written as they are
    /// (``PassthroughSettings``). Settings of another type are refused at `location`.
    static func add(for settings: any OutputSettings, id: String, at location: String, to b: inout GraphBuilder) throws(GraphError) -> Ports? {
        switch settings {
        case let video as VideoSettings:
            if video.tenBit && video.codec != .hevc {
                throw GraphError(.usage, at: location, "10-bit video (tenBit) is encoded by the HEVC encoder only (Main 10), not \(video.codec.rawValue)")
            }
            if video.colorimetry != nil && video.codec != .h264 {
                throw GraphError(.usage, at: location, "a stated colour (colorimetry) is written by the H.264 encoder only, not \(video.codec.rawValue); leave it out or encode H.264")
            }
            return switch video.codec {
            case .h264: video.add(H264EncoderNode.self, id: id, to: &b) {
                    if let p = video.h264Profile { $0[H264EncoderNode.profile] = p }
                    if let c = video.colorimetry { $0[H264EncoderNode.colorimetry] = c }
                }
            case .hevc: video.add(HEVCEncoderNode.self, id: id, to: &b) {
                    if video.tenBit { $0[HEVCEncoderNode.profile] = .main10 }
                }
            case .vp9: video.add(VP9EncoderNode.self, id: id, to: &b)
            case .av1: video.add(AV1EncoderNode.self, id: id, to: &b)
            }
        case let audio as AudioSettings:
            return switch audio.codec {
            case .aac: ports(b.add(id, AACEncoderNode.self) {
                    $0[\.sampleRate] = audio.sampleRate
                    $0[\.channels] = audio.channels
                    if let rate = audio.bitRate { $0[\.bitrate] = rate }
                })
            case .opus: ports(b.add(id, OpusEncoderNode.self) {
                    // The rate is Opus's own (48 kHz): EncoderLimits refused any other.
                    $0[\.channels] = audio.channels
                    if let rate = audio.bitRate { $0[\.bitrate] = rate }
                })
            case .flac: ports(b.add(id, FLACEncoderNode.self) {
                    $0[\.sampleRate] = audio.sampleRate
                    $0[\.channels] = audio.channels
                    if let bits = audio.bitDepth { $0[\.bitDepth] = bits }
                })
            case .alac: ports(b.add(id, ALACEncoderNode.self) {
                    $0[\.sampleRate] = audio.sampleRate
                    $0[\.channels] = audio.channels
                    if let bits = audio.bitDepth { $0[\.bitDepth] = bits }
                })
            }
        case is PassthroughSettings:
            return nil
        default:
            throw GraphError(.usage, at: location, "\(type(of: settings)) are not settings GraphKit can encode with; use VideoSettings, AudioSettings or PassthroughSettings")
        }
    }

    static func ports<N>(_ node: BuiltNode<N>) -> Ports {
        Ports(input: node.input(), output: node.output())
    }
}

extension VideoSettings {
    /// Adds encoder `N` set from these settings (every video encoder declares the same four),
    /// and what only that encoder takes (`also`).
    fileprivate func add<N: VideoEncoderParameters>(_ type: N.Type, id: String, to b: inout GraphBuilder,
                                                    also: (inout NodeSettings<N>) -> Void = { _ in }) -> WriterEncoders.Ports {
        WriterEncoders.ports(b.add(id, N.self) {
            $0[N.width] = width
            $0[N.height] = height
            if let rate = averageBitRate { $0[N.bitrate] = .value(rate) }
            if let interval = keyframeInterval { $0[N.keyframeInterval] = interval }
            also(&$0)
        })
    }
}
