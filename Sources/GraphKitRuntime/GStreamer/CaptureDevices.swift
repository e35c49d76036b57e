import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers
import Synchronization

/// A camera or microphone GStreamer's device monitor finds.
public struct CaptureDevice: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable { case camera, microphone }
    public var kind: Kind
    public var name: String
    /// What to put in the capture node's `device` parameter: a V4L2 path (`/dev/video0`),
    /// `libcamera:NAME`, `pipewire:NODE-NAME`, `alsa:NAME` or `pulse:NAME`.
    public var device: String

    public init(kind: Kind, name: String, device: String) {
        (self.kind, self.name, self.device) = (kind, name, device)
    }
}

/// A device as one of GStreamer's device providers reports it, before GraphKit decides what to
/// list (``GStreamer/captureDevices(from:)``).
public struct FoundDevice: Sendable, Equatable {
    /// Which provider made it: `v4l2`, `libcamera`, `pipewire`, `pulse`, `alsa` (or the device's
    /// GType name when it is none of these).
    public var provider: String
    /// The device class: `Video/Source`, `Audio/Source`, libcamera's `Source/Video`.
    public var deviceClass: String
    public var displayName: String
    /// Its string properties (`device.path`, PipeWire's `node.name`, `api.v4l2.path`…).
    public var properties: [String: String]
    /// What the element it makes is set to open: v4l2src's, pulsesrc's and alsasrc's `device`,
    /// libcamerasrc's `camera-name`.
    public var elementDevice: String?

    public init(provider: String, deviceClass: String, displayName: String, properties: [String: String], elementDevice: String? = nil) {
        (self.provider, self.deviceClass, self.displayName, self.properties, self.elementDevice) = (provider, deviceClass, displayName, properties, elementDevice)
    }

    public var isVideo: Bool { deviceClass.contains("Video") }
    /// A camera's or a microphone's class: Source, and Video or Audio.
    public var isCaptureSource: Bool {
        let parts = deviceClass.split(separator: "/")
        return parts.contains("Source") && (parts.contains("Video") || parts.contains("Audio"))
    }
}

extension GStreamer {
    /// The cameras and microphones present now: V4L2 and libcamera cameras, PipeWire's video and
    /// audio sources, PulseAudio's and ALSA's microphones, each physical device once
    /// (``captureDevices(from:)`` says which name wins).
    public static func captureDevices() -> [CaptureDevice] {
        captureDevices(from: foundDevices())
    }

    /// GraphKit's own choice of what to list, from every provider's devices (each provider is
    /// asked on its own, so none hides another's: libcamera's hides every V4L2 device, even
    /// those it does not list itself).
    ///
    /// - PipeWire's nodes come first, as `pipewire:NODE-NAME`: when a PipeWire daemon runs, it
    ///   owns the cameras and sound cards, and shares a camera between programs where V4L2 gives
    ///   it to one. A V4L2 device (`api.v4l2.path`), a libcamera camera (`api.libcamera.path`) or
    ///   a PulseAudio source (the same `node.name`: pipewire-pulse) that a PipeWire node already
    ///   stands for is not listed again.
    /// - libcamera's cameras, as `libcamera:NAME`, then V4L2's, as their paths. libcamera and V4L2
    ///   name a USB camera differently and nothing in what they report ties the two together, so a
    ///   camera both see (without PipeWire) is listed under both names; either works.
    /// - ALSA's devices only when no sound server (PulseAudio or PipeWire) lists a microphone:
    ///   a server holds the sound card, and its sources are the same microphones (GStreamer's own
    ///   rule: its PulseAudio provider hides ALSA's).
    public static func captureDevices(from found: [FoundDevice]) -> [CaptureDevice] {
        var result: [CaptureDevice] = []
        var coveredPaths = Set<String>(), coveredCameras = Set<String>(), coveredSources = Set<String>()
        for d in found where d.provider == "pipewire" {
            guard let node = d.properties["node.name"] ?? d.properties["object.serial"] else { continue }
            if let path = d.properties["api.v4l2.path"] { coveredPaths.insert(path) }
            if let camera = d.properties["api.libcamera.path"] { coveredCameras.insert(camera) }
            coveredSources.insert(node)
            result.append(CaptureDevice(kind: d.isVideo ? .camera : .microphone, name: d.displayName, device: "pipewire:\(node)"))
        }
        for d in found where d.provider == "libcamera" && d.isVideo {
            let camera = d.elementDevice ?? d.displayName
            guard !coveredCameras.contains(camera) else { continue }
            result.append(CaptureDevice(kind: .camera, name: d.displayName, device: "libcamera:\(camera)"))
        }
        for d in found where d.provider == "v4l2" && d.isVideo {
            guard let path = d.elementDevice ?? d.properties["device.path"], !coveredPaths.contains(path) else { continue }
            result.append(CaptureDevice(kind: .camera, name: d.displayName, device: path))
        }
        for d in found where d.provider == "pulse" && !d.isVideo {
            guard let name = d.elementDevice, !coveredSources.contains(name) else { continue }
            result.append(CaptureDevice(kind: .microphone, name: d.displayName, device: "pulse:\(name)"))
        }
        let server = found.contains { ($0.provider == "pulse" || $0.provider == "pipewire") && !$0.isVideo }
        for d in found where d.provider == "alsa" && !d.isVideo && !server {
            guard let name = d.elementDevice else { continue }
            result.append(CaptureDevice(kind: .microphone, name: d.displayName, device: "alsa:\(name)"))
        }
        return result
    }

    /// One look at the devices at a time in the process: two threads' first use of a provider
    /// each make one (GStreamer keeps one per factory, but only after the race), and libcamera
    /// allows one CameraManager a process (a second is fatal: seen as the test process ending
    /// mid-run when a device listing and a libcamera check ran at once).
    private static let providers = Mutex(())

    /// Every provider's cameras and microphones, each provider asked on its own
    /// (``devices(of:)``), not through a device monitor, and PipeWire's nodes read by GraphKit
    /// itself (``pipeWireNodes()``), not by GStreamer's PipeWire provider: with PipeWire 0.3.65
    /// a C program listing through a monitor aborted 5 times in 40 ("unaligned tcache chunk"),
    /// and a graphctl run that had asked the provider alone 2 in 50.
    static func foundDevices() -> [FoundDevice] {
        initialize()
        return providers.withLock { _ in
            var result: [FoundDevice] = []
            let list = gst_device_provider_factory_list_get_device_providers(GST_RANK_MARGINAL)
            defer { gst_plugin_feature_list_free(list) }
            var factories = list
            while let node = factories {
                guard let data = node.pointee.data else { factories = node.pointee.next; continue }
                let factory = OpaquePointer(data)
                factories = node.pointee.next
                // The monitor's own test: a provider of sources (its class names Source).
                let klass = gst_device_provider_factory_get_metadata(factory, "klass").map { String(cString: $0) } ?? ""
                let name = gst_object_get_name(data.assumingMemoryBound(to: GstObject.self))
                    .map { s -> String in defer { g_free(s) }; return String(cString: s) } ?? ""
                guard name != "pipewiredeviceprovider", klass.split(separator: "/").contains("Source"),
                      let provider = gst_device_provider_factory_get(factory) else { continue }
                defer { gst_object_unref(UnsafeMutableRawPointer(provider)) }
                result += devices(of: provider).filter(\.isCaptureSource)
            }
            return result + (pipeWireNodes() ?? []).filter(\.isCaptureSource)
        }
    }

    /// PipeWire's nodes, as GraphKit reads them from PipeWire's registry itself (CGraphKitGlue's
    /// pipewire.c says why not GStreamer's provider), within 2 s; nil when libpipewire is not
    /// installed, none when no PipeWire daemon runs. Each node's `node.name`, `object.serial`,
    /// `node.description`, `media.class` and `object.path` are its properties, and the V4L2 or
    /// libcamera device its `object.path` names (`v4l2:/dev/video0`) is `api.v4l2.path` or
    /// `api.libcamera.path`, as PipeWire's own device properties say.
    public static func pipeWireNodes() -> [FoundDevice]? {
        final class Found { var nodes: [FoundDevice] = [] }
        let found = Found()
        let count = withExtendedLifetime(found) {
            gk_pipewire_list_nodes(2, { context, id, serial, name, description, mediaClass, path in
                let found = Unmanaged<Found>.fromOpaque(context!).takeUnretainedValue()
                func text(_ s: UnsafePointer<CChar>?) -> String { s.map { String(cString: $0) } ?? "" }
                var properties = ["object.id": String(id)]
                for (key, value) in [("object.serial", text(serial)), ("node.name", text(name)), ("node.description", text(description)),
                                     ("media.class", text(mediaClass)), ("object.path", text(path))] where !value.isEmpty {
                    properties[key] = value
                }
                for (prefix, key) in [("v4l2:", "api.v4l2.path"), ("libcamera:", "api.libcamera.path")] where text(path).hasPrefix(prefix) {
                    properties[key] = String(text(path).dropFirst(prefix.count))
                }
                found.nodes.append(FoundDevice(provider: "pipewire", deviceClass: text(mediaClass),
                                               displayName: text(description).isEmpty ? text(name) : text(description), properties: properties))
            }, Unmanaged.passUnretained(found).toOpaque())
        }
        return count == -1 ? nil : found.nodes
    }

    /// The devices one provider (`libcameraprovider`) finds now, by
    /// asking it alone: what a capture node checks its device against before a run. Nil when
    /// GStreamer has no such provider (its plugin is not installed).
    public static func devices(ofProvider factory: String) -> [FoundDevice]? {
        initialize()
        return providers.withLock { _ in
            guard let provider = gst_device_provider_factory_get_by_name(factory) else { return nil }
            defer { gst_object_unref(UnsafeMutableRawPointer(provider)) }
            return devices(of: provider)
        }
    }

    /// What one provider lists: started, its devices taken, stopped, as a device monitor does
    /// (a provider without a start of its own is probed by GStreamer's start). Its probe alone
    /// (`gst_device_provider_get_devices` on a provider not started) is a path monitors do not
    /// take: PipeWire's provider 1.4 returned devices it had already freed from it.
    private static func devices(of provider: UnsafeMutablePointer<GstDeviceProvider>) -> [FoundDevice] {
        guard gst_device_provider_start(provider) != 0 else { return [] }
        defer { gst_device_provider_stop(provider) }
        return found(in: gst_device_provider_get_devices(provider))
    }

    /// Reads and releases a list of devices (and the list).
    private static func found(in list: UnsafeMutablePointer<GList>?) -> [FoundDevice] {
        var result: [FoundDevice] = []
        var node = list
        while let n = node {
            let device = n.pointee.data.assumingMemoryBound(to: GstDevice.self)
            result.append(describe(device))
            gst_object_unref(UnsafeMutableRawPointer(device))
            node = n.pointee.next
        }
        g_list_free(list)
        return result
    }

    private static func describe(_ device: UnsafeMutablePointer<GstDevice>) -> FoundDevice {
        func take(_ s: UnsafeMutablePointer<gchar>?) -> String? {
            guard let s else { return nil }
            defer { g_free(s) }
            return String(cString: s)
        }
        let name = take(gst_device_get_display_name(device)) ?? "?"
        let cls = take(gst_device_get_device_class(device)) ?? ""
        let typeName = String(cString: g_type_name(UnsafeMutableRawPointer(device).assumingMemoryBound(to: GTypeInstance.self).pointee.g_class.pointee.g_type))
        let providers = ["GstV4l2Device": "v4l2", "GstLibcameraDevice": "libcamera", "GstPipeWireDevice": "pipewire",
                         "GstPulseDevice": "pulse", "GstAlsaDevice": "alsa"]
        var properties: [String: String] = [:]
        if let props = gst_device_get_properties(device) {
            for i in 0..<gst_structure_n_fields(props) {
                guard let key = gst_structure_nth_field_name(props, guint(i)), let v = gst_structure_get_string(props, key) else { continue }
                properties[String(cString: key)] = String(cString: v)
            }
            gst_structure_free(props)
        }
        // What the element opens, as the provider sets it: the one name each source takes.
        var elementDevice: String?
        if typeName != "GstPipeWireDevice", let element = gst_device_create_element(device, nil) {
            let object = UnsafeMutableRawPointer(element)
            gst_object_ref_sink(object)
            elementDevice = ["device", "camera-name"].lazy.compactMap { stringProperty(object, $0) }.first
            gst_object_unref(object)
        }
        return FoundDevice(provider: providers[typeName] ?? typeName, deviceClass: cls, displayName: name,
                           properties: properties, elementDevice: elementDevice)
    }

    /// A string property's value as set (not serialized: no quotes), nil when the object has no
    /// such string property or it is unset.
    private static func stringProperty(_ object: UnsafeMutableRawPointer, _ name: String) -> String? {
        let gobject = object.assumingMemoryBound(to: GObject.self)
        let stringType = GType(16 << 2)  // G_TYPE_STRING, a macro Swift cannot import
        guard let spec = g_object_class_find_property(object.assumingMemoryBound(to: GTypeInstance.self).pointee.g_class
                .withMemoryRebound(to: GObjectClass.self, capacity: 1) { $0 }, name),
              spec.pointee.value_type == stringType else { return nil }
        var value = GValue()
        g_value_init(&value, stringType)
        defer { g_value_unset(&value) }
        g_object_get_property(gobject, name, &value)
        return g_value_get_string(&value).map { String(cString: $0) }
    }
}
