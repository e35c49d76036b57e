import FoundationEssentials
import Glibc
import GraphKit

/// `capture.video`: the camera, like `AVCaptureVideoDataOutput`; `device: "test"` is a moving,
/// colourful test pattern, so a graph runs on a machine with no camera.
///
/// Live (the default), frames are timestamped from the pipeline clock and, when downstream
/// cannot keep up, dropped at the source edge and counted (`alwaysDiscardsLateVideoFrames`).
///
/// Example:
/// ```json
/// "camera": { "type": "capture.video", "params": { "width": 720, "height": 1280, "fps": 30, "duration": 10 } }
/// ```
public final class CaptureVideoNode: ElementNode, LiveNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "capture.video",
        category: .source,
        summary: "Camera or a moving test pattern, as raw frames",
        outputs: [PortDescriptor("out", .rawVideo(), help: "raw frames of width × height at fps, in pixelFormat")],
        parameters: [
            ParameterDescriptor("device", .string, default: .string("test"),
                                help: "\"test\" for a moving test pattern, or a V4L2 device path such as /dev/video0"),
            ParameterDescriptor("pattern", .enumeration(["smpte", "ball", "snow", "gradient", "colors"]), default: .string("smpte"),
                                help: "the test device's picture (it moves)"),
            ParameterDescriptor("width", .integer(16...7680), default: .integer(1280), help: "frame width in pixels"),
            ParameterDescriptor("height", .integer(16...4320), default: .integer(720), help: "frame height in pixels"),
            ParameterDescriptor("fps", .integer(1...240), default: .integer(30), help: "frames per second"),
            ParameterDescriptor("duration", .number(0...86_400), default: .number(0), help: "seconds to capture; 0 captures until stopped"),
            ParameterDescriptor("pixelFormat", .enumeration(["bgra", "rgba", "i420", "nv12"]), default: .string("bgra"),
                                help: "pixel format of the frames"),
            ParameterDescriptor("live", .boolean, default: .boolean(true),
                                help: "test device only: false produces frames as fast as the graph takes them, with exact timestamps"),
        ],
        isUnbounded: { p in p.double("duration") == 0 },
        example: #"{ "type": "capture.video", "params": { "width": 720, "height": 1280, "fps": 30, "duration": 10 } }"#
    )

    let context: NodeContext
    let device: String
    let fps: Int
    let duration: Double

    public init(context: NodeContext) throws {
        self.context = context
        device = context.parameters.string("device")!
        fps = context.parameters.int("fps")!
        duration = context.parameters.double("duration")!
    }

    public var isLive: Bool { device != "test" || context.parameters.bool("live")! }
    public var mediaDescription: String? { device == "test" ? "the test pattern" : "camera \"\(device)\"" }
    public var expectedDuration: MediaTime? {
        duration > 0 ? MediaTime(value: Int64((duration * Double(fps)).rounded()), timescale: Int32(fps)) : nil
    }

    public func prepare() throws {
        if device != "test", !FileManager.default.fileExists(atPath: device) {
            throw GraphError(.runFailed, at: context.location(parameter: "device"), "no camera at \"\(device)\"", node: context.id)
        }
    }

    public func build(in bin: BinBuilder) throws {
        let p = context.parameters
        let frames = Int((duration * Double(fps)).rounded())
        let source: Element
        if device == "test" {
            source = try bin.make("videotestsrc", name: "source", ["is-live": isLive, "pattern": p.string("pattern")!])
            if p.string("pattern") == "smpte" { try source.set("horizontal-speed", 4) }
        } else {
            source = try bin.make("v4l2src", name: "source", ["device": device])
        }
        if frames > 0 { try source.set("num-buffers", frames) }
        let format = MediaFormat.rawVideo(.init(pixelFormat: PixelFormat(rawValue: p.string("pixelFormat")!)!,
                                                width: p.int("width")!, height: p.int("height")!, frameRate: FrameRate(fps)))
        let filter = try bin.makeCapsFilter(format.capsString)
        if device == "test" {
            // The test pattern is drawn at the asked format directly: no conversion to pay for.
            try bin.link(source, filter)
        } else {
            // A camera gives what it gives: convert, scale and thin its frames to what was asked.
            try bin.link(source, try bin.make("videoconvert"), try bin.make("videoscale"),
                         try bin.make("videorate", ["drop-only": true]), filter)
        }
        try bin.expose(output: "out", filter)
    }
}
