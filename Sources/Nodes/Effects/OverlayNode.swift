import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `effect.overlay`: draws text (fixed, the timestamp, or the frame number) or a PNG watermark
/// onto video, with GStreamer's Pango text overlays and `gdkpixbufoverlay`.
///
/// Example:
/// ```json
/// "stamp": { "type": "effect.overlay", "params": { "show": "timestamp", "halign": "right", "valign": "bottom" } }
/// ```
public final class OverlayNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.overlay",
        category: .effect,
        summary: "Text, timestamp, frame number or a PNG watermark over video",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw frames")],
        outputs: [PortDescriptor("out", .rawVideo(), carries: .input("in"), help: "frames with the overlay")],
        parameters: [show, text, image, halign, valign, fontSize],
        rules: [
            .when(.equals(show, .image), require: .given(image), because: "the PNG to draw"),
            .when(.equals(show, .text), require: .nonEmpty(text), because: "the text to draw"),
        ],
        takesHDR: false,  // SDR text and pictures drawn into the frames
        example: #"{ "type": "effect.overlay", "params": { "show": "timestamp", "halign": "right", "valign": "bottom" } }"#
    )

    public enum Show: String, ParameterEnum { case text, timestamp, frameNumber, image }
    public static let show = Parameter<Show>("show", default: .text, help: "what to draw")
    public static let text = Parameter<String>("text", default: "", help: "the text (show: text), or a prefix (timestamp, frameNumber); drawn as written, not as Pango markup")
    public static let image = OptionalParameter<String>("image", format: .path, help: "a PNG to draw (show: image)")
    public enum HorizontalAlignment: String, ParameterEnum { case left, center, right }
    public static let halign = Parameter<HorizontalAlignment>("halign", default: .left, help: "horizontal position")
    public enum VerticalAlignment: String, ParameterEnum { case top, center, bottom }
    public static let valign = Parameter<VerticalAlignment>("valign", default: .top, help: "vertical position")
    public static let fontSize = Parameter<Int>("fontSize", 4...400, default: 32, help: "text size in points")

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func prepare() throws(GraphError) {
        if let image = context.parameters[Self.image], context.parameters[Self.show] == .image,
           !FileManager.default.isReadableFile(atPath: image) {
            throw GraphError(.inputUnreadable, at: context.location(parameter: "image"), "cannot read \"\(image)\"", node: context.id)
        }
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let overlay: Element
        let show = p[Self.show]
        switch show {
        case .image:
            overlay = try bin.make("gdkpixbufoverlay", name: "overlay", ["location": p[Self.image] ?? ""])
            // In pixels-absolute mode the image's corner goes at coef × the frame's size plus
            // relative × the image's own: (0.02, 0), (0.5, −0.5), (0.98, −1) put it at the left
            // or top margin, in the middle, or at the right or bottom margin, inside the frame.
            // (relative-x in the default mode is a fraction of the frame, so "right" put the
            // image's left edge at 98% and drew 2% of it.)
            let (coefX, relativeX) = switch p[Self.halign] {
            case .left: (0.02, 0.0)
            case .center: (0.5, -0.5)
            case .right: (0.98, -1.0)
            }
            let (coefY, relativeY) = switch p[Self.valign] {
            case .top: (0.02, 0.0)
            case .center: (0.5, -0.5)
            case .bottom: (0.98, -1.0)
            }
            try overlay.set("positioning-mode", "pixels-absolute")
            try overlay.set("coef-x", coefX)
            try overlay.set("coef-y", coefY)
            try overlay.set("relative-x", relativeX)
            try overlay.set("relative-y", relativeY)
        case .text:
            overlay = try bin.make("textoverlay", name: "overlay", ["text": Self.literal(p[Self.text])])
        case .frameNumber:
            // GStreamer 1.22's timeoverlay has no frame count: set the text before each frame.
            overlay = try bin.make("textoverlay", name: "overlay")
            let prefix = Self.literal(p[Self.text])
            overlay.onEachBuffer(pad: "video_sink") { index, _ in try? overlay.set("text", "\(prefix)\(index)") }
        case .timestamp:
            overlay = try bin.make("timeoverlay", name: "overlay", ["time-mode": "buffer-time", "text": Self.literal(p[Self.text])])
        }
        if show != .image {
            try overlay.set("halignment", p[Self.halign].rawValue)
            try overlay.set("valignment", p[Self.valign].rawValue)
            try overlay.set("font-desc", "Sans \(p[Self.fontSize])")
            try overlay.set("shaded-background", true)
        }
        try bin.expose(input: "in", overlay, pad: show == .image ? "sink" : "video_sink")
        try bin.expose(output: "out", overlay)
    }

    /// The text overlays parse their text as Pango markup: "Q&A" is a markup error, and Pango
    /// then draws nothing. Escape it (as `g_markup_escape_text` does) so the text is drawn as written.
    static func literal(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "'": out += "&apos;"
            case "\"": out += "&quot;"
            default: out.append(c)
            }
        }
        return out
    }
}
