import GraphKitCore
import GraphKitRuntime

/// `effect.scale`: frames scaled to `width` × `height`. `fit` keeps the picture's shape and
/// fills what it leaves with black bars (letterbox or pillarbox, centred), as
/// `AVVideoScalingModeResizeAspect` and ffmpeg's
/// `scale=W:H:force_original_aspect_ratio=decrease,pad=W:H:(ow-iw)/2:(oh-ih)/2` do; `stretch`
/// fills the frame and changes the shape (`AVVideoScalingModeResize`). Frames that change size
/// mid-stream (pieces of a join) all come out at `width` × `height`, in the pixel format they
/// came in.
///
/// GStreamer's `videoscale` does the work: with `add-borders` and square output pixels it draws
/// the bars in the format's black (Y 16, U and V 128 for I420; opaque black for BGRA). The
/// picture keeps its display shape, so frames with non-square pixels (an anamorphic source) are
/// fitted by the shape they are shown at.
///
/// Example:
/// ```json
/// "scale": { "type": "effect.scale", "params": { "width": 1280, "height": 720, "mode": "fit" } }
/// ```
public final class ScaleNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.scale",
        category: .effect,
        summary: "Scales video to a size: fitted with black bars (aspect kept) or stretched",
        inputs: [PortDescriptor("in", .rawVideo(Set(PixelFormat.allCases)), help: "raw frames, of any size, which may change between frames; 10-bit ones too")],
        outputs: [PortDescriptor("out", .rawVideo(Set(PixelFormat.allCases)), carries: .input("in"), help: "the frames at width × height, in the pixel format they came in")],
        parameters: [width, height, mode],
        example: #"{ "type": "effect.scale", "params": { "width": 1280, "height": 720, "mode": "fit" } }"#
    )

    public static let width = RequiredParameter<Int>("width", 2...16_384, help: "the frames' width in pixels")
    public static let height = RequiredParameter<Int>("height", 2...16_384, help: "the frames' height in pixels")
    public enum Mode: String, ParameterEnum { case fit, stretch }
    public static let mode = Parameter<Mode>("mode", default: .fit,
                                             help: "fit: the whole picture, its shape kept, black bars around it; stretch: the whole frame, the shape changed")

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let (width, height) = (try p.value(Self.width), try p.value(Self.height))
        let scale = try bin.make("videoscale", name: "scale", ["add-borders": p[Self.mode] == .fit])
        // Square pixels out: with them fixed, videoscale keeps the shape by drawing bars (fit), or
        // stretches the picture (add-borders off).
        let size = try bin.makeCapsFilter("video/x-raw, width=(int)\(width), height=(int)\(height), pixel-aspect-ratio=(fraction)1/1")
        try bin.link(scale, size)
        try bin.expose(input: "in", scale)
        try bin.expose(output: "out", size)
    }
}
