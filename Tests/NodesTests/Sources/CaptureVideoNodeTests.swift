import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite struct CaptureVideoNodeTests {
    @Test(.media) func testPatternGivesExactFramesAndTimestamps() throws {
        let h = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 64, "height": 48, "fps": 25, "duration": 0.4, "live": false } }"#)
        let frames = try h.pullAll()
        #expect(frames.count == 10)
        #expect(frames.first?.format == .rawVideo(.init(pixelFormat: .bgra, width: 64, height: 48, frameRate: FrameRate(25))))
        for (i, f) in frames.enumerated() {
            #expect(f.presentationTime == MediaTime(value: Int64(i), timescale: 25))
            #expect(f.byteCount == 64 * 48 * 4)
        }
        #expect(frames[0].bytes != frames[9].bytes)  // it moves
    }

    /// A duration under half a frame is one frame: it was none, which the test source took as
    /// no limit, and the capture never ended.
    @Test(.media, .timeLimit(.minutes(10)))
    func aDurationUnderHalfAFrameGivesOneFrame() throws {
        let h = try NodeHarness(#"{ "type": "capture.video", "params": { "width": 64, "height": 48, "fps": 30, "duration": 0.01, "live": false } }"#)
        #expect(try h.pullAll().count == 1)
        try h.finish()
    }

    @Test(.media) func aMissingCameraFailsNamingIt() {
        #expect(throws: GraphError(.runFailed, at: "nodes.node.params.device", "no camera at \"/dev/video99\"", node: "node")) {
            try NodeHarness(#"{ "type": "capture.video", "params": { "device": "/dev/video99" } }"#)
        }
    }
}
