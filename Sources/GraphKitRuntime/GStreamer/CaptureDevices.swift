import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

/// A camera or microphone GStreamer's device monitor finds.
public struct CaptureDevice: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable { case camera, microphone }
    public var kind: Kind
    public var name: String
    /// What to put in the capture node's `device` parameter.
    public var device: String
}

extension GStreamer {
    /// The cameras (V4L2) and microphones (ALSA, PulseAudio) present now.
    public static func captureDevices() -> [CaptureDevice] {
        initialize()
        let monitor = gst_device_monitor_new()!
        defer { gst_object_unref(UnsafeMutableRawPointer(monitor)) }
        gst_device_monitor_add_filter(monitor, "Video/Source", nil)
        gst_device_monitor_add_filter(monitor, "Audio/Source", nil)
        guard gst_device_monitor_start(monitor) != 0 else { return [] }
        defer { gst_device_monitor_stop(monitor) }
        var result: [CaptureDevice] = []
        var list = gst_device_monitor_get_devices(monitor)
        let head = list
        while let node = list {
            let device = node.pointee.data.assumingMemoryBound(to: GstDevice.self)
            let name = gst_device_get_display_name(device).map { s -> String in defer { g_free(s) }; return String(cString: s) } ?? "?"
            let cls = gst_device_get_device_class(device).map { s -> String in defer { g_free(s) }; return String(cString: s) } ?? ""
            var path = name
            if let props = gst_device_get_properties(device) {
                for key in ["device.path", "api.v4l2.path", "alsa.card_name", "node.name"] {
                    if let v = gst_structure_get_string(props, key) { path = String(cString: v); break }
                }
                gst_structure_free(props)
            }
            if cls.contains("Video") {
                result.append(CaptureDevice(kind: .camera, name: name, device: path))
            } else {
                result.append(CaptureDevice(kind: .microphone, name: name, device: cls.contains("Pulse") ? "pulse:\(path)" : "alsa:\(path)"))
            }
            gst_object_unref(UnsafeMutableRawPointer(device))
            list = node.pointee.next
        }
        g_list_free(head)
        return result
    }
}
