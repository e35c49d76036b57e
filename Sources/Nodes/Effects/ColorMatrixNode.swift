import CKernels
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `effect.colorMatrix`: like `CIColorMatrix`, on the stored 8-bit values scaled to 0…1: each
/// output channel = clamp(round(255 × (v · (R, G, B, A) + bias))), with `r`, `g`, `b`, `a` the
/// rows of the matrix and `bias` one value per channel.
///
/// Example:
/// ```json
/// "sepia": { "type": "effect.colorMatrix", "params": { "r": [0.393, 0.769, 0.189, 0], "g": [0.349, 0.686, 0.168, 0], "b": [0.272, 0.534, 0.131, 0] } }
/// ```
public final class ColorMatrixNode: ProcessingNode, Sendable {
    /// Each buffer is changed in place (or into a pooled frame) and passed on.
    public static let bufferFlow = BufferFlow.passThrough

    public static let descriptor = NodeDescriptor(
        type: "effect.colorMatrix",
        category: .effect,
        summary: "A 4×4 colour matrix and bias on BGRA/RGBA video (CIColorMatrix)",
        inputs: [PortDescriptor("in", .rawVideo([.bgra, .rgba]), help: "BGRA or RGBA frames")],
        outputs: [PortDescriptor("out", .rawVideo([.bgra, .rgba]), carries: .input("in"), help: "the transformed frames")],
        parameters: rows + [bias],
        takesHDR: false,  // a matrix written for SDR colours, as CIColorMatrix's
        example: #"{ "type": "effect.colorMatrix", "params": { "r": [0.393, 0.769, 0.189, 0], "g": [0.349, 0.686, 0.168, 0], "b": [0.272, 0.534, 0.131, 0] } }"#
    )

    public static let rows = [
        Parameter<[Double]>("r", count: 4, default: [1, 0, 0, 0], help: "the red output's weights of R, G, B, A"),
        Parameter<[Double]>("g", count: 4, default: [0, 1, 0, 0], help: "the green output's weights of R, G, B, A"),
        Parameter<[Double]>("b", count: 4, default: [0, 0, 1, 0], help: "the blue output's weights of R, G, B, A"),
        Parameter<[Double]>("a", count: 4, default: [0, 0, 0, 1], help: "the alpha output's weights of R, G, B, A"),
    ]
    public static let bias = Parameter<[Double]>("bias", count: 4, default: [0, 0, 0, 0], help: "added to R, G, B, A (in 0…1 units)")

    /// The matrix in stored-value units (the 1/255 and 255 cancel): `m[out][in]` with outputs and
    /// inputs in R, G, B, A order; `k` is the bias × 255.
    struct Matrix {
        var m: [[Float]]
        var k: [Float]

        /// The alpha row is (0, 0, 0, 1) with no bias: alpha passes through unchanged.
        var keepsAlpha: Bool { m[3] == [0, 0, 0, 1] && k[3] == 0 }

        /// One pixel, in the order of operations the vector path repeats lane by lane, so both
        /// give the same bytes: k + R·m0 + G·m1 + B·m2 + A·m3, clamped, rounded half up.
        @inline(__always) func apply(r: Float, g: Float, b: Float, a: Float) -> (UInt8, UInt8, UInt8, UInt8) {
            @inline(__always) func q(_ v: Float) -> UInt8 { UInt8(truncatingIfNeeded: Int32(min(255, max(0, v)) + 0.5)) }
            return (q(k[0] + r * m[0][0] + g * m[0][1] + b * m[0][2] + a * m[0][3]),
                    q(k[1] + r * m[1][0] + g * m[1][1] + b * m[1][2] + a * m[1][3]),
                    q(k[2] + r * m[2][0] + g * m[2][1] + b * m[2][2] + a * m[2][3]),
                    q(k[3] + r * m[3][0] + g * m[3][1] + b * m[3][2] + a * m[3][3]))
        }
    }

    let matrix: Matrix
    /// The 20 coefficients as vectors of 16 equal lanes, for the Swift vector path.
    let vectors: Vectors
    /// What the format decides (set when it is known), and which kernel rows go to.
    private struct Setup {
        var offsets = (b: 0, g: 1, r: 2)
        var usesAVX2Kernel = true
        /// The C kernel's shuffles and loop for this matrix and byte order (no AVX2 until made).
        var plan = gk_color_matrix_plan()
    }
    private let setup = Guarded(Setup())

    /// Whether rows go to the AVX2 kernel first, where the CPU has it. It gives the same bytes;
    /// tests turn it off to check the Swift vector path on its own.
    var usesAVX2Kernel: Bool {
        get { setup.withLock { $0.usesAVX2Kernel } }
        set { setup.withLock { $0.usesAVX2Kernel = newValue } }
    }

    private let pool = FramePool()

    public init(context: NodeContext) throws(GraphError) {
        let p = context.parameters
        matrix = Matrix(m: Self.rows.map { p[$0].map(Float.init) }, k: p[Self.bias].map { Float($0 * 255) })
        vectors = Vectors(matrix)
    }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        let offsets = try VideoPixels.packedOffsets(format, node: "effect.colorMatrix").offsets
        var plan = gk_color_matrix_plan()
        gk_color_matrix_plan_make(&plan, matrix.m.flatMap { $0 }, matrix.k,
                                  [UInt8(offsets.r), UInt8(offsets.g), UInt8(offsets.b), 3], matrix.keepsAlpha ? 1 : 0)
        setup.withLock {
            $0.offsets = offsets
            $0.plan = plan
        }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        let (offsets, avx2, plan) = setup.withLock { ($0.offsets, $0.usesAVX2Kernel, $0.plan) }
        let mx = matrix, v = vectors, keepAlpha = mx.keepsAlpha, bgra = offsets.b == 0
        let (sr, sg, sb) = (UInt32(offsets.r * 8), UInt32(offsets.g * 8), UInt32(offsets.b * 8))
        let scalar = { (p: UInt32) -> UInt32 in
            let (r, g, b, a) = mx.apply(r: Float(p >> sr & 0xFF), g: Float(p >> sg & 0xFF), b: Float(p >> sb & 0xFF), a: Float(p >> 24))
            return UInt32(r) << sr | UInt32(g) << sg | UInt32(b) << sb | UInt32(a) << 24
        }
        try withUnsafePointer(to: plan) { (plan) throws(GraphError) in
            try VideoPixels.forEachRow(&buffer, pool: pool) { source, destination, _ in
                // AVX2 does whole groups of 8 pixels (none without AVX2); Swift does the rest.
                let done = avx2 ? gk_color_matrix_avx2(plan, source.baseAddress!, destination.baseAddress!, source.count) : 0
                // Constant shifts in each branch: a shift by a variable compiles to one lane at a time.
                if bgra {
                    VideoPixels.map(source, into: destination, from: done, vector: { v.apply($0, red: 16, blue: 0, keepAlpha: keepAlpha) }, scalar: scalar)
                } else {
                    VideoPixels.map(source, into: destination, from: done, vector: { v.apply($0, red: 0, blue: 16, keepAlpha: keepAlpha) }, scalar: scalar)
                }
            }
        }
        return true
    }

    /// The matrix as vectors of 16 equal lanes, for 16 pixels at a time.
    struct Vectors {
        let r0, r1, r2, r3, rk, g0, g1, g2, g3, gk, b0, b1, b2, b3, bk, a0, a1, a2, a3, ak: F16

        init(_ mx: Matrix) {
            func v(_ o: Int, _ i: Int) -> F16 { F16(repeating: mx.m[o][i]) }
            (r0, r1, r2, r3, rk) = (v(0, 0), v(0, 1), v(0, 2), v(0, 3), F16(repeating: mx.k[0]))
            (g0, g1, g2, g3, gk) = (v(1, 0), v(1, 1), v(1, 2), v(1, 3), F16(repeating: mx.k[1]))
            (b0, b1, b2, b3, bk) = (v(2, 0), v(2, 1), v(2, 2), v(2, 3), F16(repeating: mx.k[2]))
            (a0, a1, a2, a3, ak) = (v(3, 0), v(3, 1), v(3, 2), v(3, 3), F16(repeating: mx.k[3]))
        }

        /// 16 pixels as four planes of floats, through the same operations as `Matrix.apply` in
        /// the same order, so every lane gives the scalar path's byte.
        @inline(__always) func apply(_ p: U16, red: UInt32, blue: UInt32, keepAlpha: Bool) -> U16 {
            let r = channel(p, red), g = channel(p, 8), b = channel(p, blue), a = channel(p, 24)
            var out = byte(rk + r * r0 + g * r1 + b * r2 + a * r3, red)
                | byte(gk + r * g0 + g * g1 + b * g2 + a * g3, 8)
                | byte(bk + r * b0 + g * b1 + b * b2 + a * b3, blue)
            if keepAlpha {
                out |= p & 0xFF00_0000
            } else {
                out |= byte(ak + r * a0 + g * a1 + b * a2 + a * a3, 24)
            }
            return out
        }

        /// One channel of 16 pixels as floats, without a conversion instruction (Swift's vector
        /// int-to-float conversion goes element by element): 2²³ + v has v in its low mantissa bits.
        @inline(__always) func channel(_ p: U16, _ shift: UInt32) -> F16 {
            unsafeBitCast(((p &>> shift) & 0xFF) | 0x4B00_0000, to: F16.self) - 8_388_608
        }

        /// ⌊clamp(x, 0, 255) + 0.5⌋ in the low byte, moved to `shift`. y + 2²³ rounds y to the
        /// nearest integer (ties to even) into the low mantissa bits; one less where that rounded
        /// up gives the floor, which for y ≥ 0 is the scalar path's truncation.
        @inline(__always) func byte(_ x: F16, _ shift: UInt32) -> U16 {
            var y = x.replacing(with: 0, where: x .< 0)
            y = y.replacing(with: 255, where: y .> 255) + 0.5
            let t = y + 8_388_608
            let up = unsafeBitCast(t - 8_388_608 .> y, to: SIMD16<Int32>.self)  // −1 where rounded up
            let bits = unsafeBitCast(t, to: U16.self) &+ U16(truncatingIfNeeded: up)
            return (bits & 0xFF) &<< shift
        }
    }

    typealias F16 = SIMD16<Float>
    typealias U16 = SIMD16<UInt32>
}
