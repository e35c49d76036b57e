import GraphKitCore
import GraphKitRuntime

/// `encode.vp9`: VP9 encoder (libvpx), like an `AVAssetWriterInput` with VP9
/// (`kCMVideoCodecType_VP9`).
///
/// `bitrate: "auto"` is half of `encode.h264`'s for the frame size; `quality` sets libvpx's
/// constrained quality instead (its cq mode at that level, with the auto rate as its ceiling). `speed` is libvpx's
/// cpu-used: 0 to 4 code at "good" quality, 5 to 8 in real time.
///
/// `profile` is VP9's: 0 is 8-bit 4:2:0, 1 8-bit 4:4:4, 2 4:2:0 and 3 4:4:4 in 10 or 12 bits
/// (`bitDepth`, 10 unless given). libvpx picks the profile from the frames it is given, so the
/// node gives it frames of the profile's layout and depth (from RGB without halving any chroma
/// for 1 and 3). GStreamer's vp9enc takes no 8-bit 4:2:2 (1.22 and 1.26), so profile 1 is 4:4:4.
///
/// Example:
/// ```json
/// "vp9": { "type": "encode.vp9", "params": { "quality": 32, "speed": 5 } }
/// ```
public final class VP9EncoderNode: ElementNode, Sendable {
    public static let descriptor = VideoEncoderInput.descriptor(
        type: "encode.vp9", summary: "Encodes raw video to VP9 (libvpx)",
        output: PortDescriptor("out", .video(.vp9), help: "VP9 frames, for sink.mp4, sink.webm or sink.mkv"),
        quality: quality, own: [speed, profile, bitDepth],
        rules: [0, 1].map { .when(.equals(profile, $0), require: !.given(bitDepth), because: "profiles 0 and 1 are 8-bit; 2 and 3 take 10 or 12") },
        example: #"{ "type": "encode.vp9", "params": { "quality": 32, "speed": 5 } }"#
    )

    public static let quality = OptionalParameter<Int>("quality", 0...63, help: "constrained quality (libvpx's cq-level) instead of a bit rate: 0 best, 63 smallest")
    public static let speed = Parameter<Int>("speed", 0...8, default: 5, help: "libvpx's cpu-used: 0 slowest and best; 5 and up code in real time")
    public static let profile = Parameter<Int>("profile", 0...3, default: 0,
                                               help: "VP9 profile: 0 (8-bit 4:2:0), 1 (8-bit 4:4:4), 2 (10- or 12-bit 4:2:0), 3 (10- or 12-bit 4:4:4)")
    public static let bitDepth = OptionalParameter<Int>("bitDepth", 10...12, multipleOf: 2, help: "profiles 2 and 3: bits a sample, 10 or 12 (default 10)")

    /// The frames libvpx codes in `profile` at `bitDepth` (the default's when nil).
    static func pixelFormat(profile: Int, bitDepth: Int?) -> String {
        let deep = "_\(bitDepth ?? 10)LE"
        switch profile {
        case 1: return "Y444"
        case 2: return "I420" + deep
        case 3: return "Y444" + deep
        default: return "I420"
        }
    }

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        // GStreamer 1.22's MP4 muxer reads a VP9 stream's chroma siting from its caps without
        // checking it is there, and crashes the process when it is not (frames from GraphKit's
        // RGB converter carry none): the frames say theirs. The converter's is the 2×2 block's
        // mean, centred, "jpeg"; other frames are converted to it.
        let ends = try VideoEncoderInput.build(in: bin, codec: "VP9", pixelFormat: Self.pixelFormat(profile: p[Self.profile], bitDepth: p[Self.bitDepth]),
                                               chromaSite: "jpeg", width: p[Self.width], height: p[Self.height])
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
        try VideoEncoderInput.finish(in: bin, ends, then: [encoder, try bin.make("vp9parse")])
    }
}
