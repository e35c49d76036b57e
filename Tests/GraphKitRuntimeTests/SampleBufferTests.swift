import Foundation
import Synchronization
import Testing
@testable @_spi(Engine) import GraphKitCore
@testable import GraphKitRuntime
import GraphKit

@Suite struct SampleBufferTests {
    let pcm = MediaFormat.pcm(.init(sampleRate: 8000, channels: 1, sampleFormat: .s16le))

    func address(_ b: SampleBuffer) -> UnsafeRawPointer? { b.withUnsafeBytes { $0.baseAddress } }

    @Test func writingToAUniqueBufferDoesNotCopy() {
        var b = SampleBuffer(format: pcm, bytes: [1, 2, 3, 4])
        let unique = b.isUniquelyOwned
        #expect(unique)
        let before = address(b)
        b.withUnsafeMutableBytes { $0[0] = 9 }
        #expect(address(b) == before)
        #expect(b.bytes == [9, 2, 3, 4])
    }

    @Test func writingToASharedBufferCopiesFirst() {
        var a = SampleBuffer(format: pcm, bytes: [1, 2, 3, 4])
        let b = a
        let unique = a.isUniquelyOwned
        #expect(!unique)
        a.withUnsafeMutableBytes { $0[0] = 9 }
        #expect(a.bytes == [9, 2, 3, 4])
        #expect(b.bytes == [1, 2, 3, 4])
        #expect(address(a) != address(b))
    }

    @Test func changingTimingOfASharedBufferSharesTheData() {
        var a = SampleBuffer(format: pcm, bytes: [1, 2, 3, 4], presentationTime: .zero)
        let b = a
        a.presentationTime = MediaTime(value: 1, timescale: 8000)
        #expect(b.presentationTime == .zero)
        #expect(a.presentationTime == MediaTime(value: 1, timescale: 8000))
        #expect(address(a) == address(b))  // metadata copied, memory shared
    }

    @Test func wrappedMemoryIsReleasedExactlyOnceAfterTheLastCopy() {
        let releases = Atomic<Int>(0)
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 16)
        defer { memory.deallocate() }
        do {
            let a = SampleBuffer(format: pcm, wrapping: memory) { releases.add(1, ordering: .relaxed) }
            var copies = [a, a, a]
            #expect(a.withUnsafeBytes { $0.baseAddress } == UnsafeRawPointer(memory.baseAddress))  // zero-copy
            copies[1].presentationTime = .zero  // a shallow copy still refers to the memory
            #expect(releases.load(ordering: .relaxed) == 0)
            copies.removeAll()
            #expect(releases.load(ordering: .relaxed) == 0)
            _ = a
        }
        #expect(releases.load(ordering: .relaxed) == 1)
    }

    @Test func writingToWrappedMemoryThatIsSharedCopiesAndKeepsTheOriginal() {
        let releases = Atomic<Int>(0)
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 4, alignment: 16)
        defer { memory.deallocate() }
        memory.copyBytes(from: [1, 2, 3, 4])
        do {
            let a = SampleBuffer(format: pcm, wrapping: memory) { releases.add(1, ordering: .relaxed) }
            var b = a
            b.withUnsafeMutableBytes { $0[0] = 7 }
            #expect(Array(memory) == [1, 2, 3, 4])
            #expect(b.bytes == [7, 2, 3, 4])
        }
        #expect(releases.load(ordering: .relaxed) == 1)
    }

    @Test func timingAndFlagsRoundTrip() {
        var b = SampleBuffer(format: pcm, byteCount: 16)
        #expect(b.presentationTime == nil)
        #expect(b.flags == [.keyframe])
        b.presentationTime = MediaTime(value: 441, timescale: 44_100)
        b.decodeTime = MediaTime(value: 0, timescale: 1)
        b.duration = MediaTime(value: 1, timescale: 100)
        b.flags = [.discontinuity]
        #expect(b.presentationTime == MediaTime(value: 10, timescale: 1000))
        #expect(b.decodeTime == .zero)
        #expect(b.duration?.nanoseconds == 10_000_000)
        #expect(b.flags == [.discontinuity])
        #expect(b.frameCount == 8)
    }

    @Test func audioAndPixelViews() throws {
        var a = SampleBuffer(format: pcm, byteCount: 8)
        a.withMutableAudioSamples(as: Int16.self) { s in for i in s.indices { s[i] = Int16(i) * -1000 } }
        #expect(a.withAudioSamples(as: Int16.self) { Array($0) } == [0, -1000, -2000, -3000])

        // 3x2 BGRA: rows of 12 bytes; default stride for BGRA is width * 4.
        let video = MediaFormat.rawVideo(.init(pixelFormat: .bgra, width: 3, height: 2, frameRate: FrameRate(30)))
        var v = SampleBuffer(format: video, byteCount: 24)
        try v.withMutablePixelPlanes { planes in
            #expect(planes.count == 1)
            #expect(planes[0].bytesPerRow == 12)
            planes[0].baseAddress.storeBytes(of: 0xFF, toByteOffset: 12, as: UInt8.self)
        }
        #expect(v.bytes[12] == 0xFF)

        // I420 5x3: Y stride rounds up to 8, chroma planes are 3x2 with stride 4.
        let i420 = MediaFormat.rawVideo(.init(pixelFormat: .i420, width: 5, height: 3, frameRate: FrameRate(30)))
        // GStreamer rounds the luma height up to even: Y is 8x4, U and V 4x2 each.
        var y = SampleBuffer(format: i420, byteCount: 8 * 4 + 4 * 2 * 2)
        try y.withMutablePixelPlanes { planes in
            #expect(planes.map(\.bytesPerRow) == [8, 4, 4])
            #expect(planes.map(\.width) == [5, 3, 3])
            #expect(planes.map(\.height) == [3, 2, 2])
        }
    }

    /// A uniquely held frame is written in place; a shared one is left alone for its other
    /// holders, and the result goes into a pooled frame in the default layout, carrying the
    /// format, timing and flags; a released pooled frame is handed out again.
    @Test func pixelPlanesWritingIntoAPool() throws {
        let f = MediaFormat.VideoFormat(pixelFormat: .bgra, width: 3, height: 2, frameRate: FrameRate(30))
        let pool = FramePool()
        func fill(_ b: inout SampleBuffer) throws -> (same: Bool, strides: [Int]) {
            try b.withPixelPlanes(writingInto: pool) { source, destination in
                for y in 0..<2 {
                    for x in 0..<12 {
                        let v = source[0].baseAddress.load(fromByteOffset: y * source[0].bytesPerRow + x, as: UInt8.self)
                        destination[0].baseAddress.storeBytes(of: v &+ 1, toByteOffset: y * destination[0].bytesPerRow + x, as: UInt8.self)
                    }
                }
                return (source[0].baseAddress == destination[0].baseAddress, [source[0].bytesPerRow, destination[0].bytesPerRow])
            }
        }

        var unique = SampleBuffer(video: f, bytesPerRow: 16, presentationTime: MediaTime(value: 33, timescale: 1000))
        let before = address(unique)
        #expect(try fill(&unique) == (true, [16, 16]))
        #expect(address(unique) == before)

        var shared = unique
        shared.duration = MediaTime(value: 33, timescale: 1000)
        shared.flags = [.keyframe]
        let original = shared, snapshot = shared.bytes
        var edited = shared
        #expect(try fill(&edited) == (false, [16, 12]))  // padded rows in, default rows out
        #expect(original.bytes == snapshot)  // the other holder's frame is untouched
        #expect(edited.bytes == [UInt8](repeating: 2, count: 24))
        #expect(edited.format == original.format)
        #expect(edited.presentationTime == MediaTime(value: 33, timescale: 1000) && edited.duration == MediaTime(value: 33, timescale: 1000))
        #expect(edited.flags == [.keyframe])

        let pooled = address(edited)
        edited = original  // the pooled frame goes back to the pool
        var again = original
        _ = try fill(&again)
        #expect(address(again) == pooled)
    }
}

