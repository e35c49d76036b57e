import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `effect.mirror`: flips frames left-to-right (`horizontal`, the front-camera mirror) or top to
/// bottom (`vertical`): in place when the frame is uniquely held, else into a pooled frame.
/// Packed (BGRA, RGBA) and planar (I420, NV12) frames alike, so that a decoded file can be
/// mirrored in the decoder's own format, with no conversion on either side (ffmpeg's `hflip`).
///
/// Example:
/// ```json
/// "selfie": { "type": "effect.mirror", "params": { "axis": "horizontal" } }
/// ```
public final class MirrorNode: ProcessingNode, Sendable {
    /// Each buffer is changed in place (or into a pooled frame) and passed on.
    public static let bufferFlow = BufferFlow.passThrough

    public static let descriptor = NodeDescriptor(
        type: "effect.mirror",
        category: .effect,
        summary: "Mirrors video horizontally or vertically (BGRA, RGBA, I420, NV12)",
        inputs: [PortDescriptor("in", .rawVideo(), help: "BGRA, RGBA, I420 or NV12 frames")],
        outputs: [PortDescriptor("out", .rawVideo(), carries: .input("in"), help: "mirrored frames, in the input's format")],
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
        guard case .rawVideo = format else {
            throw GraphError(.runFailed, "effect.mirror takes raw video, got \(format)")
        }
    }

    /// Bytes per element of each plane: what a horizontal flip keeps together (a BGRA pixel,
    /// an I420 sample, an NV12 chroma pair).
    static func elementSizes(_ format: PixelFormat) -> [Int] {
        (0..<format.planeCount).map { format.bytesPerPixel(plane: $0) }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        // The buffer says its own format: nothing to keep between calls.
        guard case .rawVideo(let v)? = buffer.format else {
            throw GraphError(.runFailed, "effect.mirror takes raw video, got \(buffer.format?.description ?? "no format")")
        }
        let sizes = Self.elementSizes(v.pixelFormat)
        let horizontal = horizontal
        try buffer.withPixelPlanes(writingInto: pool) { sources, destinations in
            for (i, (s, d)) in zip(sources, destinations).enumerated() {
                let size = sizes[min(i, sizes.count - 1)]
                if horizontal {
                    Self.mirrorRows(s, into: d, elementSize: size)
                } else {
                    Self.flipRows(s, into: d, byteCount: s.width * size)
                }
            }
        }
        return true
    }

    /// Each row of the plane reversed, element by element.
    static func mirrorRows(_ s: SampleBuffer.PixelPlane, into d: SampleBuffer.PixelPlane, elementSize: Int) {
        for y in 0..<s.height {
            let from = s.baseAddress + y * s.bytesPerRow, to = d.baseAddress + y * d.bytesPerRow
            switch elementSize {
            case 4: reverse(UnsafeBufferPointer(start: from.assumingMemoryBound(to: UInt32.self), count: s.width),
                            into: UnsafeMutableBufferPointer(start: to.assumingMemoryBound(to: UInt32.self), count: s.width))
            case 2: reverse(UnsafeBufferPointer(start: from.assumingMemoryBound(to: UInt16.self), count: s.width),
                            into: UnsafeMutableBufferPointer(start: to.assumingMemoryBound(to: UInt16.self), count: s.width))
            default: reverse(UnsafeBufferPointer(start: from.assumingMemoryBound(to: UInt8.self), count: s.width),
                             into: UnsafeMutableBufferPointer(start: to.assumingMemoryBound(to: UInt8.self), count: s.width))
            }
        }
    }

    /// The plane's rows in reverse order (`byteCount` visible bytes each; padding left alone).
    static func flipRows(_ s: SampleBuffer.PixelPlane, into d: SampleBuffer.PixelPlane, byteCount bytes: Int) {
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

    /// Writes the row's elements in reverse order to `destination`, 16 at a time. In place (the
    /// same row), a step takes 16 from each end, both read before either is written, then the
    /// middle (fewer than 32 elements) one pair at a time.
    @inline(__always)
    static func reverse<T: FixedWidthInteger & SIMDScalar>(_ source: UnsafeBufferPointer<T>, into destination: UnsafeMutableBufferPointer<T>) {
        typealias V = SIMD16<T>
        let n = source.count, size = MemoryLayout<T>.size
        let from = UnsafeRawPointer(source.baseAddress!), to = UnsafeMutableRawPointer(destination.baseAddress!)
        var i = 0
        if from != UnsafeRawPointer(to) {
            // Into another frame: one pass forward, each step written at its mirror place.
            while i + 16 <= n {
                to.storeBytes(of: reversed(from.loadUnaligned(fromByteOffset: i * size, as: V.self)), toByteOffset: (n - i - 16) * size, as: V.self)
                i += 16
            }
            while i < n {
                destination[n - 1 - i] = source[i]
                i += 1
            }
            return
        }
        while 2 * i + 32 <= n {
            let left = from.loadUnaligned(fromByteOffset: i * size, as: V.self)
            let right = from.loadUnaligned(fromByteOffset: (n - i - 16) * size, as: V.self)
            to.storeBytes(of: reversed(right), toByteOffset: i * size, as: V.self)
            to.storeBytes(of: reversed(left), toByteOffset: (n - i - 16) * size, as: V.self)
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
    @inline(__always) static func reversed<T: SIMDScalar>(_ v: SIMD16<T>) -> SIMD16<T> {
        @inline(__always) func r4(_ v: SIMD4<T>) -> SIMD4<T> { SIMD4(v[3], v[2], v[1], v[0]) }
        @inline(__always) func r8(_ v: SIMD8<T>) -> SIMD8<T> { SIMD8(lowHalf: r4(v.highHalf), highHalf: r4(v.lowHalf)) }
        return SIMD16(lowHalf: r8(v.highHalf), highHalf: r8(v.lowHalf))
    }
}
