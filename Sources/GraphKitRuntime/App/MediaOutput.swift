import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc
@_spi(Engine) import GraphKitCore
import MediaContainers

/// Where app code pulls samples out of a running graph, like `AVAssetReaderTrackOutput`.
/// Backed by an `appsink` and a bounded queue taken off its pad (`appqueue.c`): a consumer that
/// does not pull makes the graph wait, and a consumer faster than the graph is woken once per
/// batch of samples, not once per sample.
///
/// Unchecked Sendable: it holds raw GStreamer pointers (the appsink, the queue, the last caps),
/// which the compiler cannot see are safe to share; the queue is thread-safe (`appqueue.c`), and
/// the caps it describes are kept in a `Mutex`.
public final class MediaOutput: @unchecked Sendable {
    let appsink: UnsafeMutablePointer<GstElement>
    private let queue: OpaquePointer
    public let nodeID: String
    /// The caps of the last sample (one reference held) and what they say: caps change rarely,
    /// samples arrive by the thousand, so they are described once per caps object.
    /// A caps pointer, one reference held by whoever keeps it. Unchecked Sendable: caps are
    /// immutable once shared, and their reference count is atomic; the compiler cannot see that.
    private struct Caps: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<GstCaps>
    }
    private struct Described {
        var caps: Caps?
        var format: MediaFormat?
        var detail: String?
    }
    private let described = Guarded(Described())

    /// `capacity`: samples held for a consumer that has not pulled them (0: no bound).
    init(appsink: UnsafeMutablePointer<GstElement>, nodeID: String, capacity: Int) {
        self.appsink = appsink
        self.nodeID = nodeID
        gst_object_ref(UnsafeMutableRawPointer(appsink))
        queue = gk_app_queue_attach(appsink, guint(capacity))!  // an appsink always has its sink pad
    }

    deinit {
        if let caps = described.withLock({ $0.caps }) { gk_caps_unref(caps.pointer) }
        gk_app_queue_unref(queue)
        gst_object_unref(UnsafeMutableRawPointer(appsink))
    }

    /// The next sample, blocking until there is one; nil at end of stream, and as soon as the
    /// run has ended for any reason (the pipeline stops, and a waiting pull wakes). Call from
    /// your own thread, not from a Swift concurrency task.
    @available(*, noasync, message: "blocks the thread; pull on a thread of your own")
    public func copyNextSampleBuffer() -> SampleBuffer? {
        pull(timeout: -1)
    }

    /// The next sample, waiting at most `timeout` seconds; nil on timeout or end of stream.
    @available(*, noasync, message: "blocks the thread; pull on a thread of your own")
    public func copyNextSampleBuffer(timeout: Double) -> SampleBuffer? {
        let seconds = timeout.isNaN ? 0 : min(max(0, timeout), 1e9)
        return pull(timeout: gint64(seconds * 1e6))
    }

    /// Whether end of stream was reached and every sample was pulled.
    public var isAtEnd: Bool { gk_app_queue_is_at_end(queue) != 0 }

    private func pull(timeout microseconds: gint64) -> SampleBuffer? {
        var caps: UnsafeMutablePointer<GstCaps>?
        guard let buffer = gk_app_queue_pop(queue, microseconds, &caps) else { return nil }
        defer { if let caps { gk_caps_unref(caps) } }
        let incoming = caps.map { Caps(pointer: $0) }
        let (format, detail) = described.withLock { d in
            if incoming?.pointer != d.caps?.pointer {
                if let old = d.caps { gk_caps_unref(old.pointer) }
                d.caps = incoming.map { Caps(pointer: gk_caps_ref($0.pointer)) }
                d.format = incoming.flatMap { GStreamer.format(from: $0.pointer) }
                d.detail = incoming.flatMap { c -> String? in
                    let c = c.pointer
                    guard let s = gst_caps_to_string(c) else { return nil }
                    defer { g_free(s) }
                    return String(cString: s)
                }
            }
            return (d.format, d.detail)
        }
        return SampleBuffer(owning: buffer, format: format, capsDetail: detail)
    }
}
