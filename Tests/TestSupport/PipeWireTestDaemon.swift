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
/// Cameras and microphones are `gst-launch-1.0 … ! pipewiresink mode=provide` processes
/// (``provide(camera:)`` and ``provide(microphone:frequency:)``): nodes of class Video/Source and
/// Audio/Source, as a real device's are.
public final class PipeWireTestDaemon: @unchecked Sendable {
    // Unchecked: `providers` is touched by the test's own thread only; the rest is set once.
    public let folder: URL
    /// The environment a client of this PipeWire runs with: the test's, with the runtime folder.
    public let environment: [String: String]
    private var servers: [LoopbackServer] = []

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

    /// A camera: a moving SMPTE picture at `size` and `fps`, node.name `name`.
    @discardableResult
    public func provide(camera name: String, width: Int = 320, height: Int = 240, fps: Int = 30) throws -> LoopbackServer {
        try provider(name, "videotestsrc is-live=true pattern=smpte horizontal-speed=4 ! video/x-raw,format=I420,width=\(width),height=\(height),framerate=\(fps)/1",
                     mediaClass: "Video/Source")
    }

    /// A microphone: a sine at `frequency`, 48 kHz mono, node.name `name`.
    @discardableResult
    public func provide(microphone name: String, frequency: Int = 1000) throws -> LoopbackServer {
        try provider(name, "audiotestsrc is-live=true freq=\(frequency) volume=0.5 ! audio/x-raw,format=S16LE,rate=48000,channels=1",
                     mediaClass: "Audio/Source")
    }

    private func provider(_ name: String, _ source: String, mediaClass: String) throws -> LoopbackServer {
        let launch = source.split(separator: " ").map(String.init) + ["!", "pipewiresink", "mode=provide",
            "stream-properties=props,media.class=\(mediaClass),node.name=\(name),node.description=GraphKit-test-\(name)"]
        let server = try start("gst-launch-1.0", launch, name)
        try waitFor("node \(name) in PipeWire", within: 10) {
            guard server.isRunning else { return false }
            return ((try? self.tool("pw-cli", ["ls", "Node"])) ?? "").contains("node.name = \"\(name)\"")
        }
        return server
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
