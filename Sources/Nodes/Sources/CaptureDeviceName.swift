import FoundationEssentials
import GraphKitCore
import GraphKitRuntime
import Synchronization

/// What a capture node's `device` parameter names, and the checks made before a run that it is
/// there. `capture.video` takes `test`, a V4L2 path, `pipewire:NODE` and `libcamera:NAME`;
/// `capture.audio` takes `test`, `pipewire:NODE`, `pulse:NAME` and `alsa:NAME` (a bare name is
/// an ALSA device).
///
/// `pipewire:NODE` is a PipeWire node's `node.name` (what `graphctl devices` lists: stable while
/// the device or the program that provides it stays the same, where the node's id and serial
/// change each time it is made again) or its `object.serial` (digits); `pipewiresrc`'s
/// `target-object` takes either. PipeWire links the stream through its session manager
/// (WirePlumber): without one running, nothing arrives.
enum CaptureDeviceName: Equatable {
    case test
    case v4l2(path: String)
    case pipeWire(node: String)
    case libcamera(camera: String)
    case pulse(String)
    case alsa(String)

    init(video device: String) {
        if device == "test" { self = .test }
        else if device.hasPrefix("pipewire:") { self = .pipeWire(node: String(device.dropFirst(9))) }
        else if device.hasPrefix("libcamera:") { self = .libcamera(camera: String(device.dropFirst(10))) }
        else { self = .v4l2(path: device) }
    }

    init(audio device: String) {
        if device == "test" { self = .test }
        else if device.hasPrefix("pipewire:") { self = .pipeWire(node: String(device.dropFirst(9))) }
        else if device.hasPrefix("pulse:") { self = .pulse(String(device.dropFirst(6))) }
        else { self = .alsa(device.hasPrefix("alsa:") ? String(device.dropFirst(5)) : device) }
    }

    /// The element that reads it, and the property that names the device, with its value.
    var element: (factory: String, property: String, value: String)? {
        switch self {
        case .test: nil
        case .v4l2(let path): ("v4l2src", "device", path)
        case .pipeWire(let node): ("pipewiresrc", "target-object", node)
        case .libcamera(let camera): ("libcamerasrc", "camera-name", camera)
        case .pulse(let name): ("pulsesrc", "device", name)
        case .alsa(let name): ("alsasrc", "device", name)
        }
    }

    /// Checks before the run that the device is there, for the sources that can be asked
    /// without harm: a V4L2 path exists; libcamera lists the camera. Their element missing is a
    /// missing plugin (exit 69) naming the Debian package; a device missing fails (exit 70)
    /// naming it, with what is there instead.
    ///
    /// A PipeWire node is looked up by its `node.name` or `object.serial` among PipeWire's
    /// sources of its kind (``GStreamer/pipeWireNodes()``); one that is there and sends nothing
    /// is found by ``SilentSourceWatch``.
    func checkPresent(camera: Bool, _ context: NodeContext, device: String) throws(GraphError) {
        let location = context.location(parameter: "device")
        switch self {
        case .test, .pulse, .alsa:
            return
        case .v4l2(let path):
            if !FileManager.default.fileExists(atPath: path) {
                throw GraphError(.runFailed, at: location, "no camera at \"\(path)\"", node: context.id)
            }
            return
        case .pipeWire, .libcamera:
            break
        }
        guard let (factory, _, value) = element else { return }
        guard GStreamer.hasElement(factory) else {
            throw GraphError(.missingPlugin, at: location,
                             "GStreamer element \"\(factory)\" is not installed (it reads \"\(device)\"); install the Debian package \(GStreamer.debianPackage(forElement: factory))",
                             node: context.id)
        }
        if case .pipeWire(let node) = self {
            let nodes = (GStreamer.pipeWireNodes() ?? []).filter { $0.isCaptureSource && $0.isVideo == camera }
            if nodes.contains(where: { $0.properties["node.name"] == node || $0.properties["object.serial"] == node }) { return }
            let others = nodes.compactMap { $0.properties["node.name"].map { "pipewire:\($0)" } }
            throw GraphError(.runFailed, at: location, "no \(camera ? "camera" : "microphone") \"\(device)\": "
                + (others.isEmpty ? "PipeWire lists none (is PipeWire running, and this program in its session?)" : "PipeWire lists \(others.joined(separator: ", "))"),
                node: context.id)
        }
        let cameras = GStreamer.devices(ofProvider: "libcameraprovider") ?? []
        if cameras.contains(where: { ($0.elementDevice ?? $0.displayName) == value }) { return }
        let others = cameras.map { "libcamera:\($0.elementDevice ?? $0.displayName)" }
        throw GraphError(.runFailed, at: location, "no camera \"\(device)\": "
            + (others.isEmpty ? "libcamera finds no camera" : "libcamera finds \(others.joined(separator: ", "))"), node: context.id)
    }
}
