import GraphKitCore
import GraphKitRuntime

/// `encode.av1`: AV1 encoder (libaom), like an `AVAssetWriterInput` with AV1
/// (`kCMVideoCodecType_AV1`).
///
/// libaom is slow: `speed` (its cpu-used) trades quality for time, 6 and up in its real-time
/// mode. `bitrate: "auto"` is half of `encode.h264`'s for the frame size; `quality` sets a
/// constant quantizer (libaom's `q` mode) instead of a bit rate.
///
/// `profile` is AV1's (its seq_profile, as ffprobe names it): `main` codes 4:2:0, `high` 4:4:4
/// and `professional` 4:2:2, each in 8 bits, the depth GStreamer's av1enc takes (1.22 and 1.26:
/// I420, Y444 and Y42B); libaom picks the profile from the frames it is given, so the node gives
/// it frames of the profile's layout (converted from RGB without halving any chroma for `high`).
///
/// Example:
/// ```json
/// "av1": { "type": "encode.av1", "params": { "speed": 8, "keyframeInterval": 60 } }
/// ```
public final class AV1EncoderNode: ElementNode, Sendable {
    public static let descriptor = VideoEncoderInput.descriptor(
        type: "encode.av1", summary: "Encodes raw video to AV1 (libaom)",
        output: PortDescriptor("out", .video(.av1), help: "AV1 temporal units (OBU stream), for sink.mp4, sink.webm or sink.mkv"),
        quality: quality, own: [speed, profile],
        example: #"{ "type": "encode.av1", "params": { "speed": 8, "keyframeInterval": 60 } }"#
    )

    public static let quality = OptionalParameter<Int>("quality", 0...63, help: "constant quantizer instead of a bit rate: 0 best, 63 smallest")
    public static let speed = Parameter<Int>("speed", 0...10, default: 8, help: "libaom's cpu-used: 0 slowest and best, 10 fastest; 6 and up in real-time mode")
    public enum Profile: String, ParameterEnum {
        case main, high, professional
        /// The frames libaom codes in this profile.
        var pixelFormat: String {
            switch self {
            case .main: "I420"
            case .high: "Y444"
            case .professional: "Y42B"
            }
        }
    }
    public static let profile = Parameter<Profile>("profile", default: .main,
                                                   help: "AV1 profile: main (8-bit 4:2:0), high (8-bit 4:4:4) or professional (8-bit 4:2:2)")

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let ends = try VideoEncoderInput.build(in: bin, codec: "AV1", pixelFormat: p[Self.profile].pixelFormat,
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
        // The muxers take AV1 as an OBU stream of whole temporal units.
        try VideoEncoderInput.finish(in: bin, ends, then: [
            encoder, try bin.make("av1parse"), try bin.makeCapsFilter("video/x-av1, stream-format=(string)obu-stream, alignment=(string)tu"),
        ])
    }
}
