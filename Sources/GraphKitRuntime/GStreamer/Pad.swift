import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

/// A pad of an element, as a demuxer's pad-added handler sees it.
public final class Pad: @unchecked Sendable {
    let raw: UnsafeMutablePointer<GstPad>
    let nodeID: String

    init(raw: UnsafeMutablePointer<GstPad>, nodeID: String) {
        self.raw = raw
        self.nodeID = nodeID
        gst_object_ref(UnsafeMutableRawPointer(raw))
    }
    deinit { gst_object_unref(UnsafeMutableRawPointer(raw)) }

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

    /// The negotiated format, once there is one.
    public var format: MediaFormat? {
        guard let caps = gst_pad_get_current_caps(raw) else { return nil }
        defer { gk_caps_unref(caps) }
        return GStreamer.format(from: caps)
    }

    /// Links this (source) pad to an element's sink pad.
    @discardableResult
    public func link(to element: Element, pad name: String = "sink") -> Bool {
        guard let sink = gst_element_get_static_pad(element.raw, name) else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(sink)) }
        return gst_pad_link(raw, sink) == GST_PAD_LINK_OK
    }
}
