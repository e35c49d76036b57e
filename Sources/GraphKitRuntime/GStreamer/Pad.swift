import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

/// A pad of an element, as a demuxer's pad-added handler sees it.
public final class Pad: Sendable {
    private let reference: GstObjectReference<GstPad>
    var raw: UnsafeMutablePointer<GstPad> { reference.raw }
    let nodeID: String

    init(raw: UnsafeMutablePointer<GstPad>, nodeID: String) {
        reference = GstObjectReference(raw)
        self.nodeID = nodeID
    }

    public var name: String {
        guard let s = gst_object_get_name(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstObject.self)) else { return "" }
        defer { g_free(s) }
        return String(cString: s)
    }

    /// The media type name of the pad's caps (`audio/x-raw`, `video/x-raw`, …).
    public var mediaType: String? {
        guard let caps = gst_pad_get_current_caps(raw) ?? gst_pad_query_caps(raw, nil) else { return nil }
        defer { gk_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let s = gst_caps_get_structure(caps, 0) else { return nil }
        return String(cString: gst_structure_get_name(s))
    }

    /// A text field of the pad's caps (`stream-format`, `alignment`), when they have it.
    public func capsField(_ name: String) -> String? {
        guard let caps = gst_pad_get_current_caps(raw) ?? gst_pad_query_caps(raw, nil) else { return nil }
        defer { gk_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let s = gst_caps_get_structure(caps, 0), let value = gst_structure_get_string(s, name) else { return nil }
        return String(cString: value)
    }

    /// The negotiated format, once there is one.
    public var format: MediaFormat? {
        guard let caps = gst_pad_get_current_caps(raw) else { return nil }
        defer { gk_caps_unref(caps) }
        return GStreamer.format(from: caps)
    }

    /// Raw audio as the pad's caps describe it, in any sample format GStreamer has (`S24LE`,
    /// `U8`, …), once the pad has fixed caps.
    public struct AudioShape: Sendable, Equatable {
        public var sampleRate: Int
        public var channels: Int
        /// GStreamer's name of the sample format (`S16LE`).
        public var sampleFormat: String
        public var interleaved: Bool
        public init(sampleRate: Int, channels: Int, sampleFormat: String, interleaved: Bool) {
            self.sampleRate = sampleRate
            self.channels = channels
            self.sampleFormat = sampleFormat
            self.interleaved = interleaved
        }

        /// The format GraphKit names, when it is one (S16LE or F32LE, interleaved).
        public var format: SampleFormat? { interleaved ? SampleFormat(gstName: sampleFormat) : nil }
    }

    /// The raw audio this pad carries, when its caps are fixed; nil for anything else.
    public var audioShape: AudioShape? {
        guard let caps = gst_pad_get_current_caps(raw) ?? gst_pad_query_caps(raw, nil) else { return nil }
        defer { gk_caps_unref(caps) }
        guard gst_caps_is_fixed(caps) != 0, let s = gst_caps_get_structure(caps, 0),
              String(cString: gst_structure_get_name(s)) == "audio/x-raw" else { return nil }
        var rate: Int32 = 0, channels: Int32 = 0
        guard gst_structure_get_int(s, "rate", &rate) != 0, gst_structure_get_int(s, "channels", &channels) != 0,
              let format = gst_structure_get_string(s, "format") else { return nil }
        let layout = gst_structure_get_string(s, "layout").map { String(cString: $0) } ?? "interleaved"
        return AudioShape(sampleRate: Int(UInt32(bitPattern: rate)), channels: Int(channels), sampleFormat: String(cString: format),
                          interleaved: layout == "interleaved")
    }

    /// Links this (source) pad to an element's sink pad. `checkingCaps` false links whatever
    /// the two pads say they take, so that a format refused downstream is refused when it
    /// arrives, where the run can say which node refuses it (not as a bare failure to link).
    @discardableResult
    public func link(to element: Element, pad name: String = "sink", checkingCaps: Bool = true) -> Bool {
        guard let sink = gst_element_get_static_pad(element.raw, name) else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(sink)) }
        let checks = checkingCaps ? GST_PAD_LINK_CHECK_DEFAULT : GST_PAD_LINK_CHECK_HIERARCHY
        return gst_pad_link_full(raw, sink, checks) == GST_PAD_LINK_OK
    }

    /// Links this (source) pad to an element's sink pad in place of the pad linked there now,
    /// which is unlinked first: a stream that started again as a new pad (a live transport
    /// stream's demuxer after a gap) taking the old one's route. Formats are checked when the
    /// stream flows (see ``link(to:pad:checkingCaps:)``).
    @discardableResult
    public func relink(to element: Element, pad name: String = "sink") -> Bool {
        guard let sink = gst_element_get_static_pad(element.raw, name) else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(sink)) }
        if let old = gst_pad_get_peer(sink) {
            gst_pad_unlink(old, sink)
            gst_object_unref(UnsafeMutableRawPointer(old))
        }
        return gst_pad_link_full(raw, sink, GST_PAD_LINK_CHECK_HIERARCHY) == GST_PAD_LINK_OK
    }
}
