import CGStreamer
import CGraphKitGlue
import GraphKitCore

extension Element {
    /// Whether what follows this element's source pad takes a stream of `caps` (GStreamer's caps
    /// in text, `audio/x-flac`), asked of it by a caps query, which asks everything after it too:
    /// at the moment a demuxer's stream appears, to refuse a codec by name before it reaches a
    /// muxer that would refuse it as a bare "not negotiated". Nil when nothing is linked there or
    /// it takes anything (an app sink).
    public func downstreamTakes(_ caps: String, pad name: String = "src") -> Bool? {
        guard let wanted = gst_caps_from_string(caps) else { return false }
        defer { gk_caps_unref(wanted) }
        return downstreamTakes(wanted, pad: name)
    }

    /// Whether what follows this element's source pad takes `pad`'s stream as its caps are now
    /// (nil as for ``downstreamTakes(_:pad:)``, or when the pad has no caps yet).
    public func downstreamTakes(streamOf pad: Pad, at name: String = "src") -> Bool? {
        guard let caps = gst_pad_get_current_caps(pad.raw) else { return nil }
        defer { gk_caps_unref(caps) }
        return downstreamTakes(caps, pad: name, whole: true)
    }

    /// `whole`: every field of `wanted` as it is (a caps filter's accept), else some stream of it.
    private func downstreamTakes(_ wanted: UnsafeMutablePointer<GstCaps>, pad name: String, whole: Bool = false) -> Bool? {
        guard let pad = gst_element_get_static_pad(raw, name) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
        guard gst_pad_is_linked(pad) != 0, let taken = gst_pad_peer_query_caps(pad, nil) else { return nil }
        defer { gk_caps_unref(taken) }
        guard gst_caps_is_any(taken) == 0 else { return nil }
        return whole ? gst_caps_is_subset(wanted, taken) != 0 : gst_caps_can_intersect(taken, wanted) != 0
    }
}

extension Pad {
    /// The pad's caps in words (`video/x-vp9 320x240`), for a message.
    public var formatDescription: String {
        guard let caps = gst_pad_get_current_caps(raw) else { return mediaType ?? "no format" }
        defer { gk_caps_unref(caps) }
        return GStreamer.describe(caps)
    }
}

extension Element {
    /// For a `decodebin`: the media type its type finder found for the whole input
    /// (`video/x-matroska`, `video/webm`, `video/quicktime`), once found (by the time it adds a
    /// pad); nil before, or for another element.
    public var foundType: String? {
        guard let typefind = gst_bin_get_by_name(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstBin.self), "typefind") else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(typefind)) }
        guard let text = gk_object_get_as_string(UnsafeMutableRawPointer(typefind), "caps") else { return nil }
        defer { g_free(text) }
        let caps = String(cString: text)
        return caps.split(separator: ",").first.map { String($0.filter { $0 != " " }) }
    }
}
