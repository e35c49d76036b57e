import GraphKit

/// `effect.colorMatrix`: like `CIColorMatrix`, on the stored 8-bit values scaled to 0…1: each
/// output channel = clamp(round(255 × (v · (R, G, B, A) + bias))), with `r`, `g`, `b`, `a` the
/// rows of the matrix and `bias` one value per channel.
///
/// Example:
/// ```json
/// "sepia": { "type": "effect.colorMatrix", "params": { "r": [0.393, 0.769, 0.189, 0], "g": [0.349, 0.686, 0.168, 0], "b": [0.272, 0.534, 0.131, 0] } }
/// ```
public final class ColorMatrixNode: ProcessingNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.colorMatrix",
        category: .effect,
        summary: "A 4×4 colour matrix and bias on BGRA/RGBA video (CIColorMatrix)",
        inputs: [PortDescriptor("in", .rawVideo([.bgra, .rgba]), help: "BGRA or RGBA frames")],
        outputs: [PortDescriptor("out", .rawVideo([.bgra, .rgba]), help: "the transformed frames")],
        parameters: [
            ParameterDescriptor("r", .numbers(count: 4), default: .numbers([1, 0, 0, 0]), help: "the red output's weights of R, G, B, A"),
            ParameterDescriptor("g", .numbers(count: 4), default: .numbers([0, 1, 0, 0]), help: "the green output's weights of R, G, B, A"),
            ParameterDescriptor("b", .numbers(count: 4), default: .numbers([0, 0, 1, 0]), help: "the blue output's weights of R, G, B, A"),
            ParameterDescriptor("a", .numbers(count: 4), default: .numbers([0, 0, 0, 1]), help: "the alpha output's weights of R, G, B, A"),
            ParameterDescriptor("bias", .numbers(count: 4), default: .numbers([0, 0, 0, 0]), help: "added to R, G, B, A (in 0…1 units)"),
        ],
        example: #"{ "type": "effect.colorMatrix", "params": { "r": [0.393, 0.769, 0.189, 0], "g": [0.349, 0.686, 0.168, 0], "b": [0.272, 0.534, 0.131, 0] } }"#
    )

    /// rows[out][in], in stored-value units (the 1/255 and 255 cancel); bias × 255.
    let rows: [[Float]]
    let bias: [Float]
    private var offsets = (b: 0, g: 1, r: 2)

    public init(context: NodeContext) throws {
        let p = context.parameters
        rows = ["r", "g", "b", "a"].map { p.numbers($0)!.map(Float.init) }
        bias = p.numbers("bias")!.map { Float($0 * 255) }
    }

    public func formatDidChange(to format: MediaFormat) throws {
        offsets = VideoPixels.channelOffsets(try VideoPixels.requirePacked(format, node: "effect.colorMatrix").pixelFormat)!
    }

    public func process(_ buffer: inout SampleBuffer) throws -> Bool {
        let shifts = [offsets.r, offsets.g, offsets.b, 3].map { UInt32($0 * 8) }  // R, G, B, A
        let m = rows, k = bias
        let ff = SIMD16<UInt32>(repeating: 0xFF)
        let zero = SIMD16<Float>(repeating: 0), top = SIMD16<Float>(repeating: 255)
        try VideoPixels.forEachRow(&buffer) { row, _ in
            VideoPixels.map(row, vector: { p in
                var inputs: [SIMD16<Float>] = []
                inputs.reserveCapacity(4)
                for s in shifts { inputs.append(SIMD16<Float>((p &>> SIMD16(repeating: s)) & ff)) }
                var out = SIMD16<UInt32>(repeating: 0)
                for c in 0..<4 {
                    var v = SIMD16<Float>(repeating: k[c])
                    for i in 0..<4 where m[c][i] != 0 { v += inputs[i] * m[c][i] }
                    let q = SIMD16<UInt32>(v.rounded(.toNearestOrAwayFromZero).clamped(lowerBound: zero, upperBound: top))
                    out |= q &<< SIMD16(repeating: shifts[c])
                }
                return out
            }, scalar: { p in
                let inputs = shifts.map { Float(p >> $0 & 0xFF) }
                var out: UInt32 = 0
                for c in 0..<4 {
                    var v = k[c]
                    for i in 0..<4 { v += inputs[i] * m[c][i] }
                    out |= UInt32(min(255, max(0, v.rounded(.toNearestOrAwayFromZero)))) << shifts[c]
                }
                return out
            })
        }
        return true
    }
}
