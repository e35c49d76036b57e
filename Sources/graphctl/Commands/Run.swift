import ArgumentParser
import Dispatch
import FoundationEssentials
import Glibc
import GraphKit
import Nodes

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a graph until its sources end.",
        discussion: """
            Ctrl-C (or SIGTERM) ends the sources so every file is finalized, like gst-launch-1.0 -e; \
            what has not reached the files 1 s later is left out, so the run ends then (or as soon \
            as the files are written). A second Ctrl-C cancels and removes what was being written. \
            Before the run plays, one cancels at once (130). \
            A run that would write a file it reads (an input, the graph file, a plugin, --stats), \
            under any name or link, is refused before it starts (65).
            """
    )

    enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    /// `--plan`: how the run goes (graphctl dot draws which one it gets).
    enum PlanChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, pipeline
    }

    @Argument(help: "The graph file.")
    var graph: String

    @OptionGroup var options: OverrideOptions

    @OptionGroup var plugins: PluginOptions

    @Option(help: "Show a progress line: auto (when standard error is a terminal), always or never.")
    var progress: ProgressMode = .auto

    @Flag(help: "Print nothing but errors.")
    var quiet = false

    @Flag(help: "Print GraphKit's debug messages and GStreamer's debug text with errors.")
    var verbose = false

    @Option(help: ArgumentHelp("Write the run's statistics as JSON to this file.", valueName: "file"))
    var stats: String?

    @Option(help: "How the graph runs: auto (the container path when it needs no decoding, as `graphctl dot` shows) or pipeline (through GStreamer all the same).")
    var plan: PlanChoice = .auto

    @OptionGroup var outputs: OutputOptions

    func validate() throws {
        if quiet && verbose { throw ValidationError("--quiet and --verbose cannot be used together.") }
        if stats?.isEmpty == true { throw ValidationError("--stats needs a file to write.") }
    }

    func run() throws {
        bootstrapLogging(verbose: verbose, quiet: quiet)
        outputs.apply()
        let loader = try plugins.reportingLoader()
        let graph: Graph
        var overrides: [GraphLoader.Override]
        // Files the graph reads named with --set by bytes that are not UTF-8: opened by them
        // (InputPath), and named escaped in messages.
        var reopened: [InputPath] = []
        // Their descriptors stay open until the run is over (its nodes open /proc/self/fd/N).
        defer { withExtendedLifetime(reopened) {} }
        func named(_ error: GraphError) -> GraphError { reopened.reduce(error) { $1.named($0) } }
        do {
            overrides = try options.parsed()
            var loaded = try loader.load(contentsOf: self.graph, overrides: overrides)
            (overrides, reopened) = try InputPath.reopenReads(overrides, texts: options.overrides, graph: loaded)
            if !reopened.isEmpty { loaded = try loader.load(contentsOf: self.graph, overrides: overrides) }
            graph = loaded
        } catch {
            throw report(named(error), file: self.graph)
        }
        if let app = graph.nodes.first(where: { $0.descriptor.category == .app }) {
            throw report(GraphError(.invalidGraph, at: "nodes.\(app.id).type",
                                    "\(app.descriptor.type) is fed or drained by code (GraphRun.input/output); graphctl cannot run it"),
                         file: self.graph)
        }
        // Every file the run writes against every file it reads, and against each other.
        var roles = fileRoles(of: graph, overrides: overrides.map { (option: "--set", override: $0) }, graphFile: self.graph,
                              plugins: loader.registry.plugins)
        if let stats { roles.writes(stats, as: "--stats") }
        do {
            try roles.check()
        } catch {
            throw report(named(error), file: self.graph)
        }
        let run: GraphRun
        do {
            run = try GraphRun(graph, plan: plan == .pipeline ? .pipeline : nil)
        } catch {
            throw report(named(error))
        }

        // The statistics file follows the outputs' rule, and is checked before anything runs.
        let statsFile = stats.map { OutputFile(path: $0, location: "--stats", node: "graphctl") }
        do {
            try statsFile?.prepare()
        } catch {
            throw report(named(error))
        }

        let interrupts = InterruptHandler(run: run, quiet: quiet)
        interrupts.install()
        do {
            try run.start()
        } catch {
            statsFile?.discard()
            throw report(named(error))
        }

        let showProgress = !quiet && (progress == .always || (progress == .auto && isatty(2) != 0))
        let ticker = showProgress ? ProgressLine(run: run) : nil
        ticker?.start()
        var result = run.wait()
        ticker?.finish()
        interrupts.uninstall()
        if interrupts.cancelRequested, result.status == .stopped || result.status == .completed {
            // The second signal came as the files were being finished, too late for the run to
            // abandon them: "cancelling" was printed, so the files go, as they would have.
            for (i, o) in result.outputs.enumerated() where o.status == .completed {
                unlink(o.path)  // the name itself, never where a link there leads
                result.outputs[i].status = .cancelled
            }
            result.status = .cancelled
            result.error = GraphError(.cancelled, "the run was cancelled")
        }

        if let stats, let statsFile {
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                try statsFile.write(Array(encoder.encode(result)))
                try statsFile.commit()
            } catch {
                statsFile.discard()
                printError("error: cannot write statistics to \"\(stats)\": \((error as? GraphError)?.problems.first?.message ?? OutputFile.reason(error))")
                throw ExitCode(GraphError.Code.outputUnwritable.exitStatus)
            }
        }
        if let error = result.error {
            throw report(named(error))
        }
        if !quiet { printError(Self.summary(result)) }
    }

    static func summary(_ r: RunReport) -> String {
        var line = "\(r.status.rawValue) in \(fixed(r.wallSeconds, 2)) s: "
            + "\(fixed(r.mediaSeconds, 2)) s of media (\(fixed(r.speed, 1))x)"
        let dropped = r.drops.filter { $0.reason == .liveSourceAhead }.reduce(0) { $0 + $1.buffers }
        if dropped > 0 { line += ", \(dropped) buffers dropped by live sources" }
        for o in r.outputs { line += "\n  \(o.node): \(o.path) \(o.status.rawValue)" }
        for n in r.nodes { if let shown = n.shown { line += "\n  \(n.id): \(shown) frames shown, \(n.dropped ?? 0) dropped" } }
        for n in r.nodes {
            for g in n.gaps ?? [] {
                line += "\n  \(n.id): nothing from its peer for \(fixed(g.seconds, 1)) s from \(fixed(g.start, 1)) s"
                    + (g.resumed ? ", then it came back" : ", which did not come back: the stream ended")
            }
        }
        return line
    }
}

/// First SIGINT/SIGTERM: end of stream from the sources, files finalize; what has not reached
/// the sinks 1 s later is left out (`GraphRun.stop(finishingWithin:)`), so a stop never waits
/// for a long encode. Before the run plays, the first cancels (nothing is written yet), and the
/// process exits within 1 s whatever the run is blocked on. Second: cancel, and exit within 5 s
/// even if the pipeline cannot be stopped. Third: exit at once.
final class InterruptHandler: Sendable {
    let run: GraphRun
    let quiet: Bool
    private let signals = InterruptSignals.shared
    /// The first signal's stop(), running off the signal queue.
    private let stopping = DispatchGroup()
    /// How long a stop may drain before the streams are ended at the sinks; how long a run not
    /// yet playing may take to cancel.
    static let stopDeadline: Duration = .seconds(1)

    init(run: GraphRun, quiet: Bool) {
        self.run = run
        self.quiet = quiet
    }

    func install() { signals.handle { [weak self] count in self?.handle(count) } }

    /// Stops listening (the signals' handler holds this object, and it holds the run). Signals
    /// already received are handled first.
    func uninstall() {
        signals.stopHandling()
        stopping.wait()  // the run has ended, so a stop() under way returns at once
    }

    /// Whether a second signal asked to cancel.
    var cancelRequested: Bool { signals.received >= 2 }

    /// Whether a signal came at all: the run stopped early, if it had not ended.
    var stopRequested: Bool { signals.received >= 1 }

    private func handle(_ count: Int) {
        if count == 1 {
            if !quiet { printError("\nstopping: finishing files (interrupt again to cancel)") }
            // Off the signal queue: sending end of stream may wait on the pipeline, and a second
            // signal must be handled meanwhile.
            DispatchQueue.global().async(group: stopping) { [run, signals, quiet] in
                guard !run.stop(finishingWithin: Self.stopDeadline) else { return }
                // Not playing yet: cancelled. Whatever it is blocked on, the process ends.
                signals.queue.asyncAfter(deadline: .now() + .seconds(1)) { [run] in
                    if !run.isFinished { InterruptSignals.exitNow(saying: quiet ? nil : "the run did not stop within 1 s; exiting") }
                }
            }
        } else if count == 2 {
            if !quiet { printError("\ncancelling") }
            run.cancel()
            // A second signal always exits: if the pipeline cannot even be stopped (an element
            // stuck in a blocking call), give up on it rather than hang.
            signals.queue.asyncAfter(deadline: .now() + .seconds(5)) { [quiet] in
                InterruptSignals.exitNow(saying: quiet ? nil : "the run did not stop within 5 s of cancelling; exiting")
            }
        } else {
            InterruptSignals.exitNow(saying: nil)  // a third signal: at once
        }
    }
}

/// The progress line on standard error: position / duration and speed, five times a second.
final class ProgressLine: Sendable {
    let run: GraphRun
    private let queue = DispatchQueue(label: "graphctl.progress")
    /// Whether the line is drawn: from start() until finish(). Each draw holds it.
    private let drawing = Guarded(false)
    private let started = ContinuousClock.now

    init(run: GraphRun) { self.run = run }

    func start() {
        drawing.withLock { $0 = true }
        scheduleDraw()
    }

    /// The next draw, 200 ms from now; each schedules the next, until finish().
    private func scheduleDraw() {
        queue.asyncAfter(deadline: .now() + .milliseconds(200)) { [weak self] in
            guard let self, self.drawing.withLock({ on in
                if on { self.draw() }
                return on
            }) else { return }
            self.scheduleDraw()
        }
    }

    /// Stops drawing and clears the line; no draw happens after this returns.
    func finish() {
        drawing.withLock {
            $0 = false
            writeStandardError("\r\u{1B}[K")
        }
    }

    private func draw() {
        let (position, duration) = run.progress
        let elapsed = ContinuousClock.now - started
        let wall = elapsed.inSeconds
        let speed = wall > 0 ? position / wall : 0
        var line: String
        if let duration, duration > 0 {
            let fraction = min(1, position / duration)
            let filled = Int(fraction * 30)
            line = "[" + String(repeating: "=", count: filled) + String(repeating: " ", count: 30 - filled) + "] "
            line += "\(fixed(position, 1)) / \(fixed(duration, 1)) s"
        } else {
            line = "\(fixed(position, 1)) s"
        }
        line += "  \(fixed(speed, 1))x"
        writeStandardError("\r\u{1B}[K" + line)
    }
}
