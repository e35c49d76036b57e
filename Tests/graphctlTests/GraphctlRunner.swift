import Foundation
import TestSupport
import GraphKit

/// Runs the built `graphctl` as a user would, and captures what it prints and its exit status.
struct Graphctl {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The package root (for graphs/), found from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The graphctl users install, built by tools/graphctl against GraphKit's shared library
    /// (`make test` builds it and names it in GRAPHCTL).
    static let executable: URL = {
        if let path = ProcessInfo.processInfo.environment["GRAPHCTL"] { return URL(fileURLWithPath: path) }
        return root.appendingPathComponent("tools/graphctl/.build/debug/graphctl")
    }()

    static func graph(_ name: String) -> String { root.appendingPathComponent("graphs/\(name)").path }

    /// Starts graphctl; `wait` collects the result.
    static func start(_ arguments: [String], in folder: URL? = nil) throws -> RunningGraphctl {
        try RunningGraphctl(arguments, in: folder)
    }

    static func wait(_ started: RunningGraphctl) -> Result {
        started.wait()
    }

    /// Runs another program (a shell that sets limits, then starts graphctl).
    static func runCommand(_ path: String, _ arguments: [String]) throws -> Result {
        try RunningGraphctl(arguments, executable: URL(fileURLWithPath: path)).wait()
    }

    static func run(_ arguments: String..., in folder: URL? = nil) throws -> Result {
        try start(arguments, in: folder).wait()
    }

    static func run(_ arguments: [String], in folder: URL? = nil) throws -> Result {
        try start(arguments, in: folder).wait()
    }

    /// Runs graphctl, killed past `limit` (a hard limit of the test's own, shorter than the
    /// guard's: a command that must refuse at once).
    static func run(_ arguments: [String], limit: Duration) throws -> Result {
        try start(arguments).wait(limit: limit)
    }
}

/// A graphctl that a test started. What it prints is read as it comes, by two threads of its
/// own that `wait()` joins, so a test waits for something graphctl says or does (a media
/// position on its progress line, a file's state) instead of sleeping. Every wait has a
/// generous limit, but only as a guard: passing it fails the test, saying what never happened.
final class RunningGraphctl: @unchecked Sendable {
    struct Timeout: Error, CustomStringConvertible {
        var description: String
    }

    /// How long a wait may take before the test fails: far beyond what any of them needs, even
    /// on a loaded machine, so that reaching it means something is wrong, not slow.
    static let guardLimit: Duration = .seconds(120)

    /// A write to a pipe whose reader died (a graphctl that crashed) is an error to the test
    /// process, not SIGPIPE's death of the whole suite (seen once on Debian 13, and then
    /// `swift test` waited on the orphans holding its output).
    static let brokenPipesIgnored: Void = { signal(SIGPIPE, SIG_IGN) }()

    let process = Process()
    private let condition = NSCondition()
    private var stdout = Data()
    private var stderr = Data()
    private var readersRunning = 2
    private var collected: Graphctl.Result?
    /// When both pipes ended: graphctl's end, before the system tells Foundation so.
    private var pipesEnded: UInt64?

    /// Starts graphctl (or `executable`) with `arguments`, in `folder`, with `environment` (nil:
    /// the test's own).
    init(_ arguments: [String], in folder: URL? = nil, executable: URL = Graphctl.executable,
         environment: [String: String]? = nil) throws {
        _ = Self.brokenPipesIgnored
        if TestTier.fastOnly {  // the fast tier starts no program: this suite is `.media`
            throw GraphError(.runFailed, "\(executable.lastPathComponent) started in the fast tier: mark its suite `.media`")
        }
        process.executableURL = executable
        process.arguments = arguments
        if let folder { process.currentDirectoryURL = folder }
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()  // closes the parent's copies of the write ends, so the readers see the end
        read(out.fileHandleForReading, isStandardError: false)
        read(err.fileHandleForReading, isStandardError: true)
    }

    var processIdentifier: pid_t { process.processIdentifier }

    /// Sends a signal to graphctl.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// How long graphctl took to end after a signal.
    struct Stop {
        var result: Graphctl.Result
        /// From the signal to graphctl's end, as the wall clock saw it.
        var seconds: Double
        /// How long, meanwhile, a thread of this test that asked to wake every 5 ms was kept
        /// waiting beyond that: the time the machine's two cores were taken by others (`make
        /// test` runs its suites side by side, each starting programs).
        var starved: Double
        /// What graphctl itself took: the wall time less the time nothing could run.
        var taken: Double { max(0, seconds - starved) }
        var description: String { "ended \(fixed(seconds)) s after the signal, \(fixed(starved)) s of it with the machine taken by others" }
        private func fixed(_ x: Double) -> String { String(format: "%.2f", x) }
    }

    /// Sends `signal` and waits for graphctl to end, measuring how long it took against how
    /// long the machine was busy meanwhile. On a quiet machine `taken` is the wall time; on a
    /// loaded one a stop promised within a second still shows as one (CI once saw 1.18 s for a
    /// stop that takes 0.05 s alone, while its test took 142 s instead of 3).
    func stop(by signal: Int32 = SIGINT, limit: Duration = RunningGraphctl.guardLimit) -> Stop {
        final class Probe: @unchecked Sendable {
            let lock = NSLock()
            var done = false, starved = 0.0
        }
        let p = Probe()
        let probe = Thread {
            while !p.lock.withLock({ p.done }) {
                let asked = DispatchTime.now().uptimeNanoseconds
                usleep(5_000)
                let late = Double(DispatchTime.now().uptimeNanoseconds - asked) / 1e9 - 0.005
                p.lock.withLock { p.starved += max(0, late - 0.001) }  // a millisecond of timer slack is no one's
            }
        }
        probe.start()
        let sent = DispatchTime.now().uptimeNanoseconds
        send(signal)
        let r = wait(limit: limit)
        let ended = condition.withLock { pipesEnded } ?? DispatchTime.now().uptimeNanoseconds
        let seconds = Double(ended - sent) / 1e9
        let starved = p.lock.withLock { p.done = true; return p.starved }
        return Stop(result: r, seconds: seconds, starved: starved)
    }

    /// Every thread's stack of a graphctl that passed the guard limit, from gdb when the machine
    /// has it: what a hang was waiting on, for the test's failure message.
    private func stacks() -> String {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") else { return "" }
        let gdb = Process()
        gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
        gdb.arguments = ["-p", String(process.processIdentifier), "-batch", "-ex", "thread apply all bt 12"]
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("gdb-\(process.processIdentifier).txt")
        FileManager.default.createFile(atPath: out.path, contents: nil)
        guard let handle = try? FileHandle(forWritingTo: out) else { return "" }
        defer { try? FileManager.default.removeItem(at: out) }
        gdb.standardOutput = handle
        gdb.standardError = FileHandle.nullDevice
        guard (try? gdb.run()) != nil else { return "" }
        gdb.waitUntilExit()
        try? handle.close()
        let text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").filter { $0.hasPrefix("Thread ") || $0.hasPrefix("#") }.joined(separator: "\n")
    }

    /// Reads one pipe to its end on a thread of its own; `wait()` waits for both to end.
    private func read(_ handle: FileHandle, isStandardError: Bool) {
        let thread = Thread { [self] in
            let fd = handle.fileDescriptor
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = chunk.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { try? handle.close() }
                condition.lock()
                if n > 0 {
                    if isStandardError { stderr.append(contentsOf: chunk[0..<n]) } else { stdout.append(contentsOf: chunk[0..<n]) }
                } else {
                    readersRunning -= 1
                    if readersRunning == 0 { pipesEnded = DispatchTime.now().uptimeNanoseconds }
                }
                condition.broadcast()
                condition.unlock()
                if n <= 0 { return }  // the last thing this thread does: `wait()` counts on it
            }
        }
        thread.start()
    }

    /// What graphctl has written to standard error so far.
    var standardError: String {
        condition.lock()
        defer { condition.unlock() }
        return String(decoding: stderr, as: UTF8.self)
    }

    /// Waits until `isDone` holds, checking it each time graphctl writes to standard error (with
    /// `--progress always`, five times a second). `isDone` is given what graphctl wrote so far.
    /// If graphctl ends first or the guard limit passes, graphctl is killed and collected, and
    /// this throws, naming `what` and quoting what graphctl said.
    func wait(until what: String, _ isDone: (String) throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(Double(Self.guardLimit.components.seconds))
        condition.lock()
        while true {
            let seen = stderr.count
            let text = String(decoding: stderr, as: UTF8.self)
            let ended = readersRunning == 0
            condition.unlock()
            if try isDone(text) { return }
            if ended {
                let r = wait()
                throw Timeout(description: "graphctl ended (status \(r.status)) before \(what); it wrote: \(Self.tail(r.stderr))")
            }
            condition.lock()
            if stderr.count == seen, readersRunning > 0, !condition.wait(until: deadline) {
                condition.unlock()
                let threads = stacks()
                send(SIGKILL)
                let r = wait()
                throw Timeout(description: "no sign that \(what) after \(Self.guardLimit) (the guard limit); graphctl wrote: \(Self.tail(r.stderr))\n\(threads)")
            }
        }
    }

    /// Waits until graphctl's progress line (it needs `--progress always`) shows the media
    /// position at `seconds` or beyond, and returns the position shown.
    @discardableResult
    func waitForPosition(atLeast seconds: Double) throws -> Double {
        var shown = 0.0
        try wait(until: "the media position reached \(seconds) s") { text in
            shown = Self.positions(in: text).max() ?? 0
            return shown >= seconds
        }
        return shown
    }

    /// The positions a progress line has shown: `\r\e[K1.2 s  1.0x` or
    /// `\r\e[K[===   ] 1.2 / 10.0 s  1.0x`.
    static func positions(in text: String) -> [Double] {
        text.split(separator: "\r").compactMap { segment -> Double? in
            var s = Substring(segment)
            if s.hasPrefix("\u{1B}[K") { s = s.dropFirst(3) }
            if s.hasPrefix("["), let close = s.firstIndex(of: "]") { s = s[s.index(after: close)...].drop { $0 == " " } }
            guard let number = s.split(separator: " ", maxSplits: 1).first else { return nil }
            return Double(number)
        }
    }

    private static func tail(_ text: String) -> String {
        text.count > 2000 ? "…" + text.suffix(2000) : text
    }

    /// Waits for graphctl to exit and both pipes to end (the reading threads are then done).
    /// Waits for graphctl to end. Past the guard limit it is killed (a hung run, such as the
    /// intermittent stall on a truncated file the media issue names): the test then fails on its
    /// status, and the stderr says so, instead of the suite waiting for ever.
    func wait(limit: Duration = RunningGraphctl.guardLimit) -> Graphctl.Result {
        var deadline = Date().addingTimeInterval(Double(limit.components.seconds))
        var killed = false
        condition.lock()
        while readersRunning > 0 {
            if condition.wait(until: deadline) { continue }
            // Killed, and its pipes still open ten seconds on (something it started holds
            // them): stop waiting for them rather than wait for ever.
            if killed { break }
            killed = true
            condition.unlock()
            let threads = stacks()
            send(SIGKILL)
            condition.lock()
            stderr.append(contentsOf: Array("\n[test runner: graphctl did not end within \(limit); killed]\n\(threads)\n".utf8))
            deadline = Date().addingTimeInterval(10)
        }
        if let collected { condition.unlock(); return collected }
        condition.unlock()
        process.waitUntilExit()
        condition.lock()
        defer { condition.unlock() }
        let r = Graphctl.Result(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
                                stderr: String(decoding: stderr, as: UTF8.self))
        collected = r
        return r
    }
}
