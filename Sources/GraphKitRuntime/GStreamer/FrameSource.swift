import CGStreamer
import CGraphKitGlue
import Synchronization
@_spi(Engine) import GraphKitCore
import MediaContainers

/// A source of video frames drawn in Swift, for a node that generates pictures (`generate.frames`)
/// without seeing GStreamer: an `appsrc` that asks for each frame when downstream wants one
/// (need-data), so frames are made as fast as the graph takes them and no faster (backpressure,
/// not a clock). Each frame is drawn into a frame from a ``FramePool``, so a steady stream
/// reuses the same few frames; ``buffersAllocated`` says how many the pool made.
///
/// Frame `n` is stamped `n / frameRate` (rounded to GStreamer's nanoseconds) and lasts until the
/// next one's stamp, so the frames tile time with no gap; end of stream follows the last frame.
///
/// Made by ``BinBuilder/makeGeneratedSource(name:format:count:draw:)``.
public final class FrameSource: Sendable {
    /// The `appsrc`: expose it as the node's output.
    public let element: Element
    public let format: MediaFormat.VideoFormat
    /// How many frames it makes; nil: until the run is stopped.
    public let count: Int?
    private let draw: @Sendable (_ frame: Int, _ planes: [SampleBuffer.PixelPlane]) -> Void
    private let pool = FramePool()
    /// Touched only on the source's streaming thread (need-data is never called concurrently);
    /// atomic so that the counts can be read from anywhere.
    private let next = Atomic<Int>(0)
    private let allocated = Atomic<Int>(0)

    fileprivate init(element: Element, format: MediaFormat.VideoFormat, count: Int?,
                     draw: @escaping @Sendable (Int, [SampleBuffer.PixelPlane]) -> Void) {
        self.element = element
        self.format = format
        self.count = count
        self.draw = draw
    }

    /// Frames drawn and handed downstream so far.
    public var framesDrawn: Int { next.load(ordering: .relaxed) }

    /// Distinct frame buffers drawn into so far: the pool's allocations. It stays at the number of
    /// frames downstream holds at once (queues, an encoder's lookahead), whatever the length.
    public var buffersAllocated: Int { allocated.load(ordering: .relaxed) }

    /// The presentation time of frame `n`, in GStreamer's nanoseconds.
    func timestamp(_ n: Int) -> UInt64 {
        let rate = format.frameRate
        return MediaTime(value: Int64(n) * Int64(rate.denominator), timescale: Int32(rate.numerator)).nanoseconds
    }

    private var appsrc: UnsafeMutablePointer<GstAppSrc> {
        UnsafeMutableRawPointer(element.raw).assumingMemoryBound(to: GstAppSrc.self)
    }

    /// need-data, on the appsrc's streaming thread with its queue empty: one frame, drawn now.
    fileprivate func produce() {
        let n = next.load(ordering: .relaxed)
        if let count, n >= count {
            gst_app_src_end_of_stream(appsrc)  // reached only when count is 0
            return
        }
        let buffer: UnsafeMutablePointer<GstBuffer>
        do {
            buffer = try drawFrame(n)
        } catch {
            element.postError("cannot make frame \(n): \(error.message)")
            return
        }
        next.store(n + 1, ordering: .relaxed)
        _ = gst_app_src_push_buffer(appsrc, buffer)  // FLUSHING once the run stops: nothing to do
        if let count, n + 1 >= count { gst_app_src_end_of_stream(appsrc) }
    }

    /// Frame `n`, drawn and stamped: the pool's frame, with the only reference, handed to the caller.
    private func drawFrame(_ n: Int) throws(GraphError) -> UnsafeMutablePointer<GstBuffer> {
        var frame = SampleBuffer(storage: try pool.frame(format), format: .rawVideo(format))
        if let raw = (frame.storage as? GStreamerStorage)?.buffer {
            if gk_buffer_first_seen(raw) != 0 { allocated.add(1, ordering: .relaxed) }
            raw.pointee.offset = UInt(n)
            raw.pointee.offset_end = UInt(n + 1)
        }
        let start = timestamp(n), end = timestamp(n + 1)
        frame.storage.presentationNanoseconds = UInt64(start)
        frame.storage.decodeNanoseconds = nil
        frame.storage.durationNanoseconds = UInt64(end - start)
        try frame.withMutablePixelPlanes { planes in draw(n, planes) }
        return frame.retainedBuffer()  // and `frame` lets its own go on return
    }
}

extension BinBuilder {
    /// Adds a source of `count` frames of `format` (nil: until the run is stopped), each drawn by
    /// `draw` into a pooled frame: `draw(n, planes)` must write every visible pixel of frame `n`
    /// (a pooled frame holds an older picture). It runs on the source's streaming thread, one
    /// frame at a time, in order; it must not block. Expose `element` as the node's output.
    public func makeGeneratedSource(name: String = "frames", format: MediaFormat.VideoFormat, count: Int?,
                                    draw: @escaping @Sendable (_ frame: Int, _ planes: [SampleBuffer.PixelPlane]) -> Void) throws(GraphError) -> FrameSource {
        let src = try make("appsrc", name: name, [
            "format": "time", "is-live": "false", "do-timestamp": "false", "block": "false",
            // One frame is drawn per need-data, so the queue never holds more than one.
            "max-bytes": "0", "max-buffers": "0", "emit-signals": "true",
            "caps": MediaFormat.rawVideo(format).capsString,
        ])
        let source = FrameSource(element: src, format: format, count: count, draw: draw)
        if let count { try src.set("duration", source.timestamp(count)) }
        // Through the run's registry: the handler (and the draw closure, which may hold its node)
        // is let go when the run stops, so nothing keeps the pipeline alive in a cycle.
        let callback: @convention(c) (UnsafeMutableRawPointer?, guint, UnsafeMutableRawPointer?) -> Void = { element, _, context in
            guard let context else { return }
            gk_callback_enter(element)
            Unmanaged<FrameSource>.fromOpaque(context).takeUnretainedValue().produce()
            gk_callback_leave(element)
        }
        callbacks.connect(src.object, "need-data", unsafeBitCast(callback, to: GCallback.self), context: source)
        return source
    }
}
