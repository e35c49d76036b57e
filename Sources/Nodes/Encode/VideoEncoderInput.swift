import GraphKitCore
import GraphKitRuntime

/// What the video encoders past H.264 share on their input side: raw frames of any pixel
/// format to the layout the encoder codes (for 4:2:0, GraphKit's own RGB converter first, a tenth
/// of videoconvert's time; videoconvert passes I420 through untouched; other layouts, 4:2:2 and
/// 4:4:4, from videoconvert alone, so that no chroma is halved on the way), scaled to a size the
/// node's parameters set (both sides, as AssetWriter's VideoSettings give them), and a run that
/// fails naming the node, saying what to do, when frames of an odd size reach an encoder whose
/// layout halves that side.
package enum VideoEncoderInput {
    /// Builds `convert ! videoconvert [! videoscale] ! capsfilter(format, size)` and returns its
    /// ends: expose `input` as the node's input, link `output` to the encoder. `codec` names the
    /// codec in the error; `pixelFormat` is a GStreamer format name (I420, Y444, I420_10LE, …).
    /// `chromaSite`, when given, is written into the frames' caps (converting to it if need be).
    /// 10-bit frames (decode's, a reader's P010) into an 8-bit 4:2:0 layout go through a
    /// videoconvert first: GraphKit's converter takes 8-bit frames only.
    static func build(in bin: BinBuilder, codec: String, pixelFormat: String, chromaSite: String? = nil,
                      width: Int?, height: Int?) throws(GraphError) -> (input: Element, output: Element) {
        // Which sides the layout halves: 4:2:0 both, 4:2:2 the width, 4:4:4 neither.
        let (halvesWidth, halvesHeight) = pixelFormat.hasPrefix("I420") ? (true, true) : pixelFormat.hasPrefix("I422") || pixelFormat == "Y42B" ? (true, false) : (false, false)
        let layout = halvesHeight ? "4:2:0" : halvesWidth ? "4:2:2" : "4:4:4"
        // GraphKit's converter gives 8-bit I420: a 10-bit layout is converted to by videoconvert,
        // which passes 10-bit frames (decode's i420_10le) through with no 8-bit step.
        let tenBit = pixelFormat.hasSuffix("_10LE") || pixelFormat.hasSuffix("_12LE")
        // (No dither into 10 bits: P010 to I420_10LE is a move of each sample, which Bayer
        // dither would change by a level.)
        let convert = halvesHeight && !tenBit ? try bin.make("gkrgbtoi420", name: "convert")
            : try bin.make("videoconvert", name: "convert", tenBit ? ["dither": "none"] : [:])
        let scales = width != nil && height != nil
        convert.onInputFormat { [convert] format in
            guard !scales, case .rawVideo(let v) = format, (halvesWidth && v.width % 2 != 0) || (halvesHeight && v.height % 2 != 0) else { return }
            let (w, h) = (halvesWidth ? v.width / 2 * 2 : v.width, halvesHeight ? v.height / 2 * 2 : v.height)
            let sides = halvesHeight ? "an even width and height" : "an even width"
            convert.postError("\(v.width)x\(v.height) video cannot be encoded: \(codec) (\(layout)) needs \(sides) here; "
                              + "crop it to \(w)x\(h) first (effect.crop with width \(w) and height \(h)), or set the node's width and height")
        }
        var caps = "video/x-raw, format=(string)\(pixelFormat)"
        if let chromaSite { caps += ", chroma-site=(string)\(chromaSite)" }
        if let width, let height { caps += ", width=(int)\(width), height=(int)\(height)" }
        let output = try bin.makeCapsFilter(caps)
        // (An 8-bit frame passes the first videoconvert untouched: GraphKit's converter takes it.)
        let narrow = halvesHeight && !tenBit ? try narrowing(in: bin) : nil
        var chain = (narrow.map { [$0.convert, $0.formats] } ?? []) + [convert]
        if halvesHeight && !tenBit { chain.append(try bin.make("videoconvert")) }
        if scales { chain.append(try bin.make("videoscale")) }
        try link(chain + [output], in: bin)
        return (narrow?.convert ?? convert, output)
    }

    /// A videoconvert that gives GraphKit's 8-bit converter what it takes: 8-bit frames pass
    /// untouched; 10-bit ones become 8-bit 4:2:0, not RGB (the formats listed YUV first steer
    /// videoconvert's choice: given gkx264enc after the converter, it chose BGRx, clipping
    /// everything below black and above white).
    static func narrowing(in bin: BinBuilder) throws(GraphError) -> (convert: Element, formats: Element) {
        (try bin.make("videoconvert", name: "narrow"),
         try bin.makeCapsFilter("video/x-raw, format=(string){ I420, NV12, BGRA, RGBA, BGRx, RGBx }"))
    }

    /// The descriptor of an encoder past H.264: raw frames in, `output` out; `bitrate`,
    /// `quality` (its own scale), `keyframeInterval`, the node's `own` parameters, `width` and
    /// `height`; a bit rate or a quality, not both; a width with a height; and the node's `rules`.
    static func descriptor(type: String, summary: String, output: PortDescriptor, bitrate: AutoParameter<Int> = bitrate,
                           quality: OptionalParameter<Int>, own: [any ParameterDeclaration], rules: [ParameterRule] = [],
                           example: String) -> NodeDescriptor {
        NodeDescriptor(type: type, category: .encode, summary: summary,
                       inputs: [PortDescriptor("in", .rawVideo(Set(PixelFormat.allCases)), help: "raw frames, 8-bit or 10-bit (decode's i420_10le or p010_10le; narrowed for an 8-bit encode)")],
                       outputs: [output],
                       parameters: [bitrate, quality, keyframeInterval] as [any ParameterDeclaration] + own + [width, height],
                       rules: [.exclusive(bitrate, quality), .allOrNone(width, height)] + rules,
                       example: example)
    }

    /// Links what ``build(in:codec:pixelFormat:chromaSite:width:height:)`` made, the encoder
    /// and what follows it (a parser, caps), and exposes the node's `in` and `out`.
    static func finish(in bin: BinBuilder, _ ends: (input: Element, output: Element), then chain: [Element]) throws(GraphError) {
        try link([ends.output] + chain, in: bin)
        try bin.expose(input: "in", ends.input)
        try bin.expose(output: "out", chain[chain.count - 1])
    }

    /// Links each element of `chain` to the next.
    static func link(_ chain: [Element], in bin: BinBuilder) throws(GraphError) {
        for (a, b) in zip(chain, chain.dropFirst()) { try bin.link(a, b) }
    }

    // The parameters HEVC, VP9 and AV1 declare alike, declared once.
    static let bitrate = AutoParameter<Int>("bitrate", 10_000...200_000_000, default: .auto,
                                            help: "average bits per second, or auto from the frame size (half of encode.h264's auto)")
    static let keyframeInterval = Parameter<Int>("keyframeInterval", 1...1000, default: 60, help: "at most this many frames between keyframes")
    static let width = OptionalParameter<Int>("width", 16...8192, multipleOf: 2, help: "scale frames to this width (even; with height)")
    static let height = OptionalParameter<Int>("height", 16...4320, multipleOf: 2, help: "scale frames to this height (even; with width)")

    /// Sets the encoder's bit-rate `property` (in bits per second over `unit`: 1000 for kbit/s)
    /// from the node's `bitrate`: the value given, or `auto`'s for the first frame's size.
    static func setBitrate(_ bitrate: Auto<Int>, on encoder: Element, property: String, unit: Int) throws(GraphError) {
        if case .value(let bits) = bitrate {
            try encoder.set(property, max(1, bits / unit))
        } else {
            encoder.onInputFormat { format in
                guard case .rawVideo(let v) = format else { return }
                try? encoder.set(property, max(1, automaticBitrate(width: v.width, height: v.height) / unit))
            }
        }
    }

    /// The bit rate `auto` picks for the codecs that code as well as H.264 at half its rate
    /// (HEVC, VP9, AV1): half of `encode.h264`'s for the frame size.
    package static func automaticBitrate(width: Int, height: Int) -> Int {
        H264EncoderNode.automaticBitrate(width: width, height: height) / 2
    }
}

/// The parameters every video encoder declares alike (the same names, kinds and meaning), so
/// that code that sets them from settings, or reads their ranges, does so once for every codec
/// (AssetWriter's `VideoSettings`).
public protocol VideoEncoderParameters: Node {
    static var width: OptionalParameter<Int> { get }
    static var height: OptionalParameter<Int> { get }
    static var bitrate: AutoParameter<Int> { get }
    static var keyframeInterval: Parameter<Int> { get }
}

/// HEVC, VP9 and AV1 take the shared declarations (``VideoEncoderInput``) where they declare
/// none of their own (HEVC's bit rate is x265enc's narrower range).
extension VideoEncoderParameters {
    public static var width: OptionalParameter<Int> { VideoEncoderInput.width }
    public static var height: OptionalParameter<Int> { VideoEncoderInput.height }
    public static var bitrate: AutoParameter<Int> { VideoEncoderInput.bitrate }
    public static var keyframeInterval: Parameter<Int> { VideoEncoderInput.keyframeInterval }
}

extension H264EncoderNode: VideoEncoderParameters {}
extension HEVCEncoderNode: VideoEncoderParameters {}
extension VP9EncoderNode: VideoEncoderParameters {}
extension AV1EncoderNode: VideoEncoderParameters {}
