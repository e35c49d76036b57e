/// Where a ``SampleBuffer``'s bytes, timing and flags live.
///
/// The engine's storage owns one GStreamer buffer (GraphKitRuntime's `GStreamerStorage`), so a
/// buffer goes in and out of a pipeline without a copy. ``MemoryStorage`` holds them in Swift
/// memory, for buffers made where no engine is (the core on its own); the engine wraps such a
/// buffer's memory, without copying it, when the buffer enters a pipeline. The core never sees a
/// GStreamer type: the engine installs its allocator (``SampleStorageAllocation``) when it starts.
///
/// A class (not a protocol) so that a buffer's copy-on-write can ask whether Swift holds it
/// uniquely (`isKnownUniquelyReferenced` needs a class type); each kind of storage overrides
/// every member. Times are nanoseconds (nil: none), as they cross into the engine.
@_spi(Engine)
open class SampleStorage: @unchecked Sendable {
    // @unchecked: an abstract base with no state of its own; each kind of storage says why it is safe.
    public init() {}

    open var byteCount: Int { 0 }
    open var presentationNanoseconds: UInt64? { get { nil } set {} }
    open var decodeNanoseconds: UInt64? { get { nil } set {} }
    open var durationNanoseconds: UInt64? { get { nil } set {} }
    open var flags: SampleBuffer.Flags { get { [] } set {} }
    /// Whether this storage may be written in place as far as anyone outside Swift is concerned
    /// (a GStreamer buffer nobody else holds a reference to). Swift's own sharing is checked apart.
    open var isWritable: Bool { false }
    /// Whether the bytes too may be written in place: not when they are shared outside Swift or
    /// read-only there (a decoder's own pictures, which it may still read). A writer that would
    /// have them copied first can write its result elsewhere instead (`withPixelPlanes(writingInto:)`).
    open var areBytesWritable: Bool { isWritable }
    /// A copy: of the timing and flags, sharing the bytes (`deep` false), or of everything. A
    /// kind of storage that does not say how it shares its bytes is copied whole into Swift
    /// memory (a copy never wrong for bytes in the default layout, only slower; a storage that
    /// states a layout of its own overrides this).
    open func copy(deep: Bool) -> SampleStorage {
        let copy = MemoryStorage(byteCount: byteCount, layout: nil)
        withUnsafeBytes { from in
            copy.withUnsafeMutableBytes { to in
                if let source = from.baseAddress, let target = to.baseAddress { target.copyMemory(from: source, byteCount: min(from.count, to.count)) }
            }
        }
        copy.takeTimingAndFlags(from: self)
        return copy
    }
    open func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: nil, count: 0))
    }
    open func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: nil, count: 0))
    }
    /// The planes of a frame of `format` as this storage lays them out when it says so itself
    /// (rows padded past the width, like `CVPixelBuffer`'s bytesPerRow); nil: the default layout.
    open func statedLayout(_ format: MediaFormat.VideoFormat) -> [VideoPlaneLayout]? { nil }

    /// Timing and flags from `other`, onto this storage (a frame replacing another).
    public final func takeTimingAndFlags(from other: SampleStorage) {
        presentationNanoseconds = other.presentationNanoseconds
        decodeNanoseconds = other.decodeNanoseconds
        durationNanoseconds = other.durationNanoseconds
        flags = other.flags
    }
}

/// Where one plane of a video frame is in its buffer.
@_spi(Engine)
public struct VideoPlaneLayout: Sendable, Equatable {
    public var offset: Int
    public var stride: Int
    public init(offset: Int, stride: Int) {
        self.offset = offset
        self.stride = stride
    }
}

/// Makes storage: the engine's, once it has started, else ``MemoryStorage``.
package protocol SampleStorageAllocator: Sendable {
    func makeStorage(byteCount: Int) -> SampleStorage
    /// Storage over memory the caller owns; `release` is called once, when nothing refers to it.
    func makeStorage(wrapping memory: UnsafeMutableRawBufferPointer, release: @escaping @Sendable () -> Void) -> SampleStorage
    /// A packed (BGRA, RGBA) frame whose rows are `bytesPerRow` apart.
    func makeStorage(video format: MediaFormat.VideoFormat, bytesPerRow: Int) -> SampleStorage
    /// A recycling source of frames of one layout (see ``FramePool``); nil when it cannot make one.
    func makeFrameSource(_ format: MediaFormat.VideoFormat) -> (any FrameSourcing)?
}

/// Frames of one layout, recycled: a frame goes back when its last holder lets go of it.
package protocol FrameSourcing: AnyObject, Sendable {
    /// A frame, and whether the source had to make it (none was free).
    func frame() -> (storage: SampleStorage, isNew: Bool)?
}

/// The allocator the engine installed, if any.
package enum SampleStorageAllocation {
    private static let installed = Guarded<(any SampleStorageAllocator)?>(nil)

    /// Installs the engine's allocator; the runtime calls this once, as GStreamer starts.
    package static func install(_ allocator: any SampleStorageAllocator) {
        installed.withLock { $0 = allocator }
    }

    package static var current: any SampleStorageAllocator {
        installed.withLock { $0 } ?? MemoryAllocator()
    }
}

/// A buffer's bytes in Swift memory, with its timing and flags beside them. A shallow copy
/// (new timing, same bytes) shares the memory, as a GStreamer buffer's copy shares its memory;
/// the memory is writable only while one storage holds it.
package final class MemoryStorage: SampleStorage, @unchecked Sendable {
    // @unchecked: written only through a SampleBuffer that holds this storage uniquely
    // (copy-on-write), and the bytes only while this storage alone holds them (`isWritable`).
    private var block: MemoryBlock
    private let layout: [VideoPlaneLayout]?
    private var pts: UInt64?, dts: UInt64?, length: UInt64?
    private var sampleFlags: SampleBuffer.Flags = [.keyframe]

    /// Memory of its own, zero-filled, aligned for vector code.
    package init(byteCount: Int, layout: [VideoPlaneLayout]? = nil) {
        block = MemoryBlock(byteCount: byteCount)
        self.layout = layout
        super.init()
    }

    /// Memory someone else owns, released through `release` when nothing refers to it.
    package init(wrapping memory: UnsafeMutableRawBufferPointer, release: @escaping @Sendable () -> Void) {
        block = MemoryBlock(wrapping: memory, release: release)
        layout = nil
        super.init()
    }

    private init(sharing block: MemoryBlock, layout: [VideoPlaneLayout]?) {
        self.block = block
        self.layout = layout
        super.init()
    }

    override package var presentationNanoseconds: UInt64? { get { pts } set { pts = newValue } }
    override package var decodeNanoseconds: UInt64? { get { dts } set { dts = newValue } }
    override package var durationNanoseconds: UInt64? { get { length } set { length = newValue } }
    override package var flags: SampleBuffer.Flags { get { sampleFlags } set { sampleFlags = newValue } }
    override package var byteCount: Int { block.memory.count }
    override package var isWritable: Bool { isKnownUniquelyReferenced(&block) }

    override package func copy(deep: Bool) -> SampleStorage {
        let c: MemoryStorage
        if deep {
            c = MemoryStorage(byteCount: block.memory.count, layout: layout)
            if let from = block.memory.baseAddress, let to = c.block.memory.baseAddress {
                to.copyMemory(from: from, byteCount: block.memory.count)
            }
        } else {
            c = MemoryStorage(sharing: block, layout: layout)
        }
        c.takeTimingAndFlags(from: self)
        return c
    }

    override package func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(block.memory))
    }

    override package func withUnsafeMutableBytes<R, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(block.memory)
    }

    override package func statedLayout(_ format: MediaFormat.VideoFormat) -> [VideoPlaneLayout]? { layout }

    /// The bytes as they are, for an engine that wraps them (it holds this storage meanwhile).
    package var unsafeMemory: UnsafeMutableRawBufferPointer { block.memory }
}

/// One allocation, shared by the storages whose bytes it holds.
private final class MemoryBlock: @unchecked Sendable {
    // @unchecked: the pointer never changes; the bytes are written only while one storage holds it.
    let memory: UnsafeMutableRawBufferPointer
    private let release: (@Sendable () -> Void)?

    init(byteCount: Int) {
        memory = .allocate(byteCount: max(byteCount, 0), alignment: 64)
        memory.initializeMemory(as: UInt8.self, repeating: 0)
        release = nil
    }

    init(wrapping memory: UnsafeMutableRawBufferPointer, release: @escaping @Sendable () -> Void) {
        self.memory = memory
        self.release = release
    }

    deinit {
        if let release { release() } else { memory.deallocate() }
    }
}

/// Swift memory for every buffer: where no engine has started.
package struct MemoryAllocator: SampleStorageAllocator {
    package init() {}

    package func makeStorage(byteCount: Int) -> SampleStorage { MemoryStorage(byteCount: byteCount) }

    package func makeStorage(wrapping memory: UnsafeMutableRawBufferPointer, release: @escaping @Sendable () -> Void) -> SampleStorage {
        MemoryStorage(wrapping: memory, release: release)
    }

    package func makeStorage(video format: MediaFormat.VideoFormat, bytesPerRow: Int) -> SampleStorage {
        MemoryStorage(byteCount: bytesPerRow * format.height, layout: [VideoPlaneLayout(offset: 0, stride: bytesPerRow)])
    }

    package func makeFrameSource(_ format: MediaFormat.VideoFormat) -> (any FrameSourcing)? {
        guard let size = format.defaultFrameSize else { return nil }
        return MemoryFrames(byteCount: size)
    }

    /// Frames of Swift memory, recycled as the engine's pool recycles its own: a frame's memory
    /// goes back to the free list when its last holder lets go.
    private final class MemoryFrames: FrameSourcing, Sendable {
        let byteCount: Int
        /// Free frames' memory, by address (each `byteCount` bytes).
        private let free = Guarded<[UInt]>([])
        init(byteCount: Int) { self.byteCount = byteCount }

        deinit {
            free.withLock { $0.forEach { UnsafeMutableRawPointer(bitPattern: $0)?.deallocate() } }
        }

        func frame() -> (storage: SampleStorage, isNew: Bool)? {
            let reused = free.withLock { $0.popLast() }
            let address = reused ?? UInt(bitPattern: UnsafeMutableRawPointer.allocate(byteCount: byteCount, alignment: 64))
            guard let base = UnsafeMutableRawPointer(bitPattern: address) else { return nil }
            // The storage holds the pool until the frame comes back.
            let storage = MemoryStorage(wrapping: UnsafeMutableRawBufferPointer(start: base, count: byteCount)) { [self] in
                free.withLock { $0.append(address) }
            }
            return (storage, reused == nil)
        }
    }
}

extension MediaFormat.VideoFormat {
    /// The planes of a frame in GStreamer's default layout (`gst_video_info_set_format`): rows
    /// rounded up to 4 bytes, chroma of I420 and NV12 (8 or 10 bits) at half size rounded up, the planes one
    /// after another from a height rounded up to even. nil for an empty frame.
    package var defaultLayout: [VideoPlaneLayout]? {
        guard width > 0, height > 0 else { return nil }
        func up4(_ n: Int) -> Int { (n + 3) & ~3 }
        func up2(_ n: Int) -> Int { (n + 1) & ~1 }
        switch pixelFormat {
        case .bgra, .rgba:
            return [VideoPlaneLayout(offset: 0, stride: width * 4)]
        case .i420:
            let luma = up4(width), chroma = up4(up2(width) / 2)
            let u = luma * up2(height)
            let v = u + chroma * (up2(height) / 2)
            return [VideoPlaneLayout(offset: 0, stride: luma), VideoPlaneLayout(offset: u, stride: chroma),
                    VideoPlaneLayout(offset: v, stride: chroma)]
        case .nv12:
            let luma = up4(width)
            return [VideoPlaneLayout(offset: 0, stride: luma), VideoPlaneLayout(offset: luma * up2(height), stride: luma)]
        case .p010_10le:
            // NV12's planes of 2-byte samples.
            let luma = up4(width * 2)
            return [VideoPlaneLayout(offset: 0, stride: luma), VideoPlaneLayout(offset: luma * up2(height), stride: luma)]
        case .i420_10le:
            // I420's planes of 2-byte samples.
            let luma = up4(width * 2), chroma = up4(up2(width))
            let u = luma * up2(height)
            let v = u + chroma * (up2(height) / 2)
            return [VideoPlaneLayout(offset: 0, stride: luma), VideoPlaneLayout(offset: u, stride: chroma),
                    VideoPlaneLayout(offset: v, stride: chroma)]
        }
    }

    /// Bytes of a frame in the default layout; nil for an empty frame.
    @_spi(Engine) public var defaultFrameSize: Int? {
        guard let layout = defaultLayout, let last = layout.last else { return nil }
        let rows = layout.count > 1 ? (height + 1) / 2 : height
        return last.offset + last.stride * rows
    }
}
