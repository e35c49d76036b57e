import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import GraphKit
import Nodes

struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a graph over many inputs, on every core, resumable; one shard of them with --shard.",
        discussion: """
            Each input runs through the graph with the --map overrides made from it: {input} (its \
            path as listed), {name}, {stem} (the name without its extension), {dir}, {index} (its \
            place in the sorted list, from 0). Every input's overrides are checked before the first \
            run. An input whose outputs are all there already is skipped (--force runs it again): \
            outputs are renamed into place only when complete, so a batch killed and started again \
            finishes the rest. A failed input does not stop the batch. A file written that an input, \
            the graph file, a plugin or a manifest is (through any link or name), or that another \
            input writes, is refused before anything runs (65). Exit status: 0 every input \
            succeeded; 70 some failed; 64, 65, 66 as for run, before anything runs; 130 interrupted.
            """
    )

    enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    @Argument(help: "The graph file.")
    var graph: String

    @Option(name: .customLong("inputs"), help: ArgumentHelp(
        "A folder (its files), a glob pattern (quote it), or a manifest (a text file, one path a line); repeatable.",
        valueName: "dir|glob|file"))
    var inputs: [String] = []

    @Option(name: .customLong("map"), help: ArgumentHelp(
        "A --set made from each input, such as src.path={input} or wave.json=out/{stem}.json (repeatable).",
        valueName: "node.param=template"))
    var maps: [String] = []

    @OptionGroup var options: OverrideOptions

    @OptionGroup var plugins: PluginOptions

    @Option(parsing: .unconditional,
            help: "Inputs run at once, from 1 to the CPUs this process may use (the default); more is run on that many, with a warning.")
    var jobs: Int?

    @Option(help: ArgumentHelp("Seconds an input may run before it is stopped and recorded as timed out; 0: no limit.",
                               valueName: "seconds"),
            transform: NumberArgument.seconds("--timeout", in: 0...31_536_000))
    var timeout: Double = 3600

    @Flag(help: "Run inputs whose outputs are all there already.")
    var force = false

    @Option(help: ArgumentHelp("Take a share of the sorted inputs: I/N (by a hash of each path, so shares stay put as inputs are added), or auto: JOB_COMPLETION_INDEX/JOB_COMPLETIONS.",
                               valueName: "I/N|auto"))
    var shard: String?

    @Option(help: ArgumentHelp("Write every input's outcome and the totals as JSON to this file; {shard} in it is the shard's index.",
                               valueName: "file"))
    var summary: String?

    @Option(help: "Show a progress line: auto (when standard error is a terminal), always or never.")
    var progress: ProgressMode = .auto

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Check everything, then list this shard's inputs on standard output (`run PATH` or `skip PATH`) without running any.")
    var dryRun = false

    @OptionGroup var outputs: OutputOptions

    @Option(help: .hidden)
    var runsPerWorker: Int = 0

    func validate() throws {
        if inputs.isEmpty { throw ValidationError("Missing --inputs: a folder, a glob pattern or a manifest.") }
        if let jobs, jobs < 1 { throw ValidationError("--jobs must be at least 1 (got \(jobs)): the number of inputs run at once.") }
        if runsPerWorker < 0 { throw ValidationError("--runs-per-worker must be 0 (no limit) or more.") }
        if let shard { _ = try Shard(parsing: shard) }
    }

    func run() throws {
        bootstrapLogging(verbose: false, quiet: quiet)
        outputs.apply()
        let shard = try self.shard.map { text throws(ValidationError) in try Shard(parsing: text) }
        let templates: [InputTemplate]
        let setOverrides: [GraphLoader.Override]
        do {
            templates = try maps.map { text throws(GraphError) in try InputTemplate(parsing: text) }
            setOverrides = try options.parsed()
        } catch {
            throw report(error)
        }
        if !templates.contains(where: { $0.pieces.contains { if case .placeholder = $0 { true } else { false } } }) {
            throw ValidationError("No --map uses the input: every input would run the same graph. Map the source, such as --map src.path={input}.")
        }
        let loader = try plugins.reportingLoader()
        // Read once, here (a pipe too): the workers run these very bytes.
        let bytes: [UInt8]
        do {
            bytes = try GraphLoader.read(graph)
        } catch {
            throw report(error)
        }
        let planned: [PlannedInput]
        let listed: Int
        do {
            let all = try InputList.list(inputs)
            listed = all.count
            let files = BatchPlan.SharedFiles(graphFile: graph, plugins: loader.registry.plugins, manifests: InputList.manifests(inputs),
                                              summary: summary.map { BatchSummary.path($0, shard: shard) })
            planned = try BatchPlan.make(inputs: all, bytes: bytes, loader: loader, files: files,
                                         fixed: setOverrides, templates: templates)
        } catch {
            throw report(error, file: graph)
        }

        let mine = shard.map { s in planned.filter { s.contains($0.input) } } ?? planned
        var results: [InputResult] = []
        var work: [PlannedInput] = []
        var done: [PlannedInput] = []
        for item in mine {
            if !force, item.isDone {
                done.append(item)
                results.append(InputResult(input: item.input.path, index: item.input.index, status: .skipped,
                                           exitCode: 0, wallSeconds: 0, error: nil, outputs: item.outputs))
            } else {
                work.append(item)
            }
        }
        if dryRun {
            let skipped = Set(results.map(\.index))
            var text = ""
            for item in mine { text += (skipped.contains(item.input.index) ? "skip " : "run ") + item.input.path + "\n" }
            print(text, terminator: "")
            return
        }
        // A run killed after renaming its outputs but before its temporary files went: tidy.
        for item in done { item.removePartials() }
        let cores = Self.availableCores()
        if let asked = self.jobs, asked > cores, !quiet {
            printError("warning: --jobs \(asked) is more than the \(cores) CPU\(cores == 1 ? "" : "s") this process may use; running \(cores) at once")
        }
        let jobs = min(self.jobs ?? cores, cores)
        let showLine = progress == .always || (progress == .auto && isatty(2) != 0)
        let progress = BatchProgress(total: work.count, showsLine: showLine, quiet: quiet)
        if !quiet {
            var line = "batch: \(mine.count) input\(mine.count == 1 ? "" : "s")"
            if let shard { line += " (shard \(shard) of \(listed))" }
            if !results.isEmpty { line += ", \(results.count) done already" }
            line += "; running \(work.count) on \(max(1, min(jobs, work.count))) worker\(jobs == 1 ? "" : "s")"
            printError(line)
        }

        var arguments = [Self.executable(), BatchWorker.name, graph]
        for o in setOverrides { arguments += ["--set", "\(o.node).\(o.parameter)=\(o.value)"] }
        for p in plugins.paths { arguments += ["--plugin", p] }
        if outputs.followSymlinks { arguments.append("--follow-symlinks") }
        let ran = Guarded<[InputResult]>([])
        let pool = WorkerPool(.init(workerArguments: arguments, executable: Self.executable(), graph: bytes, jobs: jobs,
                                    timeout: timeout > 0 ? timeout : nil, runsPerWorker: runsPerWorker),
                              work: work) { result in
            ran.withLock { $0.append(result) }
            progress.ended(result)
        }
        let interrupts = BatchInterrupts(pool: pool, progress: progress)
        interrupts.install()
        let started = ContinuousClock.now
        progress.start()
        pool.run()
        results += ran.withLock { $0 }
        progress.finish()
        interrupts.uninstall()
        let wall = (ContinuousClock.now - started).inSeconds
        for item in pool.notStarted {
            results.append(InputResult(input: item.input.path, index: item.input.index, status: .cancelled,
                                       exitCode: GraphError.Code.cancelled.exitStatus, wallSeconds: 0, error: nil, outputs: []))
        }

        let totals = BatchSummary(graph: graph, shard: shard, listed: listed, jobs: jobs, results: results, wallSeconds: wall)
        if let summary {
            do {
                try totals.write(to: BatchSummary.path(summary, shard: shard))
            } catch {
                throw report(error)
            }
        }
        let t = totals.totals
        if !quiet {
            var line = "batch: \(t.completed) completed, \(t.skipped) skipped, \(t.failed) failed"
            if t.cancelled > 0 { line += ", \(t.cancelled) cancelled" }
            line += " in \(fixed(wall, 2)) s"
            if t.completed + t.failed > 0 { line += " (\(fixed(t.inputsPerSecond, 1)) inputs/s)" }
            printError(line)
        }
        if interrupts.interrupted { throw ExitCode(GraphError.Code.cancelled.exitStatus) }
        if t.failed > 0 { throw ExitCode(GraphError.Code.runFailed.exitStatus) }
    }

    /// This graphctl, for the workers.
    static func executable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// The CPUs this process may use: those it may be scheduled on, capped by a cgroup CPU
    /// quota (a container's `resources.limits.cpu`), at least 1.
    static func availableCores() -> Int {
        var cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        // The affinity mask (taskset, a cpuset), as the kernel lists it: `0-3,6`.
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) {
            var count = 0
            for range in line.dropFirst("Cpus_allowed_list:".count).split(separator: ",") {
                let ends = range.split(separator: "-").compactMap { Int($0.trimmingPrefix(while: \.isWhitespace)) }
                count += ends.count == 2 ? ends[1] - ends[0] + 1 : ends.count
            }
            if count > 0 { cores = min(cores, count) }
        }
        if let text = try? String(contentsOfFile: "/sys/fs/cgroup/cpu.max", encoding: .utf8) {
            let parts = text.split(whereSeparator: { $0 == " " || $0 == "\n" })
            if parts.count == 2, let quota = Double(parts[0]), let period = Double(parts[1]), period > 0 {
                cores = min(cores, Int((quota / period).rounded(.up)))
            }
        }
        return max(1, cores)
    }
}

/// SIGINT or SIGTERM once: no new input starts; those running finish (a Kubernetes pod being
/// stopped gets its grace period for them). Twice: those running are killed, their temporary
/// files removed. Either way the batch then exits with 130, and a batch started again with the
/// same command finishes the rest.
final class BatchInterrupts: Sendable {
    let pool: WorkerPool
    let progress: BatchProgress
    private let signals = InterruptSignals.shared

    init(pool: WorkerPool, progress: BatchProgress) {
        self.pool = pool
        self.progress = progress
    }

    func install() {
        // A worker that has died must not take the batch with it when its pipe is written.
        signal(SIGPIPE, SIG_IGN)
        signals.handle { [weak self] count in self?.handle(count) }
    }

    func uninstall() { signals.stopHandling() }

    var interrupted: Bool { signals.received > 0 }

    private func handle(_ count: Int) {
        if count == 1 {
            progress.say("\nstopping: no new input starts; waiting for those running (interrupt again to stop them)")
            pool.stop()
        } else {
            progress.say("\ncancelling the inputs running")
            pool.cancel()
        }
    }
}
