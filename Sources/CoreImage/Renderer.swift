import CoreVideo

/// A rectangle of whole pixels in CoreImage's coordinates (y up).
struct PixelRect: Equatable {
    var x, y, width, height: Int
    var maxX: Int { x + width }
    var maxY: Int { y + height }
    var count: Int { width * height }
    var isEmpty: Bool { width <= 0 || height <= 0 }

    func intersection(_ o: PixelRect) -> PixelRect {
        let x0 = max(x, o.x), y0 = max(y, o.y), x1 = min(maxX, o.maxX), y1 = min(maxY, o.maxY)
        return PixelRect(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    /// The pixels whose centres are inside `r` (none for a null rectangle); coordinates past
    /// ±2⁴⁰ are held there, so an infinite rectangle is a very large one.
    init(centresIn r: CGRect) {
        guard !r.isNull, !r.isEmpty else { self.init(x: 0, y: 0, width: 0, height: 0); return }
        func held(_ v: CGFloat) -> Int { Int(max(-0x1p40, min(0x1p40, (v - 0.5).rounded(.up)))) }
        let x0 = held(r.minX), x1 = held(r.maxX), y0 = held(r.minY), y1 = held(r.maxY)
        self.init(x: x0, y: y0, width: max(0, x1 - x0), height: max(0, y1 - y0))
    }

    init(x: Int, y: Int, width: Int, height: Int) { (self.x, self.y, self.width, self.height) = (x, y, width, height) }
}

/// Premultiplied RGBA floats of a rectangle, its bottom row first.
struct Tile {
    let rect: PixelRect
    var pixels: [SIMD4<Float>]

    init(_ rect: PixelRect, filling value: SIMD4<Float> = .zero) {
        self.rect = rect
        pixels = [SIMD4<Float>](repeating: value, count: max(0, rect.count))
    }

    subscript(x: Int, y: Int) -> SIMD4<Float> {
        get { pixels[(y - rect.y) * rect.width + (x - rect.x)] }
        set { pixels[(y - rect.y) * rect.width + (x - rect.x)] = newValue }
    }

    /// The value at (x, y), transparent outside.
    func at(_ x: Int, _ y: Int) -> SIMD4<Float> {
        x >= rect.x && x < rect.maxX && y >= rect.y && y < rect.maxY ? self[x, y] : .zero
    }
}

/// Evaluates a recipe over a rectangle, in premultiplied single-precision floats: the general
/// path of ``CIContext`` (a chain of colour filters straight from a buffer goes through the C
/// kernel instead). Nil when a rectangle it would need is larger than ``largestTile``.
struct Renderer {
    /// The pixel buffers the recipe reads, locked, by identity.
    let sources: [ObjectIdentifier: PixelMemory]

    /// 2²⁴ pixels (256 MB of floats): no intermediate is larger.
    static let largestTile = 1 << 24

    func evaluate(_ recipe: Recipe, _ rect: PixelRect) -> Tile? {
        guard !rect.isEmpty else { return Tile(PixelRect(x: rect.x, y: rect.y, width: 0, height: 0)) }
        guard rect.width <= Self.largestTile, rect.height <= Self.largestTile, rect.count <= Self.largestTile else { return nil }
        switch recipe {
        case .empty: return Tile(rect)
        case .color(let c): return Tile(rect, filling: c)
        case .pixels(let pb): return pixels(pb, rect)
        case .matrix(let inner, let m):
            guard var t = evaluate(inner, rect) else { return nil }
            let f = FloatMatrix(m)
            for i in t.pixels.indices { t.pixels[i] = f.apply(t.pixels[i]) }
            return t
        case .transform(let inner, let transform): return self.transform(inner, transform, rect)
        case .crop(let inner, let r):
            let inside = rect.intersection(PixelRect(centresIn: r.standardized))
            var out = Tile(rect)
            guard !inside.isEmpty else { return out }
            guard let t = evaluate(inner, inside) else { return nil }
            for y in inside.y..<inside.maxY { for x in inside.x..<inside.maxX { out[x, y] = t[x, y] } }
            return out
        case .clamp(let inner, let e):
            let area = PixelRect(centresIn: e)
            guard !area.isEmpty else { return Tile(rect) }
            func cx(_ x: Int) -> Int { min(max(x, area.x), area.maxX - 1) }
            func cy(_ y: Int) -> Int { min(max(y, area.y), area.maxY - 1) }
            let need = PixelRect(x: cx(rect.x), y: cy(rect.y), width: cx(rect.maxX - 1) - cx(rect.x) + 1,
                                 height: cy(rect.maxY - 1) - cy(rect.y) + 1)
            guard let t = evaluate(inner, need) else { return nil }
            var out = Tile(rect)
            for y in rect.y..<rect.maxY { for x in rect.x..<rect.maxX { out[x, y] = t[cx(x), cy(y)] } }
            return out
        case .blur(let inner, let sigma): return blur(inner, sigma, rect)
        case .over(let top, let bottom):
            guard var a = evaluate(top, rect), let b = evaluate(bottom, rect) else { return nil }
            for i in a.pixels.indices { a.pixels[i] += b.pixels[i] * (1 - a.pixels[i].w) }
            return a
        }
    }

    private func pixels(_ pb: CVPixelBuffer, _ rect: PixelRect) -> Tile? {
        var out = Tile(rect)
        guard let memory = sources[ObjectIdentifier(pb)] else { return out }
        let inside = rect.intersection(PixelRect(x: 0, y: 0, width: memory.width, height: memory.height))
        guard !inside.isEmpty else { return out }
        out.pixels.withUnsafeMutableBufferPointer { p in
            for y in inside.y..<inside.maxY {
                let start = (y - rect.y) * rect.width + (inside.x - rect.x)
                memory.read(row: memory.height - 1 - y, x: inside.x, count: inside.width, into: p.baseAddress! + start)
            }
        }
        return out
    }

    /// Each output pixel's centre taken back through the inverse transform and sampled
    /// bilinearly between the four nearest source pixels (transparent outside the source).
    private func transform(_ inner: Recipe, _ t: CGAffineTransform, _ rect: PixelRect) -> Tile? {
        guard t.a * t.d - t.b * t.c != 0 else { return Tile(rect) }
        let inv = t.inverted()
        let back = CGRect(x: rect.x, y: rect.y, width: rect.width, height: rect.height).applying(inv).insetBy(dx: -1, dy: -1)
        var need = PixelRect(centresIn: back)
        let e = inner.extent
        if !e.isInfinite { need = need.intersection(PixelRect(centresIn: e.insetBy(dx: -1, dy: -1))) }
        var out = Tile(rect)
        guard !need.isEmpty else { return out }
        guard let src = evaluate(inner, need) else { return nil }
        let (a, b, c, d, tx, ty) = (Double(inv.a), Double(inv.b), Double(inv.c), Double(inv.d), Double(inv.tx), Double(inv.ty))
        for y in rect.y..<rect.maxY {
            let py = Double(y) + 0.5
            for x in rect.x..<rect.maxX {
                let px = Double(x) + 0.5
                let sx = a * px + c * py + tx - 0.5, sy = b * px + d * py + ty - 0.5
                guard sx > -2, sy > -2, sx < Double(need.maxX + 1), sy < Double(need.maxY + 1) else { continue }
                let x0 = Int(sx.rounded(.down)), y0 = Int(sy.rounded(.down))
                let fx = Float(sx - Double(x0)), fy = Float(sy - Double(y0))
                let top = src.at(x0, y0 + 1) * (1 - fx) + src.at(x0 + 1, y0 + 1) * fx
                let bottom = src.at(x0, y0) * (1 - fx) + src.at(x0 + 1, y0) * fx
                out[x, y] = fy == 0 ? bottom : bottom * (1 - fy) + top * fy
            }
        }
        return out
    }

    /// The normalized weights of a Gaussian of `sigma` from −reach to +reach.
    static func gaussianWeights(sigma: Double) -> [Float] {
        let s = min(sigma, Recipe.largestSigma), n = Recipe.blurReach(s)
        let w = (-n...n).map { exp(-Double($0 * $0) / (2 * s * s)) }
        let sum = w.reduce(0, +)
        return w.map { Float($0 / sum) }
    }

    /// Separable: rows, then columns, over the input grown by the blur's reach.
    private func blur(_ inner: Recipe, _ sigma: Double, _ rect: PixelRect) -> Tile? {
        let n = Recipe.blurReach(sigma), w = Self.gaussianWeights(sigma: sigma)
        let grown = PixelRect(x: rect.x - n, y: rect.y - n, width: rect.width + 2 * n, height: rect.height + 2 * n)
        guard grown.count <= Self.largestTile, let src = evaluate(inner, grown) else { return nil }
        var rows = Tile(PixelRect(x: rect.x, y: grown.y, width: rect.width, height: grown.height))
        var out = Tile(rect)
        let taps = w.count, width = rect.width
        w.withUnsafeBufferPointer { w in
            src.pixels.withUnsafeBufferPointer { s in
                rows.pixels.withUnsafeMutableBufferPointer { r in
                    // Row by row: output x of source row y is Σ w[k] · source (x + k) (the source
                    // starts n pixels to the left).
                    for y in 0..<grown.height {
                        let from = s.baseAddress! + y * grown.width, to = r.baseAddress! + y * width
                        for x in 0..<width {
                            var sum = SIMD4<Float>.zero
                            for k in 0..<taps { sum += from[x + k] * w[k] }
                            to[x] = sum
                        }
                    }
                }
            }
            rows.pixels.withUnsafeBufferPointer { r in
                out.pixels.withUnsafeMutableBufferPointer { o in
                    // Then columns: output row y is Σ w[k] · row (y + k) of the row pass.
                    for y in 0..<rect.height {
                        let to = o.baseAddress! + y * width
                        for k in 0..<taps {
                            let from = r.baseAddress! + (y + k) * width, weight = w[k]
                            for x in 0..<width { to[x] += from[x] * weight }
                        }
                    }
                }
            }
        }
        return out
    }
}

/// A ColorMatrix as four columns of floats, for a pixel at a time.
struct FloatMatrix {
    let r, g, b, a, bias: SIMD4<Float>

    init(_ m: ColorMatrix) {
        func column(_ j: Int) -> SIMD4<Float> { SIMD4(Float(m.m[j]), Float(m.m[5 + j]), Float(m.m[10 + j]), Float(m.m[15 + j])) }
        (r, g, b, a, bias) = (column(0), column(1), column(2), column(3), column(4))
    }

    /// Unpremultiplied, through the matrix, clamped to 0…1 (NaN to 0), premultiplied again.
    @inline(__always) func apply(_ p: SIMD4<Float>) -> SIMD4<Float> {
        let s: Float = p.w > 0 ? 1 / p.w : 0
        var o = bias + r * (p.x * s) + g * (p.y * s) + b * (p.z * s) + a * p.w
        o = o.replacing(with: 0, where: .!(o .> 0)).replacing(with: 1, where: o .> 1)
        return SIMD4(o.x * o.w, o.y * o.w, o.z * o.w, o.w)
    }
}
