import Testing
import GraphKit
import GraphKitTesting
import Nodes

@Suite struct AACEncoderNodeTests {
    @Test func encodesOneSecondToAACFramesOf1024Samples() throws {
        let h = try NodeHarness(#"{ "type": "encode.aac", "params": { "bitrate": 64000 } }"#)
        try h.push(TestMedia.sine(sampleRate: 44_100, channels: 2, seconds: 1))
        let out = try h.pullAll()
        #expect(out.first?.format == .aac(sampleRate: 44_100, channels: 2))
        // 44100 frames make 43.07 AAC frames; the encoder flushes the last partial one.
        #expect((44...45).contains(out.count))
        let times = out.compactMap(\.presentationTime)
        #expect(times.count == out.count)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 < $1 })
        // GStreamer keeps nanoseconds: a 1024-frame duration is exact to the nanosecond, not the frame.
        #expect(out.dropLast().allSatisfy { abs($0.duration!.seconds - 1024.0 / 44_100) < 1e-9 })
        // About 64 kb/s: 8000 bytes a second, give or take the encoder's rate control.
        let bytes = out.reduce(0) { $0 + $1.byteCount }
        #expect((5000...11000).contains(bytes))
    }

    @Test func theOtherEncoderIsAMissingPluginWhenNotInstalled() throws {
        if GStreamer.hasElement("voaacenc") {
            let h = try NodeHarness(#"{ "type": "encode.aac", "params": { "encoder": "voaacenc" } }"#)
            try h.push(TestMedia.sine(seconds: 0.5))
            #expect(try h.pullAll().count > 10)
        } else {
            #expect(throws: GraphError(.missingPlugin, at: "node \"node\"",
                                       "GStreamer element \"voaacenc\" is not installed; install the Debian package gstreamer1.0-plugins-bad",
                                       node: "node")) {
                try NodeHarness(#"{ "type": "encode.aac", "params": { "encoder": "voaacenc" } }"#)
            }
        }
    }
}
