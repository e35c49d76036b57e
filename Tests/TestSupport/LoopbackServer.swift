import Foundation
import Glibc

/// A program a network test starts as its peer or server on 127.0.0.1 (`srt-live-transmit`,
/// nginx), stopped by its PID when the test ends, whatever happened. Its standard output goes to
/// `output` (what it received), its standard error to `log`.
public final class LoopbackServer: @unchecked Sendable {
    public let pid: pid_t
    public let output: String
    public let log: String
    private var reaped = false

    /// `environment`: the program's whole environment (nil: the test's own).
    public init(_ tool: String, _ arguments: [String], output: String, log: String, environment: [String: String]? = nil) throws {
        if TestTier.fastOnly { throw POSIXError(.EPERM) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = ([tool] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { (argv + (envp ?? [])).forEach { free($0) } }
        var pid = pid_t()
        let spawned = envp.map { e in e.withUnsafeBufferPointer { posix_spawnp(&pid, tool, &actions, nil, argv, UnsafeMutablePointer(mutating: $0.baseAddress)) } }
            ?? posix_spawnp(&pid, tool, &actions, nil, argv, environ)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        self.pid = pid
        self.output = output
        self.log = log
    }

    /// Whether it is still running.
    public var isRunning: Bool {
        guard !reaped else { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid { reaped = true }
        return !reaped
    }

    /// Waits up to `seconds` for it to exit by itself; true when it did.
    public func waitForExit(within seconds: Double) -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while isRunning {
            if Date() > end { return false }
            usleep(20_000)
        }
        return true
    }

    /// Stops it (SIGTERM, then SIGKILL after a second) and reaps it.
    public func stop() {
        guard isRunning else { return }
        kill(pid, SIGTERM)
        if !waitForExit(within: 1) {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            reaped = true
        }
    }

    deinit { stop() }

    /// What it wrote to its standard error so far.
    public var logText: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// A port on 127.0.0.1 that nothing uses now (the system's pick: never a fixed port that
    /// parallel runs could share), for UDP (SRT) or TCP.
    public static func freePort(udp: Bool) throws -> Int {
        let fd = socket(AF_INET, Int32(udp ? SOCK_DGRAM.rawValue : SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        guard bound == 0,
              withUnsafeMutablePointer(to: &address, { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits up to `seconds` until something listens on UDP `port` of 127.0.0.1 (`/proc/net/udp`).
    public static func waitForUDPListener(port: Int, within seconds: Double) -> Bool {
        waitForListener(table: "/proc/net/udp", port: port, within: seconds)
    }

    /// Waits up to `seconds` until something listens on TCP `port` of 127.0.0.1 (`/proc/net/tcp`).
    public static func waitForTCPListener(port: Int, within seconds: Double) -> Bool {
        waitForListener(table: "/proc/net/tcp", port: port, within: seconds)
    }

    private static func waitForListener(table path: String, port: Int, within seconds: Double) -> Bool {
        let hex = String(format: "0100007F:%04X", port)
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if let table = try? String(contentsOfFile: path, encoding: .utf8), table.contains(hex) { return true }
            usleep(20_000)
        }
        return false
    }
}
