import Testing
@testable @_spi(Engine) import GraphKitCore

/// A SampleBuffer in Swift memory (``MemoryStorage``, where no engine has started) keeps the same
/// promises as one over a GStreamer buffer: copy-on-write, timing apart from data, pooled frames.
@Suite struct MemoryStorageTests {
    let pcm = MediaFormat.pcm(.init(sampleRate: 8000, channels: 1, sampleFormat: .s16le))

    func buffer(_ bytes: [UInt8]) -> SampleBuffer {
        let storage = MemoryStorage(byteCount: bytes.count)
        storage.withUnsafeMutableBytes { $0.copyBytes(from: bytes) }
        return SampleBuffer(storage: storage, format: pcm)
    }

    func address(_ b: SampleBuffer) -> UnsafeRawPointer? { b.withUnsafeBytes { $0.baseAddress } }

    @Test func writingToAUniqueBufferDoesNotCopy() {
        var b = buffer([1, 2, 3, 4])
        let unique = b.isUniquelyOwned
        #expect(unique)
        let before = address(b)
        b.withUnsafeMutableBytes { $0[0] = 9 }
        #expect(address(b) == before)
        #expect(b.bytes == [9, 2, 3, 4])
    }

    @Test func writingToASharedBufferCopiesFirst() {
        var a = buffer([1, 2, 3, 4])
        let b = a
        let unique = a.isUniquelyOwned
        #expect(!unique)
        a.withUnsafeMutableBytes { $0[0] = 9 }
        #expect(a.bytes == [9, 2, 3, 4])
        #expect(b.bytes == [1, 2, 3, 4])
        #expect(address(a) != address(b))
    }

    @Test func changingTimingOfASharedBufferSharesTheData() {
        var a = buffer([1, 2, 3, 4])
        a.presentationTime = .zero
        let b = a
        a.presentationTime = MediaTime(value: 1, timescale: 8000)
        #expect(b.presentationTime == .zero)
        #expect(a.presentationTime == MediaTime(value: 1, timescale: 8000))
        #expect(address(a) == address(b))  // metadata copied, memory shared
        // And the memory, shared, is no longer writable in place by either.
        let unique = a.isUniquelyOwned
        #expect(!unique)
        a.withUnsafeMutableBytes { $0[1] = 7 }
        #expect(b.bytes == [1, 2, 3, 4])
        #expect(a.bytes == [1, 7, 3, 4])
    }

    @Test func flagsAndTimesRoundTrip() {
        var b = buffer([0])
        #expect(b.flags == [.keyframe])  // a new buffer is decodable on its own, as a GstBuffer is
        b.flags = [.discontinuity]
        b.decodeTime = MediaTime(value: 3, timescale: 10)
        b.duration = MediaTime(value: 1, timescale: 10)
        #expect(b.flags == [.discontinuity])
        #expect(b.decodeTime == MediaTime(value: 3, timescale: 10))
        #expect(b.duration == MediaTime(value: 1, timescale: 10))
        b.duration = nil
        #expect(b.duration == nil)
    }

    @Test func wrappedMemoryIsReleasedOnceWhenTheLastHolderGoes() {
        final class Count: @unchecked Sendable { var n = 0 }
        let count = Count()
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 8)
        defer { memory.deallocate() }
        do {
            let a = SampleBuffer(storage: MemoryStorage(wrapping: memory) { count.n += 1 }, format: pcm)
            var b = a
            b.presentationTime = .zero  // a shallow copy shares the memory
            #expect(count.n == 0)
            _ = (a, b)
        }
        #expect(count.n == 1)
    }

    /// GStreamer's default layout, which a frame made in Swift memory must share: the engine
    /// wraps it without a video meta. (GraphKitRuntimeTests checks it against GStreamer itself.)
    @Test func defaultLayoutOfAnOddI420Frame() throws {
        let v = MediaFormat.VideoFormat(pixelFormat: .i420, width: 7, height: 3, frameRate: FrameRate(30))
        let layout = try #require(v.defaultLayout)
        #expect(layout == [VideoPlaneLayout(offset: 0, stride: 8), VideoPlaneLayout(offset: 32, stride: 4),
                           VideoPlaneLayout(offset: 40, stride: 4)])
        #expect(v.defaultFrameSize == 48)
    }
}

@Suite struct MemoryFramePoolTests {
    @Test func aFrameLetGoIsHandedOutAgain() throws {
        let v = MediaFormat.VideoFormat(pixelFormat: .bgra, width: 16, height: 8, frameRate: FrameRate(30))
        let source = try #require(MemoryAllocator().makeFrameSource(v))
        var first: UnsafeRawPointer?
        do {
            let (storage, isNew) = try #require(source.frame())
            #expect(isNew)
            #expect(storage.byteCount == 16 * 8 * 4)
            first = storage.withUnsafeBytes { $0.baseAddress }
        }
        let (again, isNew) = try #require(source.frame())
        #expect(!isNew)
        #expect(again.withUnsafeBytes { $0.baseAddress } == first)
    }

    /// A kind of storage that does not say how it copies (a plugin's) is copied whole, never
    /// trapped on: the bytes, the timing and the flags, in memory of the copy's own.
    @Test func aStorageThatDoesNotOverrideCopyIsCopiedWhole() {
        final class Fixed: SampleStorage, @unchecked Sendable {
            let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 16)
            var pts: UInt64? = 40
            override init() {
                memory.copyBytes(from: [5, 6, 7, 8] as [UInt8])
                super.init()
            }
            deinit { memory.deallocate() }
            var bytes: [UInt8] { Array(memory) }
            override var byteCount: Int { memory.count }
            override var presentationNanoseconds: UInt64? { get { pts } set { pts = newValue } }
            override var flags: SampleBuffer.Flags { get { [.keyframe] } set {} }
            override func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
                try body(UnsafeRawBufferPointer(memory))
            }
        }
        let original = Fixed()
        for deep in [false, true] {
            let copy = original.copy(deep: deep)
            #expect(copy.withUnsafeBytes { Array($0) } == [5, 6, 7, 8])
            #expect(copy.presentationNanoseconds == 40 && copy.flags == [.keyframe])
            copy.withUnsafeMutableBytes { $0[0] = 1 }
            #expect(original.bytes == [5, 6, 7, 8])
        }
    }
}
