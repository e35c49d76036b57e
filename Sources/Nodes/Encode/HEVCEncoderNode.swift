import GraphKitCore
import GraphKitRuntime

/// `encode.hevc`: HEVC (H.265) encoder (x265), like an `AVAssetWriterInput` with
/// `AVVideoCodecType.hevc`.
///
/// The output is `hvc1` (parameter sets in the sample description, none in the samples), the
/// form Apple's players require of HEVC in MP4 and MOV. `bitrate: "auto"` is half of
/// `encode.h264`'s for the frame size (HEVC codes as well at about half the rate); `quality` sets
/// x265's constant rate factor instead of a bit rate.
///
/// Example:
/// ```json
/// "hevc": { "type": "encode.hevc", "params": { "quality": 28, "preset": "fast" } }
/// ```
public final class HEVCEncoderNode: ElementNode, Sendable {
    public static let descriptor = VideoEncoderInput.descriptor(
        type: "encode.hevc", summary: "Encodes raw video to HEVC / H.265 (x265)",
        output: PortDescriptor("out", .video(.hevc), help: "HEVC as hvc1, for sink.mp4 or sink.mkv"),
        bitrate: bitrate, quality: quality, own: [preset, profile],
        example: #"{ "type": "encode.hevc", "params": { "quality": 28, "preset": "fast" } }"#
    )

    /// x265enc takes at most 102,400 kbit/s.
    public static let bitrate = AutoParameter<Int>("bitrate", 10_000...102_400_000, default: .auto,
                                            help: "average bits per second, or auto from the frame size (half of encode.h264's auto)")
    public static let quality = OptionalParameter<Int>("quality", 0...51, help: "x265's constant rate factor (CRF) instead of a bit rate: 0 best, 51 smallest (28 is x265's default)")
    public enum Preset: String, ParameterEnum { case ultrafast, superfast, veryfast, faster, fast, medium, slow, slower, veryslow }
    public static let preset = Parameter<Preset>("preset", default: .veryfast, help: "x265 speed/quality trade-off (x265's own default, medium, is ~5× slower)")
    public enum Profile: String, ParameterEnum { case main, main10 }
    public static let profile = Parameter<Profile>("profile", default: .main,
                                                   help: "HEVC profile: main (8-bit 4:2:0) or main10 (10-bit 4:2:0: give it decode's i420_10le or p010_10le frames to keep a 10-bit source's samples)")

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let tenBit = p[Self.profile] == .main10
        let ends = try VideoEncoderInput.build(in: bin, codec: "HEVC", pixelFormat: tenBit ? "I420_10LE" : "I420",
                                               width: p[Self.width], height: p[Self.height])
        // GStreamer's x265enc tunes for SSIM unless told otherwise; x265 itself (and ffmpeg's
        // libx265) tunes for nothing: "0" is x265enc's "no tuning".
        let encoder = try bin.make("x265enc", name: "encoder", [
            "key-int-max": p[Self.keyframeInterval], "speed-preset": p[Self.preset].rawValue, "tune": 0,
        ])
        encoder.mendX265DecodeTimes()
        if let crf = p[Self.quality] {
            // x265's option string is read after the element's properties: crf there sets its
            // rate control to constant rate factor, as ffmpeg's -crf does.
            try encoder.set("option-string", "crf=\(crf)")
        } else {
            try VideoEncoderInput.setBitrate(p[Self.bitrate], on: encoder, property: "bitrate", unit: 1000)  // kbit/s
        }
        // x265 writes Annex B (start codes, parameter sets in the stream); the parser makes hvc1,
        // the form Apple's players take (hev1, parameter sets in the samples, they refuse).
        try VideoEncoderInput.finish(in: bin, ends, then: [
            encoder, try bin.make("h265parse"),
            try bin.makeCapsFilter("video/x-h265, stream-format=(string)hvc1, alignment=(string)au, profile=(string)\(tenBit ? "main-10" : "main")"),
        ])
    }
}
