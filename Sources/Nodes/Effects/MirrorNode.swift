import GraphKit

/// `effect.mirror`: flips frames left-to-right (`horizontal`, the front-camera mirror) or top to
/// bottom (`vertical`), in place.
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

    public init(context: NodeContext) throws {
        horizontal = context.parameters.string("axis") == "horizontal"
    }

    public func formatDidChange(to format: MediaFormat) throws {
        _ = try VideoPixels.requirePacked(format, node: "effect.mirror")
    }

    public func process(_ buffer: inout SampleBuffer) throws -> Bool {
        if horizontal {
            try VideoPixels.forEachRow(&buffer) { row, _ in var r = row; r.reverse() }
        } else {
            try buffer.withMutablePixelPlanes { planes in
                let p = planes[0]
                let bytes = p.width * 4
                var scratch = [UInt8](repeating: 0, count: bytes)
                for y in 0..<(p.height / 2) {
                    let top = p.baseAddress + y * p.bytesPerRow, bottom = p.baseAddress + (p.height - 1 - y) * p.bytesPerRow
                    scratch.withUnsafeMutableBytes { s in
                        s.baseAddress!.copyMemory(from: top, byteCount: bytes)
                        top.copyMemory(from: bottom, byteCount: bytes)
                        bottom.copyMemory(from: s.baseAddress!, byteCount: bytes)
                    }
                }
            }
        }
        return true
    }
}
