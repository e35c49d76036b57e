import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `generate.frames`: frames drawn in Swift, like a loop appending `CVPixelBuffer`s from a
/// `CVPixelBufferPool` to an `AVAssetWriterInputPixelBufferAdaptor`: a moving gradient, a
/// moving box, a frame counter (seven-segment digits a test can read back) or a solid colour.
///
/// Frames are made as fast as the graph takes them (not live: no clock, backpressure from
/// downstream), drawn into pooled frames (a steady stream reuses a few), and stamped exactly:
/// frame n at n / fps. The stream is `frames` frames long when that is given, else
/// `duration` × fps rounded to the nearest frame; `duration: 0` runs until the run is stopped.
///
/// Example:
/// ```json
/// "frames": { "type": "generate.frames", "params": { "width": 1280, "height": 720, "fps": 30, "duration": 5, "pattern": "counter" } }
/// ```
public final class FrameGeneratorNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "generate.frames",
        category: .source,
        summary: "Frames drawn in Swift: a moving gradient or box, a frame counter, a solid colour",
        outputs: [PortDescriptor("out", .rawVideo(), carries: .decided(by: [.pixelFormat: pixelFormat]) { p in .rawVideo([p[FrameGeneratorNode.pixelFormat]]) },
                                 help: "raw frames of width × height at fps, in pixelFormat")],
        parameters: [pattern, width, height, fps, duration, frames, pixelFormat, color],
        rules: [.exclusive(duration, frames)] + PixelFormat.tenBit.sorted { $0.rawValue < $1.rawValue }.map {
            .when(.given(pixelFormat), require: !.equals(pixelFormat, $0), because: "generate.frames draws 8-bit frames")
        },
        unboundedWhen: .equals(duration, 0),
        example: #"{ "type": "generate.frames", "params": { "width": 1280, "height": 720, "fps": 30, "duration": 5, "pattern": "counter" } }"#
    )

    public enum Pattern: String, ParameterEnum { case gradient, box, counter, solid }
    public static let pattern = Parameter<Pattern>("pattern", default: .gradient,
                                                   help: "gradient: colours that scroll; box: a white square bouncing over color; counter: the frame number in white digits on color; solid: color")
    public static let width = Parameter<Int>("width", 16...7680, default: 1280, help: "frame width in pixels")
    public static let height = Parameter<Int>("height", 16...4320, default: 720, help: "frame height in pixels")
    public static let fps = Parameter<Int>("fps", 1...240, default: 30, help: "frames per second: frame n is stamped n / fps")
    public static let duration = Parameter<Double>("duration", 0...86_400, default: 5,
                                                   help: "seconds of frames (duration × fps, to the nearest frame); 0 runs until stopped")
    public static let frames = OptionalParameter<Int>("frames", 1...100_000_000, help: "number of frames, instead of duration")
    public static let pixelFormat = Parameter<PixelFormat>("pixelFormat", default: .bgra, help: "pixel format of the frames")
    public static let color = Parameter<String>("color", format: .pattern("^#[0-9a-fA-F]{6}$", "#rrggbb"), default: "#203040",
                                                help: "the background of box and counter, and the colour of solid")

    let context: NodeContext
    let fps: Int
    /// Frames in the stream; nil until stopped.
    let count: Int?
    /// The source, once built.
    private let source = Guarded<FrameSource?>(nil)

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let p = context.parameters
        fps = p[Self.fps]
        if let frames = p[Self.frames] {
            count = frames
        } else if p[Self.duration] > 0 {
            let rounded = (p[Self.duration] * Double(fps)).rounded()
            guard rounded >= 1 else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "duration"),
                                 "duration \(p[Self.duration]) s is less than half a frame at \(fps) fps; give at least \(0.5 / Double(fps)) s, or frames", node: context.id)
            }
            count = Int(rounded)
        } else {
            count = nil
        }
    }

    public var mediaDescription: String? { "generated frames (\(context.parameters[Self.pattern].rawValue))" }

    public var expectedDuration: MediaTime? {
        count.map { MediaTime(value: Int64($0), timescale: Int32(fps)) }
    }

    /// Frames drawn so far (0 before the run).
    public var framesDrawn: Int { madeSource?.framesDrawn ?? 0 }

    /// Distinct frame buffers drawn into so far: how many the pool allocated. It stays at the
    /// number of frames downstream holds at once, however long the stream.
    public var buffersAllocated: Int { madeSource?.buffersAllocated ?? 0 }

    private var madeSource: FrameSource? { source.withLock { $0 } }

    /// Digits of the counter: at least 4, as many as the last frame number needs (8 when the
    /// stream is unbounded; the number then shows modulo 10^8).
    static func counterDigits(count: Int?) -> Int {
        guard let count else { return 8 }
        return max(4, String(max(0, count - 1)).count)
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let format = MediaFormat.VideoFormat(pixelFormat: p[Self.pixelFormat], width: p[Self.width], height: p[Self.height],
                                             frameRate: FrameRate(fps))
        guard let color = FramePainter.RGB(hex: p[Self.color]) else {  // the loader checked the form
            throw GraphError(.invalidGraph, at: context.location(parameter: "color"), "color must be #rrggbb", node: context.id)
        }
        let painter = FramePainter(pattern: p[Self.pattern], format: format, color: color, digits: Self.counterDigits(count: count))
        let made = try bin.makeGeneratedSource(format: format, count: count) { n, planes in painter.draw(n, planes) }
        source.withLock { $0 = made }
        try bin.expose(output: "out", made.element)
    }
}
