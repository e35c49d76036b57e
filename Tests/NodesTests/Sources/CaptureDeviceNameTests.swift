import Testing
@testable import Nodes
import GraphKit
import GraphKitTesting
import TestSupport

@Suite struct CaptureDeviceNameTests {
    @Test func devicesNameTheirElements() {
        #expect(CaptureDeviceName(video: "test") == .test && CaptureDeviceName(video: "test").element == nil)
        #expect(CaptureDeviceName(video: "/dev/video0").element! == ("v4l2src", "device", "/dev/video0"))
        #expect(CaptureDeviceName(video: "pipewire:gk-test-cam").element! == ("pipewiresrc", "target-object", "gk-test-cam"))
        #expect(CaptureDeviceName(video: "pipewire:57").element! == ("pipewiresrc", "target-object", "57"))
        #expect(CaptureDeviceName(video: "libcamera:/base/soc/i2c0mux/i2c@1/imx219@10").element!
                == ("libcamerasrc", "camera-name", "/base/soc/i2c0mux/i2c@1/imx219@10"))
        #expect(CaptureDeviceName(audio: "pipewire:gk-test-mic").element! == ("pipewiresrc", "target-object", "gk-test-mic"))
        #expect(CaptureDeviceName(audio: "pulse:alsa_input.x").element! == ("pulsesrc", "device", "alsa_input.x"))
        #expect(CaptureDeviceName(audio: "alsa:hw:1").element! == ("alsasrc", "device", "hw:1"))
        #expect(CaptureDeviceName(audio: "hw:1").element! == ("alsasrc", "device", "hw:1"))
    }

    @Test(.media, .timeLimit(.minutes(1))) func anAbsentLibcameraCameraIsRefusedNamingIt() {
        #expect(throws: GraphError(.runFailed, at: "nodes.node.params.device", "no camera \"libcamera:gk-nowhere\": libcamera finds no camera", node: "node")) {
            try NodeHarness(#"{ "type": "capture.video", "params": { "device": "libcamera:gk-nowhere" } }"#)
        }
    }
}
