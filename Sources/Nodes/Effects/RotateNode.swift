import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `effect.rotate`: rotates frames clockwise by 90, 180 or 270 degrees (orientation). 90 and 270
/// swap width and height. GStreamer's `videoflip` moves the pixels.
///
/// Example:
/// ```json
/// "upright": { "type": "effect.rotate", "params": { "degrees": 90 } }
/// ```
public final class RotateNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.rotate",
        category: .effect,
        summary: "Rotates video by 90, 180 or 270 degrees clockwise",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw frames")],
        outputs: [PortDescriptor("out", .rawVideo(), carries: .input("in"), help: "rotated frames")],
        parameters: [degrees],
        example: #"{ "type": "effect.rotate", "params": { "degrees": "90" } }"#
    )

    public enum Degrees: String, ParameterEnum {
        case clockwise90 = "90", half = "180", clockwise270 = "270"
        /// videoflip's name for the turn.
        var videoDirection: String {
            switch self {
            case .clockwise90: "90r"
            case .half: "180"
            case .clockwise270: "90l"
            }
        }
    }
    public static let degrees = Parameter<Degrees>("degrees", default: .clockwise90, help: "clockwise")

    let degrees: Degrees

    public init(context: NodeContext) throws(GraphError) {
        degrees = context.parameters[Self.degrees]
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let direction = degrees.videoDirection
        let flip = try bin.make("videoflip", name: "flip", ["video-direction": direction])
        try bin.expose(input: "in", flip)
        try bin.expose(output: "out", flip)
    }
}
