import CGraphKitGlue

// What the installed GStreamer does, where GraphKit's workarounds depend on it (GStreamer 1.22 on
// Debian 12, 1.24 on Ubuntu 24.04, 1.26 on Debian 13). Each is decided by asking GStreamer: a
// behaviour tried once at start-up, a property that exists, the version only when nothing can be
// asked (docs/GSTREAMER.md, lists every workaround and its rule).

extension GStreamer {
    /// Whether videoflip with `video-direction=auto` passes the image-orientation tag on as it
    /// came after turning the picture, so that a writer downstream would turn it once more
    /// (GStreamer 1.22's does). Asked of videoflip itself, once per process: a 16x16 frame tagged
    /// rotate-90 is sent through one and the tag that comes out is read (about a millisecond).
    /// Where it does, decode puts gkorientation orientation=rotate-0 after it.
    public static var videoflipPassesOrientationOn: Bool { videoflipProbe }

    private static let videoflipProbe: Bool = {
        initialize()
        // -1 (no videoflip): true, the safe answer; the node making one then says what is missing.
        return gk_videoflip_passes_orientation() != 0
    }()
}
