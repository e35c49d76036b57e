import CKernels
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `effect.grayscale`: BT.601 luma, Y = 0.299 R + 0.587 G + 0.114 B rounded to nearest, written
/// to all three colour channels; alpha is kept.
///
/// Example:
/// ```json
/// "gray": { "type": "effect.grayscale" }
/// ```
public final class GrayscaleNode: ProcessingNode, Sendable {
    /// Each buffer is changed in place (or into a pooled frame) and passed on.
    public static let bufferFlow = BufferFlow.passThrough

    public static let descriptor = NodeDescriptor(
        type: "effect.grayscale",
        category: .effect,
        summary: "BT.601 grayscale of BGRA/RGBA video",
        inputs: [PortDescriptor("in", .rawVideo([.bgra, .rgba]), help: "BGRA or RGBA frames")],
        outputs: [PortDescriptor("out", .rawVideo([.bgra, .rgba]), carries: .input("in"), help: "gray frames, alpha kept")],
        takesHDR: false,  // BT.601 luma of SDR colours
        example: #"{ "type": "effect.grayscale" }"#
    )

    /// Where the colour bytes are (set when the format is known) and which kernel rows go to.
    private struct Setup {
        var offsets = (b: 0, g: 1, r: 2)
        var usesAVX2Kernel = true
    }
    private let setup = Guarded(Setup())

    /// Whether rows go to the AVX2 kernel first, where the CPU has it. It gives the same bytes;
    /// tests turn it off to check the Swift vector path on its own.
    var usesAVX2Kernel: Bool {
        get { setup.withLock { $0.usesAVX2Kernel } }
        set { setup.withLock { $0.usesAVX2Kernel = newValue } }
    }

    private let pool = FramePool()

    public init(context: NodeContext) throws(GraphError) {}

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        let offsets = try VideoPixels.packedOffsets(format, node: "effect.grayscale").offsets
        setup.withLock { $0.offsets = offsets }
    }

    /// Exact: (299 R + 587 G + 114 B + 500) / 1000, which is 0.299 R + 0.587 G + 0.114 B rounded
    /// to nearest.
    @inline(__always) static func luma(r: UInt32, g: UInt32, b: UInt32) -> UInt32 {
        divide1000(299 * r + 587 * g + 114 * b + 500)
    }

    /// ⌊s / 1000⌋ = ⌊⌊s / 8⌋ / 125⌋, and ⌊t / 125⌋ = (t × 33555) >> 22 exactly for t ≤ 31,937:
    /// multiplies and shifts only, so it vectorises (checked for every s up to 255,500 in a test).
    @inline(__always) static func divide1000(_ s: UInt32) -> UInt32 { ((s >> 3) &* 33555) >> 22 }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        let (offsets, avx2) = setup.withLock { ($0.offsets, $0.usesAVX2Kernel) }
        let bgra = offsets.b == 0
        let (ob, og, or) = (UInt32(offsets.b * 8), UInt32(offsets.g * 8), UInt32(offsets.r * 8))
        let scalar = { (p: UInt32) -> UInt32 in
            let y = Self.luma(r: p >> or & 0xFF, g: p >> og & 0xFF, b: p >> ob & 0xFF)
            return (p & 0xFF00_0000) | y | y << 8 | y << 16
        }
        let byteOf = [UInt8(offsets.r), UInt8(offsets.g), UInt8(offsets.b)]
        try VideoPixels.forEachRow(&buffer, pool: pool) { source, destination, _ in
            // AVX2 does whole groups of 8 pixels (none without AVX2); Swift does the rest.
            let done = avx2 ? gk_grayscale_avx2(source.baseAddress!, destination.baseAddress!, source.count, byteOf) : 0
            // Constant shifts in each branch: a shift by a variable compiles to one lane at a time.
            if bgra {
                VideoPixels.map(source, into: destination, from: done, vector: { Self.luma($0, red: 16, blue: 0) }, scalar: scalar)
            } else {
                VideoPixels.map(source, into: destination, from: done, vector: { Self.luma($0, red: 0, blue: 16) }, scalar: scalar)
            }
        }
        return true
    }

    /// 16 pixels at once: `luma(r:g:b:)` in each lane, written to the three colour bytes.
    @inline(__always) static func luma(_ p: SIMD16<UInt32>, red: UInt32, blue: UInt32) -> SIMD16<UInt32> {
        let r = (p &>> red) & 0xFF, g = (p &>> 8) & 0xFF, b = (p &>> blue) & 0xFF
        let s = 299 &* r &+ 587 &* g &+ 114 &* b &+ 500
        let y = ((s &>> 3) &* 33555) &>> 22
        return (p & 0xFF00_0000) | y | (y &<< 8) | (y &<< 16)
    }
}
