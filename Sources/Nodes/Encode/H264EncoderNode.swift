import GraphKit

/// `encode.h264`: H.264 encoder (x264), like an `AVAssetWriterInput` with `AVVideoCodecType.h264`.
///
/// `bitrate: "auto"` follows `recommendedVideoSettingsForAssetWriter`'s quality: width × height ×
/// 10.1 bits per second from 640 × 480 up, × 4.05 below (720 × 960 gets 6,981,120 b/s), set
/// from the frame size when the first frame's format arrives.
///
/// Example:
/// ```json
/// "h264": { "type": "encode.h264", "params": { "keyframeInterval": 30, "profile": "high" } }
/// ```
public final class H264EncoderNode: ElementNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "encode.h264",
        category: .encode,
        summary: "Encodes raw video to H.264 (x264)",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw frames")],
        outputs: [PortDescriptor("out", .h264, help: "H.264 (AVC), for sink.mp4")],
        parameters: [
            ParameterDescriptor("bitrate", .integer(10_000...200_000_000), default: .auto, acceptsAuto: true,
                                help: "bits per second, or auto from the frame size (10.1 bits per pixel per second from 640×480 up, 4.05 below)"),
            ParameterDescriptor("keyframeInterval", .integer(1...1000), default: .integer(60), help: "at most this many frames between keyframes"),
            ParameterDescriptor("profile", .enumeration(["baseline", "main", "high"]), default: .string("high"), help: "H.264 profile"),
            ParameterDescriptor("preset", .enumeration(["ultrafast", "superfast", "veryfast", "faster", "fast", "medium", "slow"]),
                                default: .string("veryfast"), help: "x264 speed/quality trade-off (veryfast keeps 720p30 live on 2 cores)"),
            ParameterDescriptor("bframes", .integer(0...16), default: .integer(0), help: "B-frames between reference frames (baseline allows none)"),
        ],
        check: { p in
            p.string("profile") == "baseline" && (p.int("bframes") ?? 0) > 0
                ? [(parameter: "bframes", message: "the baseline profile has no B-frames")] : []
        },
        example: #"{ "type": "encode.h264", "params": { "keyframeInterval": 30, "profile": "high" } }"#
    )

    let context: NodeContext

    public init(context: NodeContext) throws {
        self.context = context
    }

    /// The bit rate `auto` picks for a frame size.
    public static func automaticBitrate(width: Int, height: Int) -> Int {
        let pixels = Double(width * height)
        return Int((pixels * (width * height >= 640 * 480 ? 10.1 : 4.05)).rounded())
    }

    public func build(in bin: BinBuilder) throws {
        let p = context.parameters
        let convert = try bin.make("videoconvert")
        let encoder = try bin.make("x264enc", name: "encoder", [
            "key-int-max": p.int("keyframeInterval")!, "speed-preset": p.string("preset")!, "bframes": p.int("bframes")!,
        ])
        if let bitrate = p.int("bitrate") {
            try encoder.set("bitrate", max(1, bitrate / 1000))  // x264enc takes kbit/s
        } else {
            encoder.onInputFormat { format in
                guard case .rawVideo(let v) = format else { return }
                try? encoder.set("bitrate", max(1, Self.automaticBitrate(width: v.width, height: v.height) / 1000))
            }
        }
        let profile = try bin.makeCapsFilter("video/x-h264, profile=(string)\(p.string("profile")!)")
        try bin.link(convert, encoder, profile)
        try bin.expose(input: "in", convert)
        try bin.expose(output: "out", profile)
    }
}
