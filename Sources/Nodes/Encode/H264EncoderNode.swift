import GraphKitCore
import GraphKitRuntime
import MediaContainers

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
public final class H264EncoderNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "encode.h264",
        category: .encode,
        summary: "Encodes raw video to H.264 (x264)",
        inputs: [PortDescriptor("in", .rawVideo(Set(PixelFormat.allCases)), help: "raw frames, 8-bit or 10-bit (narrowed to 8 bits: x264 here is 8-bit)")],
        outputs: [PortDescriptor("out", .h264, help: "H.264 (AVC), for sink.mp4")],
        parameters: [bitrate, keyframeInterval, profile, preset, tune, bframes, width, height, colorimetry],
        rules: [.when(.equals(profile, .baseline), require: .equals(bframes, 0), because: "the baseline profile has no B-frames")],
        example: #"{ "type": "encode.h264", "params": { "keyframeInterval": 30, "profile": "high" } }"#
    )

    public static let bitrate = AutoParameter<Int>("bitrate", 10_000...200_000_000, default: .auto,
                                            help: "average bits per second, or auto from the frame size (10.1 bits per pixel per second from 640×480 up, 4.05 below)")
    public static let keyframeInterval = Parameter<Int>("keyframeInterval", 1...1000, default: 60, help: "at most this many frames between keyframes")
    public enum Profile: String, ParameterEnum { case baseline, main, high }
    public static let profile = Parameter<Profile>("profile", default: .high, help: "H.264 profile")
    public enum Preset: String, ParameterEnum { case ultrafast, superfast, veryfast, faster, fast, medium, slow }
    public static let preset = Parameter<Preset>("preset", default: .veryfast, help: "x264 speed/quality trade-off (veryfast keeps 720p30 live on 2 cores)")
    /// x264's tune. `auto`: zerolatency when the frames come live (a camera, a network stream:
    /// upstream answers GStreamer's latency query live), none for a file's. Zero latency keeps no
    /// frame back for x264's lookahead or frame threads (at veryfast 13 frames, 435 ms at 30 fps;
    /// slices share the cores instead), for 0.09 dB and 1.8% more bytes.
    public enum Tune: String, ParameterEnum { case auto, none, zerolatency }
    public static let tune = Parameter<Tune>("tune", default: .auto,
                                           help: "x264's tune: auto (zerolatency when the frames come live, as a camera's; none for a file's), none, zerolatency")
    public static let bframes = Parameter<Int>("bframes", 0...16, default: 0, help: "B-frames between reference frames (baseline allows none)")
    // x264 takes 4:2:0 only, whose sides are even; it has no minimum (2×2 encodes).
    public static let width = OptionalParameter<Int>("width", 2...7680, multipleOf: 2, help: "scale frames to this width (even; default: the frames' own)")
    public static let height = OptionalParameter<Int>("height", 2...4320, multipleOf: 2, help: "scale frames to this height (even; default: the frames' own)")

    /// The colour the stream's VUI states (`AVVideoColorPropertiesKey`), and RGB frames are
    /// converted with: `range:matrix:transfer:primaries` as GStreamer's caps write colorimetry
    /// (`2:3:5:1` is BT.709 video range), or a name (`bt709`, `bt2020`, `bt2100-pq`, `bt2100-hlg`).
    /// YUV frames that state another colorimetry are refused, not relabelled.
    public static let colorimetry = OptionalParameter<String>("colorimetry", help: "colour the stream states, as GStreamer caps' colorimetry (default: the frames' own)")

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    /// The bit rate `auto` picks for a frame size.
    public static func automaticBitrate(width: Int, height: Int) -> Int {
        let pixels = Double(width * height)
        return Int((pixels * (width * height >= 640 * 480 ? 10.1 : 4.05)).rounded())
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        // GraphKit's own converter (GstGraphKit/gkrgbtoi420): packed RGB to I420 in one pass,
        // a tenth of videoconvert's time; I420 and NV12 go through untouched.
        let convert = try bin.make("gkrgbtoi420", name: "convert")
        // 10-bit frames (a reader's P010, decode's i420_10le) narrowed first: GraphKit's
        // converter takes 8-bit ones, which pass this videoconvert untouched.
        let narrow = try VideoEncoderInput.narrowing(in: bin)
        try bin.link(narrow.convert, narrow.formats, convert)
        // GraphKit's own x264 encoder (GstGraphKit/gkx264enc): x264enc's settings under the
        // same names, but each raw frame is let go once x264 has copied it, where x264enc holds
        // it for all of x264's delay (~15 frames, 45 MB at 1080p). The bit rate is an average
        // (x264's ABR without a VBV, as AVVideoAverageBitRateKey and ffmpeg's -b:v).
        let encoder = try bin.make("gkx264enc", name: "encoder", [
            "key-int-max": p[Self.keyframeInterval], "speed-preset": p[Self.preset].rawValue, "bframes": p[Self.bframes],
            "live-zerolatency": p[Self.tune] == .auto,
        ])
        if p[Self.tune] == .zerolatency { try encoder.set("tune", "zerolatency") }
        if case .value(let bitrate) = p[Self.bitrate] {
            try encoder.set("bitrate", max(1, bitrate / 1000))  // kbit/s
        } else {
            encoder.onInputFormat { format in
                guard case .rawVideo(let v) = format else { return }
                try? encoder.set("bitrate", max(1, Self.automaticBitrate(width: v.width, height: v.height) / 1000))
            }
        }
        // x264 cannot take an odd width or height in 4:2:0 (the encoder would fail saying only
        // x264's "width not divisible by 2"): the run fails saying why and what to do, as ffmpeg does.
        // A size set here scales to even sides, whatever comes in (AssetWriter's VideoSettings).
        let scales = p[Self.width] != nil || p[Self.height] != nil
        convert.onInputFormat { [convert] format in
            guard !scales, case .rawVideo(let v) = format, v.width % 2 != 0 || v.height % 2 != 0 else { return }
            let even = "\(v.width / 2 * 2)x\(v.height / 2 * 2)"
            convert.postError("\(v.width)x\(v.height) video cannot be encoded: H.264 (4:2:0) needs an even width and height; "
                              + "crop it to \(even) first (effect.crop with width \(v.width / 2 * 2) and height \(v.height / 2 * 2))")
        }
        let profile = try bin.makeCapsFilter("video/x-h264, profile=(string)\(p[Self.profile].rawValue)")
        // A stated colour: RGB frames are converted with its matrix (gkrgbtoi420 asks downstream)
        // and gkx264enc writes it into the VUI from its input caps.
        var encoderInput = encoder
        if let c = p[Self.colorimetry] {
            encoderInput = try bin.makeCapsFilter("video/x-raw, colorimetry=(string)\(c)")
            try bin.link(encoderInput, encoder)
        }
        if p[Self.width] != nil || p[Self.height] != nil {
            // A set size scales (AVAssetWriter's AVVideoWidthKey and AVVideoHeightKey do), and
            // keeps the picture's shape where only one side is given: the other side follows
            // from the frames' own (even, as ffmpeg's scale=W:-2). (Left to videoscale, the
            // other side stayed and the pixels were stretched instead.)
            let (width, height) = (p[Self.width], p[Self.height])
            var caps = "video/x-raw"
            if let w = width { caps += ", width=(int)\(w)" }
            if let h = height { caps += ", height=(int)\(h)" }
            let size = try bin.makeCapsFilter(caps)
            if width == nil || height == nil {
                convert.onInputFormat { [size] format in
                    guard case .rawVideo(let v) = format, v.width > 0, v.height > 0 else { return }
                    let other = { (given: Int, of: Int, by: Int) in max(2, Int((Double(given) * Double(of) / Double(by) / 2).rounded()) * 2) }
                    let w = width ?? other(height!, v.width, v.height), h = height ?? other(width!, v.height, v.width)
                    // The pixels' own shape is kept (videoscale sets it so the picture's is too),
                    // as ffmpeg's scale keeps the sample aspect ratio.
                    try? size.set("caps", "video/x-raw, width=(int)\(w), height=(int)\(h)")
                }
            }
            try bin.link(convert, try bin.make("videoscale"), size, encoderInput)
        } else {
            try bin.link(convert, encoderInput)
        }
        try bin.link(encoder, profile)
        try bin.expose(input: "in", narrow.convert)
        try bin.expose(output: "out", profile)
    }
}
