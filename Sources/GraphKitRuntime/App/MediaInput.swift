import Dispatch
import GraphKitCore
import MediaContainers

/// Where app code pushes samples into a running graph (a `source.app` node), like
/// `AVAssetWriterInput`. Get it from ``GraphRun/input(_:)``, and hold it while you append.
///
/// Backpressure follows AVFoundation: check ``isReadyForMoreMediaData`` (or let
/// ``requestMediaDataWhenReady(on:using:)`` call you when it is), `await` ``append(_:)``, which
/// suspends until the graph wants more, or call ``appendWaiting(_:)`` from a thread of your own.
///
/// Every append is checked before it enters the graph: the sample's format against the one the
/// input declared (`source.app`'s `format`), its byte count against its format, and its
/// presentation time (present, and not earlier than the previous sample's). Each mistake throws
/// a `usage` error naming the input.
///
/// No call can wait for ever: when the run ends (completed, stopped, failed or cancelled), every
/// waiting append wakes and throws the run's error, and a `requestMediaDataWhenReady` block is
/// called no more. An input must be finished (``markAsFinished()``) for the run to end by
/// itself; an input the app no longer holds while the run's report is awaited (``GraphRun/report()``,
/// ``GraphRun/wait()``) is finished for it, since nothing can append to it any more.
public final class MediaInput: Sendable {
    let core: AppInput
    private let release: @Sendable () -> Void

    init(core: AppInput, release: @escaping @Sendable () -> Void) {
        self.core = core
        self.release = release
    }

    deinit { release() }

    /// The `source.app` node this input feeds.
    public var nodeID: String { core.nodeID }

    /// The format every sample must have, when the input declares one.
    public var declaredFormat: MediaFormat? { core.declaredFormat }

    /// Whether the graph can take another sample now without exceeding its bound. False once
    /// the input is finished or the run has ended.
    public var isReadyForMoreMediaData: Bool { core.isReadyForMoreMediaData }

    /// Calls `block` on `queue` whenever the input is ready for more data, until it is finished
    /// or the run ends. The block appends while ``isReadyForMoreMediaData`` holds.
    public func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        core.requestMediaDataWhenReady(on: queue, using: block)
    }

    /// Appends a sample, suspending until the graph is ready for it.
    ///
    /// A cancelled task appends nothing: this throws a `cancelled` error at once, or as soon as
    /// the task is cancelled while it waits. The run goes on (a run let go, as the task's error
    /// unwinds, is cancelled with it: see ``GraphRun``).
    public func append(_ buffer: SampleBuffer) async throws(GraphError) {
        try await core.append(buffer)
    }

    /// Appends a sample, blocking the calling thread until the graph is ready for it. For
    /// threads of your own; from a Swift concurrency task, `await` ``append(_:)``.
    @available(*, noasync, message: "blocks the thread; use await append(_:)")
    public func appendWaiting(_ buffer: SampleBuffer) throws(GraphError) {
        try core.appendWaiting(buffer)
    }

    /// Appends a sample now, ready or not (as `AVAssetWriterInput.append` does inside a
    /// `requestMediaDataWhenReady` block after checking readiness). If the graph refuses it
    /// because the run failed, this throws the run's error, which names the node at fault.
    public func appendImmediately(_ buffer: SampleBuffer) throws(GraphError) {
        try core.appendImmediately(buffer)
    }

    /// Appends without the checks (format, byte count, timing), for a test harness that feeds
    /// a node exactly what a test wants, untimed or odd samples included.
    @_spi(Testing)
    public func appendUnchecked(_ buffer: SampleBuffer) throws(GraphError) {
        try core.appendImmediately(buffer, checked: false)
    }

    /// Closes this input without ending its stream, because what it feeds is ending (an
    /// AssetWriter cancelled or failed): it is ready no more, its `requestMediaDataWhenReady`
    /// block is called no more, and every append waiting or to come throws `error`.
    package func close(because error: GraphError) {
        core.runEnded(error)
    }

    // MARK: For a writer input (Assets), which shapes samples between checking and pushing

    /// Checks `buffer` as an append would (format, byte count, time) and its time order by
    /// `rule`, with errors at `location`, and records it as the last sample appended: see
    /// ``AppendOrder``. What it becomes is then pushed with the `admitted` appends.
    package func admit(_ buffer: SampleBuffer, format: MediaFormat, rule: AppendOrder.Rule, at location: String,
                       shownEarlierBy offset: MediaTime = .zero) throws(GraphError) -> AppendOrder.Stamp? {
        try core.admit(buffer, format: format, rule: rule, at: location, shownEarlierBy: offset)
    }

    /// ``append(_:)`` of a sample admitted already; `willWait` is called once if it has to wait.
    package func appendAdmitted(_ buffer: SampleBuffer, willWait: @escaping () -> Void) async throws(GraphError) {
        try await core.append(buffer, checked: false, willWait: willWait)
    }

    /// ``appendWaiting(_:)`` of a sample admitted already; `willWait` is called once if it has to wait.
    package func appendAdmittedWaiting(_ buffer: SampleBuffer, willWait: @escaping () -> Void) throws(GraphError) {
        try core.appendWaiting(buffer, checked: false, willWait: willWait)
    }

    /// ``appendImmediately(_:)`` of a sample admitted already.
    package func appendAdmittedImmediately(_ buffer: SampleBuffer) throws(GraphError) {
        try core.appendImmediately(buffer, checked: false)
    }

    /// Ends this input: end of stream flows downstream, and muxers can finalize. A second call
    /// does nothing.
    public func markAsFinished() {
        core.markAsFinished()
    }

    /// Whether the input takes no more samples (finished, or the run has ended).
    public var isFinished: Bool { core.isFinishedForAppends }
}
