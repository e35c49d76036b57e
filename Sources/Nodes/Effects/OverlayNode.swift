import FoundationEssentials
import Glibc
import GraphKit

/// `effect.overlay`: draws text (fixed, the timestamp, or the frame number) or a PNG watermark
/// onto video, with GStreamer's Pango text overlays and `gdkpixbufoverlay`.
///
/// Example:
/// ```json
/// "stamp": { "type": "effect.overlay", "params": { "show": "timestamp", "halign": "right", "valign": "bottom" } }
/// ```
public final class OverlayNode: ElementNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.overlay",
        category: .effect,
        summary: "Text, timestamp, frame number or a PNG watermark over video",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw frames")],
        outputs: [PortDescriptor("out", .rawVideo(), help: "frames with the overlay")],
        parameters: [
            ParameterDescriptor("show", .enumeration(["text", "timestamp", "frameNumber", "image"]), default: .string("text"),
                                help: "what to draw"),
            ParameterDescriptor("text", .string, default: .string(""), help: "the text (show: text), or a prefix (timestamp, frameNumber)"),
            ParameterDescriptor("image", .string, optional: true, help: "a PNG to draw (show: image)"),
            ParameterDescriptor("halign", .enumeration(["left", "center", "right"]), default: .string("left"), help: "horizontal position"),
            ParameterDescriptor("valign", .enumeration(["top", "center", "bottom"]), default: .string("top"), help: "vertical position"),
            ParameterDescriptor("fontSize", .integer(4...400), default: .integer(32), help: "text size in points"),
        ],
        check: { p in
            if p.string("show") == "image", p.string("image") == nil { return [("image", "show: image needs the PNG's path")] }
            if p.string("show") == "text", p.string("text")?.isEmpty ?? true { return [("text", "show: text needs the text")] }
            return []
        },
        example: #"{ "type": "effect.overlay", "params": { "show": "timestamp", "halign": "right", "valign": "bottom" } }"#
    )

    let context: NodeContext

    public init(context: NodeContext) throws {
        self.context = context
    }

    public func prepare() throws {
        if let image = context.parameters.string("image"), context.parameters.string("show") == "image",
           !FileManager.default.isReadableFile(atPath: image) {
            throw GraphError(.inputUnreadable, at: context.location(parameter: "image"), "cannot read \"\(image)\"", node: context.id)
        }
    }

    public func build(in bin: BinBuilder) throws {
        let p = context.parameters
        let overlay: Element
        switch p.string("show")! {
        case "image":
            overlay = try bin.make("gdkpixbufoverlay", name: "overlay", ["location": p.string("image")!])
            let (h, v) = (p.string("halign")!, p.string("valign")!)
            try overlay.set("relative-x", h == "left" ? 0.02 : h == "center" ? 0.5 : 0.98)
            try overlay.set("relative-y", v == "top" ? 0.02 : v == "center" ? 0.5 : 0.98)
            try overlay.set("positioning-mode", "pixels-relative-to-edges")
        case "text":
            overlay = try bin.make("textoverlay", name: "overlay", ["text": p.string("text")!])
        case "frameNumber":
            // GStreamer 1.22's timeoverlay has no frame count: set the text before each frame.
            overlay = try bin.make("textoverlay", name: "overlay")
            let prefix = p.string("text")!
            overlay.onEachBuffer(pad: "video_sink") { index, _ in try? overlay.set("text", "\(prefix)\(index)") }
        default:
            overlay = try bin.make("timeoverlay", name: "overlay", ["time-mode": "buffer-time", "text": p.string("text")!])
        }
        if p.string("show") != "image" {
            try overlay.set("halignment", p.string("halign")!)
            try overlay.set("valignment", p.string("valign")! == "center" ? "center" : p.string("valign")!)
            try overlay.set("font-desc", "Sans \(p.int("fontSize")!)")
            try overlay.set("shaded-background", true)
        }
        try bin.expose(input: "in", overlay, pad: p.string("show") == "image" ? "sink" : "video_sink")
        try bin.expose(output: "out", overlay)
    }
}
