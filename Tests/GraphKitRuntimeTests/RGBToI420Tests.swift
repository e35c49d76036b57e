import Testing
import CGraphKitGlue

/// The kernel of `gkrgbtoi420` (CGraphKitGlue/convert.c), against the same arithmetic in
/// double precision: every luma sample and every chroma sample (the mean of its 2×2 block)
/// within one step of the exact value rounded, for each matrix, both ranges, each byte order,
/// odd sizes and padded rows.
@Suite struct RGBToI420Tests {
    struct Matrix { var name: String; var kr: Double; var kb: Double }
    static let matrices = [Matrix(name: "BT.601", kr: 0.299, kb: 0.114), Matrix(name: "BT.709", kr: 0.2126, kb: 0.0722),
                           Matrix(name: "BT.2020", kr: 0.2627, kb: 0.0593)]
    /// Byte offsets of (R, G, B) in BGRA/BGRx, RGBA/RGBx, and the alpha-first orders.
    static let orders: [(r: Int32, g: Int32, b: Int32)] = [(2, 1, 0), (0, 1, 2), (3, 2, 1), (1, 2, 3)]

    @Test(arguments: [false, true])
    func everySampleIsTheExactValueWithinOneStep(fullRange: Bool) {
        for m in Self.matrices {
            for order in Self.orders {
                for (w, h, padding) in [(1, 1, 0), (2, 2, 0), (5, 3, 12), (33, 7, 4), (64, 4, 0)] {
                    check(m, order, fullRange: fullRange, width: w, height: h, padding: padding)
                }
            }
        }
    }

    func check(_ m: Matrix, _ o: (r: Int32, g: Int32, b: Int32), fullRange: Bool, width w: Int, height h: Int, padding: Int) {
        var plan = gk_rgb_to_i420_plan()
        gk_rgb_to_i420_plan_make(&plan, m.kr, m.kb, fullRange ? 1 : 0, o.r, o.g, o.b)
        let stride = w * 4 + padding
        // Extremes first (black, white, primaries), then a spread.
        var src = [UInt8](repeating: 0, count: stride * h)
        for y in 0..<h {
            for x in 0..<w {
                for c in 0..<4 {
                    let i = (y * w + x) * 4 + c
                    src[y * stride + x * 4 + c] = i < 24 ? [0, 0, 0, 0, 255, 255, 255, 255, 255, 0, 0, 0, 0, 255, 0, 0, 0, 0, 255, 0, 128, 64, 200, 9][i]
                                                         : UInt8(truncatingIfNeeded: (i &* 2_654_435_761) >> 11)
                }
            }
        }
        let cw = (w + 1) / 2, ch = (h + 1) / 2
        var y = [UInt8](repeating: 0, count: w * h), u = [UInt8](repeating: 0, count: cw * ch), v = u
        y.withUnsafeMutableBufferPointer { yp in
            u.withUnsafeMutableBufferPointer { up in
                v.withUnsafeMutableBufferPointer { vp in
                    gk_rgb_to_i420(&plan, src, Int32(stride), Int32(w), Int32(h), yp.baseAddress, Int32(w), up.baseAddress, Int32(cw), vp.baseAddress, Int32(cw))
                }
            }
        }
        let kg = 1 - m.kr - m.kb
        let ys = fullRange ? 1.0 : 219.0 / 255, cs = fullRange ? 1.0 : 224.0 / 255, yo = fullRange ? 0.0 : 16
        func rgb(_ x: Int, _ yy: Int) -> (Double, Double, Double) {
            let p = yy * stride + x * 4
            return (Double(src[p + Int(o.r)]), Double(src[p + Int(o.g)]), Double(src[p + Int(o.b)]))
        }
        var worst = (y: 0, c: 0)
        for yy in 0..<h {
            for x in 0..<w {
                let (r, g, b) = rgb(x, yy)
                let exact = yo + ys * (m.kr * r + kg * g + m.kb * b)
                worst.y = max(worst.y, abs(Int(y[yy * w + x]) - Int(exact.rounded())))
            }
        }
        for cy in 0..<ch {
            for cx in 0..<cw {
                // The block's mean; an odd edge repeats its last column or row.
                var (r, g, b) = (0.0, 0.0, 0.0)
                for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
                    let p = rgb(min(2 * cx + dx, w - 1), min(2 * cy + dy, h - 1))
                    r += p.0 / 4
                    g += p.1 / 4
                    b += p.2 / 4
                }
                let luma = m.kr * r + kg * g + m.kb * b
                let cb = 128 + cs * (b - luma) / (2 * (1 - m.kb)), cr = 128 + cs * (r - luma) / (2 * (1 - m.kr))
                worst.c = max(worst.c, abs(Int(u[cy * cw + cx]) - Int(min(255, max(0, cb)).rounded())),
                              abs(Int(v[cy * cw + cx]) - Int(min(255, max(0, cr)).rounded())))
            }
        }
        #expect(worst.y <= 1 && worst.c <= 1, "\(m.name) \(fullRange ? "full" : "limited") \(o) \(w)x\(h)+\(padding): luma off by \(worst.y), chroma by \(worst.c)")
    }
}
