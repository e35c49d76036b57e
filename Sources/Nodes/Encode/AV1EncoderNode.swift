import GraphKitCore
import GraphKitRuntime

/// `encode.av1`: AV1 encoder (libaom), main profile (8-bit 4:2:0), like an
/// `AVAssetWriterInput` with AV1 (`kCMVideoCodecType_AV1`).
///
/// libaom is slow: `speed` (its cpu-used) trades quality for time, 6 and up in its real-time
/// mode. `bitrate: "auto"` is half of `encode.h264`'s for the frame size; `quality` sets a
/// constant quantizer (libaom's `q` mode) instead of a bit rate.
///
/// Example:
/// ```json
/// "av1": { "type": "encode.av1", "params": { "speed": 8, "keyframeInterval": 60 } }
/// ```
public final class AV1EncoderNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "encode.av1",
        category: .encode,
        summary: "Encodes raw video to AV1 (libaom)",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw frames")],
        outputs: [PortDescriptor("out", .video(.av1), help: "AV1 temporal units (OBU stream), for sink.mp4")],
        parameters: [bitrate, quality, keyframeInterval, speed, width, height],
        rules: [.exclusive(bitrate, quality), .allOrNone(width, height)],
        example: #"{ "type": "encode.av1", "params": { "speed": 8, "keyframeInterval": 60 } }"#
    )

    public static let bitrate = VideoEncoderInput.bitrate
    public static let quality = OptionalParameter<Int>("quality", 0...63, help: "constant quantizer instead of a bit rate: 0 best, 63 smallest")
    public static let keyframeInterval = VideoEncoderInput.keyframeInterval
    public static let speed = Parameter<Int>("speed", 0...10, default: 8, help: "libaom's cpu-used: 0 slowest and best, 10 fastest; 6 and up in real-time mode")
    public static let width = VideoEncoderInput.width
    public static let height = VideoEncoderInput.height

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let (input, converted) = try VideoEncoderInput.build(in: bin, codec: "AV1", pixelFormat: "I420",
                                                             width: p[Self.width], height: p[Self.height])
        let speed = p[Self.speed]
        let encoder = try bin.make("av1enc", name: "encoder", [
            "keyframe-max-dist": p[Self.keyframeInterval], "cpu-used": speed,
            "usage-profile": speed >= 6 ? "realtime" : "good-quality", "row-mt": true, "threads": 0,
        ])
        if let q = p[Self.quality] {
            try encoder.set("end-usage", "q")
            try encoder.set("min-quantizer", q)
            try encoder.set("max-quantizer", q)
        } else {
            try VideoEncoderInput.setBitrate(p[Self.bitrate], on: encoder, property: "target-bitrate", unit: 1000)  // kbit/s
        }
        // The MP4 muxer takes AV1 as an OBU stream of whole temporal units.
        let parse = try bin.make("av1parse")
        let output = try bin.makeCapsFilter("video/x-av1, stream-format=(string)obu-stream, alignment=(string)tu")
        try bin.link(converted, encoder, parse, output)
        try bin.expose(input: "in", input)
        try bin.expose(output: "out", output)
    }
}
