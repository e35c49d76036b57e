import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc

/// Where app code pulls samples out of a running graph, like `AVAssetReaderTrackOutput`.
/// Backed by a bounded `appsink`: a consumer that does not pull makes the graph wait.
public final class MediaOutput: @unchecked Sendable {
    let appsink: UnsafeMutablePointer<GstElement>
    public let nodeID: String
    /// The caps of the last sample (one reference held) and what they say: caps change rarely,
    /// samples arrive by the thousand, so they are described once per caps object.
    private let lock = Lock()
    private var lastCaps: UnsafeMutablePointer<GstCaps>?
    private var lastFormat: MediaFormat?
    private var lastDetail: String?

    init(appsink: UnsafeMutablePointer<GstElement>, nodeID: String) {
        self.appsink = appsink
        self.nodeID = nodeID
        gst_object_ref(UnsafeMutableRawPointer(appsink))
    }

    deinit {
        if let lastCaps { gk_caps_unref(lastCaps) }
        gst_object_unref(UnsafeMutableRawPointer(appsink))
    }

    private var sink: UnsafeMutablePointer<GstAppSink> { UnsafeMutableRawPointer(appsink).assumingMemoryBound(to: GstAppSink.self) }

    /// The next sample, blocking until there is one; nil at end of stream, and as soon as the
    /// run has ended for any reason (the pipeline stops, and a waiting pull wakes). Call from
    /// your own thread, not from a Swift concurrency task.
    @available(*, noasync, message: "blocks the thread; pull on a thread of your own")
    public func copyNextSampleBuffer() -> SampleBuffer? {
        convert(gst_app_sink_pull_sample(sink))
    }

    /// The next sample, waiting at most `timeout` seconds; nil on timeout or end of stream.
    @available(*, noasync, message: "blocks the thread; pull on a thread of your own")
    public func copyNextSampleBuffer(timeout: Double) -> SampleBuffer? {
        convert(gst_app_sink_try_pull_sample(sink, GstClockTime(max(0, timeout) * 1e9)))
    }

    /// Whether end of stream was reached and every sample was pulled.
    public var isAtEnd: Bool { gst_app_sink_is_eos(sink) != 0 }

    private func convert(_ sample: OpaquePointer?) -> SampleBuffer? {
        guard let sample else { return nil }
        defer { gk_sample_unref(sample) }
        guard let buffer = gst_sample_get_buffer(sample) else { return nil }
        let caps = gst_sample_get_caps(sample)
        lock.lock()
        defer { lock.unlock() }
        if caps != lastCaps {
            if let lastCaps { gk_caps_unref(lastCaps) }
            lastCaps = caps.map { gk_caps_ref($0) }
            lastFormat = caps.flatMap { GStreamer.format(from: $0) }
            lastDetail = caps.flatMap { c -> String? in
                guard let s = gst_caps_to_string(c) else { return nil }
                defer { g_free(s) }
                return String(cString: s)
            }
        }
        return SampleBuffer(owning: gk_buffer_ref(buffer), format: lastFormat, capsDetail: lastDetail)
    }
}
