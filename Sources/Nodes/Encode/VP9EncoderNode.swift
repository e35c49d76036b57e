import GraphKitCore
import GraphKitRuntime

/// `encode.vp9`: VP9 encoder (libvpx), profile 0 (8-bit 4:2:0), like an `AVAssetWriterInput`
/// with VP9 (`kCMVideoCodecType_VP9`).
///
/// `bitrate: "auto"` is half of `encode.h264`'s for the frame size; `quality` sets libvpx's
/// constrained quality instead (its cq mode at that level, with the auto rate as its ceiling). `speed` is libvpx's
/// cpu-used: 0 to 4 code at "good" quality, 5 to 8 in real time.
///
/// Example:
/// ```json
/// "vp9": { "type": "encode.vp9", "params": { "quality": 32, "speed": 5 } }
/// ```
public final class VP9EncoderNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "encode.vp9",
        category: .encode,
        summary: "Encodes raw video to VP9 (libvpx)",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw frames")],
        outputs: [PortDescriptor("out", .video(.vp9), help: "VP9 frames, for sink.mp4")],
        parameters: [bitrate, quality, keyframeInterval, speed, width, height],
        rules: [.exclusive(bitrate, quality), .allOrNone(width, height)],
        example: #"{ "type": "encode.vp9", "params": { "quality": 32, "speed": 5 } }"#
    )

    public static let bitrate = VideoEncoderInput.bitrate
    public static let quality = OptionalParameter<Int>("quality", 0...63, help: "constrained quality (libvpx's cq-level) instead of a bit rate: 0 best, 63 smallest")
    public static let keyframeInterval = VideoEncoderInput.keyframeInterval
    public static let speed = Parameter<Int>("speed", 0...8, default: 5, help: "libvpx's cpu-used: 0 slowest and best; 5 and up code in real time")
    public static let width = VideoEncoderInput.width
    public static let height = VideoEncoderInput.height

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        // GStreamer 1.22's MP4 muxer reads a VP9 stream's chroma siting from its caps without
        // checking it is there, and crashes the process when it is not (frames from GraphKit's
        // RGB converter carry none): the frames say theirs. The converter's is the 2×2 block's
        // mean, centred, "jpeg"; other I420 is converted to it.
        let (input, converted) = try VideoEncoderInput.build(in: bin, codec: "VP9", pixelFormat: "I420", chromaSite: "jpeg",
                                                             width: p[Self.width], height: p[Self.height])
        let speed = p[Self.speed]
        let encoder = try bin.make("vp9enc", name: "encoder", [
            "keyframe-max-dist": p[Self.keyframeInterval], "cpu-used": speed, "deadline": speed >= 5 ? 1 : 1_000_000,
            // No lookahead: with it (libvpx's default, 25 frames) GStreamer 1.22's vp9enc lost
            // frames at the end (27 of 30 reached the file), which a writer cannot have.
            "row-mt": true, "lag-in-frames": 0,
        ])
        if let q = p[Self.quality] {
            try encoder.set("end-usage", "cq")
            try encoder.set("cq-level", q)
        }
        try VideoEncoderInput.setBitrate(p[Self.bitrate], on: encoder, property: "target-bitrate", unit: 1)  // bit/s
        // The parser puts the profile and chroma format in the caps, which the MP4 muxer needs.
        let output = try bin.make("vp9parse")
        try bin.link(converted, encoder, output)
        try bin.expose(input: "in", input)
        try bin.expose(output: "out", output)
    }
}
