/// What the engine offers a ``ProcessingNode`` beyond its buffers.
///
/// - A node that consumes its input (``BufferFlow/consume``) and declares an output `out`
///   (an analysis that turns PCM into peaks) sends what it makes through ``emit(_:)``. The engine
///   ends that output after ``ProcessingNode/endOfStream()``.
/// - A node that passes buffers through (``BufferFlow/passThrough``) may send buffers of its own
///   through ``emit(_:)`` from `process` or `endOfStream()`, after the one it was handed: the tail
///   an effect with latency still holds when its input ends (an echo, a filter).
public final class ProcessingHost: Sendable {
    private let emitter: (@Sendable (SampleBuffer) throws(GraphError) -> Bool)?
    private let endOutput: @Sendable () -> Void
    private let duration: @Sendable () -> MediaTime?

    /// The engine's side: how to send a buffer on, end the output, and ask upstream how long
    /// the stream is.
    package init(emitter: (@Sendable (SampleBuffer) throws(GraphError) -> Bool)?,
                 endOutput: @escaping @Sendable () -> Void = {},
                 upstreamDuration: @escaping @Sendable () -> MediaTime?) {
        self.emitter = emitter
        self.endOutput = endOutput
        self.duration = upstreamDuration
    }

    /// Whether anything downstream takes what ``emit(_:)`` sends.
    public var isOutputConnected: Bool { emitter != nil }

    /// Sends a buffer on the node's output (a no-op when the output is not connected). Call it
    /// on the streaming thread, from `process`, `formatDidChange` or `endOfStream`. Returns
    /// false when downstream takes nothing more because the run is ending (stopped, cancelled
    /// or failed): a node sending a long tail stops there rather than make buffers no one takes.
    @discardableResult
    public func emit(_ buffer: SampleBuffer) throws(GraphError) -> Bool {
        try emitter?(buffer) ?? true
    }

    /// The duration of the stream feeding this node, when upstream knows it (a file does; a
    /// live capture does not). Call it from `formatDidChange` or `process`.
    public func upstreamDuration() -> MediaTime? { duration() }

    package func finishOutput() { endOutput() }
}
