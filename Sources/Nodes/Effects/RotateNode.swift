import GraphKit

/// `effect.rotate`: rotates frames clockwise by 90, 180 or 270 degrees (orientation). 90 and 270
/// swap width and height. GStreamer's `videoflip` moves the pixels.
///
/// Example:
/// ```json
/// "upright": { "type": "effect.rotate", "params": { "degrees": 90 } }
/// ```
public final class RotateNode: ElementNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.rotate",
        category: .effect,
        summary: "Rotates video by 90, 180 or 270 degrees clockwise",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw frames")],
        outputs: [PortDescriptor("out", .rawVideo(), help: "rotated frames")],
        parameters: [ParameterDescriptor("degrees", .enumeration(["90", "180", "270"]), default: .string("90"), help: "clockwise")],
        example: #"{ "type": "effect.rotate", "params": { "degrees": "90" } }"#
    )

    let degrees: String

    public init(context: NodeContext) throws {
        degrees = context.parameters.string("degrees")!
    }

    public func build(in bin: BinBuilder) throws {
        let direction = ["90": "90r", "180": "180", "270": "90l"][degrees]!
        let flip = try bin.make("videoflip", name: "flip", ["video-direction": direction])
        try bin.expose(input: "in", flip)
        try bin.expose(output: "out", flip)
    }
}
