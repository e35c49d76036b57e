
/// A media sample: format, timing, flags and data, like `CMSampleBuffer`.
///
/// A value type over shared storage (``SampleStorage``): in a run, one GStreamer buffer, released
/// exactly once. Copies are cheap (a reference count); writing through a copy that shares its
/// storage copies first, writing to a uniquely held buffer does not (copy-on-write, like `Array`).
public struct SampleBuffer: Sendable {
    package var storage: SampleStorage
    /// What the data holds; nil when not known (a buffer made from bytes with no format).
    public var format: MediaFormat? {
        didSet { capsDetail = nil }
    }
    /// The full description a buffer arrived with, when it came out of a graph (GStreamer caps):
    /// it carries what `format` does not spell out (an AAC or H.264 codec configuration, like
    /// `CMFormatDescription` extensions), so the buffer can go back into another graph.
    @_spi(Engine) public var capsDetail: String?

    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Decodable on its own (not a delta unit).
        public static let keyframe = Flags(rawValue: 1 << 0)
        /// The first after a gap or a reset.
        public static let discontinuity = Flags(rawValue: 1 << 1)
    }

    // MARK: Making buffers

    /// A buffer over `storage` (the engine's, for a buffer leaving a pipeline).
    @_spi(Engine) public init(storage: SampleStorage, format: MediaFormat?, capsDetail: String? = nil) {
        self.storage = storage
        self.format = format
        self.capsDetail = capsDetail
    }

    /// A new buffer holding a copy of `bytes`.
    public init<Bytes: Collection>(format: MediaFormat?, bytes: Bytes, presentationTime: MediaTime? = nil,
                                   duration: MediaTime? = nil) where Bytes.Element == UInt8 {
        let storage = SampleStorageAllocation.current.makeStorage(byteCount: bytes.count)
        if !bytes.isEmpty {
            storage.withUnsafeMutableBytes { raw in
                _ = UnsafeMutableBufferPointer(start: raw.baseAddress!.assumingMemoryBound(to: UInt8.self), count: bytes.count)
                    .initialize(from: bytes)
            }
        }
        self.init(storage: storage, format: format)
        self.presentationTime = presentationTime
        self.duration = duration
    }

    /// A new zero-filled buffer of `byteCount` bytes.
    public init(format: MediaFormat?, byteCount: Int, presentationTime: MediaTime? = nil, duration: MediaTime? = nil) {
        let storage = SampleStorageAllocation.current.makeStorage(byteCount: byteCount)
        storage.withUnsafeMutableBytes { raw in if !raw.isEmpty { raw.initializeMemory(as: UInt8.self, repeating: 0) } }
        self.init(storage: storage, format: format)
        self.presentationTime = presentationTime
        self.duration = duration
    }

    /// A frame of `format` taken from `pool`, for a writer that sets every pixel of every plane:
    /// its bytes are as the pool left them (a recycled frame holds an earlier picture), so
    /// nothing is zero-filled first. The pool's layout is GStreamer's default for the format.
    package init(frameOf format: MediaFormat.VideoFormat, from pool: FramePool,
                 presentationTime: MediaTime? = nil, duration: MediaTime? = nil) throws(GraphError) {
        self.init(storage: try pool.frame(format), format: .rawVideo(format))
        self.presentationTime = presentationTime
        self.duration = duration
    }

    /// A zero-filled frame of a packed format (BGRA, RGBA) whose rows are `bytesPerRow` bytes
    /// apart, at least 4 × width: padded rows, as cameras and decoders hand out
    /// (`CVPixelBuffer`'s bytesPerRow).
    public init(video format: MediaFormat.VideoFormat, bytesPerRow: Int, presentationTime: MediaTime? = nil) {
        precondition(format.pixelFormat == .bgra || format.pixelFormat == .rgba, "bytesPerRow frames are packed (BGRA, RGBA)")
        precondition(bytesPerRow >= format.width * 4)
        let storage = SampleStorageAllocation.current.makeStorage(video: format, bytesPerRow: bytesPerRow)
        storage.withUnsafeMutableBytes { raw in if !raw.isEmpty { raw.initializeMemory(as: UInt8.self, repeating: 0) } }
        self.init(storage: storage, format: .rawVideo(format))
        self.presentationTime = presentationTime
    }

    /// Wraps memory the caller owns, without copying (like `CVPixelBufferCreateWithBytes`).
    /// `release` is called exactly once, when no buffer refers to the memory any more.
    public init(format: MediaFormat?, wrapping memory: UnsafeMutableRawBufferPointer,
                presentationTime: MediaTime? = nil, duration: MediaTime? = nil,
                release: @escaping @Sendable () -> Void) {
        self.init(storage: SampleStorageAllocation.current.makeStorage(wrapping: memory, release: release), format: format)
        self.presentationTime = presentationTime
        self.duration = duration
    }

    // MARK: Timing and flags

    public var presentationTime: MediaTime? {
        get { storage.presentationNanoseconds.map(MediaTime.init(nanoseconds:)) }
        set { makeMetadataWritable(); storage.presentationNanoseconds = newValue.map { UInt64($0.nanoseconds) } }
    }
    public var decodeTime: MediaTime? {
        get { storage.decodeNanoseconds.map(MediaTime.init(nanoseconds:)) }
        set { makeMetadataWritable(); storage.decodeNanoseconds = newValue.map { UInt64($0.nanoseconds) } }
    }
    public var duration: MediaTime? {
        get { storage.durationNanoseconds.map(MediaTime.init(nanoseconds:)) }
        set { makeMetadataWritable(); storage.durationNanoseconds = newValue.map { UInt64($0.nanoseconds) } }
    }

    /// Sets the timing on the buffer itself, for a buffer handed to the engine: no copy while
    /// other `SampleBuffer` values share it (they see the new timing too), as long as no one
    /// else holds the engine's buffer; otherwise as the setters do (a copy of the metadata).
    package mutating func stampTiming(presentationTime: MediaTime?, duration: MediaTime?) {
        guard storage.isWritable else {
            self.presentationTime = presentationTime
            self.duration = duration
            return
        }
        storage.presentationNanoseconds = presentationTime.map { UInt64($0.nanoseconds) }
        storage.durationNanoseconds = duration.map { UInt64($0.nanoseconds) }
    }

    public var flags: Flags {
        get { storage.flags }
        set { makeMetadataWritable(); storage.flags = newValue }
    }

    public var byteCount: Int { storage.byteCount }

    // MARK: Copy-on-write

    /// Whether writing now would go straight into the buffer without a copy.
    public var isUniquelyOwned: Bool {
        mutating get { isKnownUniquelyReferenced(&storage) && storage.areBytesWritable }
    }

    /// Timing and flags only: a shallow copy shares the data.
    private mutating func makeMetadataWritable() {
        if !isKnownUniquelyReferenced(&storage) || !storage.isWritable {
            storage = storage.copy(deep: false)
        }
    }

    /// Data: a deep copy when the buffer or its memory is shared with anyone else.
    private mutating func makeDataWritable() {
        if !isKnownUniquelyReferenced(&storage) || !storage.areBytesWritable {
            storage = storage.copy(deep: true)
        }
    }

    // MARK: Data

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try storage.withUnsafeBytes(body)
    }

    /// Writes in place when uniquely held; copies first when shared.
    public mutating func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        makeDataWritable()
        return try storage.withUnsafeMutableBytes(body)
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

    /// For a node that only reads pixels (an analysis): the frame's planes, never copied,
    /// however many hold the buffer. `body` must not write through them.
    public func withPixelPlanes<R>(_ body: ([PixelPlane]) throws(GraphError) -> R) throws(GraphError) -> R {
        let v = try videoFormat()
        let layout = planeLayout(v)
        return try withUnsafeBytes { (raw) throws(GraphError) -> R in try body(Self.planes(layout, v, raw)) }
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
        if isUniquelyOwned {
            return try withMutablePixelPlanes { (planes) throws(GraphError) -> R in try body(planes, planes) }
        }
        // No other reference to the pool's frame may live on (a local would make it shared, and
        // the write below would copy it out of the pool).
        var target = SampleBuffer(storage: try pool.frame(v), format: format, capsDetail: capsDetail)
        target.storage.takeTimingAndFlags(from: storage)
        let layout = planeLayout(v)
        let result = try withUnsafeBytes { (raw) throws(GraphError) -> R in
            let source = try Self.planes(layout, v, raw)
            return try target.withMutablePixelPlanes { (planes) throws(GraphError) -> R in try body(source, planes) }
        }
        self = target
        return result
    }

    /// Bytes a frame of `v` takes in this buffer's layout (the rows it states when it has its
    /// own); nil for an empty frame.
    package func videoByteCount(_ v: MediaFormat.VideoFormat) -> Int? {
        let layout = planeLayout(v)
        guard !layout.isEmpty else { return nil }
        return layout.map { $0.offset + $0.stride * $0.height }.max()
    }

    /// Whether the buffer says how its rows are laid out (padded rows, `bytesPerRow`).
    package var hasPaddedRows: Bool {
        guard case .rawVideo(let v)? = format else { return false }
        return storage.statedLayout(v) != nil
    }

    private func videoFormat() throws(GraphError) -> MediaFormat.VideoFormat {
        guard case .rawVideo(let v)? = format else {
            throw GraphError(.runFailed, "buffer is not raw video (\(format?.description ?? "no format"))")
        }
        return v
    }

    private static func planes(_ layout: [(offset: Int, stride: Int, width: Int, height: Int)], _ v: MediaFormat.VideoFormat,
                        _ raw: UnsafeRawBufferPointer) throws(GraphError) -> [PixelPlane] {
        try layout.enumerated().map { (i, l) throws(GraphError) -> PixelPlane in
            // The last row need not be padded to the stride, but must hold its pixels.
            let bytesPerPixel = v.pixelFormat.bytesPerPixel(plane: i)
            let lastRow = min(l.stride, l.width * bytesPerPixel)
            guard let base = raw.baseAddress, l.height > 0, l.offset >= 0,
                  l.offset + l.stride * (l.height - 1) + lastRow <= raw.count else {
                throw GraphError(.runFailed, "video buffer of \(raw.count) bytes is too small for \(v.width)x\(v.height) \(v.pixelFormat.gstName)")
            }
            return PixelPlane(baseAddress: UnsafeMutableRawPointer(mutating: base) + l.offset, bytesPerRow: l.stride, width: l.width, height: l.height)
        }
    }

    /// Each plane's place, stride and size: as the buffer states its rows, else the default layout.
    @_spi(Engine) public func planeLayout(_ v: MediaFormat.VideoFormat) -> [(offset: Int, stride: Int, width: Int, height: Int)] {
        let layout = storage.statedLayout(v) ?? v.defaultLayout ?? []
        return layout.enumerated().map { i, plane in
            let sub = v.pixelFormat != .bgra && v.pixelFormat != .rgba && i > 0
            return (plane.offset, plane.stride, sub ? (v.width + 1) / 2 : v.width, sub ? (v.height + 1) / 2 : v.height)
        }
    }
}
