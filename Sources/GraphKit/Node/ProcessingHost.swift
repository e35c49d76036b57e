import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc

/// What the engine offers a ``ProcessingNode`` beyond its buffers.
///
/// - A node that consumes its input (``BufferFlow/consume``) and declares an output `out`
///   (an analysis that turns PCM into peaks) sends what it makes through ``emit(_:)``. The engine
///   ends that output after ``ProcessingNode/endOfStream()``.
/// - A node that passes buffers through (``BufferFlow/passThrough``) may send buffers of its own
///   through ``emit(_:)`` from `process` or `endOfStream()`, after the one it was handed: the tail
///   an effect with latency still holds when its input ends (an echo, a filter).
public final class ProcessingHost: @unchecked Sendable {
    let inputPad: UnsafeMutablePointer<GstPad>
    private let emitter: (@Sendable (SampleBuffer) throws(GraphError) -> Void)?
    private let endOutput: @Sendable () -> Void

    init(inputPad: UnsafeMutablePointer<GstPad>, emitter: (@Sendable (SampleBuffer) throws(GraphError) -> Void)?,
         endOutput: @escaping @Sendable () -> Void = {}) {
        self.inputPad = inputPad
        self.emitter = emitter
        self.endOutput = endOutput
        gst_object_ref(UnsafeMutableRawPointer(inputPad))
    }

    deinit { gst_object_unref(UnsafeMutableRawPointer(inputPad)) }

    /// Whether anything downstream takes what ``emit(_:)`` sends.
    public var isOutputConnected: Bool { emitter != nil }

    /// Sends a buffer on the node's output (a no-op when the output is not connected). Call it
    /// on the streaming thread, from `process`, `formatDidChange` or `endOfStream`.
    public func emit(_ buffer: SampleBuffer) throws(GraphError) {
        try emitter?(buffer)
    }

    /// The duration of the stream feeding this node, when upstream knows it (a file does; a
    /// live capture does not). Call it from `formatDidChange` or `process`.
    public func upstreamDuration() -> MediaTime? {
        var ns: gint64 = 0
        guard gst_pad_peer_query_duration(inputPad, GST_FORMAT_TIME, &ns) != 0, ns > 0 else { return nil }
        return MediaTime(nanoseconds: UInt64(ns))
    }

    func finishOutput() { endOutput() }
}
