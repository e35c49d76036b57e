import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc
import Logging
import GraphKitCore
import MediaContainers

/// One run of a validated graph: its lifecycle, and the one object code holds.
///
/// ```
///  GraphRun(graph)   PipelineCompiler makes every node and links every edge (EdgePolicy)
///  start()           nodes prepare (check files), the pipeline plays, BusWatcher watches
///  stop()            end of stream from every source: files finalize (AVAssetWriter's
///                    finishWriting, gst-launch-1.0 -e)
///  cancel()          abandon: outputs removed (cancelWriting)
///  wait(), report()  the RunReport, once the pipeline stopped and every node finished
/// ```
///
/// However a run ends, no output is left half-written: a run let go while it is still going
/// (no `wait()`, the code that held it threw) is cancelled as its last reference goes, and a
/// task awaiting ``report()`` that is cancelled cancels the run.
///
/// The parts, each with one job: ``Pipeline`` owns the GStreamer pipeline and everything handed
/// to it; ``PipelineCompiler`` builds it from the graph; ``ProcessingNodeHost`` runs Swift nodes
/// inside it; ``RunStatistics`` counts what flows; ``BusWatcher`` turns bus messages into the
/// run's outcome on a thread of the run's own, joined when the run is waited for.
public final class GraphRun: Sendable {
    public let graph: Graph
    /// How the run goes: one GStreamer pipeline, or the container path (no pipeline: a join or
    /// trim as stored, read and written by the container library).
    public let plan: RunPlan
    /// Without a pipeline to play, an empty one: it owns the run's statistics.
    let pipeline: Pipeline
    /// The copy that runs instead of the pipeline, on the container path.
    private let containerPath: ContainerPath?
    let nodes: [(spec: Graph.NodeSpec, node: any Node)]
    private let failures: NodeFailures
    let logger: Logger
    /// The nodes whose inputs say how far the run has got (those with no connected output).
    private let finals: [String]

    /// Where the run is, shared by the caller's threads and the watcher; waits for the report
    /// sleep on it.
    private struct State {
        var started = false
        var stopRequested = false
        var cancelRequested = false
        var finishedReport: RunReport?
        var reportWaiters: [HandOff<RunReport, Never>] = []
        var watcherThread: JoinableThread?
        /// The watcher thread once the report is published (its last act), for joining.
        var endedWatcher: JoinableThread? { finishedReport == nil ? nil : watcherThread }
        /// A run started at a position (``start(at:)``): the seek is done and the pipeline plays.
        var positioned = false
        var startTime = ContinuousClock.now
        var isRunning: Bool { started && finishedReport == nil }
    }
    private let state = Condition(State())
    /// The outcome the watcher saw when the run was being released meanwhile: `deinit` ends the
    /// run with it, since the watcher cannot reach a run that is going away.
    private let orphanedOutcome = OutcomeBox()

    /// Builds the pipeline (or, on the container path, reads the sources' indexes). Throws a
    /// GraphError naming the node at fault (a missing plugin is 69).
    /// `logger` receives GraphKit's messages about this run (GStreamer's warnings, with the node
    /// id as `node` metadata); by default they go where `LoggingSystem` sends "graphkit".
    ///
    /// The run's ``plan`` is the container path when the graph fits it (``RunPlan/init(for:)``).
    public convenience init(_ graph: Graph, logger: Logger? = nil) throws(GraphError) {
        try self.init(graph, logger: logger, plan: nil)
    }

    /// Builds the run as ``init(_:logger:)`` does, on `plan` when given: `.pipeline` runs a graph
    /// that fits the container path as a pipeline all the same; `.containerPath` throws `usage`
    /// for a graph that does not fit it.
    public init(_ graph: Graph, logger: Logger? = nil, plan: RunPlan?) throws(GraphError) {
        self.graph = graph
        self.logger = logger ?? .graphKit
        let compiler = PipelineCompiler(graph: graph)
        // The container path when asked or when the graph fits it: its nodes made, its sources'
        // indexes read (a demuxer's file decides whether it fits).
        var onContainerPath: (Pipeline, [(spec: Graph.NodeSpec, node: any Node)], ContainerPath)?
        var declined: String?
        if plan != .pipeline, ContainerPath.fits(graph) {
            let p = try Pipeline(name: graph.name ?? "graph")
            let made = try compiler.makeNodes()
            if let path = try ContainerPath(graph: graph, nodes: made, statistics: p.statistics, declined: &declined) {
                onContainerPath = (p, made, path)
            } else if let declined {
                self.logger.debug("runs as a GStreamer pipeline: \(declined)")
            }
        }
        if plan == .containerPath, onContainerPath == nil {
            throw GraphError(.usage, at: "GraphRun(plan:)", "this graph cannot run on the container path: it needs a GStreamer pipeline"
                             + (declined.map { " (\($0))" } ?? ""))
        }
        if let (p, made, path) = onContainerPath {
            self.plan = .containerPath
            pipeline = p
            nodes = made
            failures = NodeFailures()
            containerPath = path
        } else {
            self.plan = .pipeline
            let compiled = try compiler.compile()
            pipeline = compiled.pipeline
            nodes = compiled.nodes
            failures = compiled.failures
            containerPath = nil
        }
        finals = graph.nodes.filter { graph.edges(from: $0.id).isEmpty }.map(\.id)
        // A sink waits for its first buffer before the pipeline plays, and holds the others
        // meanwhile: one track of a camera that never comes (an IP camera's audio) would stall
        // every other sink's. A graph with a source that runs until stopped does not wait.
        if containerPath == nil, graph.nodes.contains(where: { $0.descriptor.unboundedWhen?.holds(in: $0.parameters) == true }) {
            pipeline.sinksPlayWithoutFirstBuffer()
        }
    }

    /// A run let go while it is still going is cancelled, here and now: the pipeline stops and
    /// every sink removes what it wrote (their `finish(.cancelled)`), before the last reference
    /// is gone. The watcher holds the run only weakly, so that this can happen.
    deinit {
        let (running, thread) = state.withLock { state in
            if state.isRunning { state.cancelRequested = true }
            return (state.isRunning, state.watcherThread)
        }
        if running { postCancel() }
        thread?.join()
        if let outcome = orphanedOutcome.take() { finish(outcome) }
        pipeline.stop()
    }

    // MARK: Access for code

    /// The node instance with this id.
    public func node(_ id: String) -> (any Node)? { nodes.first { $0.spec.id == id }?.node }

    /// The push endpoint of a `source.app` node.
    public func input(_ id: String) throws(GraphError) -> MediaInput {
        guard let n = node(id) as? AppSourceNode, let input = n.mediaInput() else {
            throw GraphError(.usage, "no source.app node \"\(id)\" in the graph")
        }
        return input
    }

    /// The pull endpoint of a `sink.app` node.
    public func output(_ id: String) throws(GraphError) -> MediaOutput {
        guard let n = node(id) as? AppSinkNode, let output = n.output else {
            throw GraphError(.usage, "no sink.app node \"\(id)\" in the graph")
        }
        return output
    }

    // MARK: Running

    /// Prepares every node and starts the pipeline. Problems found before anything plays
    /// (an unreadable input, an output folder that cannot be made) throw here, and end the run.
    public func start() throws(GraphError) {
        _ = try start(seeking: nil)
    }

    /// Starts the run at a position in its sources' media rather than at their start: the
    /// pipeline prerolls (paused: each file's header read, its decoders set up), seeks, and only
    /// then plays, so what comes before the position is never decoded, or only from the keyframe
    /// before it. Returns once the run plays from there: what any output gives afterwards is from
    /// the position on. Blocks until then, and wakes when the run ends meanwhile (a failure while
    /// prerolling throws it; a ``cancel()`` from another thread throws `cancelled`).
    ///
    /// A second start does nothing, as ``start()``'s does.
    @available(*, noasync, message: "blocks the thread until the run plays from the position; call it from a thread of your own")
    public func start(at position: Seek) throws(GraphError) {
        guard position.time >= .zero, position.time.isFinite else {
            throw GraphError(.usage, at: "GraphRun.start(at:)", "cannot start at \(position.time): a position is a finite time from 0")
        }
        guard try start(seeking: position) else { return }
        let report = state.wait(until: { $0.positioned || $0.finishedReport != nil }) { $0.positioned ? nil : $0.finishedReport }
        if let error = report?.error { throw error }
    }

    /// Starts the run (at `position`, when given); false when it had been started already.
    private func start(seeking position: Seek?) throws(GraphError) -> Bool {
        let already = state.withLock { state in
            defer { state.started = true }
            return state.started
        }
        guard !already else { return false }
        if position != nil, containerPath != nil {
            let e = GraphError(.usage, at: "GraphRun.start(at:)", "a graph on the container path (a copy as stored) runs from its start: start() it")
            publish(makeReport(status: .failed, wall: 0, error: e))
            throw e
        }
        // A graph whose output is one of its inputs (through a link, or under another name)
        // would destroy it: refused before any file is made.
        do {
            try graph.fileRoles.check()
        } catch {
            publish(makeReport(status: .failed, wall: 0, error: error))
            throw error
        }
        for (spec, node) in nodes {
            do {
                try node.prepare()
            } catch {
                // Nothing played: let the nodes that did prepare clean up, and end the run here.
                let e = GraphError(error, node: spec.id)
                for (_, node) in nodes { try? node.finish(.failed) }
                publish(makeReport(status: .failed, wall: 0, error: e))
                throw e
            }
        }
        // An HDR file's frames decoded as they are, bound for a node that takes SDR: refused now.
        do {
            try Self.checkSDRInputs(graph, nodes: nodes)
        } catch {
            for (_, node) in nodes { try? node.finish(.failed) }
            publish(makeReport(status: .failed, wall: 0, error: error))
            throw error
        }
        // An append the graph refuses because the run failed reports that failure, as
        // AVAssetWriter's error does, and not just the refusal.
        for (_, node) in nodes {
            (node as? AppSourceNode)?.input?.reportRefusals { [weak self] in self?.failure(waitingUpTo: 2) }
        }
        state.withLock { $0.startTime = .now }
        if let containerPath {
            // No pipeline: the copy runs on the run's own thread, which holds the run weakly as
            // the watcher does.
            let thread = JoinableThread(name: "graphkit-copy") { [weak self, logger, orphanedOutcome] in
                let outcome = containerPath.run(logger: logger)
                if let self { self.finish(outcome) } else { orphanedOutcome.put(outcome) }
            }
            state.withLock { $0.watcherThread = thread }
            return true
        }
        // A run started at a position prerolls first: the watcher seeks once the pipeline is
        // paused, and then plays it (on its own thread, so that nothing else changes the
        // pipeline's state meanwhile: a failure or a cancel it sees first stops it instead).
        let target = position == nil ? GST_STATE_PLAYING : GST_STATE_PAUSED
        let refused = gk_element_set_state(pipeline.raw, target) == GST_STATE_CHANGE_FAILURE
        // A display's window closed stops the run as SIGINT does; the watcher holds the run weakly.
        let watcher = BusWatcher(pipeline: pipeline, graph: graph, nodes: nodes, failures: failures, logger: logger,
                                 requestStop: { [weak self] in self?.stop() })
        var whenPrerolled: (@Sendable () -> GraphError?)?
        if let position {
            whenPrerolled = { [weak self, pipeline] () -> GraphError? in
                if let error = pipeline.seek(position) { return error }
                self?.state.withLock(wakingWaiters: true) { $0.positioned = true }
                return nil
            }
        }
        let prerolled = whenPrerolled
        // The watcher holds the run weakly: a run nobody holds any more is cancelled by its deinit
        // (which waits for this thread), and ends with the outcome left here.
        let thread = JoinableThread(name: "graphkit-bus") { [weak self, pipeline, orphanedOutcome] in
            let outcome = watcher.watch(startFailed: refused, whenPrerolled: prerolled) { pipeline.statistics.sampleQueues() }
            if let self { self.finish(outcome) } else { orphanedOutcome.put(outcome) }
        }
        state.withLock { $0.watcherThread = thread }
        return true
    }

    /// Moves a run started with ``start(at:)`` to another position, as that start did (a
    /// flushing seek: what was decoded from the old position leaves every queue and output
    /// before this returns), so that one pipeline gives pictures at many times: a thumbnailer
    /// prerolls once. Throws `usage` for a run that was not started at a position or has ended,
    /// and the seek's error when the sources cannot seek.
    @available(*, noasync, message: "blocks the thread while the pipeline flushes; call it from a thread of your own")
    public func seek(to position: Seek) throws(GraphError) {
        guard position.time >= .zero, position.time.isFinite else {
            throw GraphError(.usage, at: "GraphRun.seek(to:)", "cannot seek to \(position.time): a position is a finite time from 0")
        }
        let playing = state.withLock { $0.positioned && $0.finishedReport == nil && !$0.cancelRequested && !$0.stopRequested }
        guard playing else {
            throw GraphError(.usage, at: "GraphRun.seek(to:)", "only a run started with start(at:) and still playing can seek")
        }
        if let error = pipeline.seek(position) { throw error }
    }

    /// Ends the run gracefully: every source sends end of stream, so every muxer writes its
    /// index and every file is complete. The run's status becomes `stopped`.
    ///
    /// A run that is not yet playing (still reading its inputs' headers), or a live one whose
    /// sources have sent nothing yet, has written nothing: stopping it cancels it. Parts whose source
    /// has not begun their stream yet (a camera's track still to come) get their end directly.
    public func stop() {
        let already = state.withLock { state in
            defer { state.stopRequested = true }
            return state.stopRequested || state.cancelRequested || state.finishedReport != nil
        }
        guard !already else { return }
        if let containerPath {
            // Every input ends where it is and the files complete; before the first sample is
            // written, nothing to complete: cancelled, as a pipeline not yet playing is.
            if !containerPath.requestStop() { cancel() }
            return
        }
        if hasWritten {
            for (_, node) in nodes { (node as? any StopAware)?.runWillStop() }
            gk_send_eos(pipeline.raw)
            pipeline.endStreamsNotYetBegun()
        } else {
            cancel()
        }
    }

    /// Stops the run as ``stop()`` does, and if it has not ended `deadline` after (work queued
    /// upstream still draining: a long encode, a slow node), ends it at its sinks: every muxer
    /// and sink gets end of stream straight away and finishes its file with what has reached
    /// it. Either way the run is `stopped`, its files complete. What happens after the sinks have
    /// their end (a muxer writing its index, copying a faststart file) is not cut short.
    ///
    /// Returns false when the run was not playing yet, and so is cancelled (see ``stop()``).
    @discardableResult
    public func stop(finishingWithin deadline: Duration) -> Bool {
        if let containerPath {
            // It ends between two samples: nothing upstream to drain. Before its first, a stop cancels.
            guard containerPath.requestStop() else {
                cancel()
                return false
            }
            stop()
            return true
        }
        let flowing = hasWritten
        stop()
        guard flowing else { return false }
        let seconds = deadline.inSeconds
        JoinableThread.detach { [weak self] in
            guard let self, report(waitingAtMost: seconds) == nil else { return }
            logger.debug("the run had not ended \(seconds) s after it was stopped: ending the streams at the sinks")
            pipeline.endStreamsAtSinks()
        }
        return true
    }

    /// Whether the pipeline plays and samples have reached its final nodes: then end of stream
    /// can travel through it and leaves something to complete. (A live graph plays at once, its
    /// sinks not waiting for a first buffer, see `init`: stopped before its camera sent
    /// anything, it is cancelled, as a run stopped before it plays.)
    private var hasWritten: Bool {
        var state = GST_STATE_VOID_PENDING
        _ = gst_element_get_state(pipeline.raw, &state, nil, 0)  // the current state, not waiting
        return state == GST_STATE_PLAYING && pipeline.statistics.buffers(reaching: finals) > 0
    }

    /// Abandons the run: the pipeline stops at once and sinks remove what they wrote.
    public func cancel() {
        let already = state.withLock { state in
            defer { state.cancelRequested = true }
            return state.cancelRequested || state.finishedReport != nil
        }
        guard !already else { return }
        for (_, node) in nodes { (node as? any StopAware)?.runWillCancel() }
        postCancel()
    }

    /// Tells the watcher, or the container path's thread, to cancel.
    private func postCancel() {
        if let containerPath { containerPath.requestCancel() } else { BusWatcher.postCancel(to: pipeline) }
    }

    /// Blocks until the run is over and returns its report. Call from your own thread, not
    /// from a Swift concurrency task (use `report()` there). A run never started reports at once
    /// that it was not started.
    @available(*, noasync, message: "blocks the thread; use await report()")
    public func wait() -> RunReport {
        reportIsAwaited()
        if let report = report(waitingAtMost: nil) { return report }
        return notStarted
    }

    /// The report, once the run is over, without blocking a concurrency thread.
    ///
    /// Cancelling the task that awaits it cancels the run (outputs removed), as cancelling a task
    /// awaiting a download cancels the download; the report then says `cancelled`.
    public func report() async -> RunReport {
        reportIsAwaited()
        let report = await withTaskCancellationHandler {
            await withHandOff { continuation in
                let ready = state.withLock { state -> RunReport? in
                    if let report = state.finishedReport { return report }
                    if !state.started { return notStarted }
                    state.reportWaiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            if state.withLock({ $0.started }) { cancel() }  // a run never started reports that at once, and stays as it is
        }
        // Joined here as `wait()` joins it, so that no ended thread waits for the run's release
        // to be reaped (a program that exits holding a finished writer would leave it so). Its
        // last act was to publish this report: what is left is its return, which needs nothing
        // from the concurrency pool, so this join is brief and cannot deadlock.
        state.withLock { $0.endedWatcher }?.join()
        return report
    }

    /// Inputs the app no longer holds are finished: nothing can append to them, and the report
    /// would otherwise wait for them for ever.
    private func reportIsAwaited() {
        guard state.withLock({ $0.isRunning }) else { return }
        for (_, node) in nodes { (node as? AppSourceNode)?.reportIsAwaited() }
    }

    private var notStarted: RunReport {
        makeReport(status: .failed, wall: 0, error: GraphError(.usage, "the run was never started; call start() first"))
    }

    /// Starts, waits, and returns the report; throws the run's error if it failed.
    @discardableResult
    @available(*, noasync, message: "blocks the thread; use start() and await report()")
    public func run() throws(GraphError) -> RunReport {
        try start()
        let report = wait()
        if let error = report.error { throw error }
        return report
    }

    /// The run's error once it has ended, waiting up to `timeout` seconds for the end: nil if it
    /// ended without one, or has not ended by then.
    func failure(waitingUpTo timeout: Double) -> GraphError? {
        report(waitingAtMost: timeout)?.error
    }

    /// The report once the run has ended, waiting at most `timeout` seconds (nil: for ever); nil
    /// when the run was never started or has not ended by then. Joins the watcher thread once it
    /// ended.
    private func report(waitingAtMost timeout: Double?) -> RunReport? {
        let (report, thread) = state.wait(until: { !$0.isRunning }, atMost: timeout) { state in
            (state.finishedReport, state.endedWatcher)
        }
        thread?.join()
        return report
    }

    /// Where the run is: media seconds that reached the final nodes, and the total when known.
    public var progress: (position: Double, duration: Double?) {
        let position = pipeline.statistics.mediaSeconds(reaching: finals)
        var duration = nodes.compactMap { $0.node.expectedDuration?.seconds }.max()
        if duration == nil {
            var d: gint64 = 0
            if gst_element_query_duration(pipeline.raw, GST_FORMAT_TIME, &d) != 0, d > 0 { duration = Double(d) / 1e9 }
        }
        return (position, duration)
    }

    /// The report once the run has ended, without waiting; nil while it runs (or before it starts).
    public var finalReport: RunReport? {
        state.withLock { $0.finishedReport }
    }

    public var isFinished: Bool {
        state.withLock { $0.finishedReport != nil }
    }

    // MARK: Ending (on the watcher thread)

    private func finish(_ outcome: BusWatcher.Outcome) {
        var status: RunStatus
        var error: GraphError?
        switch outcome {
        case .endOfStream:
            // A cancel asked for while a stop's end of stream drained still cancels: the user
            // asked to abandon the files, whichever message the bus delivered first.
            status = state.withLock { $0.cancelRequested ? .cancelled : $0.stopRequested ? .stopped : .completed }
            pipeline.statistics.sampleQueues()
            if status != .cancelled, let e = emptyOutput() {
                status = .failed
                error = e
            } else if status == .completed, !state.withLock({ $0.positioned }) {
                // (A run started at a position read less than the whole file by design.)
                warnAboutInputsCutShort()
            }
        case .failed(let e):
            status = .failed
            error = e
        case .cancelled:
            status = .cancelled
        }
        // Nothing of a node's own changes the pipeline once it stops (a reconnecting node's watch).
        for (_, node) in nodes { (node as? any StopAware)?.runWillEnd() }
        // No streaming thread runs past this, and every callback is let go.
        pipeline.stop()
        // A cancel that came while the pipeline stopped still wins, as one during the drain does.
        let (cancelled, startTime) = state.withLock { ($0.cancelRequested, $0.startTime) }
        if cancelled, error == nil { status = .cancelled }
        let elapsed = ContinuousClock.now - startTime
        // Sinks finalize (rename) or clean up by how the run ended.
        var finishError: GraphError?
        for (spec, node) in nodes {
            do {
                try node.finish(status)
            } catch {
                if finishError == nil { finishError = GraphError(error, node: spec.id) }
            }
        }
        if error == nil, let e = finishError {
            error = e
            status = .failed
        }
        if status == .cancelled, error == nil {
            error = GraphError(.cancelled, "the run was cancelled")
        }
        let wall = elapsed.inSeconds
        let report = makeReport(status: status, wall: wall, error: error)
        // What a live source let go is missing from what the graph wrote: say where, and how much.
        // (A display's frames not shown are its own business: what it shows beside has them.)
        for site in report.drops where site.reason == .liveSourceAhead {
            logger.warning("\(site.buffers) buffers dropped at \(site.edge ?? site.node): what \(site.node) feeds did not keep up with it (a live source drops rather than wait)",
                           metadata: ["node": .string(site.node)])
        }
        // Code blocked on an input wakes and throws the run's error.
        for (_, node) in nodes { (node as? AppSourceNode)?.input?.runEnded(error) }
        publish(report)
    }

    private func publish(_ report: RunReport) {
        let waiters = state.withLock(wakingWaiters: true) { state in
            state.finishedReport = report
            defer { state.reportWaiters.removeAll() }
            return state.reportWaiters
        }
        waiters.forEach { $0.resume(returning: report) }
    }

    private func makeReport(status: RunStatus, wall: Double, error: GraphError?) -> RunReport {
        RunReport(status: status, wallSeconds: wall, mediaSeconds: pipeline.statistics.mediaSeconds(reaching: finals),
                  nodes: nodes.map { pipeline.statistics.nodeStatistics($0.spec, gaps: $0.node.gaps) },
                  edges: pipeline.statistics.edgeStatistics(),
                  outputs: nodes.flatMap { Self.checked($0.node.outputs) }, error: error)
    }

    /// The outputs as their nodes report them, where one said to be complete is there: a file
    /// that is not (removed since, by someone else) is reported as failed.
    private static func checked(_ outputs: [OutputReport]) -> [OutputReport] {
        outputs.map { output in
            var output = output
            if output.status == .completed, FileIdentity(path: output.path) == nil { output.status = .failed }
            return output
        }
    }
}

/// A node that may produce in real time from a clock that waits for nobody (capture: a camera, a
/// microphone). Edges leaving a live node drop the oldest buffer when full, and count it (in the
/// edge's and the node's statistics), rather than make the source wait, as
/// `alwaysDiscardsLateVideoFrames` does. Code appending into a graph (`source.app`) is not one:
/// what `append` accepted is never dropped; real time shows in its readiness only.
public protocol LiveNode: Node {
    var isLive: Bool { get }
}

/// The watcher's outcome, handed to a run's deinit (see ``GraphRun``'s watcher thread).
private final class OutcomeBox: Sendable {
    private let outcome = Guarded<BusWatcher.Outcome?>(nil)

    func put(_ value: BusWatcher.Outcome) {
        outcome.withLock { $0 = value }
    }

    func take() -> BusWatcher.Outcome? {
        outcome.withLock { value in
            defer { value = nil }
            return value
        }
    }
}
