import CGStreamer
import CGraphKitGlue
@_spi(Engine) import GraphKitCore

/// A ``SampleBuffer``'s storage in the engine: one owned reference to a GStreamer buffer,
/// released exactly once. Buffers enter and leave pipelines in it without a copy.
final class GStreamerStorage: SampleStorage, @unchecked Sendable {
    // @unchecked: GStreamer's reference counting is thread-safe, and the buffer's fields are
    // written only when it is writable (no other reference) and the SampleBuffer holding this
    // storage holds it alone (copy-on-write): never by two threads at once.
    let buffer: UnsafeMutablePointer<GstBuffer>

    /// Takes over one reference to `buffer`.
    init(owning buffer: UnsafeMutablePointer<GstBuffer>) {
        gk_buffer_received(buffer)  // for ThreadSanitizer: see CGraphKitGlue.h
        self.buffer = buffer
        super.init()
    }

    deinit { gk_buffer_unref(buffer) }

    override var byteCount: Int { Int(gst_buffer_get_size(buffer)) }

    private static func time(_ ns: GstClockTime) -> UInt64? { ns == GstClockTime.max ? nil : UInt64(ns) }

    override var presentationNanoseconds: UInt64? {
        get { Self.time(buffer.pointee.pts) }
        set { buffer.pointee.pts = newValue.map { GstClockTime($0) } ?? .max }
    }
    override var decodeNanoseconds: UInt64? {
        get { Self.time(buffer.pointee.dts) }
        set { buffer.pointee.dts = newValue.map { GstClockTime($0) } ?? .max }
    }
    override var durationNanoseconds: UInt64? {
        get { Self.time(buffer.pointee.duration) }
        set { buffer.pointee.duration = newValue.map { GstClockTime($0) } ?? .max }
    }

    override var flags: SampleBuffer.Flags {
        get {
            let raw = buffer.pointee.mini_object.flags
            var f: SampleBuffer.Flags = []
            if raw & GST_BUFFER_FLAG_DELTA_UNIT.rawValue == 0 { f.insert(.keyframe) }
            if raw & GST_BUFFER_FLAG_DISCONT.rawValue != 0 { f.insert(.discontinuity) }
            return f
        }
        set {
            var raw = buffer.pointee.mini_object.flags
            raw &= ~(GST_BUFFER_FLAG_DELTA_UNIT.rawValue | GST_BUFFER_FLAG_DISCONT.rawValue)
            if !newValue.contains(.keyframe) { raw |= GST_BUFFER_FLAG_DELTA_UNIT.rawValue }
            if newValue.contains(.discontinuity) { raw |= GST_BUFFER_FLAG_DISCONT.rawValue }
            buffer.pointee.mini_object.flags = raw
        }
    }

    override var isWritable: Bool { gk_buffer_is_writable(buffer) != 0 }
    override var areBytesWritable: Bool { gk_buffer_bytes_are_writable(buffer) != 0 }

    override func copy(deep: Bool) -> SampleStorage {
        GStreamerStorage(owning: deep ? gst_buffer_copy_deep(buffer) : gst_buffer_copy(buffer))
    }

    override func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        defer { gst_buffer_unmap(buffer, &map) }
        return try body(UnsafeRawBufferPointer(start: map.data, count: Int(map.size)))
    }

    override func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GstMapFlags(rawValue: GST_MAP_READ.rawValue | GST_MAP_WRITE.rawValue)) != 0 else {
            return try body(UnsafeMutableRawBufferPointer(start: nil, count: 0))
        }
        defer { gst_buffer_unmap(buffer, &map) }
        return try body(UnsafeMutableRawBufferPointer(start: map.data, count: Int(map.size)))
    }

    override func statedLayout(_ format: MediaFormat.VideoFormat) -> [VideoPlaneLayout]? {
        guard gk_buffer_has_video_meta(buffer) != 0 else { return nil }
        var o = [gsize](repeating: 0, count: 4)
        var s = [gint](repeating: 0, count: 4)
        let n = Int(gk_video_layout(buffer, format.pixelFormat.gstName, gint(format.width), gint(format.height), &o, &s))
        return (0..<n).map { VideoPlaneLayout(offset: Int(o[$0]), stride: Int(s[$0])) }
    }
}

/// The engine's allocator: every buffer a GStreamer buffer, frames from GStreamer buffer pools.
/// Installed as GStreamer starts (``GStreamer/initialize()``).
struct GStreamerAllocator: SampleStorageAllocator {
    func makeStorage(byteCount: Int) -> SampleStorage {
        GStreamerStorage(owning: gst_buffer_new_allocate(nil, gsize(max(byteCount, 0)), nil)!)
    }

    func makeStorage(wrapping memory: UnsafeMutableRawBufferPointer, release: @escaping @Sendable () -> Void) -> SampleStorage {
        let box = Unmanaged.passRetained(ReleaseBox(release)).toOpaque()
        return GStreamerStorage(owning: gk_buffer_new_wrapped(memory.baseAddress, gsize(memory.count), { context in
            Unmanaged<ReleaseBox>.fromOpaque(context!).takeRetainedValue().release()
        }, box, 0)!)
    }

    func makeStorage(video format: MediaFormat.VideoFormat, bytesPerRow: Int) -> SampleStorage {
        let storage = GStreamerStorage(owning: gst_buffer_new_allocate(nil, gsize(bytesPerRow * format.height), nil)!)
        gk_buffer_add_packed_video_meta(storage.buffer, format.pixelFormat.gstName, Int32(format.width), Int32(format.height), Int32(bytesPerRow))
        return storage
    }

    func makeFrameSource(_ format: MediaFormat.VideoFormat) -> (any FrameSourcing)? {
        GStreamerFramePool(format)
    }
}

private final class ReleaseBox {
    let release: @Sendable () -> Void
    init(_ release: @escaping @Sendable () -> Void) { self.release = release }
}

/// Frames of one layout from a GStreamer buffer pool (which recycles a frame once its last
/// reference goes).
final class GStreamerFramePool: FrameSourcing, Sendable {
    /// A GstBufferPool, thread-safe, active from the start.
    private let reference: GstObjectReference<GstBufferPool>
    private var pool: UnsafeMutablePointer<GstBufferPool> { reference.raw }

    init?(_ format: MediaFormat.VideoFormat) {
        let size = format.width > 0 && format.height > 0 ? gk_video_frame_size(format.pixelFormat.gstName, gint(format.width), gint(format.height)) : 0
        guard size > 0, let pool = gk_frame_pool_new(MediaFormat.rawVideo(format).capsString, guint(size)) else { return nil }
        reference = GstObjectReference(adopting: pool)
    }

    /// Frames still out come back to an inactive pool and are freed; the reference goes after.
    deinit { gst_buffer_pool_set_active(pool, 0) }

    func frame() -> (storage: SampleStorage, isNew: Bool)? {
        var isNew: Int32 = 0
        guard let buffer = gk_frame_pool_acquire_counted(pool, &isNew) else { return nil }
        return (GStreamerStorage(owning: buffer), isNew != 0)
    }
}

extension SampleBuffer {
    /// A buffer over one reference to `buffer`, which it takes over.
    init(owning buffer: UnsafeMutablePointer<GstBuffer>, format: MediaFormat?, capsDetail: String? = nil) {
        self.init(storage: GStreamerStorage(owning: buffer), format: format, capsDetail: capsDetail)
    }

    /// One new reference to a GStreamer buffer holding this sample, for the engine to push: the
    /// buffer itself, or, for a sample in Swift memory, a buffer over that memory (read-only, as
    /// Swift may still read it; the memory stays alive until GStreamer lets go of it).
    func retainedBuffer() -> UnsafeMutablePointer<GstBuffer> {
        if let engine = storage as? GStreamerStorage { return gk_buffer_ref(engine.buffer) }
        // Only the two kinds of storage exist: the engine's, and Swift memory.
        let memory = (storage as? MemoryStorage)?.unsafeMemory ?? UnsafeMutableRawBufferPointer(start: nil, count: 0)
        let held = Unmanaged.passRetained(storage).toOpaque()
        let wrapped = gk_buffer_new_wrapped(memory.baseAddress, gsize(memory.count), { context in
            Unmanaged<SampleStorage>.fromOpaque(context!).release()
        }, held, 1)!
        let made = GStreamerStorage(owning: wrapped)
        made.takeTimingAndFlags(from: storage)
        if case .rawVideo(let v)? = format, let stated = storage.statedLayout(v), let row = stated.first {
            gk_buffer_add_packed_video_meta(wrapped, v.pixelFormat.gstName, Int32(v.width), Int32(v.height), Int32(row.stride))
        }
        return gk_buffer_ref(made.buffer)
    }

    /// The caps to announce this buffer with: its full caps when known; none for a container
    /// stream, so that typefinding looks at the bytes.
    var capsForPushing: String? {
        if let capsDetail { return capsDetail }
        if format == .container { return nil }
        return format?.capsString
    }
}
