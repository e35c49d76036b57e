import Foundation
import Glibc
import GraphKit

/// GStreamer's RTSP server (Tests/Fixtures/rtsp-server.py, through python3-gi and
/// gir1.2-gst-rtsp-server-1.0) serving a file at rtsp://127.0.0.1:PORT/stream on a TCP port the
/// system picks: the far end of `source.rtsp`'s tests. Debian's python3 (/usr/bin/python3) runs
/// it: another on PATH (pyenv) may lack the bindings. Stopped by its PID (``LoopbackServer``).
public enum RTSPTestServer {
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/rtsp-server.py").path

    /// Starts it serving `file` with the script's `options` (`--video h265`, `--user`…), its
    /// output and log in `folder`, and returns it with its port once it said "ready" (within 10 s).
    /// `port`: that one (a server started again where it was), else one the system picks.
    public static func start(serving file: String, _ options: [String] = [], in folder: URL, port: Int? = nil) throws -> (server: LoopbackServer, port: Int) {
        try launch(script, [file] + options, in: folder, port: port)
    }

    /// Starts Tests/Fixtures/rtsp-hostile-server.py muted: a server that answers every request,
    /// PLAY included, and never sends a packet (a camera that hangs).
    public static func startMute(in folder: URL) throws -> (server: LoopbackServer, port: Int) {
        try startHostile("mute", in: folder)
    }

    /// Starts Tests/Fixtures/rtsp-hostile-server.py in `mode` (mute; slow-headers,
    /// endless-headers, redirect, many-tracks: a server that never lets a client reach PLAY;
    /// endless-fu-a, endless-aac, flood: one that never ends a frame; zero-clock: an SDP clock
    /// rate of 0, packets flowing).
    public static func startHostile(_ mode: String, in folder: URL) throws -> (server: LoopbackServer, port: Int) {
        try startFixture("rtsp-hostile-server.py", [mode], in: folder)
    }

    /// Starts another of Tests/Fixtures' loopback servers that take `PORT ARGUMENTS…` and say
    /// "ready" (rtmp-hostile-server.py).
    public static func startFixture(_ name: String, _ arguments: [String], in folder: URL) throws -> (server: LoopbackServer, port: Int) {
        try launch(URL(fileURLWithPath: script).deletingLastPathComponent().appendingPathComponent(name).path, arguments, in: folder)
    }

    private static func launch(_ script: String, _ arguments: [String], in folder: URL, port: Int? = nil) throws -> (server: LoopbackServer, port: Int) {
        // A port the system picked is free when picked, not when the server binds it: another
        // test's connection can take it meanwhile (seen once in eight runs of the RTSP suites).
        // The server is then started again on another.
        guard port == nil else { return try launchOnce(script, arguments, in: folder, port: port) }
        for _ in 1..<3 {
            do { return try launchOnce(script, arguments, in: folder, port: nil) } catch let e as GraphError where e.message.contains("Address already in use") {}
        }
        return try launchOnce(script, arguments, in: folder, port: nil)
    }

    private static func launchOnce(_ script: String, _ arguments: [String], in folder: URL, port: Int?) throws -> (server: LoopbackServer, port: Int) {
        let port = try port ?? LoopbackServer.freePort(udp: false)
        let server = try LoopbackServer("/usr/bin/python3", [script, "\(port)"] + arguments,
                                        output: folder.appendingPathComponent("rtsp-server.out").path,
                                        log: folder.appendingPathComponent("rtsp-server.log").path)
        func ready() -> Bool { ((try? String(contentsOfFile: server.output, encoding: .utf8)) ?? "").contains("ready") }
        let end = Date().addingTimeInterval(10)
        while Date() < end, server.isRunning, !ready() { usleep(20_000) }
        guard ready() else {
            server.stop()
            throw GraphError(.runFailed, "the RTSP server did not start: \(server.logText)")
        }
        return (server, port)
    }
}
