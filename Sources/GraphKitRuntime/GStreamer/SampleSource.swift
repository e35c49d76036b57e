import CGStreamer
import CGraphKitGlue
import Synchronization
@_spi(Engine) import GraphKitCore

/// A source of samples a node makes in Swift (packets it reads from files, say), for a node
/// that is a source without seeing GStreamer: an `appsrc` that asks for samples when downstream
/// wants them (need-data), so they are read as fast as the graph takes them and no faster
/// (backpressure), on the source's own streaming thread. The caps are the node's, given once;
/// each sample carries its own timing and flags (a key frame, or not).
///
/// Made by ``BinBuilder/makeSampleSource(name:caps:next:)``.
public final class SampleSource: Sendable {
    /// What ``BinBuilder/makeSampleSource(name:caps:next:)``'s `next` gives.
    public enum Next: Sendable {
        /// The next sample: pushed, and `next` is asked again while downstream wants more.
        case sample(SampleBuffer)
        /// No more: end of stream follows.
        case end
        /// The stream cannot go on: the run fails with this message, said at the node.
        case failed(String)
    }

    /// The `appsrc`: expose it as the node's output.
    public let element: Element
    private let next: @Sendable () -> Next
    /// Touched only on the source's streaming thread (need-data is never called concurrently).
    private let ended = Atomic(false)

    /// Samples pushed per need-data: downstream asks again once the source's queue has emptied.
    static let batch = 8

    fileprivate init(element: Element, next: @escaping @Sendable () -> Next) {
        self.element = element
        self.next = next
    }

    private var appsrc: UnsafeMutablePointer<GstAppSrc> {
        UnsafeMutableRawPointer(element.raw).assumingMemoryBound(to: GstAppSrc.self)
    }

    /// need-data, on the appsrc's streaming thread: a few samples, made now.
    fileprivate func produce() {
        guard !ended.load(ordering: .relaxed) else { return }
        for _ in 0..<Self.batch {
            switch next() {
            case .sample(let sample):
                // FLUSHING once the run stops, EOS once downstream ended: nothing more to push.
                guard gst_app_src_push_buffer(appsrc, sample.retainedBuffer()) == GST_FLOW_OK else { return }
            case .end:
                ended.store(true, ordering: .relaxed)
                gst_app_src_end_of_stream(appsrc)
                return
            case .failed(let message):
                ended.store(true, ordering: .relaxed)
                element.postError(message)
                return
            }
        }
    }
}

extension BinBuilder {
    /// Adds a source of samples described by `caps` (GStreamer caps text), each made by `next`
    /// on the source's streaming thread, in order, as downstream wants them; `next` may block on
    /// a file's read, not on anything the run waits for. Expose `element` as the node's output.
    public func makeSampleSource(name: String, caps: String, next: @escaping @Sendable () -> SampleSource.Next) throws(GraphError) -> SampleSource {
        let src = try make("appsrc", name: name, [
            "format": "time", "is-live": "false", "do-timestamp": "false", "block": "false",
            // A batch per need-data: the queue holds one batch at most.
            "max-bytes": "0", "max-buffers": "0", "emit-signals": "true", "caps": caps,
        ])
        let source = SampleSource(element: src, next: next)
        // Through the run's registry: the handler (and `next`, which may hold its node) is let
        // go when the run stops, so nothing keeps the pipeline alive in a cycle.
        let callback: @convention(c) (UnsafeMutableRawPointer?, guint, UnsafeMutableRawPointer?) -> Void = { element, _, context in
            guard let context else { return }
            gk_callback_enter(element)
            Unmanaged<SampleSource>.fromOpaque(context).takeUnretainedValue().produce()
            gk_callback_leave(element)
        }
        callbacks.connect(src.object, "need-data", unsafeBitCast(callback, to: GCallback.self), context: source)
        return source
    }
}
