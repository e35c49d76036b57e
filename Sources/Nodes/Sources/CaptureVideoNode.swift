import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `capture.video`: the camera, like `AVCaptureVideoDataOutput`; `device: "test"` is a moving,
/// colourful test pattern, so a graph runs on a machine with no camera.
///
/// The test device's `clock` pattern is the moving `smpte` picture with the wall clock written
/// into each frame as it leaves the source, in milliseconds, as a row of white and black cells on
/// a black band at the top-left corner (``ClockStamp`` gives the layout): a receiver on the same
/// machine reads it back and subtracts it from its own clock, glass to glass
/// (`scripts/srt-latency.sh`). The picture under it is the default one so that an encoder makes
/// as many bits as for that camera: over black, H.264 frames were 50 to 80 bytes, and MPEG-TS's
/// 7-packet messages then held 4 to 7 frames each (`sink.srt` sent them in bursts every 100 to
/// 170 ms). It needs frames at least 108 pixels wide and 6 high.
///
/// A camera is a V4L2 path (`/dev/video0`), `pipewire:NODE` (a PipeWire video source, by its
/// `node.name`, through `pipewiresrc`) or `libcamera:NAME` (`libcamerasrc`); ``CaptureDeviceName``
/// has the details, `graphctl devices` the names. Each is checked before the run: a device that
/// is not there fails naming it. A PipeWire camera that sends nothing within 5 s fails the run,
/// and one that stops sending for 3 s ends the stream (``SilentSourceWatch``).
///
/// Live (the default), frames are timestamped from the pipeline clock and, when downstream
/// cannot keep up, dropped at the source edge and counted (`alwaysDiscardsLateVideoFrames`).
///
/// Example:
/// ```json
/// "camera": { "type": "capture.video", "params": { "width": 720, "height": 1280, "fps": 30, "duration": 10 } }
/// ```
public final class CaptureVideoNode: ElementNode, LiveNode, StopAware, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "capture.video",
        category: .source,
        summary: "Camera or a moving test pattern, as raw frames",
        outputs: [PortDescriptor("out", .rawVideo(), carries: .decided(by: [.pixelFormat: pixelFormat]) { p in .rawVideo([p[CaptureVideoNode.pixelFormat]]) },
                                 help: "raw frames of width × height at fps, in pixelFormat")],
        parameters: [device, pattern, width, height, fps, duration, pixelFormat, live],
        rules: PixelFormat.tenBit.sorted { $0.rawValue < $1.rawValue }.map {
            .when(.given(pixelFormat), require: !.equals(pixelFormat, $0), because: "capture.video gives 8-bit frames")
        },
        unboundedWhen: .equals(duration, 0),
        example: #"{ "type": "capture.video", "params": { "width": 720, "height": 1280, "fps": 30, "duration": 10 } }"#
    )

    public static let device = Parameter<String>("device", default: "test",
                                          help: "\"test\" for a moving test pattern, a V4L2 device path such as /dev/video0, \"pipewire:NODE\" (a PipeWire node.name) or \"libcamera:NAME\"")
    public enum Pattern: String, ParameterEnum { case smpte, ball, snow, gradient, colors, clock }
    public static let pattern = Parameter<Pattern>("pattern", default: .smpte,
                                                   help: "the test device's picture (it moves); clock: smpte with the wall clock's milliseconds drawn in, to measure latency")
    public static let width = Parameter<Int>("width", 16...7680, default: 1280, help: "frame width in pixels")
    public static let height = Parameter<Int>("height", 16...4320, default: 720, help: "frame height in pixels")
    public static let fps = Parameter<Int>("fps", 1...240, default: 30, help: "frames per second")
    public static let duration = Parameter<Double>("duration", 0...86_400, default: 0, help: "seconds to capture; 0 captures until stopped")
    public static let pixelFormat = Parameter<PixelFormat>("pixelFormat", default: .bgra, help: "pixel format of the frames")
    public static let live = Parameter<Bool>("live", default: true,
                                      help: "test device only: false produces frames as fast as the graph takes them, with exact timestamps")

    let context: NodeContext
    let device: String
    let fps: Int
    let duration: Double
    let source: CaptureDeviceName
    /// A PipeWire camera's watch (nil for the others).
    let silence: SilentSourceWatch?

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let p = context.parameters
        device = p[Self.device]
        fps = p[Self.fps]
        duration = p[Self.duration]
        source = CaptureDeviceName(video: device)
        if case .pipeWire = source { silence = SilentSourceWatch("camera \"\(device)\"") } else { silence = nil }
        // The loader has no rule across two sizes: the row's fit is checked here, before the run.
        if device == "test", p[Self.pattern] == .clock, ClockStamp.side(width: p[Self.width], height: p[Self.height]) == nil {
            throw GraphError(.invalidGraph, at: context.location(parameter: "width"),
                             "the clock pattern needs frames at least 108 pixels wide and 6 high; these are \(p[Self.width])x\(p[Self.height])", node: context.id)
        }
    }

    public var isLive: Bool { device != "test" || context.parameters[Self.live] }
    public var mediaDescription: String? { device == "test" ? "the test pattern" : "camera \"\(device)\"" }
    public var expectedDuration: MediaTime? {
        duration > 0 ? MediaTime(value: Int64(frameCount), timescale: Int32(fps)) : nil
    }

    /// The frames a duration asks for: at least one (a duration under half a frame made none,
    /// which num-buffers took as no limit, and the capture never ended).
    var frameCount: Int { duration > 0 ? max(1, Int((duration * Double(fps)).rounded())) : 0 }

    public func prepare() throws(GraphError) {
        try source.checkPresent(camera: true, context, device: device)
        silence?.start()
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        silence?.stop()
    }

    public func runWillCancel() {
        silence?.runWillCancel()
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let frames = frameCount
        let source: Element
        let format = MediaFormat.VideoFormat(pixelFormat: p[Self.pixelFormat], width: p[Self.width], height: p[Self.height],
                                             frameRate: FrameRate(fps))
        if device == "test" {
            let clock = p[Self.pattern] == .clock
            source = try bin.make("videotestsrc", name: "source", ["is-live": isLive, "pattern": clock ? "smpte" : p[Self.pattern].rawValue])
            if p[Self.pattern] == .smpte || clock { try source.set("horizontal-speed", 4) }
            if clock, let stamp = ClockStamp(format: format) {
                // Read as the frame is pushed on: a live source has waited for its clock by then.
                source.drawOnEachFrame(format: format) { planes in stamp.draw(ClockStamp.now(), planes) }
            }
        } else if let (factory, property, value) = self.source.element {
            source = try bin.make(factory, name: "source", [property: value])
            // A PipeWire node that does not stamp its frames gets the clock's time on arrival,
            // and its frames are copied out of the node's few buffers, which a consumer holding
            // frames (a delegate, a writer's queue) would otherwise take from the camera.
            if factory == "pipewiresrc" {
                try source.set("do-timestamp", true)
                try source.set("always-copy", true)
            }
        } else {
            preconditionFailure("a camera without an element")
        }
        let filter = try bin.makeCapsFilter(MediaFormat.rawVideo(format).capsString)
        if device == "test" {
            // The test pattern is drawn at the asked format directly: no conversion to pay for.
            if frames > 0 { try source.set("num-buffers", frames) }
            try bin.link(source, filter)
            try bin.expose(output: "out", filter)
        } else {
            // A camera gives what it gives: convert, scale and thin its frames to what was asked,
            // and count the frames once thinned (a 30 fps camera asked for 15 would otherwise
            // end halfway through the duration).
            let count = try bin.make("identity", ["eos-after": frames > 0 ? frames : -1])
            try bin.link(source, try bin.make("videoconvert"), try bin.make("videoscale"),
                         try bin.make("videorate", ["drop-only": true]), filter, count)
            try bin.expose(output: "out", count)
        }
        silence.map { $0.watch(source, in: bin) }
    }
}
