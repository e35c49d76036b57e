import Foundation
import Testing
import GraphKit
import GraphKitTesting

/// The questions GraphKit asks the installed GStreamer at start-up instead of reading its version
/// (docs/ARCHITECTURE.md, "GStreamer versions"): each answer against what GStreamer does in a
/// real pipeline, so that the test holds on 1.22 and 1.26 alike.
@Suite struct GStreamerCapabilitiesTests {
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
}
