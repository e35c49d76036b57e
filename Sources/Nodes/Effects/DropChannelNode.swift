import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `effect.dropChannel`: sets one colour channel to zero (dropping green "de-greens" a picture).
/// One AND per pixel, 16 pixels at a time: memory speed.
///
/// Example:
/// ```json
/// "tint": { "type": "effect.dropChannel", "params": { "channel": "green" } }
/// ```
public final class DropChannelNode: ProcessingNode, Sendable {
    /// Each buffer is changed in place (or into a pooled frame) and passed on.
    public static let bufferFlow = BufferFlow.passThrough

    public static let descriptor = NodeDescriptor(
        type: "effect.dropChannel",
        category: .effect,
        summary: "Zeroes one colour channel of BGRA/RGBA video",
        inputs: [PortDescriptor("in", .rawVideo([.bgra, .rgba]), help: "BGRA or RGBA frames")],
        outputs: [PortDescriptor("out", .rawVideo([.bgra, .rgba]), carries: .input("in"), help: "the same frames without that channel")],
        parameters: [channel],
        example: #"{ "type": "effect.dropChannel", "params": { "channel": "green" } }"#
    )

    public enum Channel: String, ParameterEnum { case red, green, blue }
    public static let channel = Parameter<Channel>("channel", default: .green, help: "the channel to drop")

    let channel: Channel
    /// The bits of a pixel kept (set when the format is known).
    private let mask = Guarded<UInt32>(.max)

    private let pool = FramePool()

    public init(context: NodeContext) throws(GraphError) {
        channel = context.parameters[Self.channel]
    }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        let o = try VideoPixels.packedOffsets(format, node: "effect.dropChannel").offsets
        let byte = switch channel {
        case .red: o.r
        case .green: o.g
        case .blue: o.b
        }
        mask.withLock { $0 = ~(UInt32(0xFF) << (8 * byte)) }  // pixels are little-endian words
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        let m = mask.withLock { $0 }, vm = SIMD16<UInt32>(repeating: m)
        try VideoPixels.forEachRow(&buffer, pool: pool) { row, out, _ in VideoPixels.map(row, into: out, vector: { $0 & vm }, scalar: { $0 & m }) }
        return true
    }
}
