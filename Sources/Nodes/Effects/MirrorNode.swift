import GraphKit

/// `effect.mirror`: flips frames left-to-right (`horizontal`, the front-camera mirror) or top to
/// bottom (`vertical`): in place when the frame is uniquely held, else into a pooled frame.
///
/// Example:
/// ```json
/// "selfie": { "type": "effect.mirror", "params": { "axis": "horizontal" } }
/// ```
public final class MirrorNode: ProcessingNode, @unchecked Sendable {
    /// Each buffer is changed in place (or into a pooled frame) and passed on.
    public static let bufferFlow = BufferFlow.passThrough

    public static let descriptor = NodeDescriptor(
        type: "effect.mirror",
        category: .effect,
        summary: "Mirrors BGRA/RGBA video horizontally or vertically",
        inputs: [PortDescriptor("in", .rawVideo([.bgra, .rgba]), help: "BGRA or RGBA frames")],
        outputs: [PortDescriptor("out", .rawVideo([.bgra, .rgba]), help: "mirrored frames")],
        parameters: [axis],
        example: #"{ "type": "effect.mirror", "params": { "axis": "horizontal" } }"#
    )

    public enum Axis: String, ParameterEnum { case horizontal, vertical }
    public static let axis = Parameter<Axis>("axis", default: .horizontal,
                                      help: "horizontal swaps left and right; vertical swaps top and bottom")

    let horizontal: Bool
    private let pool = FramePool()

    public init(context: NodeContext) throws(GraphError) {
        horizontal = context.parameters[Self.axis] == .horizontal
    }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        _ = try VideoPixels.requirePacked(format, node: "effect.mirror")
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        if horizontal {
            try VideoPixels.forEachRow(&buffer, pool: pool) { row, out, _ in Self.reverse(row, into: out) }
        } else {
            try buffer.withPixelPlanes(writingInto: pool) { source, destination in
                let s = source[0], d = destination[0]
                let bytes = s.width * 4
                if s.baseAddress != d.baseAddress {
                    for y in 0..<s.height {
                        d.baseAddress.advanced(by: y * d.bytesPerRow).copyMemory(from: s.baseAddress + (s.height - 1 - y) * s.bytesPerRow, byteCount: bytes)
                    }
                    return
                }
                let scratch = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
                defer { scratch.deallocate() }
                for y in 0..<(s.height / 2) {
                    let top = s.baseAddress + y * s.bytesPerRow, bottom = s.baseAddress + (s.height - 1 - y) * s.bytesPerRow
                    scratch.copyMemory(from: top, byteCount: bytes)
                    top.copyMemory(from: bottom, byteCount: bytes)
                    bottom.copyMemory(from: scratch, byteCount: bytes)
                }
            }
        }
        return true
    }

    /// Writes the row's pixels in reverse order to `destination`, 16 at a time. In place (the
    /// same row), a step takes 16 from each end, both read before either is written, then the
    /// middle (fewer than 32 pixels) one pair at a time.
    static func reverse(_ source: UnsafeBufferPointer<UInt32>, into destination: UnsafeMutableBufferPointer<UInt32>) {
        typealias V = SIMD16<UInt32>
        let n = source.count
        let from = UnsafeRawPointer(source.baseAddress!), to = UnsafeMutableRawPointer(destination.baseAddress!)
        var i = 0
        if from != UnsafeRawPointer(to) {
            // Into another frame: one pass forward, each step written at its mirror place.
            while i + 16 <= n {
                to.storeBytes(of: reversed(from.loadUnaligned(fromByteOffset: i * 4, as: V.self)), toByteOffset: (n - i - 16) * 4, as: V.self)
                i += 16
            }
            while i < n {
                destination[n - 1 - i] = source[i]
                i += 1
            }
            return
        }
        while 2 * i + 32 <= n {
            let left = from.loadUnaligned(fromByteOffset: i * 4, as: V.self)
            let right = from.loadUnaligned(fromByteOffset: (n - i - 16) * 4, as: V.self)
            to.storeBytes(of: reversed(right), toByteOffset: i * 4, as: V.self)
            to.storeBytes(of: reversed(left), toByteOffset: (n - i - 16) * 4, as: V.self)
            i += 16
        }
        var (l, r) = (i, n - 1 - i)
        while l < r {
            (destination[l], destination[r]) = (source[r], source[l])
            l += 1
            r -= 1
        }
        if l == r { destination[l] = source[l] }
    }

    /// The 16 lanes in reverse order, built from halves so it compiles to lane shuffles.
    @inline(__always) static func reversed(_ v: SIMD16<UInt32>) -> SIMD16<UInt32> {
        @inline(__always) func r4(_ v: SIMD4<UInt32>) -> SIMD4<UInt32> { SIMD4(v[3], v[2], v[1], v[0]) }
        @inline(__always) func r8(_ v: SIMD8<UInt32>) -> SIMD8<UInt32> { SIMD8(lowHalf: r4(v.highHalf), highHalf: r4(v.lowHalf)) }
        return SIMD16(lowHalf: r8(v.highHalf), highHalf: r8(v.lowHalf))
    }
}
