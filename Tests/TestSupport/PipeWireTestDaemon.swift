import Foundation
import Glibc
import GraphKit
import GraphKitTesting

/// A PipeWire of the test's own, with no hardware: the daemon with a minimal configuration (no
/// ALSA, no real-time, no D-Bus), WirePlumber to link streams to their targets (pipewiresrc with
/// a `target-object` waits for ever when nothing links it: PipeWire itself never does) with its
/// device monitors off, and the private D-Bus session bus WirePlumber 0.4 will not start without
/// ("Cannot autolaunch D-Bus", then it leaves). All three live in a private XDG_RUNTIME_DIR, are
/// started by PID and stopped by PID (``LoopbackServer``), whatever the test did.
///
/// Cameras and microphones are PipeWire's own test sources, made in the daemon
/// (``provide(camera:)`` and ``provide(microphone:)``): nodes of class Video/Source and
/// Audio/Source, owned by the daemon, as a real device's are. (`pipewiresink mode=provide`
/// processes were tried first: PipeWire 0.3.65 stopped linking such a node after a few clients,
/// and after a device listing, so that captures waited for ever, gst-launch-1.0's too.)
public final class PipeWireTestDaemon: @unchecked Sendable {
    // Unchecked: `providers` is touched by the test's own thread only; the rest is set once.
    public let folder: URL
    /// The environment a client of this PipeWire runs with: the test's, with the runtime folder.
    public let environment: [String: String]
    private var servers: [LoopbackServer] = []
    private var sessionManager: LoopbackServer?

    /// Why the test cannot run here (a program missing), or nil.
    public static let missing: String? = {
        let tools = ["pipewire", "wireplumber", "dbus-daemon", "gst-launch-1.0"]
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        let absent = tools.filter { tool in !path.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)") } }
        guard absent.isEmpty else {
            return "not installed: \(absent.joined(separator: ", ")) (scripts/install-deps.sh installs pipewire, wireplumber and dbus-daemon)"
        }
        return GStreamer.hasElement("pipewiresink") ? nil : "GStreamer's pipewiresink is not installed (gstreamer1.0-pipewire)"
    }()

    /// Starts the three and waits (up to 10 s) until WirePlumber is connected and settled.
    public init() throws {
        folder = try TestMedia.temporaryFolder()
        let run = folder.appendingPathComponent("run"), config = folder.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var env = ProcessInfo.processInfo.environment
        env["XDG_RUNTIME_DIR"] = run.path
        env["PIPEWIRE_RUNTIME_DIR"] = run.path
        env["XDG_CONFIG_HOME"] = config.path
        env["XDG_STATE_HOME"] = folder.appendingPathComponent("state").path
        env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(run.path)/bus"
        env.removeValue(forKey: "PIPEWIRE_REMOTE")
        environment = env
        try Self.writeConfiguration(in: folder)
        do {
            try start("dbus-daemon", ["--session", "--nofork", "--nopidfile", "--address=unix:path=\(run.path)/bus"], "dbus")
            try waitFor("the D-Bus socket", within: 10) { FileManager.default.fileExists(atPath: "\(run.path)/bus") }
            try start("pipewire", ["-c", folder.appendingPathComponent("pipewire.conf").path], "pipewire")
            try waitFor("PipeWire's socket", within: 10) { FileManager.default.fileExists(atPath: "\(run.path)/pipewire-0") }
            let wireplumber = try start("wireplumber", [], "wireplumber")
            sessionManager = wireplumber
            // Settled: it made the default metadata, which PipeWire then lists.
            try waitFor("WirePlumber", within: 10) {
                guard wireplumber.isRunning else { return false }
                return ((try? self.tool("pw-cli", ["ls", "Metadata"])) ?? "").contains("metadata.name = \"default\"")
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Stops every process it started, providers first.
    public func stop() {
        for server in servers.reversed() { server.stop() }
        servers = []
        try? FileManager.default.removeItem(at: folder)
    }

    /// A camera: PipeWire's own video test source (SMPTE bars with a patch of snow that changes
    /// each frame), a node of class Video/Source made in the daemon as a V4L2 or libcamera
    /// camera's node is, named `name`. It stays until ``remove(_:)``.
    public func provide(camera name: String) throws {
        try create("spa-node-factory", "videotestsrc", name, mediaClass: "Video/Source")
    }

    /// A microphone: PipeWire's own audio test source (a 440 Hz sine at full scale, 32-bit float
    /// mono), through PipeWire's adapter as a sound card's source is, named `name`.
    public func provide(microphone name: String) throws {
        try create("adapter", "audiotestsrc", name, mediaClass: "Audio/Source")
    }

    /// Destroys the node `name`: the device unplugged.
    public func remove(_ name: String) throws {
        guard let id = try nodeID(name) else { throw GraphError(.runFailed, "no PipeWire node \(name) to remove") }
        _ = try tool("pw-cli", ["destroy", id])
        try waitFor("node \(name) gone", within: 10) { ((try? self.nodeID(name)) ?? nil) == nil }
    }

    /// Stops WirePlumber: nothing links a stream to its node any more.
    public func stopSessionManager() {
        sessionManager?.stop()
    }

    /// Made by pw-cli and lingering after it: owned by the daemon, as a device's node is.
    private func create(_ factory: String, _ spa: String, _ name: String, mediaClass: String) throws {
        _ = try tool("pw-cli", ["create-node", factory,
                                "{ factory.name=\(spa) node.name=\(name) node.description=GraphKit-test-\(name) media.class=\(mediaClass) object.linger=true }"])
        try waitFor("node \(name) in PipeWire", within: 10) { ((try? self.nodeID(name)) ?? nil) != nil }
    }

    /// The id of the node named `name` (`pw-cli ls Node`), nil when there is none.
    private func nodeID(_ name: String) throws -> String? {
        var id: String?
        for line in try tool("pw-cli", ["ls", "Node"]).split(separator: "\n") {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
            if words.first == "id", words.count > 1 { id = String(words[1]) }
            if line.contains("node.name = \"\(name)\"") { return id }
        }
        return nil
    }

    /// Runs a PipeWire tool (pw-cli) against this daemon, killed after 5 s.
    public func tool(_ name: String, _ arguments: [String]) throws -> String {
        let out = folder.appendingPathComponent("\(name)-\(UUID().uuidString).out").path
        let server = try LoopbackServer(name, arguments, output: out, log: out + ".log", environment: environment)
        defer { try? FileManager.default.removeItem(atPath: out); try? FileManager.default.removeItem(atPath: out + ".log") }
        guard server.waitForExit(within: 5) else {
            server.stop()
            throw GraphError(.runFailed, "\(name) \(arguments.joined(separator: " ")) did not end within 5 s")
        }
        return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }

    @discardableResult
    private func start(_ tool: String, _ arguments: [String], _ name: String) throws -> LoopbackServer {
        let server = try LoopbackServer(tool, arguments, output: folder.appendingPathComponent("\(name).out").path,
                                        log: folder.appendingPathComponent("\(name).log").path, environment: environment)
        servers.append(server)
        return server
    }

    private func waitFor(_ what: String, within seconds: Double, _ done: () -> Bool) throws {
        let end = Date().addingTimeInterval(seconds)
        while !done() {
            guard Date() < end else {
                let logs = servers.map { "\($0.log): \($0.logText.suffix(600))" }.joined(separator: "\n")
                throw GraphError(.runFailed, "\(what) not ready within \(Int(seconds)) s\n\(logs)")
            }
            usleep(50_000)
        }
    }

    /// pipewire.conf: the daemon, its protocol and the factories clients and WirePlumber use,
    /// one dummy driver to clock the graph; WirePlumber's monitors off (0.4's Lua settings and
    /// 0.5's profile), so nothing of the machine's own hardware is touched.
    private static func writeConfiguration(in folder: URL) throws {
        let pipewire = """
            context.properties = { core.daemon = true  core.name = pipewire-0  support.dbus = false  mem.allow-mlock = false }
            context.spa-libs = {
                audio.convert.* = audioconvert/libspa-audioconvert
                video.convert.* = videoconvert/libspa-videoconvert
                support.*       = support/libspa-support
                videotestsrc    = videotestsrc/libspa-videotestsrc
                audiotestsrc    = audiotestsrc/libspa-audiotestsrc
            }
            context.modules = [
                { name = libpipewire-module-protocol-native }
                { name = libpipewire-module-metadata }
                { name = libpipewire-module-spa-node-factory }
                { name = libpipewire-module-spa-device-factory }
                { name = libpipewire-module-client-node }
                { name = libpipewire-module-client-device }
                { name = libpipewire-module-access }
                { name = libpipewire-module-adapter }
                { name = libpipewire-module-link-factory }
                { name = libpipewire-module-session-manager }
            ]
            context.objects = [
                { factory = spa-node-factory
                  args = { factory.name = support.node.driver node.name = Dummy-Driver node.group = pipewire.dummy priority.driver = 20000 } }
            ]

            """
        try pipewire.write(to: folder.appendingPathComponent("pipewire.conf"), atomically: true, encoding: .utf8)
        let wp = folder.appendingPathComponent("config/wireplumber")
        for (dir, text) in [("main.lua.d", "alsa_monitor.enabled = false\nv4l2_monitor.enabled = false\nlibcamera_monitor.enabled = false\n"),
                            ("bluetooth.lua.d", "bluez_monitor.enabled = false\n"),
                            ("wireplumber.conf.d", "wireplumber.profiles = { main = { monitor.alsa = disabled  monitor.alsa-midi = disabled  monitor.v4l2 = disabled  monitor.libcamera = disabled  monitor.bluez = disabled } }\n")] {
            let d = wp.appendingPathComponent(dir)
            try FileManager.default.createDirectory(at: d, withIntermediateDirectories: true)
            try text.write(to: d.appendingPathComponent(dir.hasSuffix(".conf.d") ? "90-graphkit-test.conf" : "51-graphkit-test.lua"),
                           atomically: true, encoding: .utf8)
        }
    }
}
