import CGStreamer
import Foundation
@testable import GraphKitRuntime
import GraphKitTesting
import Testing

/// `Element.stampAudioBySampleCount`, which capture.audio puts after a PipeWire microphone, on a
/// pipeline of its own: buffers that all claim the same time (as PipeWire 1.4's audio test source
/// stamped them) leave one after another by their sample count, and a gap in arrival longer than
/// the tolerance starts the count again from the arrival, marked discontinuous.
@Suite(.media) struct AudioSampleCountStampTests {
    @Test(.timeLimit(.minutes(1)))
    func buffersFollowTheirSampleCountAndAGapStartsAgain() throws {
        GStreamer.initialize()
        let pipeline = try #require(gst_parse_launch(
            "appsrc name=src format=time is-live=true caps=audio/x-raw,format=S16LE,rate=48000,channels=1,layout=interleaved "
            + "! identity name=stamp ! appsink name=sink sync=false async=false max-buffers=0", nil))
        defer {
            gst_element_set_state(pipeline, GST_STATE_NULL)
            gst_object_unref(UnsafeMutableRawPointer(pipeline))
        }
        let bin = UnsafeMutableRawPointer(pipeline).assumingMemoryBound(to: GstBin.self)
        let src = try #require(gst_bin_get_by_name(bin, "src")), sink = try #require(gst_bin_get_by_name(bin, "sink"))
        let stamp = try #require(gst_bin_get_by_name(bin, "stamp"))
        defer { [src, sink, stamp].forEach { gst_object_unref(UnsafeMutableRawPointer($0)) } }
        let element = Element(raw: stamp, factory: "identity", nodeID: "stamp", callbacks: CallbackRegistry())
        element.stampAudioBySampleCount(leaving: "src", sampleRate: 48_000, bytesPerFrame: 2)
        #expect(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE)
        let appsrc = UnsafeMutableRawPointer(src).assumingMemoryBound(to: GstAppSrc.self)
        let appsink = UnsafeMutableRawPointer(sink).assumingMemoryBound(to: GstAppSink.self)

        /// Pushes 10 ms (480 samples) claiming 0.5 ms, and returns the buffer as it left.
        func pushAndPull() throws -> (pts: UInt64, duration: UInt64, discont: Bool) {
            let buffer = gst_buffer_new_allocate(nil, 960, nil)!
            buffer.pointee.pts = 500_000
            #expect(gst_app_src_push_buffer(appsrc, buffer) == GST_FLOW_OK)
            let sample = try #require(gst_app_sink_try_pull_sample(appsink, 5_000_000_000))
            defer { gst_sample_unref(sample) }
            let out = try #require(gst_sample_get_buffer(sample))
            return (UInt64(out.pointee.pts), UInt64(out.pointee.duration),
                    out.pointee.mini_object.flags & GST_BUFFER_FLAG_DISCONT.rawValue != 0)
        }
        let first = try pushAndPull()
        var expected = first.pts + 10_000_000
        #expect(first.duration == 10_000_000)
        for _ in 0..<5 {
            let next = try pushAndPull()
            #expect(next.pts == expected && next.duration == 10_000_000 && !next.discont, "\(next) after \(expected)")
            expected += 10_000_000
        }
        // Arrival now runs 200 ms ahead of the count: more than the 40 ms tolerance.
        Thread.sleep(forTimeInterval: 0.25)
        let late = try pushAndPull()
        #expect(late.discont && late.pts >= expected + 150_000_000, "\(late) after \(expected)")
        let after = try pushAndPull()
        #expect(after.pts == late.pts + 10_000_000 && !after.discont, "\(after) after \(late)")
    }
}
