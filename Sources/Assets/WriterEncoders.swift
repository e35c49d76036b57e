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
            let encoder = b.add(id, H264EncoderNode.self) {
                $0[\.width] = video.width
                $0[\.height] = video.height
                if let rate = video.averageBitRate { $0[\.bitrate] = .value(rate) }
                if let interval = video.keyframeInterval { $0[\.keyframeInterval] = interval }
            }
            return Ports(input: encoder.input(), output: encoder.output())
        case let audio as AudioSettings:
            let encoder = b.add(id, AACEncoderNode.self) {
                $0[\.sampleRate] = audio.sampleRate
                $0[\.channels] = audio.channels
                if let rate = audio.bitRate { $0[\.bitrate] = rate }
            }
            return Ports(input: encoder.input(), output: encoder.output())
        case is PassthroughSettings:
            return nil
        default:
            throw GraphError(.usage, at: location, "\(type(of: settings)) are not settings GraphKit can encode with; use VideoSettings, AudioSettings or PassthroughSettings")
        }
    }
}
