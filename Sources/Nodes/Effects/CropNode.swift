import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `effect.crop`: crops frames to an aspect ratio, centred, keeping the width as far as the frame
/// allows (720×1280 at 3:4 becomes 720×960), or to an explicit rectangle. The output size
/// changes, and downstream is told before the first frame. GStreamer's `videocrop` moves the
/// pixels; this node computes where from the input size.
///
/// Example:
/// ```json
/// "crop": { "type": "effect.crop", "params": { "aspect": "3:4" } }
/// ```
public final class CropNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.crop",
        category: .effect,
        summary: "Crops video to an aspect ratio (centred) or a rectangle",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw frames")],
        outputs: [PortDescriptor("out", .rawVideo(), carries: .input("in"), help: "the cropped frames")],
        parameters: [aspect] + rectangle,
        rules: [.oneOf([aspect], rectangle)],
        example: #"{ "type": "effect.crop", "params": { "aspect": "3:4" } }"#
    )

    public static let aspect = OptionalParameter<String>("aspect", format: .pattern("^0*[1-9][0-9]*:0*[1-9][0-9]*$", "\"W:H\" with whole numbers above 0"), help: "\"1:1\", \"3:4\", \"9:16\" or any \"W:H\", centred")
    /// x, y, width and height of the rectangle kept.
    public static let rectangle = [
        OptionalParameter<Int>("x", 0...16_384, help: "rectangle: left edge"),
        OptionalParameter<Int>("y", 0...16_384, help: "rectangle: top edge"),
        OptionalParameter<Int>("width", 2...16_384, help: "rectangle: width"),
        OptionalParameter<Int>("height", 2...16_384, help: "rectangle: height"),
    ]

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    static func ratio(_ text: String) -> (Int, Int)? {
        let parts = text.split(separator: ":").compactMap { Int($0) }
        return parts.count == 2 && parts[0] > 0 && parts[1] > 0 ? (parts[0], parts[1]) : nil
    }

    /// The rectangle kept from a frame of `width` × `height`: (left, top, width, height).
    public static func rectangle(width: Int, height: Int, aspect: (Int, Int)) -> (Int, Int, Int, Int) {
        var w = width, h = width * aspect.1 / aspect.0
        if h > height { h = height; w = height * aspect.0 / aspect.1 }
        w -= w % 2  // even sizes, for 4:2:0 encoders downstream
        h -= h % 2
        return ((width - w) / 2, (height - h) / 2, w, h)
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let crop = try bin.make("videocrop", name: "crop")
        let p = context.parameters
        let id = context.id
        crop.onInputFormat { format in
            guard case .rawVideo(let v) = format else { return }
            let r: (Int, Int, Int, Int)
            if let a = p[Self.aspect], let ratio = Self.ratio(a) {
                r = Self.rectangle(width: v.width, height: v.height, aspect: ratio)
            } else {
                let given = Self.rectangle.map { p[$0] ?? 0 }  // all four, or the loader refused the graph
                r = (given[0], given[1], given[2], given[3])
                guard r.0 + r.2 <= v.width, r.1 + r.3 <= v.height else {
                    crop.postError("node \"\(id)\": the rectangle \(r.2)×\(r.3) at (\(r.0), \(r.1)) does not fit a \(v.width)×\(v.height) frame")
                    return
                }
            }
            try? crop.set("left", r.0)
            try? crop.set("top", r.1)
            try? crop.set("right", v.width - r.0 - r.2)
            try? crop.set("bottom", v.height - r.1 - r.3)
        }
        try bin.expose(input: "in", crop)
        try bin.expose(output: "out", crop)
    }
}
