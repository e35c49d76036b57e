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
        // Byte offsets of R, G, B, A in a pixel, and the matrix as 20 plain floats: a tight loop
        // over bytes that the optimiser keeps in registers.
        let o = (offsets.r, offsets.g, offsets.b, 3)
        let m = rows, k = bias
        let (m00, m01, m02, m03) = (m[0][0], m[0][1], m[0][2], m[0][3])
        let (m10, m11, m12, m13) = (m[1][0], m[1][1], m[1][2], m[1][3])
        let (m20, m21, m22, m23) = (m[2][0], m[2][1], m[2][2], m[2][3])
        let (m30, m31, m32, m33) = (m[3][0], m[3][1], m[3][2], m[3][3])
        let (k0, k1, k2, k3) = (k[0], k[1], k[2], k[3])
        // Clamped to 0…255, v + 0.5 is exact (0.5 is a multiple of the float spacing there), so
        // truncating it is rounding half away from zero, without a call to roundf.
        @inline(__always) func q(_ v: Float) -> UInt8 { UInt8(truncatingIfNeeded: Int32(min(255, max(0, v)) + 0.5)) }
        try buffer.withMutablePixelPlanes { planes in
            let p = planes[0]
            for y in 0..<p.height {
                let row = (p.baseAddress + y * p.bytesPerRow).assumingMemoryBound(to: UInt8.self)
                for x in 0..<p.width {
                    let px = row + x * 4
                    let r = Float(px[o.0]), g = Float(px[o.1]), b = Float(px[o.2]), a = Float(px[o.3])
                    let nr = k0 + r * m00 + g * m01 + b * m02 + a * m03
                    let ng = k1 + r * m10 + g * m11 + b * m12 + a * m13
                    let nb = k2 + r * m20 + g * m21 + b * m22 + a * m23
                    let na = k3 + r * m30 + g * m31 + b * m32 + a * m33
                    px[o.0] = q(nr)
                    px[o.1] = q(ng)
                    px[o.2] = q(nb)
                    px[o.3] = q(na)
                }
            }
        }
        return true
    }
}
