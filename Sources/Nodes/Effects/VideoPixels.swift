import GraphKit

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

    static func requirePacked(_ format: MediaFormat, node: String) throws -> MediaFormat.VideoFormat {
        guard case .rawVideo(let v) = format, channelOffsets(v.pixelFormat) != nil else {
            throw GraphError(.runFailed, "\(node) takes BGRA or RGBA frames, got \(format); set the source's pixelFormat to bgra")
        }
        return v
    }

    /// Calls `body` with each row's pixels, in place (the buffer copies first if shared).
    static func forEachRow(_ buffer: inout SampleBuffer, _ body: (UnsafeMutableBufferPointer<UInt32>, Int) -> Void) throws {
        try buffer.withMutablePixelPlanes { planes in
            let p = planes[0]
            for y in 0..<p.height {
                let row = (p.baseAddress + y * p.bytesPerRow).bindMemory(to: UInt32.self, capacity: p.width)
                body(UnsafeMutableBufferPointer(start: row, count: p.width), y)
            }
        }
    }

    /// Applies `vector` to 16 pixels at a time and `scalar` to the rest of a row.
    @inline(__always)
    static func map(_ row: UnsafeMutableBufferPointer<UInt32>, vector: (SIMD16<UInt32>) -> SIMD16<UInt32>, scalar: (UInt32) -> UInt32) {
        let base = UnsafeMutableRawPointer(row.baseAddress!)
        var i = 0
        while i + 16 <= row.count {
            let v = base.loadUnaligned(fromByteOffset: i * 4, as: SIMD16<UInt32>.self)
            base.storeBytes(of: vector(v), toByteOffset: i * 4, as: SIMD16<UInt32>.self)
            i += 16
        }
        while i < row.count {
            row[i] = scalar(row[i])
            i += 1
        }
    }
}
