import Foundation

/// `stress --cpu N` (Debian's `stress`, installed by `scripts/install-deps.sh --stress`) as a
/// child of the test, in a process group of its own so that its workers go with it. It ends
/// itself after `guardSeconds` should the test never stop it.
public final class CPULoad: @unchecked Sendable {
    private let pid: pid_t
    private let lock = NSLock()
    private var stopped = false

    public init(workers: Int, guardSeconds: Int = 300) throws {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let arguments: [String] = ["stress", "--cpu", String(workers), "--timeout", String(guardSeconds), "--quiet"]
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawnp(&pid, "stress", nil, &attributes, argv, environ)
        guard spawned == 0 else {
            throw Failure(description: "cannot start stress (\(String(cString: strerror(spawned)))): install it with scripts/install-deps.sh --stress")
        }
        self.pid = pid
        usleep(200_000)  // its workers spinning before the test goes on
    }

    /// Kills the workers and the parent (by the group's id, which is the child's), and reaps it.
    public func stop() {
        lock.lock()
        defer { lock.unlock() }
        guard !stopped else { return }
        stopped = true
        kill(-pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    deinit { stop() }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
        public init(description: String) { self.description = description }
    }
}
