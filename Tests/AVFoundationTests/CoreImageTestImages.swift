import CoreImage
import CoreVideo

/// Pixel buffers with known bytes for the CoreImage tests, and their bytes read back.
enum CoreImageTestImages {
    /// A deterministic generator (a 64-bit LCG), so a "random" frame is the same every run.
    struct Seeded {
        var state: UInt64
        mutating func next() -> UInt8 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return UInt8(truncatingIfNeeded: state >> 33)
        }
    }

    /// A width × height buffer of `type` whose pixel at memory (column, row) is `pixel` as
    /// (R, G, B, A).
    static func buffer(_ width: Int, _ height: Int, type: OSType = kCVPixelFormatType_32BGRA,
                       _ pixel: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) -> CVPixelBuffer {
        var pb: CVPixelBuffer?
        CVPixelBufferCreate(kCFAllocatorDefault, width, height, type, nil, &pb)
        let b = pb!
        CVPixelBufferLockBaseAddress(b, [])
        let base = CVPixelBufferGetBaseAddress(b)!.assumingMemoryBound(to: UInt8.self), stride = CVPixelBufferGetBytesPerRow(b)
        let bgra = type == kCVPixelFormatType_32BGRA
        for row in 0..<height {
            for col in 0..<width {
                let (r, g, bl, a) = pixel(col, row)
                let p = base + row * stride + 4 * col
                (p[0], p[1], p[2], p[3]) = bgra ? (bl, g, r, a) : (r, g, bl, a)
            }
        }
        CVPixelBufferUnlockBaseAddress(b, [])
        return b
    }

    /// Gradients in the top half, seeded random pixels below; premultiplied (no colour above
    /// its alpha), some translucent, some transparent.
    static func varied(_ width: Int = 67, _ height: Int = 40, opaque: Bool = false) -> CVPixelBuffer {
        var rng = Seeded(state: 52)
        return buffer(width, height) { x, y in
            if y < height / 2 {
                let a: UInt8 = opaque ? 255 : UInt8(255 - (y * 255 / height))
                func c(_ v: Int) -> UInt8 { UInt8(v % 256 * Int(a) / 255) }
                return (c(x * 255 / width), c(y * 255 / height), c((x + y) * 4), a)
            }
            let a: UInt8 = opaque ? 255 : rng.next()
            func c() -> UInt8 { UInt8(Int(rng.next()) * Int(a) / 255) }
            return (c(), c(), c(), a)
        }
    }

    /// The (R, G, B, A) of every pixel, memory order (top row first).
    static func pixels(_ pb: CVPixelBuffer) -> [[UInt8]] {
        CVPixelBufferLockBaseAddress(pb, .readOnly)
        defer { CVPixelBufferUnlockBaseAddress(pb, .readOnly) }
        let base = CVPixelBufferGetBaseAddress(pb)!.assumingMemoryBound(to: UInt8.self), stride = CVPixelBufferGetBytesPerRow(pb)
        let bgra = CVPixelBufferGetPixelFormatType(pb) == kCVPixelFormatType_32BGRA
        var out: [[UInt8]] = []
        for row in 0..<CVPixelBufferGetHeight(pb) {
            for col in 0..<CVPixelBufferGetWidth(pb) {
                let p = base + row * stride + 4 * col
                out.append(bgra ? [p[2], p[1], p[0], p[3]] : [p[0], p[1], p[2], p[3]])
            }
        }
        return out
    }

    /// An empty buffer of the size and format.
    static func blank(_ width: Int, _ height: Int, type: OSType = kCVPixelFormatType_32BGRA) -> CVPixelBuffer {
        var pb: CVPixelBuffer?
        CVPixelBufferCreate(kCFAllocatorDefault, width, height, type, nil, &pb)
        return pb!
    }

    /// The colour matrix by its definition, in doubles: unpremultiply, M · (r, g, b, a) + bias,
    /// clamp to 0…1, premultiply, round.
    static func expectedMatrix(_ p: [UInt8], _ rows: [[Double]], _ bias: [Double]) -> [Double] {
        let a = Double(p[3]) / 255
        let u = (0..<3).map { a > 0 ? Double(p[$0]) / 255 / a : 0 } + [a]
        let o = (0..<4).map { c in min(1, max(0, bias[c] + (0..<4).reduce(0) { $0 + rows[c][$1] * u[$1] })) }
        return (0..<3).map { o[$0] * o[3] * 255 } + [o[3] * 255]
    }
}
