import GraphKitCore
import GraphKitRuntime

/// `effect.toneMap`: HDR video (HLG or PQ, as phones record it) to SDR BT.709, for outputs that
/// cannot carry HDR, as AVFoundation converts for its H.264 presets and `AVAssetImageGenerator`.
/// Frames whose colour says HLG (ARIB STD-B67) or PQ (SMPTE ST 2084) come out as 8-bit I420
/// tagged BT.709, limited range; frames of any other transfer (SDR) pass through untouched.
/// `pixelFormat` converts what comes out (BT.709's matrix) when a format other than I420 is
/// wanted, BGRA for a picture.
///
/// The picture is mapped in display light: HLG through BT.2100's OOTF for its nominal 1000-nit
/// display, PQ through its EOTF; `referenceWhite` nits become SDR white (BT.2408's HDR reference
/// white, 203 nits, is where an SDR graded picture's white sits in HDR); above `knee` × that
/// white the highlights are rolled off smoothly up to the source's peak (PQ: the mastering
/// display's maximum luminance when the stream carries it, else `peak`; HLG: 1000 nits), so a
/// 1000-nit highlight stays brighter than a 400-nit one instead of clipping flat. BT.2020
/// colours are converted to BT.709 in linear light, and a colour BT.709 cannot show is moved
/// toward the grey of its own luminance rather than clipped channel by channel. GraphKit's own
/// GStreamer element does the work (`gktonemap`, in the graphkit plugin; its kernel.c says the
/// method in full).
///
/// The input is `decode`'s video in I420 or NV12, its colour read from the file: decode with
/// `"pixelFormat": "i420"`. Those frames are 8-bit; `decode`'s own `toneMap` maps the same way on
/// the decoder's 10-bit frames, closer to the source (thumbnails and exports use that).
///
/// Example:
/// ```json
/// "sdr": { "type": "effect.toneMap", "params": { "referenceWhite": 203, "peak": 1000 } }
/// ```
public final class ToneMapNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.toneMap",
        category: .effect,
        summary: "HDR (HLG, PQ) video to SDR BT.709 I420; SDR video passes through",
        inputs: [PortDescriptor("in", .rawVideo([.i420, .nv12]), help: "I420 or NV12 frames, HDR (BT.2100 HLG or PQ) or SDR, their colour stated")],
        outputs: [PortDescriptor("out", .rawVideo(), carries: .decided(by: [.pixelFormat: pixelFormat]) { p in .rawVideo([p[ToneMapNode.pixelFormat]]) },
                                 help: "SDR frames in BT.709 (HDR ones tone-mapped, SDR ones as they came), in pixelFormat")],
        parameters: [referenceWhite, peak, knee, pixelFormat],
        example: #"{ "type": "effect.toneMap", "params": { "referenceWhite": 203, "peak": 1000 } }"#
    )

    public static let referenceWhite = Parameter<Double>("referenceWhite", 80...1000, default: 203,
                                                         help: "nits of the HDR picture that become SDR white (BT.2408's reference white is 203)")
    public static let peak = Parameter<Double>("peak", 100...10_000, default: 1000,
                                               help: "PQ: the source's brightest nits, used when the stream carries no mastering display")
    public static let knee = Parameter<Double>("knee", 0.5...0.99, default: 0.9,
                                               help: "where the highlights' roll-off starts, as a fraction of reference white: lower keeps more highlight detail and dims SDR white more")

    public static let pixelFormat = Parameter<PixelFormat>("pixelFormat", default: .i420,
                                                           help: "the output's pixel format: i420 as tone mapping gives it, or converted (bgra for a picture)")

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let map = try bin.make("gktonemap", name: "tonemap", [
            "reference-white": p[Self.referenceWhite], "peak": p[Self.peak], "knee": p[Self.knee],
        ])
        // The pixel format asked for: nothing to do for I420 from HDR input, nor for SDR input
        // already in it (videoconvert passes through).
        let convert = try bin.make("videoconvert", name: "convert")
        let format = try bin.makeCapsFilter("video/x-raw, format=(string)\(p[Self.pixelFormat].gstName)")
        try bin.link(map, convert, format)
        try bin.expose(input: "in", map)
        try bin.expose(output: "out", format)
    }
}
