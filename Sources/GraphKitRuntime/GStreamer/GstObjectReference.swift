import CGStreamer

/// One reference to a GStreamer object (an element, a pad), taken when made and let go with the
/// last holder of this.
///
/// The one unchecked Sendable type for such a reference, so that the types holding one are
/// checked by the compiler: a GstObject's reference count is atomic and its pointer never
/// changes here, and GStreamer's calls on elements and pads are made from any thread, but the
/// compiler sees only an unsafe pointer.
final class GstObjectReference<Object>: @unchecked Sendable {
    let raw: UnsafeMutablePointer<Object>

    init(_ raw: UnsafeMutablePointer<Object>) {
        gst_object_ref(UnsafeMutableRawPointer(raw))
        self.raw = raw
    }

    /// Takes over a reference the caller owns (not floating: sink a new element's first).
    init(adopting raw: UnsafeMutablePointer<Object>) {
        self.raw = raw
    }

    deinit { gst_object_unref(UnsafeMutableRawPointer(raw)) }
}
