import CGStreamer
import CGraphKitGlue
import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// The questions GraphKit asks the installed GStreamer at start-up instead of reading its version
/// (docs/GSTREAMER.md): each answer against what GStreamer does in a
/// real pipeline, so that the test holds on 1.22 and 1.26 alike.
@Suite(.media) struct GStreamerCapabilitiesTests {
    /// decode plugs gkorientation rotate-0 after videoflip only where videoflip passes the
    /// orientation tag on after turning the picture (GStreamer 1.22's does, so that a writer would
    /// turn it once more). The start-up probe must say what videoflip does in gst-launch-1.0.
    @Test func theVideoflipProbeSaysWhatVideoflipDoes() throws {
        let text = try TestMedia.runTool("gst-launch-1.0", ["-v", "videotestsrc", "num-buffers=1", "!", "video/x-raw,width=16,height=16",
                                                            "!", "taginject", "tags=image-orientation=rotate-90",
                                                            "!", "videoflip", "video-direction=auto", "!", "fakesink", "silent=false"])
        let passedOn = text.split(separator: "\n").contains {
            $0.contains("fakesink") && $0.contains("image-orientation") && $0.contains("rotate-90")
        }
        #expect(GStreamer.videoflipPassesOrientationOn == passedOn, "\(text)")
    }

    /// GStreamer 1.24+'s qtdemux marks gapless AAC's priming (a GstAudioClippingMeta) for its
    /// decoder to cut, which 1.22's never does, so this is the decision alone, given the marks:
    /// taken off the sound into a decoder while gkaudiotrim cuts (its timescale set), left where
    /// it cuts nothing, so that the priming is cut once either way.
    @Test func gaplessMarksAreTakenOffOnlyWhereGraphKitTrims() throws {
        GStreamer.initialize()
        let trim = try #require(gst_element_factory_make("gkaudiotrim", nil))
        defer { gst_object_unref(UnsafeMutableRawPointer(trim)) }
        func marked() -> UnsafeMutablePointer<GstBuffer> {
            let buffer = gst_buffer_new_allocate(nil, 64, nil)!
            _ = gst_buffer_add_audio_clipping_meta(buffer, GST_FORMAT_DEFAULT, 1024, 0)
            return buffer
        }
        let untouched = gk_buffer_without_clipping(marked(), trim)!
        #expect(gst_buffer_get_meta(untouched, gst_audio_clipping_meta_api_get_type()) != nil, "GraphKit trims nothing: GStreamer's mark stays")
        gst_buffer_unref(untouched)
        #expect(gk_object_set_from_string(UnsafeMutableRawPointer(trim), "timescale", "44100") == 0)
        let cleared = gk_buffer_without_clipping(marked(), trim)!
        #expect(gst_buffer_get_meta(cleared, gst_audio_clipping_meta_api_get_type()) == nil, "gkaudiotrim cuts: the mark must go")
        gst_buffer_unref(cleared)
    }
}
