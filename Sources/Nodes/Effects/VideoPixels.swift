import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// Shared plumbing of the per-pixel video effects: each visible row of a packed 4-byte frame
/// (BGRA or RGBA), as 32-bit pixels, whatever the stride.
enum VideoPixels {
    /// The byte offsets of (blue, green, red) in a pixel of this format.
    static func channelOffsets(_ f: PixelFormat) -> (b: Int, g: Int, r: Int)? {
        switch f {
        case .bgra: (0, 1, 2)
        case .rgba: (2, 1, 0)
        default: nil
        }
    }

    /// The frame format and where its colour bytes are, or an error for a format that is not
    /// packed BGRA or RGBA.
    static func packedOffsets(_ format: MediaFormat, node: String) throws(GraphError) -> (format: MediaFormat.VideoFormat, offsets: (b: Int, g: Int, r: Int)) {
        guard case .rawVideo(let v) = format, let offsets = channelOffsets(v.pixelFormat) else {
            throw GraphError(.runFailed, "\(node) takes BGRA or RGBA frames, got \(format); set the source's pixelFormat to bgra")
        }
        return (v, offsets)
    }

    /// Calls `body` with each visible row's pixels to read and to write: the same row when the
    /// frame is uniquely held (in place), else the row of a frame from `pool` that replaces it
    /// (see `SampleBuffer.withPixelPlanes(writingInto:_:)`). `body` writes every pixel.
    static func forEachRow(_ buffer: inout SampleBuffer, pool: FramePool,
                           _ body: (_ source: UnsafeBufferPointer<UInt32>, _ destination: UnsafeMutableBufferPointer<UInt32>, _ y: Int) -> Void) throws(GraphError) {
        try buffer.withPixelPlanes(writingInto: pool) { source, destination in
            let s = source[0], d = destination[0]
            for y in 0..<s.height {
                body(UnsafeBufferPointer(start: row(s, y), count: s.width), UnsafeMutableBufferPointer(start: row(d, y), count: d.width), y)
            }
        }
    }

    static func row(_ p: SampleBuffer.PixelPlane, _ y: Int) -> UnsafeMutablePointer<UInt32> {
        (p.baseAddress + y * p.bytesPerRow).bindMemory(to: UInt32.self, capacity: p.width)
    }

    /// Writes `vector` of 16 source pixels at a time, and `scalar` of the rest of the row, to
    /// the destination row (which may be the source row: each pixel is read before it is written),
    /// from pixel `start` on (the ones before it done already, by a C kernel).
    @inline(__always)
    static func map(_ source: UnsafeBufferPointer<UInt32>, into destination: UnsafeMutableBufferPointer<UInt32>, from start: Int = 0,
                    vector: (SIMD16<UInt32>) -> SIMD16<UInt32>, scalar: (UInt32) -> UInt32) {
        let from = UnsafeRawPointer(source.baseAddress!), to = UnsafeMutableRawPointer(destination.baseAddress!)
        var i = start
        while i + 16 <= source.count {
            to.storeBytes(of: vector(from.loadUnaligned(fromByteOffset: i * 4, as: SIMD16<UInt32>.self)), toByteOffset: i * 4, as: SIMD16<UInt32>.self)
            i += 16
        }
        while i < source.count {
            destination[i] = scalar(source[i])
            i += 1
        }
    }
}
