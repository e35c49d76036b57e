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
}
