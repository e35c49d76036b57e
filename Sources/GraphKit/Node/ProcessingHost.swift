import CGStreamer
import CGraphKitGlue

/// What the engine offers a ``ProcessingNode`` beyond its buffers.
///
/// A node whose `out` port carries another kind of data than its `in` (an analysis that turns
/// PCM into peaks) consumes its input and emits on its output through ``emit(_:)``. The engine
/// ends that output after ``ProcessingNode/endOfStream()``.
public final class ProcessingHost: @unchecked Sendable {
    let inputPad: UnsafeMutablePointer<GstPad>
    let output: MediaInput?

    init(inputPad: UnsafeMutablePointer<GstPad>, output: MediaInput?) {
        self.inputPad = inputPad
        self.output = output
        gst_object_ref(UnsafeMutableRawPointer(inputPad))
    }

    deinit { gst_object_unref(UnsafeMutableRawPointer(inputPad)) }

    /// Whether anything downstream takes what ``emit(_:)`` sends.
    public var isOutputConnected: Bool { output != nil }

    /// Sends a buffer on the node's output (a no-op when the output is not connected).
    public func emit(_ buffer: SampleBuffer) throws {
        try output?.appendImmediately(buffer)
    }

    /// The duration of the stream feeding this node, when upstream knows it (a file does; a
    /// live capture does not). Call it from `formatDidChange` or `process`.
    public func upstreamDuration() -> MediaTime? {
        var ns: gint64 = 0
        guard gst_pad_peer_query_duration(inputPad, GST_FORMAT_TIME, &ns) != 0, ns > 0 else { return nil }
        return MediaTime(nanoseconds: UInt64(ns))
    }

    func finishOutput() { output?.markAsFinished() }
}
