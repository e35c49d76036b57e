import CGraphKitGlue
import CGStreamer
import Testing
@testable @_spi(Engine) import GraphKitCore
@testable import GraphKitRuntime
import GraphKit
import TestSupport

/// The core lays out frames in Swift memory as GStreamer does (the engine wraps them with no
/// video meta), and a buffer in Swift memory enters a pipeline without a copy, read-only.
@Suite(.media) struct StorageParityTests {
    @Test(arguments: PixelFormat.allCases)
    func theDefaultLayoutIsGStreamers(_ pixelFormat: PixelFormat) {
        GStreamer.initialize()
        for width in 1...40 {
            for height in 1...9 {
                let v = MediaFormat.VideoFormat(pixelFormat: pixelFormat, width: width, height: height, frameRate: FrameRate(30))
                var o = [gsize](repeating: 0, count: 4)
                var s = [gint](repeating: 0, count: 4)
                let n = Int(gk_video_layout(nil, pixelFormat.gstName, gint(width), gint(height), &o, &s))
                let theirs = (0..<n).map { VideoPlaneLayout(offset: Int(o[$0]), stride: Int(s[$0])) }
                #expect(v.defaultLayout == theirs, "\(pixelFormat) \(width)x\(height)")
                #expect(v.defaultFrameSize == Int(gk_video_frame_size(pixelFormat.gstName, gint(width), gint(height))),
                        "\(pixelFormat) \(width)x\(height)")
            }
        }
    }

    @Test func aBufferInSwiftMemoryEntersThePipelineWithoutACopy() throws {
        GStreamer.initialize()
        let storage = MemoryStorage(byteCount: 4)
        storage.withUnsafeMutableBytes { $0.copyBytes(from: [1, 2, 3, 4]) }
        var sample = SampleBuffer(storage: storage, format: .data("application/x-test"))
        sample.presentationTime = MediaTime(value: 1, timescale: 10)
        sample.flags = [.discontinuity]
        let raw = sample.retainedBuffer()
        let engine = GStreamerStorage(owning: raw)
        #expect(engine.withUnsafeBytes { $0.baseAddress } == storage.withUnsafeBytes { $0.baseAddress })
        #expect(engine.presentationNanoseconds == 100_000_000)
        #expect(engine.flags == [.discontinuity])
        // Swift may still read the memory, so an element that writes into the buffer gets a copy.
        let memory = try #require(gst_buffer_peek_memory(raw, 0))
        #expect(memory.pointee.mini_object.flags & GST_MEMORY_FLAG_READONLY.rawValue != 0)
        engine.withUnsafeMutableBytes { $0[0] = 99 }
        #expect(storage.withUnsafeBytes { Array($0) } == [1, 2, 3, 4])
        #expect(engine.withUnsafeBytes { Array($0) } == [99, 2, 3, 4])
        // And the Swift side no longer writes in place: the memory is shared.
        let unique = sample.isUniquelyOwned
        #expect(!unique)
    }

    /// A frame whose memory is read-only or shared outside Swift (gkavdec's pictures, which
    /// libavcodec may still read) is not written in place: an effect that writes into a frame of
    /// its own does so at once, with no copy first, and the picture stays as it was. A buffer
    /// whose memory is its own alone is written in place.
    @Test func readOnlyOrSharedMemoryIsWrittenIntoAFrameOfItsOwn() throws {
        GStreamer.initialize()
        // 8x2: every plane's rows are as long as its pixels (no padding to compare).
        let format = MediaFormat.VideoFormat(pixelFormat: .i420, width: 8, height: 2, frameRate: FrameRate(30))
        let size = try #require(format.defaultFrameSize)
        let picture = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
        defer { picture.deallocate() }
        for i in 0..<size { picture[i] = UInt8(i) }
        let before = Array(picture)
        func sample(_ raw: UnsafeMutablePointer<GstBuffer>) -> SampleBuffer {
            SampleBuffer(storage: GStreamerStorage(owning: raw), format: .rawVideo(format))
        }
        func invertInto(_ buffer: inout SampleBuffer, _ pool: FramePool) throws {
            try buffer.withPixelPlanes(writingInto: pool) { sources, destinations in
                for (s, d) in zip(sources, destinations) {
                    for y in 0..<s.height {
                        for x in 0..<s.width {
                            d.baseAddress.storeBytes(of: 255 - s.baseAddress.load(fromByteOffset: y * s.bytesPerRow + x, as: UInt8.self),
                                                     toByteOffset: y * d.bytesPerRow + x, as: UInt8.self)
                        }
                    }
                }
            }
        }
        let inverted = before.map { 255 - $0 }
        let pool = FramePool()

        // Read-only, held by this buffer alone.
        let readOnly = try #require(gst_buffer_new())
        gst_buffer_append_memory(readOnly, gst_memory_new_wrapped(GST_MEMORY_FLAG_READONLY, picture.baseAddress, gsize(size), 0, gsize(size), nil, nil))
        var a = sample(readOnly)
        let aUnique = a.isUniquelyOwned
        #expect(!aUnique)
        try invertInto(&a, pool)
        #expect(Array(picture) == before, "the decoder's picture was written")
        #expect(a.bytes == inverted)
        #expect(a.withUnsafeBytes { $0.baseAddress } != UnsafeRawPointer(picture.baseAddress))

        // Writable memory that another buffer holds too.
        let first = try #require(gst_buffer_new_allocate(nil, gsize(size), nil))
        gst_buffer_fill(first, 0, picture.baseAddress, gsize(size))
        let second = try #require(gst_buffer_copy(first)) // shares the memory
        var b = sample(second)
        let bUnique = b.isUniquelyOwned
        #expect(!bUnique)
        try invertInto(&b, pool)
        #expect(b.bytes == inverted)
        var firstBytes = [UInt8](repeating: 0, count: size)
        gst_buffer_extract(first, 0, &firstBytes, gsize(size))
        #expect(firstBytes == before)
        gst_buffer_unref(first)

        // Its own memory alone: in place.
        let own = try #require(gst_buffer_new_allocate(nil, gsize(size), nil))
        gst_buffer_fill(own, 0, picture.baseAddress, gsize(size))
        var c = sample(own)
        let cUnique = c.isUniquelyOwned
        #expect(cUnique)
        let address = c.withUnsafeBytes { $0.baseAddress }
        try invertInto(&c, pool)
        #expect(c.bytes == inverted)
        #expect(c.withUnsafeBytes { $0.baseAddress } == address)
    }
}
