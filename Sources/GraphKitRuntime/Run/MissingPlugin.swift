import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

/// What decodebin found no plugin for, from its missing-plugin message: the stream, as GStreamer
/// names it, and the key of ``GStreamer/decoders`` that says which Debian package would add it.
struct MissingPlugin: Equatable {
    /// GStreamer's words for what is missing ("Dirac decoder").
    var description: String
    /// For a missing decoder: what the file holds ("Dirac video", "Vorbis audio"), or its
    /// format when the missing piece is a demuxer ("Ogg").
    var stream: String?
    var isContainer = false
    /// GStreamer does not know the format at all (an MP4 sample entry it has no name for): no
    /// plugin would add it, and the file may as well be damaged.
    var isUnknown = false
    /// The ``GStreamer/decoders`` key ("video/x-dirac").
    var key: String?
    /// The node whose element found the stream it cannot decode.
    var node: String?

    init?(_ msg: UnsafeMutablePointer<GstMessage>, node: String?) {
        guard gst_is_missing_plugin_message(msg) != 0, let d = gst_missing_plugin_message_get_description(msg) else { return nil }
        self.node = node
        description = String(cString: d)
        g_free(d)
        guard let s = gst_message_get_structure(msg), gst_structure_get_string(s, "type").map({ String(cString: $0) }) == "decoder",
              let detail = gst_structure_get_value(s, "detail"), let caps = gst_value_get_caps(detail),
              gst_caps_get_size(caps) > 0, let structure = gst_caps_get_structure(caps, 0) else { return }
        let mediaType = String(cString: gst_structure_get_name(structure))
        var version: gint = 0
        let mpegVersion = gst_structure_get_int(structure, "mpegversion", &version) != 0 ? Int(version) : nil
        var system: gboolean = 0
        let systemStream = gst_structure_get_boolean(structure, "systemstream", &system) != 0 && system != 0
        key = GStreamer.decoderKey(mediaType: mediaType, mpegVersion: mpegVersion, systemStream: systemStream)
        let flags = gst_pb_utils_get_caps_description_flags(caps).rawValue
        guard flags != 0, let c = gst_pb_utils_get_codec_description(caps) else {
            stream = "a stream GStreamer does not know (\(mediaType))"
            isUnknown = true
            return
        }
        let codec = String(cString: c)
        g_free(c)
        let lower = codec.lowercased()
        if flags & GST_PBUTILS_CAPS_DESCRIPTION_FLAG_CONTAINER.rawValue != 0 {
            isContainer = true
            stream = codec
        } else if flags & GST_PBUTILS_CAPS_DESCRIPTION_FLAG_VIDEO.rawValue != 0, !lower.contains("video") {
            stream = "\(codec) video"
        } else if flags & GST_PBUTILS_CAPS_DESCRIPTION_FLAG_AUDIO.rawValue != 0, !lower.contains("audio") {
            stream = "\(codec) audio"
        } else {
            stream = codec
        }
    }

    /// "\"in.mov\" holds Dirac video, which no installed GStreamer plugin decodes; install the
    /// Debian package …", or, when GraphKit knows no package for it, a sentence that says so
    /// rather than invent one. `input` names the file (nil: "the input").
    static func message(_ missing: [MissingPlugin], input: String?) -> String {
        let subject = input ?? "the input"
        return missing.map { m in
            if m.isUnknown, let stream = m.stream {
                return "\(subject) holds \(stream): the file is damaged, or made with a codec no GStreamer plugin reads"
            }
            guard let stream = m.stream, let key = m.key else { return "a GStreamer plugin is missing: \(m.description)" }
            var sentence = m.isContainer
                ? "\(subject) is in \(stream) format, which no installed GStreamer plugin reads"
                : "\(subject) holds \(stream), which no installed GStreamer plugin decodes"
            if let package = GStreamer.debianPackage(decoding: key) {
                sentence += "; install the Debian package \(package)"
            } else {
                sentence += "; GraphKit knows no Debian package that does"
            }
            return sentence
        }.joined(separator: "; ")
    }
}
