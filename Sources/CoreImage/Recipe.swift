import CoreVideo

/// What a ``CIImage`` is made of: a tree of sources and operations, evaluated only when a
/// ``CIContext`` renders it (Renderer.swift). Values are premultiplied RGBA in 0…1.
indirect enum Recipe: Sendable {
    /// Nothing: transparent everywhere, an empty extent.
    case empty
    /// One premultiplied colour everywhere (an infinite extent).
    case color(SIMD4<Float>)
    /// A pixel buffer's stored values, its first memory row at the top (extent 0, 0, width, height).
    case pixels(CVPixelBuffer)
    /// A colour filter (or a chain of them, fused into one matrix).
    case matrix(Recipe, ColorMatrix)
    case transform(Recipe, CGAffineTransform)
    /// Transparent outside the rectangle.
    case crop(Recipe, CGRect)
    /// The edge pixels of the rectangle repeated outwards forever.
    case clamp(Recipe, CGRect)
    /// A Gaussian blur of this standard deviation, in pixels.
    case blur(Recipe, Double)
    /// The first over the second (source-over, premultiplied).
    case over(Recipe, Recipe)

    /// Where the image is not transparent, as CoreImage's `extent`.
    var extent: CGRect {
        switch self {
        case .empty: return .null
        case .color: return .infinite
        case .pixels(let pb): return CGRect(x: 0, y: 0, width: CVPixelBufferGetWidth(pb), height: CVPixelBufferGetHeight(pb))
        case .matrix(let r, _): return r.extent
        case .transform(let r, let t):
            let e = r.extent
            if e.isNull || e.isInfinite { return e }
            let out = e.applying(t)
            return out.minX.isFinite && out.maxX.isFinite && out.minY.isFinite && out.maxY.isFinite ? out : .infinite
        case .crop(let r, let rect): return r.extent.intersection(rect.standardized)
        case .clamp(let r, _): return r.extent.isNull ? .null : .infinite
        case .blur(let r, let sigma):
            let e = r.extent
            if e.isNull || e.isInfinite { return e }
            let grow = CGFloat(Recipe.blurReach(sigma))
            return e.insetBy(dx: -grow, dy: -grow)
        case .over(let a, let b): return a.extent.union(b.extent)
        }
    }

    /// How far a blur of `sigma` reaches: ⌈3σ⌉ pixels each way (its weights beyond are below
    /// 1.1 % of the centre's, and dropped).
    static func blurReach(_ sigma: Double) -> Int {
        sigma > 0 ? Int((3 * min(sigma, Recipe.largestSigma)).rounded(.up)) : 0
    }

    /// Blurs wider than this are done with this: the reach stays a few thousand pixels.
    static let largestSigma = 1000.0

    /// This recipe with a colour matrix applied: fused into a matrix directly below when that
    /// one keeps alpha (so a chain of colour filters is one matrix, clamped once).
    func applying(_ m: ColorMatrix) -> Recipe {
        if case .matrix(let inner, let first) = self, first.keepsAlpha { return .matrix(inner, m.after(first)) }
        return .matrix(self, m)
    }
}

/// A colour filter: 4 rows (outputs R, G, B, A) of 5, the weights of unpremultiplied R, G, B, A
/// in 0…1 and a bias, as CIColorMatrix's vectors.
struct ColorMatrix: Sendable, Equatable {
    var m: [Double]

    static let identity = ColorMatrix(m: [1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0])

    /// From four 4-vectors and a bias (CIColorMatrix's inputRVector … inputBiasVector).
    init(r: [Double], g: [Double], b: [Double], a: [Double], bias: [Double]) {
        m = [r[0], r[1], r[2], r[3], bias[0], g[0], g[1], g[2], g[3], bias[1],
             b[0], b[1], b[2], b[3], bias[2], a[0], a[1], a[2], a[3], bias[3]]
    }

    init(m: [Double]) { self.m = m }

    /// A 3×3 matrix on R, G, B with a bias on each, alpha kept.
    init(rgb w: [Double], bias: [Double]) {
        m = [w[0], w[1], w[2], 0, bias[0], w[3], w[4], w[5], 0, bias[1], w[6], w[7], w[8], 0, bias[2], 0, 0, 0, 1, 0]
    }

    /// The alpha row is (0, 0, 0, 1) with no bias.
    var keepsAlpha: Bool { Array(m[15...]) == [0, 0, 0, 1, 0] }

    /// `first`, then this one, as one matrix.
    func after(_ first: ColorMatrix) -> ColorMatrix {
        var out = [Double](repeating: 0, count: 20)
        for c in 0..<4 {
            for j in 0..<4 { out[5 * c + j] = (0..<4).reduce(0) { $0 + m[5 * c + $1] * first.m[5 * $1 + j] } }
            out[5 * c + 4] = (0..<4).reduce(m[5 * c + 4]) { $0 + m[5 * c + $1] * first.m[5 * $1 + 4] }
        }
        return ColorMatrix(m: out)
    }

    /// One premultiplied pixel: unpremultiplied, through the matrix, clamped to 0…1,
    /// premultiplied again, as CIColorMatrix.
    func apply(_ p: SIMD4<Float>) -> SIMD4<Float> {
        let a = Double(p.w), s = a > 0 ? 1 / a : 0
        let u = [Double(p.x) * s, Double(p.y) * s, Double(p.z) * s, a]
        var o = [Double](repeating: 0, count: 4)
        for c in 0..<4 {
            let x = m[5 * c + 4] + u[0] * m[5 * c] + u[1] * m[5 * c + 1] + u[2] * m[5 * c + 2] + u[3] * m[5 * c + 3]
            o[c] = x.isNaN ? 0 : min(1, max(0, x))
        }
        return SIMD4(Float(o[0] * o[3]), Float(o[1] * o[3]), Float(o[2] * o[3]), Float(o[3]))
    }
}
