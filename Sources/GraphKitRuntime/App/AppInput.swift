import CGStreamer
import CGraphKitGlue
import Dispatch
@_spi(Engine) import GraphKitCore
import MediaContainers

/// The engine's side of a graph input that code pushes samples into: an `appsrc` with
/// `format=time`, whose need-data / enough-data callbacks flip the ready state. App code holds a
/// ``MediaInput`` over it; a processing node's emitter uses it directly.
///
/// Its state is one value under one `Mutex`: when the request block runs (``RequestSchedule``),
/// the time order of what was appended (``AppendOrder``), who waits, and why appends are refused
/// once it is finished. However the run ends, every waiting append wakes and throws, and a
/// registered `requestMediaDataWhenReady` block is let go (``runEnded(_:)``).
///
/// Sendable, checked: the appsrc is held as a ``GstObjectReference`` (appsrc's calls are
/// thread-safe), and everything else here is in the `Mutex`.
final class AppInput: Sendable {
    private let reference: GstObjectReference<GstElement>
    var appsrc: UnsafeMutablePointer<GstElement> { reference.raw }
    let nodeID: String
    /// Whether appends are checked (format, byte count, timing): for app code, not for a node's
    /// own emitter, whose buffers the engine made.
    private let checksAppends: Bool
    /// The format every sample must have (`source.app`'s `format`, or a writer input's), when declared.
    let declaredFormat: MediaFormat?

    /// Something waiting for the input to turn ready (or finish): a suspended task, or a thread.
    private enum Waiter {
        case task(HandOff<Void, Never>)
        case thread(DispatchSemaphore)

        func wake() {
            switch self {
            case .task(let c): c.resume()
            case .thread(let s): s.signal()
            }
        }
    }

    private struct Request {
        let queue: DispatchQueue
        let block: @Sendable () -> Void
    }

    private struct State {
        /// Whether the input is ready and finished, and when the request block runs.
        var schedule = RequestSchedule()
        /// The time order of checked appends.
        var order = AppendOrder()
        /// What the last appended buffer announced; caps are rebuilt only when that changes.
        var announced: (format: MediaFormat?, detail: String?)?
        var waiters: [Waiter] = []
        var request: Request?
        /// Set by the run: its error, once it has ended (waiting a little for the end). An append
        /// the graph refuses throws that, since it says which node failed and why.
        var failureOfTheRun: (@Sendable () -> GraphError?)?
        /// Set when the input is finished: why appends are refused from then on.
        var endOfRun: GraphError?

        /// Takes every waiter, to be woken outside the lock.
        mutating func takeWaiters() -> [Waiter] {
            defer { waiters.removeAll() }
            return waiters
        }
    }

    private let state = Guarded(State())

    func reportRefusals(with failure: @escaping @Sendable () -> GraphError?) {
        state.withLock { $0.failureOfTheRun = failure }
    }

    init(appsrc: UnsafeMutablePointer<GstElement>, nodeID: String, checksAppends: Bool = false, declaredFormat: MediaFormat? = nil) {
        reference = GstObjectReference(appsrc)
        self.nodeID = nodeID
        self.checksAppends = checksAppends
        self.declaredFormat = declaredFormat
        var callbacks = GstAppSrcCallbacks()
        callbacks.need_data = { src, _, ctx in
            gk_callback_enter(src)
            Unmanaged<AppInput>.fromOpaque(ctx!).takeUnretainedValue().setReady(true)
            gk_callback_leave(src)
        }
        callbacks.enough_data = { src, ctx in
            gk_callback_enter(src)
            Unmanaged<AppInput>.fromOpaque(ctx!).takeUnretainedValue().setReady(false)
            gk_callback_leave(src)
        }
        gst_app_src_set_callbacks(src, &callbacks, Unmanaged.passUnretained(self).toOpaque(), nil)
    }

    deinit {
        var none = GstAppSrcCallbacks()
        gst_app_src_set_callbacks(src, &none, nil, nil)
    }

    private var src: UnsafeMutablePointer<GstAppSrc> { UnsafeMutableRawPointer(appsrc).assumingMemoryBound(to: GstAppSrc.self) }

    /// Whether the graph can take another sample now without exceeding its bound.
    var isReadyForMoreMediaData: Bool { state.withLock { $0.schedule.takesSamples } }

    /// Called from GStreamer's threads: flips state and signals, nothing more.
    private func setReady(_ value: Bool) {
        let (action, queue, wake) = state.withLock { s in
            (s.schedule.readinessChanged(to: value), s.request?.queue, value ? s.takeWaiters() : [])
        }
        wake.forEach { $0.wake() }
        perform(action, on: queue)
    }

    /// Dispatches the request block as the schedule says: now, or after a pause (see
    /// ``RequestSchedule``). A call whose turn was taken by another, or that comes after the
    /// input finished, does nothing.
    private func perform(_ action: RequestSchedule.Action, on queue: DispatchQueue?) {
        guard let queue else { return }
        switch action {
        case .none:
            break
        case .call(let token):
            queue.async { [self] in runRequest(token) }
        case .callAfter(let pause, let token):
            let c = pause.components
            let nanoseconds = Int(c.seconds) * 1_000_000_000 + Int(c.attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in runRequest(token) }
        }
    }

    private func runRequest(_ token: UInt64) {
        let block = state.withLock { s in s.schedule.callBegins(token) ? s.request?.block : nil }
        guard let block else { return }
        block()
        let (action, queue) = state.withLock { s in (s.schedule.callEnded(at: .now), s.request?.queue) }
        perform(action, on: queue)
    }

    /// Calls `block` on `queue` whenever the input is ready for more data, until
    /// ``markAsFinished()``. The block appends while ``isReadyForMoreMediaData`` holds; when and
    /// how often it is called is ``RequestSchedule``'s rule (never in a busy loop).
    func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        let action = state.withLock { s -> RequestSchedule.Action in
            guard !s.schedule.isFinished else { return .none }  // a finished input lets blocks go
            s.request = Request(queue: queue, block: block)
            return s.schedule.blockRegistered(at: .now)
        }
        perform(action, on: queue)
    }

    /// Appends a sample, suspending until the graph is ready for it; `willWait` is called once
    /// if it has to wait. `checked: false` for samples checked already (``admit(_:format:rule:at:node:)``).
    ///
    /// A cancelled task appends nothing: this throws a `cancelled` error at once, or as soon as
    /// the task is cancelled while it waits. The run goes on (a run let go, as the task's error
    /// unwinds, is cancelled with it: see ``GraphRun``).
    func append(_ buffer: SampleBuffer, checked: Bool = true, willWait: (() -> Void)? = nil) async throws(GraphError) {
        var waited = false
        while !isReadyForMoreMediaData {
            if isFinished { throw finishedError }
            if Task.isCancelled { throw cancelledError }
            if !waited {
                waited = true
                willWait?()
            }
            await withTaskCancellationHandler {
                await withHandOff { (c: HandOff<Void, Never>) in
                    park(.task(c))
                }
            } onCancel: {
                wakeWaiters()
            }
        }
        if Task.isCancelled { throw cancelledError }
        try appendImmediately(buffer, checked: checked)
    }

    private var cancelledError: GraphError {
        GraphError(.cancelled, at: "node \"\(nodeID)\"", "the task appending to this input was cancelled", node: nodeID)
    }

    /// Resumes every waiting append, to look again at why it waits (its task was cancelled).
    private func wakeWaiters() {
        state.withLock { $0.takeWaiters() }.forEach { $0.wake() }
    }

    private var isFinished: Bool { state.withLock { $0.schedule.isFinished } }

    /// Parks a waiter, or wakes it at once if the input became ready (or finished) meanwhile,
    /// or its task was cancelled (the cancellation handler may have run before it was parked).
    private func park(_ waiter: Waiter) {
        let parked = state.withLock { s -> Bool in
            if s.schedule.isReady || s.schedule.isFinished || Task.isCancelled { return false }
            s.waiters.append(waiter)
            return true
        }
        if !parked { waiter.wake() }
    }

    /// Appends a sample, blocking the calling thread until the graph is ready for it; `willWait`
    /// is called once if it has to wait. For threads of your own; never call it from a Swift
    /// concurrency task.
    func appendWaiting(_ buffer: SampleBuffer, checked: Bool = true, willWait: (() -> Void)? = nil) throws(GraphError) {
        var waited = false
        while !isReadyForMoreMediaData, !isFinished {
            if !waited {
                waited = true
                willWait?()
            }
            // Woken when the input turns ready or finishes, however the run ends: no time limit.
            let woken = DispatchSemaphore(value: 0)
            park(.thread(woken))
            woken.wait()
        }
        try appendImmediately(buffer, checked: checked)
    }

    /// Checks a sample as an append does (its format, byte count and time, ``check(_:_:at:)``)
    /// and its time order by `rule`, errors located at `location`, and records it as the last
    /// sample: for a writer input that shapes what it was given (holds a frame, trims to its
    /// session) before pushing it unchecked. The order is the app's, on the times it gave
    /// (said `offset` earlier than the stamps: ``AppendOrder/check(_:_:rule:at:node:shownEarlierBy:)``).
    package func admit(_ buffer: SampleBuffer, format: MediaFormat, rule: AppendOrder.Rule, at location: String,
                       shownEarlierBy offset: MediaTime = .zero) throws(GraphError) -> AppendOrder.Stamp? {
        try check(buffer, format, at: location)
        return try state.withLock { s throws(GraphError) -> AppendOrder.Stamp? in
            guard let stamp = try s.order.check(buffer, format, rule: rule, at: location, node: nodeID, shownEarlierBy: offset) else { return nil }
            s.order.record(stamp)
            return stamp
        }
    }

    /// Appends a sample now, ready or not (as `AVAssetWriterInput.append` does inside a
    /// `requestMediaDataWhenReady` block after checking readiness). If the graph refuses it
    /// because the run failed, this throws the run's error, which names the node at fault.
    func appendImmediately(_ buffer: SampleBuffer, checked: Bool = true) throws(GraphError) {
        guard let format = buffer.format else {
            throw GraphError(.usage, at: "node \"\(nodeID)\"", "a sample appended to a graph input needs a format", node: nodeID)
        }
        let checksAppends = checksAppends && checked
        if checksAppends { try check(buffer, format, at: location) }
        let announce = try state.withLock { s throws(GraphError) -> Bool in
            guard !s.schedule.isFinished else { throw s.endOfRun ?? markedAsFinished }
            if checksAppends, let stamp = try s.order.check(buffer, format, rule: .notEarlier, at: location, node: nodeID) {
                // Recorded under the lock: two threads appending at once keep the order they got in.
                s.order.record(stamp)
            }
            guard let announced = s.announced else { return true }
            return buffer.format != announced.format || buffer.capsDetail != announced.detail
        }
        if announce {
            if let capsString = buffer.capsForPushing {
                guard let caps = gst_caps_from_string(capsString) else {
                    throw GraphError(.usage, at: "node \"\(nodeID)\"", "the sample's format (\(capsString)) is not one GStreamer can describe", node: nodeID)
                }
                gst_app_src_set_caps(src, caps)
                gk_caps_unref(caps)
            }
            state.withLock { $0.announced = (buffer.format, buffer.capsDetail) }
        }
        // Never hold our lock across a push: enough-data is raised inside it, on this thread.
        let result = gst_app_src_push_buffer(src, buffer.retainedBuffer())
        guard result == GST_FLOW_OK else {
            if let error = state.withLock({ $0.failureOfTheRun })?() { throw error }
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "the graph no longer takes data (flow \(result.rawValue))", node: nodeID)
        }
        state.withLock { $0.schedule.appended() }
    }

    // MARK: Checks on append

    private var location: String { "input \"\(nodeID)\"" }

    /// What a muxer or encoder would otherwise fail on later, far from the cause (or worse,
    /// accept): each mistake throws here, at `location`, naming this input's node.
    private func check(_ buffer: SampleBuffer, _ format: MediaFormat, at location: String) throws(GraphError) {
        if let declared = declaredFormat, !format.fits(declared) {
            throw GraphError(.usage, at: location,
                             "the sample is \(format); this input was declared \(declared): append samples of that format, or declare the format they have",
                             node: nodeID)
        }
        let bytes = buffer.byteCount
        switch format {
        case .pcm(let f):
            guard bytes > 0, bytes % f.bytesPerFrame == 0 else {
                throw GraphError(.usage, at: location,
                                 "the sample holds \(bytes) bytes, not a whole number of \(f.bytesPerFrame)-byte frames of \(format)",
                                 node: nodeID)
            }
        case .rawVideo(let v):
            let needed = buffer.videoByteCount(v)
            guard let needed, buffer.hasPaddedRows ? bytes >= needed : bytes == needed else {
                throw GraphError(.usage, at: location,
                                 "the sample holds \(bytes) bytes; a \(v.width)x\(v.height) \(v.pixelFormat.gstName) frame is \(needed.map(String.init) ?? "not a size GStreamer knows") bytes",
                                 node: nodeID)
            }
        case .aac, .h264, .video, .audio, .peaks, .container, .data:
            guard bytes > 0 else {
                throw GraphError(.usage, at: location, "the sample is empty (0 bytes)", node: nodeID)
            }
        }
        // A file's bytes have no time (a demuxer reads them); media samples must.
        guard buffer.presentationTime != nil || format == .container else {
            throw GraphError(.usage, at: location,
                             "the sample has no presentation time; set presentationTime (a muxer cannot place a sample without one)",
                             node: nodeID)
        }
    }

    /// The run ended (failed, cancelled, stopped or completed): every append waiting or to come
    /// throws, with the run's error when it had one.
    func runEnded(_ error: GraphError?) {
        // The run's failure says more than any earlier reason (an input let go, say).
        _ = finish(because: error ?? GraphError(.usage, at: "node \"\(nodeID)\"", "the run has ended; this input takes no more samples", node: nodeID),
                   overriding: error != nil)
    }

    /// Ends this input: end of stream flows downstream, and muxers can finalize. `reason` is
    /// what a later append is told (by default, that markAsFinished() was called).
    func markAsFinished(reason: GraphError? = nil) {
        if !finish(because: reason, overriding: false) { gst_app_src_end_of_stream(src) }
    }

    var isFinishedForAppends: Bool { isFinished }

    /// Marks the input finished (with the reason appends are refused from now on, if not
    /// markAsFinished(); `overriding` an earlier reason) and wakes every waiting append; returns
    /// whether it was finished already.
    private func finish(because reason: GraphError?, overriding: Bool) -> Bool {
        let (was, wake, block) = state.withLock { s in
            let was = s.schedule.isFinished
            s.schedule.finish()
            if let reason, overriding || s.endOfRun == nil { s.endOfRun = reason }
            // The block is called no more: let it go (it usually holds the input it feeds),
            // outside the lock (releasing it may release what it holds).
            defer { s.request = nil }
            return (was, s.takeWaiters(), s.request)
        }
        _ = block
        wake.forEach { $0.wake() }
        return was
    }

    /// Why an append is refused once the input is finished: the run's end, or markAsFinished().
    private var finishedError: GraphError { state.withLock { $0.endOfRun } ?? markedAsFinished }

    private var markedAsFinished: GraphError {
        GraphError(.usage, at: "node \"\(nodeID)\"", "append after markAsFinished()", node: nodeID)
    }
}
