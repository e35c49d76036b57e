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
        case _ where VideoCoding.allCases.contains { $0.capsName == name }:
            return .video(VideoCoding.allCases.first { $0.capsName == name }!, width: int("width"), height: int("height"))
        case _ where AudioCoding.allCases.contains { $0.capsName == name }:
            return .audio(AudioCoding.allCases.first { $0.capsName == name }!, sampleRate: int("rate"), channels: int("channels"))
        case "application/x-graphkit-peaks":
            return .peaks(samplesPerPixel: int("samples-per-pixel") ?? 0, channels: int("channels") ?? 0)
        default:
            return .data(name)
        }
    }
}

extension GStreamer {
    /// Caps in words, for a format GraphKit has no name for: the media type and the fields
    /// that tell one such format from another (`audio/x-raw S24LE 48000 Hz 2 ch`).
    static func describe(_ caps: UnsafePointer<GstCaps>) -> String {
        guard gst_caps_get_size(caps) > 0, let s = gst_caps_get_structure(caps, 0) else { return "no format" }
        var words = [String(cString: gst_structure_get_name(s))]
        if let format = gst_structure_get_string(s, "format") { words.append(String(cString: format)) }
        var v: Int32 = 0, h: Int32 = 0
        if gst_structure_get_int(s, "width", &v) != 0, gst_structure_get_int(s, "height", &h) != 0 { words.append("\(v)x\(h)") }
        if gst_structure_get_int(s, "rate", &v) != 0 { words.append("\(v) Hz") }
        if gst_structure_get_int(s, "channels", &v) != 0 { words.append("\(v) ch") }
        return words.joined(separator: " ")
    }
}

extension FormatSet {
    /// GStreamer caps of every format in the set, for a caps filter that holds a port to its
    /// declaration; nil when the set takes anything (no filter needed).
    var capsString: String? {
        var structures: [String] = []
        for pattern in patterns {
            switch pattern {
            case .any, .container: return nil
            case let .pcm(formats, rates, channels):
                let names = SampleFormat.allCases.filter(formats.contains).map(\.gstName)
                structures.append("audio/x-raw, format=(string){ \(names.joined(separator: ", ")) }, layout=(string)interleaved, "
                                  + "rate=(int)\(Self.range(rates)), channels=(int)\(Self.range(channels))")
            case let .rawVideo(formats):
                let names = PixelFormat.allCases.filter(formats.contains).map(\.gstName)
                structures.append("video/x-raw, format=(string){ \(names.joined(separator: ", ")) }")
            case .aac: structures.append("audio/mpeg, mpegversion=(int)4")
            case .h264: structures.append("video/x-h264")
            case .video(let coding): structures.append(coding.capsName)
            case .audio(let coding): structures.append(coding.capsName)
            case .peaks: structures.append("application/x-graphkit-peaks")
            }
        }
        return structures.isEmpty ? nil : structures.joined(separator: "; ")
    }

    private static func range(_ r: ClosedRange<Int>) -> String {
        r.count == 1 ? "\(r.lowerBound)" : "[ \(r.lowerBound), \(r.upperBound) ]"
    }
}

extension Element {
    /// Gives raw audio arriving at `pad` without a channel mask, past stereo, the usual layout
    /// for its count (up to 8), else unpositioned channels: GStreamer's converter refuses such
    /// caps ("no channel-mask"), which a plain PCM WAV of 9 or 63 channels has, and ffmpeg
    /// decodes it.
    public func completeChannelMask(pad name: String = "sink") {
        guard let p = gst_element_get_static_pad(raw, name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        callbacks.adopt(probe: gk_pad_complete_channel_mask(p), on: p)
    }
}
