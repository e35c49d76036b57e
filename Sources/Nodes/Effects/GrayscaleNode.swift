import GraphKit

/// `effect.grayscale`: BT.601 luma, Y = 0.299 R + 0.587 G + 0.114 B rounded to nearest, written
/// to all three colour channels; alpha is kept.
///
/// Example:
/// ```json
/// "gray": { "type": "effect.grayscale" }
/// ```
public final class GrayscaleNode: ProcessingNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.grayscale",
        category: .effect,
        summary: "BT.601 grayscale of BGRA/RGBA video",
        inputs: [PortDescriptor("in", .rawVideo([.bgra, .rgba]), help: "BGRA or RGBA frames")],
        outputs: [PortDescriptor("out", .rawVideo([.bgra, .rgba]), help: "gray frames, alpha kept")],
        example: #"{ "type": "effect.grayscale" }"#
    )

    private var offsets = (b: 0, g: 1, r: 2)

    public init(context: NodeContext) throws {}

    public func formatDidChange(to format: MediaFormat) throws {
        offsets = VideoPixels.channelOffsets(try VideoPixels.requirePacked(format, node: "effect.grayscale").pixelFormat)!
    }

    /// Exact: (299 R + 587 G + 114 B + 500) / 1000, which is 0.299 R + 0.587 G + 0.114 B rounded
    /// to nearest.
    @inline(__always) static func luma(r: UInt32, g: UInt32, b: UInt32) -> UInt32 {
        divide1000(299 * r + 587 * g + 114 * b + 500)
    }

    /// ⌊s / 1000⌋ = ⌊⌊s / 8⌋ / 125⌋, and ⌊t / 125⌋ = (t × 33555) >> 22 exactly for t ≤ 31,937:
    /// multiplies and shifts only, so it vectorises (checked for every s up to 255,500 in a test).
    @inline(__always) static func divide1000(_ s: UInt32) -> UInt32 { ((s >> 3) &* 33555) >> 22 }

    public func process(_ buffer: inout SampleBuffer) throws -> Bool {
        let (ob, og, or) = (UInt32(offsets.b * 8), UInt32(offsets.g * 8), UInt32(offsets.r * 8))
        let ff = SIMD16<UInt32>(repeating: 0xFF), alpha = SIMD16<UInt32>(repeating: 0xFF00_0000)
        let (wr, wg, wb) = (SIMD16<UInt32>(repeating: 299), SIMD16<UInt32>(repeating: 587), SIMD16<UInt32>(repeating: 114))
        let half = SIMD16<UInt32>(repeating: 500), magic = SIMD16<UInt32>(repeating: 33555)
        try VideoPixels.forEachRow(&buffer) { row, _ in
            VideoPixels.map(row, vector: { p in
                let r = (p &>> or) & ff, g = (p &>> og) & ff, b = (p &>> ob) & ff
                let s = wr &* r &+ wg &* g &+ wb &* b &+ half
                let y = ((s &>> 3) &* magic) &>> 22
                return (p & alpha) | y | (y &<< 8) | (y &<< 16)
            }, scalar: { p in
                let y = Self.luma(r: p >> or & 0xFF, g: p >> og & 0xFF, b: p >> ob & 0xFF)
                return (p & 0xFF00_0000) | y | y << 8 | y << 16
            })
        }
        return true
    }
}
