import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc
import Dispatch
import GraphKitCore
import MediaContainers

/// The engine's side of a graph input that code pushes samples into: an `appsrc` with
/// `format=time`, whose need-data / enough-data callbacks flip the ready state. App code holds a
/// ``MediaInput`` over it; a processing node's emitter uses it directly.
///
/// However the run ends, every waiting append wakes and throws, and a registered
/// `requestMediaDataWhenReady` block is let go (``runEnded(_:)``).
final class AppInput: @unchecked Sendable {
    let appsrc: UnsafeMutablePointer<GstElement>
    let nodeID: String
    /// Whether appends are checked (format, byte count, timing): for app code, not for a node's
    /// own emitter, whose buffers the engine made.
    private let checksAppends: Bool
    /// The format every sample must have (`source.app`'s `format`, or a writer input's), when declared.
    let declaredFormat: MediaFormat?
    private let lock = Lock()
    /// The time of the last sample appended (its decode time when it has one), under `lock`.
    private var lastTime: MediaTime?
    /// Whether the input is ready and finished, and when the request block runs. Under `lock`.
    private var schedule = RequestSchedule()
    /// What the last appended buffer announced; caps are rebuilt only when that changes.
    private var lastFormat: MediaFormat?
    private var lastDetail: String?
    private var announced = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var readyWaiters = 0
    private let readyCondition = Condition()
    private var request: (queue: DispatchQueue, block: @Sendable () -> Void)?
    /// Set by the run: its error, once it has ended (waiting a little for the end). An append
    /// the graph refuses throws that, since it says which node failed and why. Under `lock`.
    private var failureOfTheRun: (@Sendable () -> GraphError?)?
    /// Set when the run has ended: why appends are refused from then on. Under `lock`.
    private var endOfRun: GraphError?

    func reportRefusals(with failure: @escaping @Sendable () -> GraphError?) {
        lock.lock()
        failureOfTheRun = failure
        lock.unlock()
    }

    init(appsrc: UnsafeMutablePointer<GstElement>, nodeID: String, checksAppends: Bool = false, declaredFormat: MediaFormat? = nil) {
        self.appsrc = appsrc
        self.nodeID = nodeID
        self.checksAppends = checksAppends
        self.declaredFormat = declaredFormat
        gst_object_ref(UnsafeMutableRawPointer(appsrc))
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
        gst_object_unref(UnsafeMutableRawPointer(appsrc))
    }

    private var src: UnsafeMutablePointer<GstAppSrc> { UnsafeMutableRawPointer(appsrc).assumingMemoryBound(to: GstAppSrc.self) }

    /// Whether the graph can take another sample now without exceeding its bound.
    var isReadyForMoreMediaData: Bool {
        lock.lock()
        defer { lock.unlock() }
        return schedule.takesSamples
    }

    /// Called from GStreamer's threads: flips state and signals, nothing more.
    private func setReady(_ value: Bool) {
        lock.lock()
        let action = schedule.readinessChanged(to: value)
        var resume: [CheckedContinuation<Void, Never>] = []
        if value {
            resume = waiters
            waiters.removeAll()
        }
        let queue = request?.queue
        lock.unlock()
        if value {
            readyCondition.lock()
            readyCondition.broadcast()
            readyCondition.unlock()
        }
        resume.forEach { $0.resume() }
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
        lock.lock()
        let block = schedule.callBegins(token) ? request?.block : nil
        lock.unlock()
        guard let block else { return }
        block()
        lock.lock()
        let action = schedule.callEnded(at: .now)
        let queue = request?.queue
        lock.unlock()
        perform(action, on: queue)
    }

    /// Calls `block` on `queue` whenever the input is ready for more data, until
    /// ``markAsFinished()``. The block appends while ``isReadyForMoreMediaData`` holds; when and
    /// how often it is called is ``RequestSchedule``'s rule (never in a busy loop).
    func requestMediaDataWhenReady(on queue: DispatchQueue, using block: @escaping @Sendable () -> Void) {
        lock.lock()
        request = (queue, block)
        let action = schedule.blockRegistered(at: .now)
        lock.unlock()
        perform(action, on: queue)
    }

    /// Appends a sample, suspending until the graph is ready for it.
    ///
    /// A cancelled task appends nothing: this throws a `cancelled` error at once, or as soon as
    /// the task is cancelled while it waits. The run goes on (a run let go, as the task's error
    /// unwinds, is cancelled with it: see ``GraphRun``).
    func append(_ buffer: SampleBuffer) async throws(GraphError) {
        while !isReadyForMoreMediaData {
            if isFinished { throw finishedError }
            if Task.isCancelled { throw cancelledError }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                    enqueueWaiter(c)
                }
            } onCancel: {
                wakeWaiters()
            }
        }
        if Task.isCancelled { throw cancelledError }
        try appendImmediately(buffer)
    }

    private var cancelledError: GraphError {
        GraphError(.cancelled, at: "node \"\(nodeID)\"", "the task appending to this input was cancelled", node: nodeID)
    }

    /// Resumes every suspended append, to look again at why it waits (its task was cancelled).
    private func wakeWaiters() {
        lock.lock()
        let resume = waiters
        waiters.removeAll()
        lock.unlock()
        resume.forEach { $0.resume() }
    }

    private var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return schedule.isFinished
    }

    /// Parks a waiter, or resumes it at once if the input became ready (or finished) meanwhile,
    /// or its task was cancelled (the cancellation handler may have run before it was parked).
    private func enqueueWaiter(_ c: CheckedContinuation<Void, Never>) {
        lock.lock()
        if schedule.isReady || schedule.isFinished || Task.isCancelled {
            lock.unlock()
            c.resume()
        } else {
            waiters.append(c)
            lock.unlock()
        }
    }

    /// Appends a sample, blocking the calling thread until the graph is ready for it. For
    /// threads of your own; never call it from a Swift concurrency task.
    func appendWaiting(_ buffer: SampleBuffer) throws(GraphError) {
        readyCondition.lock()
        while !isReadyForMoreMediaData {
            if isFinished { break }
            readyCondition.wait(seconds: 0.1)  // woken at once when ready or finished; the limit is a guard
        }
        readyCondition.unlock()
        try appendImmediately(buffer)
    }

    /// Appends a sample now, ready or not (as `AVAssetWriterInput.append` does inside a
    /// `requestMediaDataWhenReady` block after checking readiness). If the graph refuses it
    /// because the run failed, this throws the run's error, which names the node at fault.
    func appendImmediately(_ buffer: SampleBuffer, checked: Bool = true) throws(GraphError) {
        guard let format = buffer.format else {
            throw GraphError(.usage, at: "node \"\(nodeID)\"", "a sample appended to a graph input needs a format", node: nodeID)
        }
        let checksAppends = checksAppends && checked
        if checksAppends { try check(buffer, format) }
        lock.lock()
        if schedule.isFinished { lock.unlock(); throw finishedError }
        if checksAppends {
            // Checked again under the lock: two threads appending at once keep the order they got in.
            let time = buffer.decodeTime ?? buffer.presentationTime
            if let time, let last = lastTime, time < last {
                lock.unlock()
                throw outOfOrder(time, last)
            }
            lastTime = time
        }
        let changed = !announced || buffer.format != lastFormat || buffer.capsDetail != lastDetail
        lock.unlock()
        if changed, let capsString = buffer.capsForPushing {
            guard let caps = gst_caps_from_string(capsString) else {
                throw GraphError(.usage, at: "node \"\(nodeID)\"", "the sample's format (\(capsString)) is not one GStreamer can describe", node: nodeID)
            }
            gst_app_src_set_caps(src, caps)
            gk_caps_unref(caps)
        }
        if changed {
            lock.lock()
            announced = true
            lastFormat = buffer.format
            lastDetail = buffer.capsDetail
            lock.unlock()
        }
        // Never hold our lock across a push: enough-data is raised inside it, on this thread.
        let result = gst_app_src_push_buffer(src, buffer.retainedBuffer())
        if result == GST_FLOW_OK {
            lock.lock()
            schedule.appended()
            lock.unlock()
        }
        guard result == GST_FLOW_OK else {
            lock.lock()
            let failure = failureOfTheRun
            lock.unlock()
            if let error = failure?() { throw error }
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "the graph no longer takes data (flow \(result.rawValue))", node: nodeID)
        }
    }

    // MARK: Checks on append

    private var location: String { "input \"\(nodeID)\"" }

    /// What a muxer or encoder would otherwise fail on later, far from the cause (or worse,
    /// accept): each mistake throws here, naming this input.
    private func check(_ buffer: SampleBuffer, _ format: MediaFormat) throws(GraphError) {
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
        case .aac, .h264, .peaks, .container, .data:
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

    private func outOfOrder(_ time: MediaTime, _ last: MediaTime) -> GraphError {
        GraphError(.usage, at: location,
                   "the sample's time \(time.seconds) s is earlier than the previous sample's \(last.seconds) s: append samples in time order",
                   node: nodeID)
    }

    /// The run ended (failed, cancelled, stopped or completed): every append waiting or to come
    /// throws, with the run's error when it had one.
    func runEnded(_ error: GraphError?) {
        if let error {
            // The run's failure says more than any earlier reason (an input let go, say).
            lock.lock()
            endOfRun = error
            lock.unlock()
        }
        _ = finish(because: error ?? GraphError(.usage, at: "node \"\(nodeID)\"", "the run has ended; this input takes no more samples", node: nodeID))
    }

    /// Ends this input: end of stream flows downstream, and muxers can finalize. `reason` is
    /// what a later append is told (by default, that markAsFinished() was called).
    func markAsFinished(reason: GraphError? = nil) {
        if !finish(because: reason) { gst_app_src_end_of_stream(src) }
    }

    var isFinishedForAppends: Bool { isFinished }

    /// Marks the input finished (with the reason appends are refused from now on, if not
    /// markAsFinished()) and wakes every waiting append; returns whether it was finished already.
    private func finish(because reason: GraphError?) -> Bool {
        lock.lock()
        let was = schedule.isFinished
        schedule.finish()
        if let reason, endOfRun == nil { endOfRun = reason }
        let resume = waiters
        waiters.removeAll()
        // The block is called no more: let it go (it usually holds the input it feeds).
        let block = request
        request = nil
        lock.unlock()
        _ = block
        resume.forEach { $0.resume() }
        readyCondition.lock()
        readyCondition.broadcast()
        readyCondition.unlock()
        return was
    }

    /// Why an append is refused once the input is finished: the run's end, or markAsFinished().
    private var finishedError: GraphError {
        lock.lock()
        defer { lock.unlock() }
        return endOfRun ?? GraphError(.usage, at: "node \"\(nodeID)\"", "append after markAsFinished()", node: nodeID)
    }
}
