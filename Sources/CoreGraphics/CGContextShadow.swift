import Foundation
import CCairo

// CGContext's shadows, as CoreGraphics' `setShadow(offset:blur:color:)`. Every drawing call goes
// through `touching` (CGContextDrawing.swift) with its shape: a function that draws what the call
// draws into any Cairo context set up as the context's own is. With a shadow set, that shape is
// drawn first into an alpha surface of its own (without the clip, as Apple's: the "inner shadow"
// recipe, which clips to a shape and fills around it, shows only the shadow), blurred, and painted
// in the shadow's colour at the offset through the clip; then the call draws as it would have.
//
//     shape ──► A8 surface (what can reach the clip: its box less the offset, plus the blur, within
//               the shape's own box plus the blur; 1 / (sigma / 4) the size past sigma 8)
//           ──► separable Gaussian blur (sigma = blur / 2, cut off at 3 sigma; 4 when scaled)
//           ──► shadow colour painted through it, moved by the offset, clipped ──► the call itself

extension CGContext {
    /// A shadow as the graphics state holds it: offset in Apple's device space (y up), blur in
    /// device pixels, colour with alpha above zero.
    struct Shadow {
        var offset: CGSize
        var blur: CGFloat
        var color: CGColor
    }

    /// Shadows for what is drawn next, in Apple's default colour: black at a third alpha.
    public func setShadow(offset: CGSize, blur: CGFloat) {
        setShadow(offset: offset, blur: blur, color: CGColor(gray: 0, alpha: 1.0 / 3))
    }

    /// Shadows for what is drawn next, as CoreGraphics': `offset` in the context's base space
    /// (device pixels, y up: a positive height moves the shadow up; the CTM does not change it),
    /// `blur` how far the shadow's edge spreads, in device pixels: a Gaussian blur of standard
    /// deviation `blur / 2`, so an edge fades over about `blur` pixels and nothing reaches farther
    /// than `1.5 × blur`. A nil colour, or one of alpha 0, turns shadows off; so do non-finite
    /// numbers. Part of the graphics state (``saveGState()``); a negative blur is 0; an offset or
    /// blur past ``shadowLimit`` is that limit.
    ///
    /// Every drawing call casts one (fills, strokes, images, gradients, CoreText's lines) but
    /// ``clear(_:)``. The shadow is the call's drawing without the clip, and the clip then cuts
    /// the shadow as it cuts the drawing. A gradient's shadow takes the clip's rectangles as its
    /// shape (their bounding box where the clip is not made of rectangles).
    public func setShadow(offset: CGSize, blur: CGFloat, color: CGColor?) {
        guard let color, color.clampedRGBA.alpha > 0, offset.width.isFinite, offset.height.isFinite, blur.isFinite else {
            state.shadow = nil
            return
        }
        let limit = Self.shadowLimit
        func clamped(_ v: CGFloat) -> CGFloat { min(limit, max(-limit, v)) }
        state.shadow = Shadow(offset: CGSize(width: clamped(offset.width), height: clamped(offset.height)),
                              blur: min(limit, max(0, blur)), color: color)
    }

    /// The largest shadow offset (each way) and blur, 2^24 device pixels: farther than any shape
    /// Cairo draws (its coordinates end near ±8.4 million) can be moved into a context (at most
    /// 32,767 pixels a side), so no picture changes; it keeps the arithmetic in range.
    static let shadowLimit: CGFloat = 16_777_216

    /// Past this standard deviation (in device pixels) a shadow is drawn and blurred smaller.
    static let smallSigma = 8.0

    /// A shape's shadow, blurred: an A8 surface whose pixel (0, 0) goes at device (`x`, `y`)
    /// (Cairo's y-down device space), each of its pixels `scale` device pixels a side, and the
    /// device pixels it can change.
    final class ShadowMask {
        let surface: OpaquePointer
        let x: Double, y: Double, scale: Double
        let box: (Int, Int, Int, Int)
        init(surface: OpaquePointer, x: Double, y: Double, scale: Double, box: (Int, Int, Int, Int)) {
            (self.surface, self.x, self.y, self.scale, self.box) = (surface, x, y, scale, box)
        }
        deinit { cairo_surface_destroy(surface) }
    }

    /// The current shadow of `shape` (which draws into the Cairo context it is given, set up as
    /// ``cr`` is: matrix, path, line, source), or nil when there is none or it cannot reach the
    /// clip. `reach` is the device box (x0, y0, x1, y1) the shape can touch without the clip
    /// (nil: anywhere); only the part of it that can cast onto the clip is drawn and blurred.
    ///
    /// A blur of standard deviation up to ``smallSigma`` is exact (a Gaussian cut off at 3
    /// sigma); past it, the shape is drawn `sigma / 4` times smaller, blurred there with sigma 4
    /// and scaled back up (bilinear), so the work and memory do not grow with the blur.
    func shadowMask(of shape: (OpaquePointer) -> Void, reach: (Double, Double, Double, Double)?) -> ShadowMask? {
        guard let shadow = state.shadow, cairo_get_operator(cr) != CAIRO_OPERATOR_CLEAR else { return nil }
        let sigma = Double(shadow.blur) / 2
        let r = sigma > 0 ? (3 * sigma).rounded(.up) : 0
        let (dx, dy) = (Double(shadow.offset.width), -Double(shadow.offset.height))
        // What is seen: the clip within the surface, in device pixels.
        let clip = deviceBox { cr, x1, y1, x2, y2 in cairo_clip_extents(cr, x1, y1, x2, y2) }
        let (vx0, vy0) = (max(0, clip.0), max(0, clip.1))
        let (vx1, vy1) = (min(Double(width), clip.2), min(Double(height), clip.3))
        guard vx1 > vx0, vy1 > vy0 else { return nil }
        // The shape there can cast what is seen: that box less the offset, plus the blur's
        // reach; and only where the shape is, plus the reach (and a pixel of antialiasing).
        var (x0, y0, x1, y1) = (vx0 - r - dx, vy0 - r - dy, vx1 + r - dx, vy1 + r - dy)
        if let reach {
            (x0, y0) = (max(x0, reach.0 - r - 1), max(y0, reach.1 - r - 1))
            (x1, y1) = (min(x1, reach.2 + r + 1), min(y1, reach.3 + r + 1))
        }
        guard [x0, y0, x1, y1].allSatisfy(\.isFinite), x1 > x0, y1 > y0 else { return nil }
        // Its pixels: device pixels, or `scale` of them a side for a large blur.
        let scale = sigma > Self.smallSigma ? sigma / 4 : 1
        let (px0, py0) = ((x0 / scale).rounded(.down), (y0 / scale).rounded(.down))
        let (px1, py1) = ((x1 / scale).rounded(.up), (y1 / scale).rounded(.up))
        guard px1 > px0, py1 > py0, px1 - px0 <= 32767, py1 - py0 <= 32767,
              let alpha = cairo_image_surface_create(CAIRO_FORMAT_A8, Int32(px1 - px0), Int32(py1 - py0)) else { return nil }
        guard cairo_surface_status(alpha) == CAIRO_STATUS_SUCCESS else {
            cairo_surface_destroy(alpha)
            return nil
        }
        cairo_surface_set_device_scale(alpha, 1 / scale, 1 / scale)
        cairo_surface_set_device_offset(alpha, -px0, -py0)
        if let s = cairo_create(alpha) {
            copyDrawingState(to: s)
            shape(s)
            cairo_destroy(s)
        }
        cairo_surface_flush(alpha)
        cairo_surface_set_device_offset(alpha, 0, 0)
        cairo_surface_set_device_scale(alpha, 1, 1)
        guard let ink = Self.inkBox(alpha) else {
            cairo_surface_destroy(alpha)
            return nil
        }
        let (w, h) = (Int(px1 - px0), Int(py1 - py0))
        let small = sigma / scale, radius = small > 0 ? Int((3 * small).rounded(.up)) : 0
        let blurred = (max(0, ink.0 - radius), max(0, ink.1 - radius), min(w, ink.2 + radius), min(h, ink.3 + radius))
        if radius > 0 { Self.blur(alpha, blurred, sigma: small, radius: radius) }
        cairo_surface_mark_dirty(alpha)
        // The device pixels it paints: the blurred box at the offset (a fractional offset
        // reaches one more pixel; a scaled mask's bilinear filter one more of its pixels), within
        // the surface.
        let (ox, oy) = (px0 * scale + dx, py0 * scale + dy)
        let more = scale > 1 ? 1.0 : 0
        let bx0 = Int((ox + (Double(blurred.0) - more) * scale).rounded(.down))
        let by0 = Int((oy + (Double(blurred.1) - more) * scale).rounded(.down))
        let bx1 = Int((ox + (Double(blurred.2) + more) * scale).rounded(.up))
        let by1 = Int((oy + (Double(blurred.3) + more) * scale).rounded(.up))
        return ShadowMask(surface: alpha, x: ox, y: oy, scale: scale,
                          box: (max(0, bx0), max(0, by0), min(width, bx1), min(height, by1)))
    }

    /// Paints `mask` in the shadow's colour onto ``cr``, through its clip and with its operator.
    func paintShadow(_ mask: ShadowMask) {
        guard let shadow = state.shadow else { return }
        let c = shadow.color.clampedRGBA
        cairo_save(cr)
        cairo_identity_matrix(cr)
        cairo_set_source_rgba(cr, c.red, c.green, c.blue, c.alpha)
        if mask.scale == 1 {
            cairo_mask_surface(cr, mask.surface, mask.x, mask.y)
        } else if let pattern = cairo_pattern_create_for_surface(mask.surface) {
            // Device (x, y) is the mask's ((x − mask.x) / scale, (y − mask.y) / scale).
            var m = cairo_matrix_t(xx: 1 / mask.scale, yx: 0, xy: 0, yy: 1 / mask.scale,
                                   x0: -mask.x / mask.scale, y0: -mask.y / mask.scale)
            cairo_pattern_set_matrix(pattern, &m)
            cairo_pattern_set_filter(pattern, CAIRO_FILTER_BILINEAR)
            cairo_mask(cr, pattern)
            cairo_pattern_destroy(pattern)
        }
        cairo_restore(cr)
    }

    /// Gives `s` what of ``cr``'s state drawing reads: matrix, current path, line attributes,
    /// fill rule, tolerance, antialias and source (the clip and operator stay its own).
    func copyDrawingState(to s: OpaquePointer) {
        var m = cairo_matrix_t()
        cairo_get_matrix(cr, &m)
        cairo_set_matrix(s, &m)
        if let path = cairo_copy_path(cr) {
            if path.pointee.status == CAIRO_STATUS_SUCCESS { cairo_append_path(s, path) }
            cairo_path_destroy(path)
        }
        cairo_set_fill_rule(s, cairo_get_fill_rule(cr))
        cairo_set_line_width(s, cairo_get_line_width(cr))
        cairo_set_line_cap(s, cairo_get_line_cap(cr))
        cairo_set_line_join(s, cairo_get_line_join(cr))
        cairo_set_miter_limit(s, cairo_get_miter_limit(cr))
        let count = cairo_get_dash_count(cr)
        if count > 0 {
            var dashes = [Double](repeating: 0, count: Int(count)), phase = 0.0
            cairo_get_dash(cr, &dashes, &phase)
            cairo_set_dash(s, dashes, count, phase)
        }
        cairo_set_tolerance(s, cairo_get_tolerance(cr))
        cairo_set_antialias(s, cairo_get_antialias(cr))
        cairo_set_source(s, cairo_get_source(cr))
    }

    /// Replaces the clip of `s` (a context set up by ``copyDrawingState(to:)``) by ``cr``'s: its
    /// rectangles, or their bounding box when it is not made of rectangles. For the calls whose
    /// shape is the clip (gradients).
    func copyClipRectangles(to s: OpaquePointer) {
        if let list = cairo_copy_clip_rectangle_list(cr) {
            defer { cairo_rectangle_list_destroy(list) }
            if list.pointee.status == CAIRO_STATUS_SUCCESS {
                cairo_new_path(s)
                for i in 0..<Int(list.pointee.num_rectangles) {
                    let r = list.pointee.rectangles[i]
                    cairo_rectangle(s, r.x, r.y, r.width, r.height)
                }
                cairo_clip(s)
                return
            }
        }
        var (x1, y1, x2, y2) = (0.0, 0.0, 0.0, 0.0)
        cairo_clip_extents(cr, &x1, &y1, &x2, &y2)
        cairo_new_path(s)
        cairo_rectangle(s, x1, y1, x2 - x1, y2 - y1)
        cairo_clip(s)
    }

    /// The box of the pixels of an A8 surface that are not zero (x0, y0, x1, y1), or nil.
    private static func inkBox(_ surface: OpaquePointer) -> (Int, Int, Int, Int)? {
        let data = cairo_image_surface_get_data(surface)!, stride = Int(cairo_image_surface_get_stride(surface))
        let (w, h) = (Int(cairo_image_surface_get_width(surface)), Int(cairo_image_surface_get_height(surface)))
        var (x0, y0, x1, y1) = (w, h, 0, 0)
        for y in 0..<h {
            let row = data + y * stride
            var first = -1, last = -1
            for x in 0..<w where row[x] != 0 {
                if first < 0 { first = x }
                last = x
            }
            guard first >= 0 else { continue }
            (x0, x1) = (min(x0, first), max(x1, last + 1))
            (y0, y1) = (min(y0, y), y + 1)
        }
        return x1 > x0 ? (x0, y0, x1, y1) : nil
    }

    /// A separable Gaussian blur (standard deviation `sigma`, weights cut off past `radius`
    /// pixels and normalised, so the total alpha is kept) of `box` of an A8 surface, in place.
    /// Outside the box the surface is zero (the box reaches `radius` past the ink).
    private static func blur(_ surface: OpaquePointer, _ box: (Int, Int, Int, Int), sigma: Double, radius: Int) {
        let data = cairo_image_surface_get_data(surface)!, stride = Int(cairo_image_surface_get_stride(surface))
        let (x0, y0, w, h) = (box.0, box.1, box.2 - box.0, box.3 - box.1)
        guard w > 0, h > 0 else { return }
        var weights = (-radius...radius).map { k in Float(exp(-Double(k * k) / (2 * sigma * sigma))) }
        let total = weights.reduce(0, +)
        weights = weights.map { $0 / total }
        var across = [Float](repeating: 0, count: w * h)
        across.withUnsafeMutableBufferPointer { tmp in
            weights.withUnsafeBufferPointer { k in
                for y in 0..<h {
                    let row = data + (y0 + y) * stride + x0
                    for x in 0..<w {
                        var sum: Float = 0
                        for i in max(0, x - radius)...min(w - 1, x + radius) { sum += Float(row[i]) * k[i - x + radius] }
                        tmp[y * w + x] = sum
                    }
                }
                for y in 0..<h {
                    let row = data + (y0 + y) * stride + x0
                    let (lo, hi) = (max(0, y - radius), min(h - 1, y + radius))
                    for x in 0..<w {
                        var sum: Float = 0
                        for j in lo...hi { sum += tmp[j * w + x] * k[j - y + radius] }
                        row[x] = UInt8(min(255, sum.rounded()))
                    }
                }
            }
        }
    }
}
