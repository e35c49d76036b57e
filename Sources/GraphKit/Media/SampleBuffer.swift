import CGStreamer
import CGraphKitGlue

/// A media sample: format, timing, flags and data, like `CMSampleBuffer`.
///
/// A value type over shared storage that owns one GStreamer buffer and releases it exactly
/// once. Copies are cheap (a reference count); writing through a copy that shares its storage
/// copies first, writing to a uniquely held buffer does not (copy-on-write, like `Array`).
public struct SampleBuffer: @unchecked Sendable {
    final class Storage: @unchecked Sendable {
        /// One owned reference.
        let buffer: UnsafeMutablePointer<GstBuffer>
        init(owning buffer: UnsafeMutablePointer<GstBuffer>) {
            gk_buffer_received(buffer)  // for ThreadSanitizer: see CGraphKitGlue.h
            self.buffer = buffer
        }
        deinit { gk_buffer_unref(buffer) }
    }

    var storage: Storage
    /// What the data holds; nil when not known (a buffer made from bytes with no format).
    public var format: MediaFormat? {
        didSet { capsDetail = nil }
    }
    /// The full GStreamer caps a buffer arrived with, when it came out of a graph: they carry
    /// what `format` does not spell out (an AAC or H.264 codec configuration, like
    /// `CMFormatDescription` extensions), so the buffer can go back into another graph.
    var capsDetail: String?

    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Decodable on its own (not a delta unit).
        public static let keyframe = Flags(rawValue: 1 << 0)
        /// The first after a gap or a reset.
        public static let discontinuity = Flags(rawValue: 1 << 1)
    }

    // MARK: Making buffers

    /// Takes over one reference to `buffer`.
    init(owning buffer: UnsafeMutablePointer<GstBuffer>, format: MediaFormat?, capsDetail: String? = nil) {
        storage = Storage(owning: buffer)
        self.format = format
        self.capsDetail = capsDetail
    }

    /// The caps to announce this buffer with: its full caps when known; none for a container
    /// stream, so that typefinding looks at the bytes.
    var capsForPushing: String? {
        if let capsDetail { return capsDetail }
        if format == .container { return nil }
        return format?.capsString
    }

    /// A new buffer holding a copy of `bytes`.
    public init<Bytes: Collection>(format: MediaFormat?, bytes: Bytes, presentationTime: MediaTime? = nil,
                                   duration: MediaTime? = nil) where Bytes.Element == UInt8 {
        GStreamer.initialize()
        let raw = gst_buffer_new_allocate(nil, gsize(bytes.count), nil)!
        if !bytes.isEmpty {
            var map = GstMapInfo()
            gst_buffer_map(raw, &map, GST_MAP_WRITE)
            _ = UnsafeMutableBufferPointer(start: map.data, count: bytes.count).initialize(from: bytes)
            gst_buffer_unmap(raw, &map)
        }
        self.init(owning: raw, format: format)
        self.presentationTime = presentationTime
        self.duration = duration
    }

    /// A new zero-filled buffer of `byteCount` bytes.
    public init(format: MediaFormat?, byteCount: Int, presentationTime: MediaTime? = nil, duration: MediaTime? = nil) {
        GStreamer.initialize()
        let raw = gst_buffer_new_allocate(nil, gsize(byteCount), nil)!
        gst_buffer_memset(raw, 0, 0, gsize(byteCount))
        self.init(owning: raw, format: format)
        self.presentationTime = presentationTime
        self.duration = duration
    }

    /// A zero-filled frame of a packed format (BGRA, RGBA) whose rows are `bytesPerRow` bytes
    /// apart, at least 4 × width: padded rows, as cameras and decoders hand out
    /// (`CVPixelBuffer`'s bytesPerRow).
    public init(video format: MediaFormat.VideoFormat, bytesPerRow: Int, presentationTime: MediaTime? = nil) {
        precondition(format.pixelFormat == .bgra || format.pixelFormat == .rgba, "bytesPerRow frames are packed (BGRA, RGBA)")
        precondition(bytesPerRow >= format.width * 4)
        self.init(format: .rawVideo(format), byteCount: bytesPerRow * format.height, presentationTime: presentationTime)
        gk_buffer_add_packed_video_meta(storage.buffer, format.pixelFormat.gstName, Int32(format.width), Int32(format.height), Int32(bytesPerRow))
    }

    /// Wraps memory the caller owns, without copying (like `CVPixelBufferCreateWithBytes`).
    /// `release` is called exactly once, when no buffer refers to the memory any more.
    public init(format: MediaFormat?, wrapping memory: UnsafeMutableRawBufferPointer,
                presentationTime: MediaTime? = nil, duration: MediaTime? = nil,
                release: @escaping @Sendable () -> Void) {
        GStreamer.initialize()
        let box = Unmanaged.passRetained(ReleaseBox(release)).toOpaque()
        let raw = gk_buffer_new_wrapped(memory.baseAddress, gsize(memory.count), { context in
            Unmanaged<ReleaseBox>.fromOpaque(context!).takeRetainedValue().release()
        }, box)!
        self.init(owning: raw, format: format)
        self.presentationTime = presentationTime
        self.duration = duration
    }

    private final class ReleaseBox {
        let release: @Sendable () -> Void
        init(_ release: @escaping @Sendable () -> Void) { self.release = release }
    }

    /// Hands one new reference to the underlying buffer to the engine.
    func retainedBuffer() -> UnsafeMutablePointer<GstBuffer> { gk_buffer_ref(storage.buffer) }

    // MARK: Timing and flags

    private func time(_ ns: GstClockTime) -> MediaTime? {
        ns == GstClockTime.max ? nil : MediaTime(nanoseconds: UInt64(ns))
    }

    public var presentationTime: MediaTime? {
        get { time(storage.buffer.pointee.pts) }
        set { makeMetadataWritable(); storage.buffer.pointee.pts = newValue.map { GstClockTime($0.nanoseconds) } ?? .max }
    }
    public var decodeTime: MediaTime? {
        get { time(storage.buffer.pointee.dts) }
        set { makeMetadataWritable(); storage.buffer.pointee.dts = newValue.map { GstClockTime($0.nanoseconds) } ?? .max }
    }
    public var duration: MediaTime? {
        get { time(storage.buffer.pointee.duration) }
        set { makeMetadataWritable(); storage.buffer.pointee.duration = newValue.map { GstClockTime($0.nanoseconds) } ?? .max }
    }

    /// Sets the timing on the buffer itself, for a buffer handed to the engine: no copy while
    /// other `SampleBuffer` values share it (they see the new timing too), as long as no one
    /// else holds the GStreamer buffer; otherwise as the setters do (a copy of the metadata).
    @_spi(Engine)
    public mutating func stampTiming(presentationTime: MediaTime?, duration: MediaTime?) {
        guard gk_buffer_is_writable(storage.buffer) != 0 else {
            self.presentationTime = presentationTime
            self.duration = duration
            return
        }
        storage.buffer.pointee.pts = presentationTime.map { GstClockTime($0.nanoseconds) } ?? .max
        storage.buffer.pointee.duration = duration.map { GstClockTime($0.nanoseconds) } ?? .max
    }

    public var flags: Flags {
        get {
            let raw = storage.buffer.pointee.mini_object.flags
            var f: Flags = []
            if raw & GST_BUFFER_FLAG_DELTA_UNIT.rawValue == 0 { f.insert(.keyframe) }
            if raw & GST_BUFFER_FLAG_DISCONT.rawValue != 0 { f.insert(.discontinuity) }
            return f
        }
        set {
            makeMetadataWritable()
            var raw = storage.buffer.pointee.mini_object.flags
            raw &= ~(GST_BUFFER_FLAG_DELTA_UNIT.rawValue | GST_BUFFER_FLAG_DISCONT.rawValue)
            if !newValue.contains(.keyframe) { raw |= GST_BUFFER_FLAG_DELTA_UNIT.rawValue }
            if newValue.contains(.discontinuity) { raw |= GST_BUFFER_FLAG_DISCONT.rawValue }
            storage.buffer.pointee.mini_object.flags = raw
        }
    }

    public var byteCount: Int { Int(gst_buffer_get_size(storage.buffer)) }

    // MARK: Copy-on-write

    /// Whether writing now would go straight into the buffer without a copy.
    public var isUniquelyOwned: Bool {
        mutating get { isKnownUniquelyReferenced(&storage) && gk_buffer_is_writable(storage.buffer) != 0 }
    }

    /// Timing and flags only: a shallow copy shares the data.
    private mutating func makeMetadataWritable() {
        if !isKnownUniquelyReferenced(&storage) || gk_buffer_is_writable(storage.buffer) == 0 {
            storage = Storage(owning: gst_buffer_copy(storage.buffer))
        }
    }

    /// Data: a deep copy when the buffer or its memory is shared with anyone else.
    private mutating func makeDataWritable() {
        if !isKnownUniquelyReferenced(&storage) || gk_buffer_is_writable(storage.buffer) == 0 {
            storage = Storage(owning: gst_buffer_copy_deep(storage.buffer))
        }
    }

    // MARK: Data

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        var map = GstMapInfo()
        guard gst_buffer_map(storage.buffer, &map, GST_MAP_READ) != 0 else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        defer { gst_buffer_unmap(storage.buffer, &map) }
        return try body(UnsafeRawBufferPointer(start: map.data, count: Int(map.size)))
    }

    /// Writes in place when uniquely held; copies first when shared.
    public mutating func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        makeDataWritable()
        var map = GstMapInfo()
        guard gst_buffer_map(storage.buffer, &map, GstMapFlags(rawValue: GST_MAP_READ.rawValue | GST_MAP_WRITE.rawValue)) != 0 else {
            return try body(UnsafeMutableRawBufferPointer(start: nil, count: 0))
        }
        defer { gst_buffer_unmap(storage.buffer, &map) }
        return try body(UnsafeMutableRawBufferPointer(start: map.data, count: Int(map.size)))
    }

    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    // MARK: Audio view

    /// Frames of PCM audio (samples per channel); 0 when the format is not PCM.
    public var frameCount: Int {
        guard case .pcm(let f)? = format else { return 0 }
        return byteCount / f.bytesPerFrame
    }

    /// The interleaved samples, typed (`Int16` for s16le, `Float` for f32le).
    public func withAudioSamples<T, R, E: Error>(as type: T.Type, _ body: (UnsafeBufferPointer<T>) throws(E) -> R) throws(E) -> R {
        try withUnsafeBytes { (raw) throws(E) -> R in
            try body(UnsafeBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: T.self),
                                         count: raw.count / MemoryLayout<T>.stride))
        }
    }

    public mutating func withMutableAudioSamples<T, R, E: Error>(as type: T.Type, _ body: (UnsafeMutableBufferPointer<T>) throws(E) -> R) throws(E) -> R {
        try withUnsafeMutableBytes { (raw) throws(E) -> R in
            try body(UnsafeMutableBufferPointer(start: raw.baseAddress?.assumingMemoryBound(to: T.self),
                                                count: raw.count / MemoryLayout<T>.stride))
        }
    }

    // MARK: Pixel view

    /// One plane of a video frame: rows of `bytesPerRow` bytes (the stride, which may exceed
    /// the visible width).
    public struct PixelPlane {
        public var baseAddress: UnsafeMutableRawPointer
        public var bytesPerRow: Int
        public var width: Int
        public var height: Int
    }

    /// The planes of a raw video frame, writable (copy-on-write as for bytes).
    public mutating func withMutablePixelPlanes<R>(_ body: ([PixelPlane]) throws(GraphError) -> R) throws(GraphError) -> R {
        let v = try videoFormat()
        let layout = planeLayout(v)
        return try withUnsafeMutableBytes { (raw) throws(GraphError) -> R in try body(Self.planes(layout, v, UnsafeRawBufferPointer(raw))) }
    }

    /// For an effect that writes every visible pixel of a frame from the pixels of its input:
    /// calls `body` with the planes to read and the planes to write. They are the same memory
    /// when this buffer is uniquely held (in place, no copy). Otherwise the frame stays as it is
    /// for its other holders, `body` writes into a frame from `pool` (GStreamer's default
    /// layout, so its rows may be spaced differently from the source's), and that frame
    /// replaces this one, with the same format, timing and flags: one pass over the pixels
    /// instead of a copy and then an edit.
    public mutating func withPixelPlanes<R>(writingInto pool: FramePool,
                                            _ body: (_ source: [PixelPlane], _ destination: [PixelPlane]) throws(GraphError) -> R) throws(GraphError) -> R {
        let v = try videoFormat()
        if isKnownUniquelyReferenced(&storage) && gk_buffer_is_writable(storage.buffer) != 0 {
            return try withMutablePixelPlanes { (planes) throws(GraphError) -> R in try body(planes, planes) }
        }
        var target = SampleBuffer(owning: try pool.frame(v), format: format, capsDetail: capsDetail)
        gst_buffer_copy_into(target.storage.buffer, storage.buffer,
                             GstBufferCopyFlags(rawValue: GST_BUFFER_COPY_FLAGS.rawValue | GST_BUFFER_COPY_TIMESTAMPS.rawValue), 0, gsize.max)
        let layout = planeLayout(v)
        let result = try withUnsafeBytes { (raw) throws(GraphError) -> R in
            let source = try Self.planes(layout, v, raw)
            return try target.withMutablePixelPlanes { (planes) throws(GraphError) -> R in try body(source, planes) }
        }
        self = target
        return result
    }

    /// Bytes a frame of `v` takes in this buffer's layout (its video meta's strides when it has
    /// one); nil when GStreamer knows no such frame.
    func videoByteCount(_ v: MediaFormat.VideoFormat) -> Int? {
        let layout = planeLayout(v)
        guard !layout.isEmpty else { return nil }
        return layout.map { $0.offset + $0.stride * $0.height }.max()
    }

    /// Whether the buffer says how its rows are laid out (padded rows, `bytesPerRow`).
    var hasPaddedRows: Bool { gk_buffer_has_video_meta(storage.buffer) != 0 }

    private func videoFormat() throws(GraphError) -> MediaFormat.VideoFormat {
        guard case .rawVideo(let v)? = format else {
            throw GraphError(.runFailed, "buffer is not raw video (\(format?.description ?? "no format"))")
        }
        return v
    }

    private static func planes(_ layout: [(offset: Int, stride: Int, width: Int, height: Int)], _ v: MediaFormat.VideoFormat,
                        _ raw: UnsafeRawBufferPointer) throws(GraphError) -> [PixelPlane] {
        try layout.map { (l) throws(GraphError) -> PixelPlane in
            guard let base = raw.baseAddress, l.offset + l.stride * (l.height - 1) < raw.count else {
                throw GraphError(.runFailed, "video buffer of \(raw.count) bytes is too small for \(v.width)x\(v.height) \(v.pixelFormat.gstName)")
            }
            return PixelPlane(baseAddress: UnsafeMutableRawPointer(mutating: base) + l.offset, bytesPerRow: l.stride, width: l.width, height: l.height)
        }
    }

    func planeLayout(_ v: MediaFormat.VideoFormat) -> [(offset: Int, stride: Int, width: Int, height: Int)] {
        var o = [gsize](repeating: 0, count: 4)
        var s = [gint](repeating: 0, count: 4)
        let n = Int(gk_video_layout(storage.buffer, v.pixelFormat.gstName, gint(v.width), gint(v.height), &o, &s))
        return (0..<n).map { i in
            let sub = (v.pixelFormat == .i420 || v.pixelFormat == .nv12) && i > 0
            return (Int(o[i]), Int(s[i]), sub ? (v.width + 1) / 2 : v.width, sub ? (v.height + 1) / 2 : v.height)
        }
    }
}
