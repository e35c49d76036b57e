import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import GraphKit
import Nodes

/// The process `graphctl batch` runs inputs in (not for users: hidden from help). It takes the
/// graph's bytes from the batch (its first line), then runs one job per line of its standard
/// input, each with its input's overrides, and answers each with one line on standard output
/// (WorkerProtocol.swift).
///
/// It ignores SIGINT and SIGTERM: the batch decides what happens to a run (a run stopped by a
/// signal would finalize a truncated output under its final name, which a resumed batch would
/// then take for done). It exits at once when its standard input ends during a run: the batch
/// that started it is gone (killed, even with SIGKILL), and its partial files are left for the
/// next batch's run of that input to remove.
struct BatchWorker: ParsableCommand {
    static let name = "batch-worker"
    static let configuration = CommandConfiguration(
        commandName: name,
        abstract: "Runs the inputs graphctl batch hands it (internal).",
        shouldDisplay: false
    )

    @Argument(help: "The graph file.")
    var graph: String

    @OptionGroup var options: OverrideOptions

    @OptionGroup var plugins: PluginOptions

    @OptionGroup var outputs: OutputOptions

    func run() throws {
        outputs.apply()
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        signal(SIGPIPE, SIG_IGN)
        // Errors travel in the replies; the log shows errors only (on the batch's captured stderr).
        bootstrapLogging(verbose: false, quiet: true)
        let jobs = JobReader()
        jobs.start()
        let loader: GraphLoader
        let fixed: [GraphLoader.Override]
        do {
            loader = try plugins.loader()
            fixed = try options.parsed()
        } catch {
            // The batch checked all of this before it started any worker: say why, and stop.
            throw report(error, file: graph)
        }
        // The graph as the batch read it (its first line); `graph` only names it in messages.
        guard let first = jobs.next(), let start = WorkerLine.decode(WorkerStart.self, first) else {
            printError("error: batch-worker: the batch sent no graph")
            throw ExitCode(GraphError.Code.usage.exitStatus)
        }
        jobs.finished()
        let bytes = Array(start.graph)
        while let line = jobs.next() {
            guard let job = WorkerLine.decode(WorkerJob.self, line) else {
                printError("error: batch-worker: not a job: \(String(decoding: line.prefix(200), as: UTF8.self))")
                throw ExitCode(GraphError.Code.usage.exitStatus)
            }
            let reply = Self.run(job, loader: loader, bytes: bytes, file: graph, fixed: fixed)
            jobs.finished()
            guard writeAll(1, WorkerLine.encode(reply)) else { return }  // the batch is gone
        }
    }

    /// One input through the graph, as `graphctl run` would run it (without its signals).
    static func run(_ job: WorkerJob, loader: GraphLoader, bytes: [UInt8], file: String,
                    fixed: [GraphLoader.Override]) -> WorkerReply {
        var overrides = job.loaderOverrides
        // An input whose name is not UTF-8 is read by its own bytes: opened here, and named to
        // the graph by a path that leads to this open file. Messages say its name as listed.
        var reopened: (fd: Int32, path: String, shown: String)?
        if let name = job.inputBytes, let shown = job.inputText {
            let fd = InputList.withCString(name) { open($0, O_RDONLY | O_NONBLOCK | O_CLOEXEC) }
            if fd >= 0 {
                reopened = (fd, "/proc/self/fd/\(fd)", shown)
                overrides = overrides.map { o in o.value == shown ? GraphLoader.Override(node: o.node, parameter: o.parameter, value: "/proc/self/fd/\(fd)") : o }
            }
        }
        defer { if let reopened { close(reopened.fd) } }
        func named(_ text: String) -> String {
            reopened.map { text.replacing($0.path, with: $0.shown) } ?? text
        }
        do throws(GraphError) {
            let graph = try loader.load(bytes: bytes, file: file, overrides: fixed + overrides)
            let run = try GraphRun(graph)
            let report = try run.run()
            return WorkerReply(index: job.index, exitCode: 0, messages: [], mediaSeconds: report.mediaSeconds,
                               outputs: report.outputs.filter { $0.status == .completed }.map(\.path))
        } catch {
            return WorkerReply(index: job.index, exitCode: error.code.exitStatus,
                               messages: describe(error, file: file).map(named), mediaSeconds: 0)
        }
    }
}

/// Reads the worker's standard input, a line at a time, on a thread of its own, so that the end
/// of the input is seen while a run is under way: the batch has gone, and so does the worker.
final class JobReader: Sendable {
    private struct State {
        var lines: [[UInt8]] = []
        var ended = false
        var running = false
    }
    private let state = Guarded(State())
    private let ready = DispatchSemaphore(value: 0)

    func start() {
        DispatchQueue(label: "graphctl.batch-worker.stdin").async { [self] in
            var pending: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                pending += chunk[0..<n]
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    state.withLock { $0.lines.append(line) }
                    ready.signal()
                }
            }
            let busy = state.withLock {
                $0.ended = true
                return $0.running
            }
            // Nobody will read the reply, nor clean up after this run but the next batch: stop
            // here rather than finish writing files for a batch that no longer exists.
            if busy { _exit(GraphError.Code.cancelled.exitStatus) }
            ready.signal()
        }
    }

    /// The next job's line, or nil once standard input has ended.
    func next() -> [UInt8]? {
        ready.wait()
        return state.withLock {
            if $0.lines.isEmpty { return nil }
            $0.running = true
            return $0.lines.removeFirst()
        }
    }

    /// The job `next()` gave has been run: an end of input from now on is an ordinary one.
    func finished() {
        state.withLock { $0.running = false }
    }
}

/// Writes every byte to `fd`; false if it cannot (the reader is gone).
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var offset = 0
    while offset < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return false }
        offset += n
    }
    return true
}
