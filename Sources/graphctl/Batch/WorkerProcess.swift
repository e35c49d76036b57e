import Glibc
import GraphKit

/// One worker process (`graphctl batch-worker`) as the batch sees it: pipes to its standard
/// input, output and error, a job sent as a line, a reply awaited with a deadline. Its pipes are
/// close-on-exec in the batch, so no other worker holds them: when the batch dies, the worker's
/// standard input ends and it exits (BatchWorker).
final class WorkerProcess {
    let pid: pid_t
    private var input: Int32
    private var output: Int32
    private var errors: Int32
    private var pendingOutput: [UInt8] = []
    /// The end of what the worker wrote to standard error since the last job was sent.
    private(set) var errorTail: [UInt8] = []
    private static let tailLimit = 8192
    /// Held from pipe(2) to posix_spawn (see ``spawn(executable:arguments:)``).
    private static let spawning = Guarded(())

    /// The batch's environment, with Swift's crash backtracer off unless SWIFT_BACKTRACE says
    /// otherwise: on a worker whose other thread was blocked in open(2) it was seen to hang after
    /// catching the crash, where the batch wants the worker gone and the crash recorded.
    static let environment: [String] = {
        var result: [String] = []
        var i = 0
        while let entry = environ[i] { result.append(String(cString: entry)); i += 1 }
        if !result.contains(where: { $0.hasPrefix("SWIFT_BACKTRACE=") }) { result.append("SWIFT_BACKTRACE=enable=no") }
        return result
    }()

    enum Outcome {
        case reply([UInt8])
        /// The worker ended without replying: its wait status.
        case ended(Int32)
        case timedOut
    }

    /// Starts `executable` with `arguments` (the first is argv[0]), in the batch's folder and
    /// environment.
    init(executable: String, arguments: [String]) throws(GraphError) {
        // One slot at a time from pipe(2) to posix_spawn: a worker started meanwhile would
        // otherwise inherit another's pipe before it is marked close-on-exec.
        (pid, input, output, errors) = try Self.spawning.withLock { (_) throws(GraphError) in
            try Self.spawn(executable: executable, arguments: arguments)
        }
    }

    /// The worker's process, and the batch's ends of its standard input, output and error.
    private static func spawn(executable: String, arguments: [String]) throws(GraphError)
        -> (pid: pid_t, input: Int32, output: Int32, errors: Int32)
    {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1], errChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0, pipe(&errChild) == 0 else {
            let reason = String(cString: strerror(errno))
            for fd in toChild + fromChild + errChild where fd >= 0 { close(fd) }
            throw GraphError(.runFailed, "cannot start a worker process: \(reason)")
        }
        for fd in toChild + fromChild + errChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errChild[1], 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var child: pid_t = 0
        let envp = Self.environment.map { strdup($0) } + [nil]
        defer { for p in envp { free(p) } }
        let status = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        close(toChild[0]); close(fromChild[1]); close(errChild[1])
        guard status == 0 else {
            close(toChild[1]); close(fromChild[0]); close(errChild[0])
            throw GraphError(.runFailed, "cannot start a worker process (\(executable)): \(String(cString: strerror(status)))")
        }
        return (child, toChild[1], fromChild[0], errChild[0])
    }

    /// Sends one job line; false if the worker cannot take it (it has ended).
    func send(_ line: [UInt8]) -> Bool {
        errorTail.removeAll(keepingCapacity: true)
        return input >= 0 && writeAll(input, line)
    }

    /// Waits for the reply to the job sent, until `deadline` (nil: no limit).
    func awaitReply(until deadline: ContinuousClock.Instant?) -> Outcome {
        while true {
            if let newline = pendingOutput.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(pendingOutput[..<newline])
                pendingOutput.removeSubrange(...newline)
                return .reply(line)
            }
            var timeout: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                if left <= .zero { return .timedOut }
                timeout = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
            }
            var fds = [pollfd(fd: output, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: errors, events: Int16(POLLIN), revents: 0)]
            let n = poll(&fds, 2, timeout)
            if n < 0 {
                if errno == EINTR { continue }
                return .ended(reap())
            }
            if fds[1].revents != 0 { drainErrors() }
            if fds[0].revents != 0 {
                var chunk = [UInt8](repeating: 0, count: 65_536)
                let got = chunk.withUnsafeMutableBytes { read(output, $0.baseAddress, $0.count) }
                if got > 0 {
                    pendingOutput += chunk[0..<got]
                } else if got == 0 || errno != EINTR {
                    // Standard output ended: the worker is gone (or going). Keep what it said last.
                    while errors >= 0, waitReadable(errors, milliseconds: 1000) { if !drainErrors() { break } }
                    return .ended(reap())
                }
            }
        }
    }

    /// Reads what standard error has; false once it has ended.
    @discardableResult
    private func drainErrors() -> Bool {
        guard errors >= 0 else { return false }
        var chunk = [UInt8](repeating: 0, count: 8192)
        let got = chunk.withUnsafeMutableBytes { read(errors, $0.baseAddress, $0.count) }
        if got <= 0 {
            if got < 0 && errno == EINTR { return true }
            close(errors)
            errors = -1
            return false
        }
        errorTail += chunk[0..<got]
        if errorTail.count > Self.tailLimit { errorTail.removeFirst(errorTail.count - Self.tailLimit) }
        return true
    }

    private func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&p, 1, milliseconds) > 0
    }

    /// Collects the ended worker: its wait status. A worker that closed its output but does not
    /// end within 2 s is killed.
    private func reap() -> Int32 {
        var status: Int32 = 0
        for _ in 0..<200 {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { closeAll(); return status }
            if r < 0 && errno != EINTR { closeAll(); return status }
            usleep(10_000)
        }
        Glibc.kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        closeAll()
        return status
    }

    /// Kills the worker (a run past its time limit, or a cancelled batch) and collects it.
    @discardableResult
    func kill() -> Int32 {
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        closeAll()
        return status
    }

    /// Ends an idle worker: its input closes, so it exits; collected within 5 s or killed.
    func finish() {
        if input >= 0 { close(input); input = -1 }
        var status: Int32 = 0
        for _ in 0..<500 {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid || (r < 0 && errno != EINTR) { closeAll(); return }
            usleep(10_000)
        }
        kill()
    }

    private func closeAll() {
        if input >= 0 { close(input); input = -1 }
        if output >= 0 { close(output); output = -1 }
        if errors >= 0 { close(errors); errors = -1 }
    }

    /// What the worker said about its end on standard error: Swift's `Fatal error: …` or the
    /// backtracer's `Program crashed: …` line when there is one, else its last line.
    var lastErrorLine: String? {
        let lines = String(decoding: errorTail, as: UTF8.self).split(separator: "\n")
            .map { $0.drop { !$0.isLetter } }  // the backtracer's emoji and colour codes
            .filter { !$0.isEmpty }
        let crash = lines.first { $0.contains("Fatal error") || $0.hasPrefix("Program crashed") }
        return (crash ?? lines.last { !$0.hasPrefix("Backtrace took") }).map { String($0.prefix(500)) }
    }
}

/// A wait status in words: `exited with status 3`, `was killed by signal 11 (Segmentation fault)`.
func describeWaitStatus(_ status: Int32) -> String {
    let signal = status & 0x7f
    if signal == 0 { return "exited with status \((status >> 8) & 0xff)" }
    let name = strsignal(signal).map { String(cString: $0) } ?? "signal \(signal)"
    return "was killed by signal \(signal) (\(name))"
}
