import Testing
@testable import GraphKitRuntime

/// What `GStreamer.captureDevices()` lists from what the providers report: each physical device
/// once, under the name GraphKit prefers (the code's own rule, no GStreamer).
@Suite struct CaptureDeviceListingTests {
    static let v4l2 = FoundDevice(provider: "v4l2", deviceClass: "Video/Source", displayName: "USB Camera",
                                  properties: ["device.path": "/dev/video0"], elementDevice: "/dev/video0")
    static let v4l2Other = FoundDevice(provider: "v4l2", deviceClass: "Video/Source", displayName: "Capture card",
                                       properties: ["device.path": "/dev/video2"], elementDevice: "/dev/video2")
    static let pipeWireCamera = FoundDevice(provider: "pipewire", deviceClass: "Video/Source", displayName: "USB Camera (V4L2)",
                                            properties: ["node.name": "v4l2_input.usb-cam", "api.v4l2.path": "/dev/video0", "object.serial": "57"])
    static let libcamera = FoundDevice(provider: "libcamera", deviceClass: "Source/Video", displayName: "\\_SB_.PCI0-1:1.0-0c45:6366",
                                       properties: [:], elementDevice: "\\_SB_.PCI0-1:1.0-0c45:6366")
    static let pipeWireMic = FoundDevice(provider: "pipewire", deviceClass: "Audio/Source", displayName: "Built-in Audio",
                                         properties: ["node.name": "alsa_input.pci.analog-stereo", "api.alsa.path": "front:0"])
    static let pulseMic = FoundDevice(provider: "pulse", deviceClass: "Audio/Source", displayName: "Built-in Audio",
                                      properties: ["alsa.card_name": "HDA Intel"], elementDevice: "alsa_input.pci.analog-stereo")
    static let pulseOther = FoundDevice(provider: "pulse", deviceClass: "Audio/Source", displayName: "Network mic",
                                        properties: [:], elementDevice: "tunnel.mic")
    static let alsaMic = FoundDevice(provider: "alsa", deviceClass: "Audio/Source", displayName: "HDA Intel", properties: [:], elementDevice: "hw:0")

    @Test func pipeWireStandsForTheV4L2CameraAndThePulseSourceItCovers() {
        let listed = GStreamer.captureDevices(from: [Self.v4l2, Self.v4l2Other, Self.pipeWireCamera, Self.pipeWireMic, Self.pulseMic, Self.pulseOther, Self.alsaMic])
        #expect(listed == [
            CaptureDevice(kind: .camera, name: "USB Camera (V4L2)", device: "pipewire:v4l2_input.usb-cam"),
            CaptureDevice(kind: .microphone, name: "Built-in Audio", device: "pipewire:alsa_input.pci.analog-stereo"),
            CaptureDevice(kind: .camera, name: "Capture card", device: "/dev/video2"),  // PipeWire does not list it
            CaptureDevice(kind: .microphone, name: "Network mic", device: "pulse:tunnel.mic"),
        ])
    }

    @Test func withoutPipeWireLibcameraAndV4L2AreBothListedAndALSAOnlyWithoutASoundServer() {
        #expect(GStreamer.captureDevices(from: [Self.v4l2, Self.libcamera, Self.alsaMic]) == [
            CaptureDevice(kind: .camera, name: "\\_SB_.PCI0-1:1.0-0c45:6366", device: "libcamera:\\_SB_.PCI0-1:1.0-0c45:6366"),
            CaptureDevice(kind: .camera, name: "USB Camera", device: "/dev/video0"),
            CaptureDevice(kind: .microphone, name: "HDA Intel", device: "alsa:hw:0"),
        ])
        #expect(GStreamer.captureDevices(from: [Self.pulseMic, Self.alsaMic]) == [
            CaptureDevice(kind: .microphone, name: "Built-in Audio", device: "pulse:alsa_input.pci.analog-stereo"),
        ])
    }

    @Test func aPipeWireLibcameraNodeStandsForLibcamerasCamera() {
        var node = Self.pipeWireCamera
        node.properties = ["node.name": "libcamera_input.cam", "api.libcamera.path": Self.libcamera.elementDevice!]
        #expect(GStreamer.captureDevices(from: [Self.libcamera, node]).map(\.device) == ["pipewire:libcamera_input.cam"])
    }

    @Test func aNodeWithoutANameIsListedByItsSerial() {
        var node = Self.pipeWireCamera
        node.properties = ["object.serial": "57"]
        #expect(GStreamer.captureDevices(from: [node]).map(\.device) == ["pipewire:57"])
    }

    @Test func theCaptureElementsAdviseTheirPackages() {
        for minor in [22, 26] {
            let table = GStreamer.debianPackages(gstreamerMinor: minor)
            #expect(table["pipewiresrc"] == "gstreamer1.0-pipewire" && table["libcamerasrc"] == "gstreamer1.0-libcamera")
        }
    }
}
