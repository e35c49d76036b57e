import GraphKit

/// `effect.mirror`: flips frames left-to-right (`horizontal`, the front-camera mirror) or top to
/// bottom (`vertical`): in place when the frame is uniquely held, else into a pooled frame.
///
/// Example:
/// ```json
/// "selfie": { "type": "effect.mirror", "params": { "axis": "horizontal" } }
/// ```
public final class MirrorNode: ProcessingNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.mirror",
        category: .effect,
        summary: "Mirrors BGRA/RGBA video horizontally or vertically",
        inputs: [PortDescriptor("in", .rawVideo([.bgra, .rgba]), help: "BGRA or RGBA frames")],
        outputs: [PortDescriptor("out", .rawVideo([.bgra, .rgba]), help: "mirrored frames")],
        parameters: [ParameterDescriptor("axis", .enumeration(["horizontal", "vertical"]), default: .string("horizontal"),
                                         help: "horizontal swaps left and right; vertical swaps top and bottom")],
        example: #"{ "type": "effect.mirror", "params": { "axis": "horizontal" } }"#
    )

    let horizontal: Bool
    private let pool = FramePool()

    public init(context: NodeContext) throws {
        horizontal = context.parameters.string("axis") == "horizontal"
    }

    public func formatDidChange(to format: MediaFormat) throws {
        _ = try VideoPixels.requirePacked(format, node: "effect.mirror")
    }

    public func process(_ buffer: inout SampleBuffer) throws -> Bool {
        if horizontal {
            try VideoPixels.forEachRow(&buffer, pool: pool) { row, out, _ in
                if UnsafeRawPointer(row.baseAddress!) == UnsafeRawPointer(out.baseAddress!) {
                    var r = out
                    r.reverse()
                } else {
                    for x in 0..<row.count { out[row.count - 1 - x] = row[x] }
                }
            }
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
}
