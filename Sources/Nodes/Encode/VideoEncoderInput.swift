import GraphKitCore
import GraphKitRuntime

/// What the video encoders past H.264 share on their input side: raw frames of any pixel
/// format to the planar 4:2:0 the encoder codes (GraphKit's own RGB converter first, a tenth of
/// videoconvert's time; videoconvert passes I420 through untouched), scaled to a size the
/// node's parameters set (both sides, as AssetWriter's VideoSettings give them), and a run that
/// fails naming the node, saying what to do, when frames of an odd size reach a 4:2:0 encoder.
enum VideoEncoderInput {
    /// Builds `convert ! videoconvert [! videoscale] ! capsfilter(format, size)` and returns its
    /// ends: expose `input` as the node's input, link `output` to the encoder. `codec` names the
    /// codec in the error.
    /// `chromaSite`, when given, is written into the frames' caps (converting to it if need be).
    static func build(in bin: BinBuilder, codec: String, pixelFormat: String, chromaSite: String? = nil,
                      width: Int?, height: Int?) throws(GraphError) -> (input: Element, output: Element) {
        let convert = try bin.make("gkrgbtoi420", name: "convert")
        let scales = width != nil && height != nil
        convert.onInputFormat { [convert] format in
            guard !scales, case .rawVideo(let v) = format, v.width % 2 != 0 || v.height % 2 != 0 else { return }
            let (w, h) = (v.width / 2 * 2, v.height / 2 * 2)
            convert.postError("\(v.width)x\(v.height) video cannot be encoded: \(codec) (4:2:0) needs an even width and height here; "
                              + "crop it to \(w)x\(h) first (effect.crop with width \(w) and height \(h)), or set the node's width and height")
        }
        var caps = "video/x-raw, format=(string)\(pixelFormat)"
        if let chromaSite { caps += ", chroma-site=(string)\(chromaSite)" }
        if let width, let height { caps += ", width=(int)\(width), height=(int)\(height)" }
        let output = try bin.makeCapsFilter(caps)
        if scales {
            try bin.link(convert, try bin.make("videoconvert"), try bin.make("videoscale"), output)
        } else {
            try bin.link(convert, try bin.make("videoconvert"), output)
        }
        return (convert, output)
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
    static func automaticBitrate(width: Int, height: Int) -> Int {
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

extension H264EncoderNode: VideoEncoderParameters {}
extension HEVCEncoderNode: VideoEncoderParameters {}
extension VP9EncoderNode: VideoEncoderParameters {}
extension AV1EncoderNode: VideoEncoderParameters {}
