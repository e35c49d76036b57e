import CoreVideo

/// Where a render reads or writes pixels: a locked pixel buffer's planes or the caller's bitmap.
/// Rows are in memory order (row 0 is the top of the picture).
struct PixelMemory {
    enum Layout {
        /// 4 bytes a pixel; the byte of R, G, B and A in each.
        case packed(base: UnsafeMutableRawPointer, rowBytes: Int, byteOf: [UInt8])
        /// 4:2:0 bi-planar (NV12): luma, then interleaved Cb Cr at half size both ways. BT.601.
        case biPlanar(luma: UnsafeMutableRawPointer, lumaRowBytes: Int, chroma: UnsafeMutableRawPointer, chromaRowBytes: Int,
                      fullRange: Bool)
    }
    let width: Int
    let height: Int
    let layout: Layout

    /// The memory of a locked pixel buffer; nil for a format not rendered (planar 4:2:0, an
    /// unknown code) or a buffer whose rows are shorter than its width says.
    init?(lockedBuffer pb: CVPixelBuffer) {
        width = CVPixelBufferGetWidth(pb)
        height = CVPixelBufferGetHeight(pb)
        guard width > 0, height > 0 else { return nil }
        switch CVPixelBufferGetPixelFormatType(pb) {
        case kCVPixelFormatType_32BGRA, kCVPixelFormatType_32RGBA:
            let bgra = CVPixelBufferGetPixelFormatType(pb) == kCVPixelFormatType_32BGRA
            guard let base = CVPixelBufferGetBaseAddress(pb), CVPixelBufferGetBytesPerRow(pb) >= width * 4 else { return nil }
            layout = .packed(base: base, rowBytes: CVPixelBufferGetBytesPerRow(pb), byteOf: bgra ? [2, 1, 0, 3] : [0, 1, 2, 3])
        case kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange, kCVPixelFormatType_420YpCbCr8BiPlanarFullRange:
            guard let y = CVPixelBufferGetBaseAddressOfPlane(pb, 0), let c = CVPixelBufferGetBaseAddressOfPlane(pb, 1),
                  CVPixelBufferGetBytesPerRowOfPlane(pb, 0) >= width, CVPixelBufferGetBytesPerRowOfPlane(pb, 1) >= (width + 1) / 2 * 2,
                  CVPixelBufferGetHeightOfPlane(pb, 1) >= (height + 1) / 2 else { return nil }
            layout = .biPlanar(luma: y, lumaRowBytes: CVPixelBufferGetBytesPerRowOfPlane(pb, 0), chroma: c,
                               chromaRowBytes: CVPixelBufferGetBytesPerRowOfPlane(pb, 1),
                               fullRange: CVPixelBufferGetPixelFormatType(pb) == kCVPixelFormatType_420YpCbCr8BiPlanarFullRange)
        default: return nil
        }
    }

    init(width: Int, height: Int, layout: Layout) { (self.width, self.height, self.layout) = (width, height, layout) }

    /// `count` pixels of memory row `row` from column `x` into `out`, as ``read(x:row:)``, the
    /// layout looked at once a row.
    func read(row: Int, x: Int, count: Int, into out: UnsafeMutablePointer<SIMD4<Float>>) {
        switch layout {
        case .packed(let base, let rowBytes, let o):
            let p = (base + row * rowBytes + 4 * x).assumingMemoryBound(to: UInt8.self)
            let (r, g, b, a) = (Int(o[0]), Int(o[1]), Int(o[2]), Int(o[3]))
            for i in 0..<count {
                let q = p + 4 * i
                out[i] = SIMD4(Float(q[r]), Float(q[g]), Float(q[b]), Float(q[a])) / 255
            }
        case .biPlanar:
            for i in 0..<count { out[i] = read(x: x + i, row: row) }
        }
    }

    /// Pixel (x, row) premultiplied in 0…1 (a 4:2:0 one opaque, its chroma the nearest sample).
    @inline(__always) func read(x: Int, row: Int) -> SIMD4<Float> {
        switch layout {
        case .packed(let base, let rowBytes, let o):
            let p = (base + row * rowBytes + 4 * x).assumingMemoryBound(to: UInt8.self)
            return SIMD4(Float(p[Int(o[0])]), Float(p[Int(o[1])]), Float(p[Int(o[2])]), Float(p[Int(o[3])])) / 255
        case .biPlanar(let luma, let lumaRowBytes, let chroma, let chromaRowBytes, let full):
            let yv = Float(luma.load(fromByteOffset: row * lumaRowBytes + x, as: UInt8.self))
            let c = chroma + (row / 2) * chromaRowBytes + (x / 2) * 2
            let cb = Float(c.load(as: UInt8.self)) - 128, cr = Float(c.load(fromByteOffset: 1, as: UInt8.self)) - 128
            let (y, u, v) = full ? (yv / 255, cb / 255, cr / 255) : ((yv - 16) / 219, cb / 224, cr / 224)
            // BT.601: R = Y + 1.402 Cr, G = Y − 0.344136 Cb − 0.714136 Cr, B = Y + 1.772 Cb.
            let rgb = SIMD4<Float>(y + 1.402 * v, y - 0.344136 * u - 0.714136 * v, y + 1.772 * u, 1)
            return rgb.clamped(lowerBound: .zero, upperBound: .one)
        }
    }

    /// Writes `pixels` (premultiplied, 0…1), `count` of them from column `x` of memory row `row`,
    /// each rounded to the nearest byte. For 4:2:0, luma here; chroma is written by `writeChroma`.
    func write(_ pixels: UnsafeBufferPointer<SIMD4<Float>>, x: Int, row: Int) {
        switch layout {
        case .packed(let base, let rowBytes, let o):
            let p = (base + row * rowBytes + 4 * x).assumingMemoryBound(to: UInt8.self)
            for i in 0..<pixels.count {
                let q = quantized(pixels[i])
                p[4 * i + Int(o[0])] = q.0
                p[4 * i + Int(o[1])] = q.1
                p[4 * i + Int(o[2])] = q.2
                p[4 * i + Int(o[3])] = q.3
            }
        case .biPlanar(let luma, let lumaRowBytes, _, _, let full):
            let p = (luma + row * lumaRowBytes + x).assumingMemoryBound(to: UInt8.self)
            for i in 0..<pixels.count { p[i] = byte(Self.ycbcr(pixels[i], full: full).x) }
        }
    }

    /// The chroma of memory rows `row` and `row + 1` (the second may be missing at the bottom of
    /// an odd height), the mean of each 2×2 block, from column `x` (even).
    func writeChroma(top: UnsafeBufferPointer<SIMD4<Float>>, bottom: UnsafeBufferPointer<SIMD4<Float>>?, x: Int, row: Int) {
        guard case .biPlanar(_, _, let chroma, let chromaRowBytes, let full) = layout else { return }
        let p = (chroma + (row / 2) * chromaRowBytes + x).assumingMemoryBound(to: UInt8.self)
        var i = 0
        while i < top.count {
            var sum = top[i] + (i + 1 < top.count ? top[i + 1] : top[i])
            if let bottom { sum += bottom[i] + (i + 1 < bottom.count ? bottom[i + 1] : bottom[i]) } else { sum += sum }
            let c = Self.ycbcr(sum / 4, full: full)
            p[i] = byte(c.y)
            p[i + 1] = byte(c.z)
            i += 2
        }
    }

    /// BT.601 Y, Cb, Cr as stored values / 255 (video range: Y 16…235, chroma 16…240).
    static func ycbcr(_ p: SIMD4<Float>, full: Bool) -> SIMD3<Float> {
        let r = min(max(p.x, 0), 1), g = min(max(p.y, 0), 1), b = min(max(p.z, 0), 1)
        let y = 0.299 * r + 0.587 * g + 0.114 * b
        let cb = (b - y) / 1.772, cr = (r - y) / 1.402
        return full ? SIMD3(y, cb + 128 / 255, cr + 128 / 255) : SIMD3((16 + 219 * y) / 255, (128 + 224 * cb) / 255, (128 + 224 * cr) / 255)
    }

    /// NaN is 0: nothing here traps on what a filter computed.
    @inline(__always) private func byte(_ v: Float) -> UInt8 { v > 0 ? UInt8(min(v, 1) * 255 + 0.5) : 0 }

    @inline(__always) private func quantized(_ p: SIMD4<Float>) -> (UInt8, UInt8, UInt8, UInt8) {
        let q = p.replacing(with: 0, where: .!(p .> 0)).replacing(with: 1, where: p .> 1) * 255 + 0.5
        return (UInt8(q.x), UInt8(q.y), UInt8(q.z), UInt8(q.w))
    }
}
