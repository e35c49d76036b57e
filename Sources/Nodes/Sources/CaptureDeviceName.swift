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
    /// A PipeWire node is not looked up here: GStreamer's PipeWire device provider (0.3.65)
    /// left a node that `pipewiresink mode=provide` makes unable to link after it had listed it
    /// (measured: every capture after one listing waited for ever), so only the element is
    /// checked, and a node that is not there (WirePlumber then destroys the stream) is found by
    /// ``SilentSourceWatch`` within its first 5 s, named the same way.
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
        if case .pipeWire = self { return }
        let cameras = GStreamer.devices(ofProvider: "libcameraprovider") ?? []
        if cameras.contains(where: { ($0.elementDevice ?? $0.displayName) == value }) { return }
        let others = cameras.map { "libcamera:\($0.elementDevice ?? $0.displayName)" }
        throw GraphError(.runFailed, at: location, "no camera \"\(device)\": "
            + (others.isEmpty ? "libcamera finds no camera" : "libcamera finds \(others.joined(separator: ", "))"), node: context.id)
    }
}

/// Watches a live source that can go quiet without telling anyone: `pipewiresrc` waits for ever
/// when its node goes away, or when no session manager links it. Started in `prepare`, stopped
/// in `finish`. No first buffer within ``firstLimit`` seconds fails the run, naming the device;
/// no buffer for ``gapLimit`` seconds after some ends the stream (what was captured is kept,
/// complete, as `source.srt` does when its peer is gone for good) with a warning naming it.
final class SilentSourceWatch: Sendable {
    static let firstLimit = 5.0
    static let gapLimit = 3.0

    struct State: Sendable {
        var started: ContinuousClock.Instant?
        var lastBuffer: ContinuousClock.Instant?
        var stopped = false
    }
    private let state = Condition(State())
    private let thread = Guarded<JoinableThread?>(nil)
    private let parts = Guarded<(source: Element, fail: @Sendable (GraphError, Element) -> Void)?>(nil)
    let description: String

    /// `description`: the device as messages name it (`camera "pipewire:cam"`).
    init(_ description: String) { self.description = description }

    /// Counts the buffers leaving `source`.
    func watch(_ source: Element, in bin: BinBuilder) {
        parts.withLock { $0 = (source, bin.nodeFailure()) }
        source.onEachBuffer(leaving: "src") { [state] _ in
            let now = ContinuousClock.now
            state.withLock { $0.lastBuffer = now }
            return false
        }
    }

    func start() {
        state.withLock { $0.started = .now }
        let watcher = JoinableThread(name: "silent source") { [weak self] in
            while let watch = self, watch.step() {}
        }
        thread.withLock { $0 = watcher }
    }

    func stop() {
        state.withLock(wakingWaiters: true) { $0.stopped = true }
        thread.withLock { $0 }?.join()
    }

    /// One look; false once there is nothing more to watch.
    private func step() -> Bool {
        enum Step { case wait, fail, end(Double), leave }
        let step: Step = state.wait(until: { $0.stopped }, atMost: 0.1) { s in
            guard !s.stopped, let started = s.started else { return .leave }
            let now = ContinuousClock.now
            guard let last = s.lastBuffer else {
                return (now - started).inSeconds >= Self.firstLimit ? .fail : .wait
            }
            let quiet = (now - last).inSeconds
            return quiet >= Self.gapLimit ? .end(quiet) : .wait
        }
        switch step {
        case .wait:
            return true
        case .leave:
            return false
        default:
            break
        }
        // Built after prepare started the watch: nothing to act on yet means keep watching.
        guard let (source, fail) = parts.withLock({ $0 }) else { return true }
        switch step {
        case .wait, .leave:
            return true
        case .fail:
            fail(GraphError(.runFailed, "\(description) sent nothing within \(Int(Self.firstLimit)) s: PipeWire has no such node, "
                            + "nothing linked it (is its session manager, WirePlumber, running?) or it is not producing"), source)
            return false
        case .end(let quiet):
            source.postWarning("\(description) sent nothing for \(Int(quiet.rounded())) s: it went away; its stream ends here")
            source.endStream()
            return false
        }
    }
}

/// A count shared by a streaming thread's callbacks (a duration's gate).
final class SharedCount: Sendable {
    private let value = Atomic(0)
    /// Adds `n` and returns the count before.
    func add(_ n: Int) -> Int { value.add(n, ordering: .relaxed).oldValue }
}
