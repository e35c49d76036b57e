import CGStreamer
import CGraphKitGlue
import GraphKitCore

/// A source whose samples a node makes on a thread of its own while the run plays (work that
/// takes long, such as taking pictures of a file, done in the run rather than while the graph is
/// built, so that a stop or a cancel ends it): an `appsrc` the node pushes into, at most
/// `capacity` samples ahead of what downstream took.
///
/// The samples are made by `produce`, on a thread of the source's own, started when the source
/// first asks for data (the pipeline has started). Nothing here waits for ever: a push that
/// waits for room wakes when the pipeline stops (flushing) and returns false, as does every push
/// once the run is ending, so `produce` stops making samples; ``join()`` waits for it to return.
/// The caps come from the first sample; end of stream from ``endOfStream()``; a failure from
/// ``fail(_:)``, with the node's own error, as the run reports it.
///
/// Made by ``BinBuilder/makePushedSource(name:capacity:produce:)``.
public final class PushedSource: Sendable {
    /// The `appsrc`: expose it as the node's output.
    public let element: Element
    private let failing: @Sendable (GraphError, Element) -> Void
    private let produce: @Sendable (PushedSource) -> Void
    private struct State {
        var started = false
        var thread: JoinableThread?
        var announced: MediaFormat?
        var ended = false
    }
    private let state = Guarded(State())

    fileprivate init(element: Element, failing: @escaping @Sendable (GraphError, Element) -> Void, produce: @escaping @Sendable (PushedSource) -> Void) {
        self.element = element
        self.failing = failing
        self.produce = produce
    }

    private var appsrc: UnsafeMutablePointer<GstAppSrc> {
        UnsafeMutableRawPointer(element.raw).assumingMemoryBound(to: GstAppSrc.self)
    }

    /// need-data, on the appsrc's streaming thread: the first starts the producing thread.
    fileprivate func demanded() {
        let first = state.withLock { s in
            defer { s.started = true }
            return !s.started
        }
        guard first else { return }
        let thread = JoinableThread(name: "graphkit-pushed") { [self] in produce(self) }
        state.withLock { $0.thread = thread }
    }

    /// Waits for the producing thread to return, when it was started (once the run has
    /// stopped, a push it waits in has woken). Call it from the run's control thread: a node's
    /// `finish(_:)`, after making `produce` stop.
    public func join() {
        state.withLock { $0.thread }?.join()
    }

    /// Pushes `buffer` (its format announced first when it is the first or a new one), waiting
    /// while the source holds `capacity` samples. False when the run is ending or has ended (the
    /// source flushing or past its end, or its caps refused): make no more. Call it from the
    /// node's own thread, never from a streaming thread.
    @discardableResult
    public func push(_ buffer: SampleBuffer) -> Bool {
        let announce = state.withLock { s -> Bool in
            guard !s.ended else { return false }
            return buffer.format != s.announced
        }
        if announce {
            guard let capsString = buffer.capsForPushing, let caps = gst_caps_from_string(capsString) else { return false }
            gst_app_src_set_caps(appsrc, caps)
            gk_caps_unref(caps)
            state.withLock { $0.announced = buffer.format }
        } else if state.withLock({ $0.ended }) {
            return false
        }
        return gst_app_src_push_buffer(appsrc, buffer.retainedBuffer()) == GST_FLOW_OK
    }

    /// Ends the stream after the samples pushed: the run completes once everything downstream
    /// has them.
    public func endOfStream() {
        let already = state.withLock { s in
            defer { s.ended = true }
            return s.ended
        }
        if !already { gst_app_src_end_of_stream(appsrc) }
    }

    /// Fails the run with `error`, the node's own (its code decides the exit status), and pushes
    /// no more.
    public func fail(_ error: GraphError) {
        state.withLock { $0.ended = true }
        failing(error, element)
    }
}

extension BinBuilder {
    /// Adds a ``PushedSource`` holding at most `capacity` samples, whose samples `produce` makes
    /// and pushes on a thread of the source's own, from when the source first asks for data.
    /// Expose `element` as the node's output.
    public func makePushedSource(name: String = "pushed", capacity: Int = 2,
                                 produce: @escaping @Sendable (PushedSource) -> Void) throws(GraphError) -> PushedSource {
        let src = try make("appsrc", name: name, [
            "format": "time", "is-live": "false", "do-timestamp": "false", "block": "true",
            "max-bytes": "0", "max-buffers": String(max(1, capacity)), "emit-signals": "true",
        ])
        let source = PushedSource(element: src, failing: nodeFailure(), produce: produce)
        // Through the run's registry, as a generated source's: let go when the run stops.
        let callback: @convention(c) (UnsafeMutableRawPointer?, guint, UnsafeMutableRawPointer?) -> Void = { element, _, context in
            guard let context else { return }
            gk_callback_enter(element)
            Unmanaged<PushedSource>.fromOpaque(context).takeUnretainedValue().demanded()
            gk_callback_leave(element)
        }
        callbacks.connect(src.object, "need-data", unsafeBitCast(callback, to: GCallback.self), context: source)
        return source
    }
}
