import Foundation
import GraphKit
import GraphKitTesting

/// A display server a test starts and stops: Xvfb (``VirtualDisplay``) or a headless Weston
/// (``HeadlessWayland``), both installed by scripts/install-deps.sh.
///
/// The server cannot outlive its test for long: it runs under timeout(1), which ends it after
/// `lifetime` seconds even if the test process dies; `stop()` (deferred by the test) ends it at
/// once and waits, at most 10 s, for it to be gone, then kills it.
final class ServerProcess: @unchecked Sendable {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// timeout(1), which runs the server.
    let timeout: pid_t
    /// Where the server writes what it says (standard error).
    let log: String
    private var stopped = false

    /// Starts `arguments` under timeout(1); the server's standard output goes to `output` (a
    /// pipe's write end, closed here), or nowhere.
    init(_ arguments: [String], output: Int32? = nil, environment: [String: String] = ProcessInfo.processInfo.environment,
         lifetime: Int = 300) throws {
        log = try TestMedia.temporaryFolder().appendingPathComponent("server.log").path
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let output {
            posix_spawn_file_actions_adddup2(&actions, output, 1)
            posix_spawn_file_actions_addclose(&actions, output)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        // A clean signal mask: threads of the test process block SIGTERM, and a child started from
        // one inherits that, so neither timeout(1) nor the server would see the SIGTERM that ends them.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), defaults = sigset_t()
        sigemptyset(&none)
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = (["timeout", "-k", "5", String(lifetime)] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, "/usr/bin/timeout", &actions, &attributes, argv, envp)
        if let output { Glibc.close(output) }
        guard spawned == 0 else {
            throw Failure(description: "cannot start \(arguments[0]) under timeout: \(String(cString: strerror(spawned)))")
        }
        timeout = pid
    }

    /// The server itself, timeout(1)'s child.
    var server: pid_t? {
        let children = (try? String(contentsOfFile: "/proc/\(timeout)/task/\(timeout)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").first.flatMap { pid_t($0) }
    }

    /// Whether it has ended (and then it is collected).
    var hasEnded: Bool {
        var status: Int32 = 0
        if !stopped, waitpid(timeout, &status, WNOHANG) != 0 { stopped = true }
        return stopped
    }

    /// What the server said, for a failure message.
    var said: String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }

    /// Ends the server (a stopped one too) and waits up to 10 s for it to be gone, then kills it.
    func stop() {
        guard !stopped else { return }
        stopped = true
        let server = self.server
        if let server { kill(server, SIGCONT) }
        kill(timeout, SIGTERM)  // timeout(1) passes it on; the server removes its socket and lock
        var status: Int32 = 0
        let deadline = Date().addingTimeInterval(10)
        while waitpid(timeout, &status, WNOHANG) == 0 {
            guard Date() < deadline else {
                if let server { kill(server, SIGKILL) }
                kill(timeout, SIGKILL)
                while waitpid(timeout, &status, 0) < 0 && errno == EINTR {}
                return
            }
            usleep(20_000)
        }
    }

    deinit { stop() }
}

/// An X server of a test's own: Debian's Xvfb, on a display number Xvfb picks itself
/// (`-displayfd`), so tests running at once never share one. What the tests do to its windows
/// goes through Tests/Fixtures/x11/xwindow.py (python3-xlib). Every wait has a limit.
final class VirtualDisplay: @unchecked Sendable {
    typealias Failure = ServerProcess.Failure

    /// A top-level window: its X id and size.
    struct Window: Equatable {
        var id: UInt32
        var width: Int
        var height: Int
    }

    /// `:N`, for DISPLAY.
    let name: String
    private let process: ServerProcess
    /// The Xvfb process (timeout(1)'s child).
    private let server: pid_t

    static let helper = Graphctl.root.appendingPathComponent("Tests/Fixtures/x11/xwindow.py").path

    init(width: Int = 640, height: Int = 480) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw Failure(description: "pipe: \(String(cString: strerror(errno)))") }
        defer { Glibc.close(fds[0]) }
        // -displayfd 1: Xvfb writes the display number to its standard output once it accepts
        // connections.
        process = try ServerProcess(["Xvfb", "-displayfd", "1", "-screen", "0", "\(width)x\(height)x24", "-nolisten", "tcp", "-noreset"],
                                    output: fds[1])
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        while !text.contains("\n") {
            let left = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            var poller = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
            guard left > 0, poll(&poller, 1, left) > 0 else { break }
            var byte: UInt8 = 0
            guard read(fds[0], &byte, 1) == 1 else { break }
            text.append(Character(UnicodeScalar(byte)))
        }
        guard let number = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), let server = process.server else {
            process.stop()
            throw Failure(description: "Xvfb did not start within 30 s: \(process.said)")
        }
        name = ":\(number)"
        self.server = server
    }

    func stop() { process.stop() }

    /// Stops the X server's process (SIGSTOP): every client drawing to it waits, as on a display
    /// that cannot keep up. `thaw()` lets it go on.
    func freeze() { kill(server, SIGSTOP) }
    func thaw() { kill(server, SIGCONT) }

    /// The top-level windows whose title starts with `title`.
    func windows(titled title: String) throws -> [Window] {
        try helper(["find", title]).split(separator: "\n").compactMap { line in
            let f = line.split(separator: " ")
            guard f.count == 3, let id = UInt32(f[0]), let w = Int(f[1]), let h = Int(f[2]) else { return nil }
            return Window(id: id, width: w, height: h)
        }
    }

    /// The window titled `title` once it exists, looking every 50 ms for at most `seconds`.
    func waitForWindow(titled title: String, seconds: Double = 60) throws -> Window {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let w = try windows(titled: title).first { return w }
            usleep(50_000)
        }
        throw Failure(description: "no window titled \"\(title)…\" on \(name) within \(seconds) s")
    }

    /// A window's pixels as packed RGB, row after row.
    func grab(_ window: Window) throws -> (width: Int, height: Int, rgb: [UInt8]) {
        let file = try TestMedia.temporaryFolder().appendingPathComponent("window.rgb")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let size = try helper(["grab", String(window.id), file.path]).split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        let rgb = [UInt8](try Data(contentsOf: file))
        guard size.count == 2, rgb.count == size[0] * size[1] * 3 else {
            throw Failure(description: "grabbing window \(window.id) gave \(rgb.count) bytes for a size of \(size)")
        }
        return (size[0], size[1], rgb)
    }

    /// Asks the window to close, as a window manager's close button does (WM_DELETE_WINDOW).
    func close(_ window: Window) throws {
        try helper(["close", String(window.id)])
    }

    /// Runs xwindow.py on this display, with the runner's guard limit; throws if it fails.
    @discardableResult
    private func helper(_ arguments: [String]) throws -> String {
        let r = try RunningGraphctl([Self.helper, name] + arguments, executable: URL(fileURLWithPath: "/usr/bin/python3")).wait()
        guard r.status == 0 else {
            throw Failure(description: "xwindow.py \(arguments.joined(separator: " ")) failed (\(r.status)): \(r.stderr)")
        }
        return r.stdout
    }
}

/// A Wayland compositor of a test's own with no X server beside it: Weston's headless backend
/// with its kiosk shell (no helper clients), on a socket in a runtime folder of its own.
final class HeadlessWayland: @unchecked Sendable {
    typealias Failure = ServerProcess.Failure

    /// What a client needs: WAYLAND_DISPLAY and XDG_RUNTIME_DIR.
    let environment: [String: String]
    private let process: ServerProcess

    init() throws {
        let runtime = try TestMedia.temporaryFolder()
        guard chmod(runtime.path, 0o700) == 0 else { throw Failure(description: "cannot make \(runtime.path) private") }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = runtime.path
        environment["DISPLAY"] = nil
        environment["WAYLAND_DISPLAY"] = "wayland-test"
        process = try ServerProcess(["weston", "--backend=headless-backend.so", "--shell=kiosk-shell.so", "--socket=wayland-test",
                                     "--idle-time=0"], environment: environment)
        let socket = runtime.appendingPathComponent("wayland-test").path
        let deadline = Date().addingTimeInterval(30)
        while !FileManager.default.fileExists(atPath: socket) {
            guard Date() < deadline, !process.hasEnded else {
                process.stop()
                throw Failure(description: "weston did not start within 30 s: \(process.said)")
            }
            usleep(20_000)
        }
        self.environment = environment
    }

    func stop() { process.stop() }
}
