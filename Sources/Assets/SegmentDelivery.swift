import Glibc
import GraphKitCore

/// The segments of a writer in segment mode, between the streaming threads that make them and
/// whoever takes them: the delegate (on a delivery thread of the writer's own) or the
/// ``AssetWriter/segments`` sequence.
///
/// Order: a segment is queued while its maker holds the sink's lock, so segments from the audio
/// and the video threads keep the order the segmenter gave them. Backpressure: the maker then
/// waits, without that lock, while more than ``capacity`` segments wait to be taken, so a slow
/// taker slows the encoders rather than filling memory. Every wait ends once delivery is closed
/// (the writer cancelled or failed) or, for a taker, once the last segment is taken.
final class SegmentDelivery: Sendable {
    /// Segments waiting before the makers wait: a few, as each holds seconds of media.
    static let capacity = 3

    private struct State: Sendable {
        var queue: [AssetWriter.Segment] = []
        /// The last segment is queued.
        var producing = true
        /// Why nothing more is delivered (cancelled, failed, the delegate threw).
        var closed: GraphError?
        /// A delegate call or a taker holds a segment not yet done with.
        var inHand = 0
        var delivered = 0
        /// Tasks waiting (finishWriting) for every segment to be delivered, or for the close.
        var drainWaiters: [HandOff<Void, Never>] = []
        /// A task waiting in the sequence's next().
        var taker: HandOff<AssetWriter.Segment?, any Error>?

        var isDrained: Bool { closed != nil || (!producing && queue.isEmpty && inHand == 0) }
    }

    private let state = Condition(State())

    // MARK: Makers (streaming threads)

    /// Queues `segments` (call it with the maker's own lock held: never waits).
    func enqueue(_ segments: [AssetWriter.Segment]) {
        guard !segments.isEmpty else { return }
        let taker: (HandOff<AssetWriter.Segment?, any Error>, AssetWriter.Segment)? = state.withLock(wakingWaiters: true) { s in
            guard s.closed == nil else { return nil }
            s.queue += segments
            guard let t = s.taker else { return nil }
            s.taker = nil
            s.inHand += 1
            return (t, s.queue.removeFirst())
        }
        if let (t, segment) = taker { t.resume(returning: segment) }
    }

    /// Waits while too many segments wait to be taken (call it without any lock held); returns
    /// at once once delivery is closed.
    func waitForRoom() {
        state.wait(until: { $0.closed != nil || $0.queue.count <= Self.capacity }) { _ in }
    }

    /// The last segment is queued.
    func finishProducing() {
        let (waiters, taker) = state.withLock(wakingWaiters: true) { s in
            s.producing = false
            return takeWaiters(&s)
        }
        waiters.forEach { $0.resume() }
        taker?.resume(returning: nil)
    }

    /// Nothing more is delivered: waiting makers, takers and finishWriting wake (a delegate call
    /// in progress is not waited for). The first reason stays.
    func close(because reason: GraphError) {
        let (waiters, taker) = state.withLock(wakingWaiters: true) { s in
            if s.closed == nil { s.closed = reason }
            s.queue = []
            return takeWaiters(&s)
        }
        waiters.forEach { $0.resume() }
        taker?.resume(throwing: reason)
    }

    private func takeWaiters(_ s: inout State) -> ([HandOff<Void, Never>], HandOff<AssetWriter.Segment?, any Error>?) {
        var waiters: [HandOff<Void, Never>] = []
        if s.isDrained {
            waiters = s.drainWaiters
            s.drainWaiters = []
        }
        var taker: HandOff<AssetWriter.Segment?, any Error>?
        if s.queue.isEmpty, !s.producing || s.closed != nil {
            taker = s.taker
            s.taker = nil
        }
        return (waiters, taker)
    }

    // MARK: Takers

    /// Why delivery closed, if it did.
    var closedReason: GraphError? { state.withLock { $0.closed } }

    /// Waits (suspending) until every segment has been delivered, or delivery closed.
    func drained() async {
        await withHandOff { (c: HandOff<Void, Never>) in
            let now = state.withLock { s in
                if s.isDrained { return true }
                s.drainWaiters.append(c)
                return false
            }
            if now { c.resume() }
        }
    }

    /// The next segment for the sequence: nil after the last, throws once closed, and throws
    /// `CancellationError` when the waiting task is cancelled (a wait never outlives its task).
    func next() async throws -> AssetWriter.Segment? {
        markDone()
        return try await withTaskCancellationHandler {
            try await withThrowingHandOff { (c: HandOff<AssetWriter.Segment?, any Error>) in
                enum Now { case segment(AssetWriter.Segment), end, failed(any Error), wait }
                let now: Now = state.withLock(wakingWaiters: true) { s in
                    if let reason = s.closed { return .failed(reason) }
                    if !s.queue.isEmpty {
                        s.inHand += 1
                        return .segment(s.queue.removeFirst())
                    }
                    if !s.producing { return .end }
                    // Cancelled before the wait began: the handler found no taker to wake.
                    if Task.isCancelled { return .failed(CancellationError()) }
                    s.taker = c
                    return .wait
                }
                switch now {
                case .segment(let segment): c.resume(returning: segment)
                case .end: c.resume(returning: nil)
                case .failed(let reason): c.resume(throwing: reason)
                case .wait: break
                }
            }
        } onCancel: {
            let taker = state.withLock { s in
                defer { s.taker = nil }
                return s.taker
            }
            taker?.resume(throwing: CancellationError())
        }
    }

    /// The sequence's taker is done with the segment it holds (it asks for the next, or ends).
    func markDone() {
        let (waiters, _) = state.withLock(wakingWaiters: true) { s in
            if s.inHand > 0 {
                s.inHand -= 1
                s.delivered += 1
            }
            return s.isDrained ? takeWaiters(&s) : ([], nil)
        }
        waiters.forEach { $0.resume() }
    }

    /// Calls `deliver` with each segment, in order, on a thread of its own (detached: a delegate
    /// that never returns keeps only that thread), until the last is delivered or delivery
    /// closes; a throw closes delivery with the error `failure` makes of it.
    func startDelegateThread(_ deliver: @escaping @Sendable (AssetWriter.Segment) throws -> Void,
                             failure: @escaping @Sendable (any Error) -> GraphError, failed: @escaping @Sendable (GraphError) -> Void) {
        let work = DeliveryWork { [self] in
            while true {
                let segment: AssetWriter.Segment? = state.wait(until: { !$0.queue.isEmpty || $0.closed != nil || !$0.producing }) { s in
                    guard s.closed == nil, !s.queue.isEmpty else { return nil }
                    s.inHand += 1
                    return s.queue.removeFirst()
                }
                // The makers may go on: one segment fewer waits.
                state.withLock(wakingWaiters: true) { _ in }
                guard let segment else { break }
                do {
                    try deliver(segment)
                } catch {
                    let reason = failure(error)
                    close(because: reason)
                    failed(reason)
                    break
                }
                markDone()
            }
            // The end: finishWriting may return.
            let (waiters, _) = state.withLock(wakingWaiters: true) { s in s.isDrained ? takeWaiters(&s) : ([], nil) }
            waiters.forEach { $0.resume() }
        }
        let box = Unmanaged.passRetained(work).toOpaque()
        var thread = pthread_t()
        if pthread_create(&thread, nil, { context in
            Unmanaged<DeliveryWork>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, box) == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<DeliveryWork>.fromOpaque(box).release()
            close(because: GraphError(.runFailed, at: "AssetWriter", "cannot start the thread that calls the delegate"))
        }
    }
}

private final class DeliveryWork: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
}
