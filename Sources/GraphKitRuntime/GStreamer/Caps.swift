import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

extension GStreamer {
    /// The caps of a format (one new reference), or nil when GStreamer cannot parse them (a
    /// `.data` name that is not a media type).
    static func caps(_ format: MediaFormat) -> UnsafeMutablePointer<GstCaps>? {
        initialize()
        return gst_caps_from_string(format.capsString)
    }

    /// The format described by fixed caps, or nil for caps GraphKit has no name for.
    static func format(from caps: UnsafePointer<GstCaps>) -> MediaFormat? {
        guard gst_caps_get_size(caps) > 0, let s = gst_caps_get_structure(caps, 0) else { return nil }
        let name = String(cString: gst_structure_get_name(s))
        func int(_ field: String) -> Int? {
            var v: Int32 = 0
            return gst_structure_get_int(s, field, &v) != 0 ? Int(v) : nil
        }
        func string(_ field: String) -> String? {
            gst_structure_get_string(s, field).map { String(cString: $0) }
        }
        switch name {
        case "audio/x-raw":
            guard let f = string("format").flatMap(SampleFormat.init(gstName:)), let rate = int("rate"),
                  let channels = int("channels") else { return .data(name) }
            return .pcm(.init(sampleRate: rate, channels: channels, sampleFormat: f))
        case "audio/mpeg" where int("mpegversion") == 4 || int("mpegversion") == 2:
            return .aac(sampleRate: int("rate"), channels: int("channels"))
        case "video/x-raw":
            guard let f = string("format").flatMap(PixelFormat.init(gstName:)), let w = int("width"),
                  let h = int("height") else { return .data(name) }
            var num: Int32 = 0, den: Int32 = 1
            if gst_structure_get_fraction(s, "framerate", &num, &den) == 0 { num = 0; den = 1 }
            return .rawVideo(.init(pixelFormat: f, width: w, height: h, frameRate: FrameRate(Int(num), Int(den))))
        case "video/x-h264":
            return .h264(width: int("width"), height: int("height"))
        case "application/x-graphkit-peaks":
            return .peaks(samplesPerPixel: int("samples-per-pixel") ?? 0, channels: int("channels") ?? 0)
        default:
            return .data(name)
        }
    }
}
