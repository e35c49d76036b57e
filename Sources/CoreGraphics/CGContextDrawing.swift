import Foundation
import CCairo

// CGContext's paths, fills, strokes, clips and images, drawn by Cairo in user space (Apple's:
// Cairo's matrix holds the flip, CGContext.swift). Every drawing call goes through `touching`,
// which keeps the caller's memory the picture when Cairo draws in a surface of its own.

extension CGContext {
    // MARK: The current path

    public func beginPath() { cairo_new_path(cr) }
    public func move(to point: CGPoint) { sink.pathMove(to: point) }
    public func addLine(to point: CGPoint) { sink.pathLine(to: point) }
    public func addLines(between points: [CGPoint]) {
        for (i, p) in points.enumerated() { i == 0 ? sink.pathMove(to: p) : sink.pathLine(to: p) }
    }
    public func addRect(_ rect: CGRect) { sink.buildRect(rect, .identity) }
    public func addRects(_ rects: [CGRect]) { rects.forEach { sink.buildRect($0, .identity) } }
    public func addEllipse(in rect: CGRect) { sink.buildEllipse(rect, .identity) }
    public func addArc(center: CGPoint, radius: CGFloat, startAngle: CGFloat, endAngle: CGFloat, clockwise: Bool) {
        sink.buildArc(center: center, radius: radius, from: startAngle, to: endAngle, clockwise: clockwise, .identity)
    }
    public func addCurve(to end: CGPoint, control1: CGPoint, control2: CGPoint) { sink.pathCurve(to: end, control1, control2) }
    public func addQuadCurve(to end: CGPoint, control: CGPoint) { sink.buildQuadCurve(to: end, control: control) }
    public func addPath(_ path: CGPath) { sink.buildPath(path, .identity) }
    public func closePath() { sink.pathClose() }

    public var isPathEmpty: Bool { cairo_has_current_point(cr) == 0 }
    public var currentPointOfPath: CGPoint { sink.lastPoint ?? .zero }
    /// The current path's bounds in user space, `.null` when it is empty.
    public var boundingBoxOfPath: CGRect {
        guard !isPathEmpty else { return .null }
        var (x1, y1, x2, y2) = (0.0, 0.0, 0.0, 0.0)
        cairo_path_extents(cr, &x1, &y1, &x2, &y2)
        return CGRect(x: x1, y: y1, width: x2 - x1, height: y2 - y1)
    }

    // MARK: Painting the current path (each consumes it, as CoreGraphics)

    public func fillPath(using rule: CGPathFillRule = .winding) { paint(fill: rule, stroke: false) }
    public func strokePath() { paint(fill: nil, stroke: true) }
    public func drawPath(using mode: CGPathDrawingMode) {
        switch mode {
        case .fill: paint(fill: .winding, stroke: false)
        case .eoFill: paint(fill: .evenOdd, stroke: false)
        case .stroke: paint(fill: nil, stroke: true)
        case .fillStroke: paint(fill: .winding, stroke: true)
        case .eoFillStroke: paint(fill: .evenOdd, stroke: true)
        }
    }

    // MARK: Shapes (they leave the current path as it was, as CoreGraphics)

    public func fill(_ rect: CGRect) { fill([rect]) }
    public func fill(_ rects: [CGRect]) { withOwnPath { rects.forEach { sink.buildRect($0, .identity) }; fillPath() } }
    public func fillEllipse(in rect: CGRect) { withOwnPath { sink.buildEllipse(rect, .identity); fillPath() } }
    public func stroke(_ rect: CGRect) { withOwnPath { sink.buildRect(rect, .identity); strokePath() } }
    public func stroke(_ rect: CGRect, width: CGFloat) {
        saveGState(); setLineWidth(width); stroke(rect); restoreGState()
    }
    public func strokeEllipse(in rect: CGRect) { withOwnPath { sink.buildEllipse(rect, .identity); strokePath() } }
    /// Separate segments between each pair of points.
    public func strokeLineSegments(between points: [CGPoint]) {
        withOwnPath {
            for i in stride(from: 0, to: points.count - 1, by: 2) { sink.pathMove(to: points[i]); sink.pathLine(to: points[i + 1]) }
            strokePath()
        }
    }
    /// Makes `rect` transparent (black for a context without alpha), whatever the blend mode.
    public func clear(_ rect: CGRect) {
        withOwnPath {
            cairo_save(cr)
            cairo_set_operator(cr, CAIRO_OPERATOR_CLEAR)
            sink.buildRect(rect, .identity)
            let box = extents(cairo_fill_extents)
            touching(box, shape: nil) { cairo_set_antialias(cr, antialias); cairo_fill(cr) }
            cairo_restore(cr)
        }
    }

    // MARK: Clipping

    /// Intersects the clip with the current path, which it consumes.
    public func clip(using rule: CGPathFillRule = .winding) {
        cairo_set_fill_rule(cr, rule == .evenOdd ? CAIRO_FILL_RULE_EVEN_ODD : CAIRO_FILL_RULE_WINDING)
        cairo_set_antialias(cr, antialias)
        cairo_clip(cr)
    }
    public func clip(to rect: CGRect) { clip(to: [rect]) }
    public func clip(to rects: [CGRect]) { withOwnPath { rects.forEach { sink.buildRect($0, .identity) }; clip() } }
    /// Intersects the clip with `rect` and with `mask` drawn into it as `draw(_:in:)` would: a
    /// gray image's values are coverage (white draws, black does not), another image's alpha is.
    /// Drawing then goes through a Cairo group masked by it, so a blend mode other than normal
    /// blends with transparency inside the group, not with the picture.
    public func clip(to rect: CGRect, mask: CGImage) {
        let r = rect.standardized
        clip(to: r)
        guard r.width > 0, r.height > 0, let image = mask.cairoSurface(),
              let alpha = cairo_image_surface_create(CAIRO_FORMAT_A8, Int32(mask.width), Int32(mask.height)) else { return }
        defer { cairo_surface_destroy(image) }
        let src = cairo_image_surface_get_data(image)!, dst = cairo_image_surface_get_data(alpha)!
        let (ss, ds) = (Int(cairo_image_surface_get_stride(image)), Int(cairo_image_surface_get_stride(alpha)))
        for y in 0..<mask.height {
            let words = UnsafeMutableRawPointer(src + y * ss).assumingMemoryBound(to: UInt32.self)
            for x in 0..<mask.width { dst[y * ds + x] = UInt8(truncatingIfNeeded: words[x] >> (mask.layout.isGray ? 16 : 24)) }
        }
        cairo_surface_mark_dirty(alpha)
        cairo_save(cr)
        cairo_translate(cr, Double(r.minX), Double(r.maxY))
        cairo_scale(cr, Double(r.width) / Double(mask.width), -Double(r.height) / Double(mask.height))
        var m = cairo_matrix_t()
        cairo_get_matrix(cr, &m)
        cairo_restore(cr)
        state.mask = ClipMask(surface: alpha, matrix: m)
    }

    /// The clip's bounds in user space.
    public var boundingBoxOfClipPath: CGRect {
        var (x1, y1, x2, y2) = (0.0, 0.0, 0.0, 0.0)
        cairo_clip_extents(cr, &x1, &y1, &x2, &y2)
        return CGRect(x: x1, y: y1, width: x2 - x1, height: y2 - y1)
    }

    // MARK: Images

    /// Draws `image` scaled into `rect`, upright in Apple's y-up space (its first row at the
    /// top of `rect`), resampled by ``interpolationQuality``.
    public func draw(_ image: CGImage, in rect: CGRect) { draw(image, in: rect, tiled: false) }

    /// Draws `image` at `rect`'s size, repeated over the whole clip, as CoreGraphics'
    /// `draw(_:in:byTiling:)` (false: as ``draw(_:in:)``).
    public func draw(_ image: CGImage, in rect: CGRect, byTiling: Bool) { draw(image, in: rect, tiled: byTiling) }

    private func draw(_ image: CGImage, in rect: CGRect, tiled: Bool) {
        let r = rect.standardized
        guard r.width > 0, r.height > 0, r.width.isFinite, r.height.isFinite, r.minX.isFinite, r.minY.isFinite,
              let source = image.cairoSurface() else { return }
        defer { cairo_surface_destroy(source) }
        withOwnPath {
            cairo_save(cr)
            // The rect clips the image when it is drawn, not before: its shadow is not cut by it.
            // The path (kept in device space by Cairo) is the rect under the caller's matrix.
            let box: (Int, Int, Int, Int)
            var reach: (Double, Double, Double, Double)?
            if tiled {
                box = extents { cr, x1, y1, x2, y2 in cairo_clip_extents(cr, x1, y1, x2, y2) }
            } else {
                sink.buildRect(r, .identity)
                (box, reach) = (extents(cairo_fill_extents), deviceBox(cairo_fill_extents))
            }
            cairo_translate(cr, Double(r.minX), Double(r.maxY))
            cairo_scale(cr, Double(r.width) / Double(image.width), -Double(r.height) / Double(image.height))
            cairo_set_source_surface(cr, source, 0, 0)
            let pattern = cairo_get_source(cr)
            cairo_pattern_set_filter(pattern, interpolationQuality.cairo)
            cairo_pattern_set_extend(pattern, tiled ? CAIRO_EXTEND_REPEAT : CAIRO_EXTEND_PAD)
            let alpha = Double(state.alpha)
            let paint = { (c: OpaquePointer) in
                if !tiled { cairo_clip(c) }
                cairo_paint_with_alpha(c, alpha)
            }
            touching(box, reach: reach, shape: paint) {
                cairo_save(cr)
                paint(cr)
                cairo_restore(cr)
            }
            cairo_restore(cr)
        }
    }

    // MARK: Gradients

    /// Fills the clip with `gradient` along the line from `start` to `end` (colours constant
    /// across it), as CoreGraphics does: only between the two unless `options` extend the end
    /// colours past them. The current path is kept.
    public func drawLinearGradient(_ gradient: CGGradient, start: CGPoint, end: CGPoint, options: CGGradientDrawingOptions) {
        let (dx, dy) = (Double(end.x - start.x), Double(end.y - start.y))
        guard [start.x, start.y, end.x, end.y].allSatisfy(\.isFinite), dx != 0 || dy != 0,
              let pattern = cairo_pattern_create_linear(Double(start.x), Double(start.y), Double(end.x), Double(end.y)) else { return }
        drawGradient(gradient, pattern, options) { before, after in
            // One side extended: the pattern pads both, so the other is cut off by a half-plane
            // (a rectangle far larger than any surface, within Cairo's fixed-point range of
            // about ±8 million) at its end of the line.
            guard before != after else { return }
            let length = (dx * dx + dy * dy).squareRoot(), far = 1e6
            let (ux, uy) = (dx / length, dy / length)
            let (bx, by) = after ? (Double(start.x), Double(start.y)) : (Double(end.x), Double(end.y))
            let toward = after ? far : -far
            cairo_move_to(cr, bx - uy * far, by + ux * far)
            cairo_line_to(cr, bx + uy * far, by - ux * far)
            cairo_line_to(cr, bx + uy * far + ux * toward, by - ux * far + uy * toward)
            cairo_line_to(cr, bx - uy * far + ux * toward, by + ux * far + uy * toward)
            cairo_close_path(cr)
            cairo_clip(cr)
        }
    }

    /// Fills the clip with `gradient` over the circles from (`startCenter`, `startRadius`) to
    /// (`endCenter`, `endRadius`), as CoreGraphics does; `options` extend the end colours inside
    /// the start circle and outside the end one.
    public func drawRadialGradient(_ gradient: CGGradient, startCenter: CGPoint, startRadius: CGFloat,
                                   endCenter: CGPoint, endRadius: CGFloat, options: CGGradientDrawingOptions) {
        guard [startCenter.x, startCenter.y, endCenter.x, endCenter.y, startRadius, endRadius].allSatisfy(\.isFinite),
              startRadius >= 0, endRadius >= 0, startRadius != endRadius || startCenter != endCenter,
              let pattern = cairo_pattern_create_radial(Double(startCenter.x), Double(startCenter.y), Double(startRadius),
                                                        Double(endCenter.x), Double(endCenter.y), Double(endRadius)) else { return }
        drawGradient(gradient, pattern, options) { before, after in
            guard before != after else { return }
            if before {
                // Padded inside the start circle, not past the end one: within the end circle.
                cairo_arc(cr, Double(endCenter.x), Double(endCenter.y), Double(endRadius), 0, 2 * Double.pi)
            } else {
                // Padded past the end circle, not inside the start one: outside the start circle.
                cairo_rectangle(cr, -1e6, -1e6, 2e6, 2e6)
                cairo_new_sub_path(cr)
                cairo_arc(cr, Double(startCenter.x), Double(startCenter.y), Double(startRadius), 0, 2 * Double.pi)
                cairo_set_fill_rule(cr, CAIRO_FILL_RULE_EVEN_ODD)
            }
            cairo_clip(cr)
        }
    }

    /// Paints `pattern` (consumed) with `gradient`'s stops over the clip: padded when `options`
    /// extend either end (`limit` then cuts off an end not extended), else only between the ends.
    private func drawGradient(_ gradient: CGGradient, _ pattern: OpaquePointer, _ options: CGGradientDrawingOptions,
                              limit: (_ before: Bool, _ after: Bool) -> Void) {
        defer { cairo_pattern_destroy(pattern) }
        let (before, after) = (options.contains(.drawsBeforeStartLocation), options.contains(.drawsAfterEndLocation))
        gradient.addStops(to: pattern, alpha: Double(state.alpha))
        cairo_pattern_set_extend(pattern, before || after ? CAIRO_EXTEND_PAD : CAIRO_EXTEND_NONE)
        withOwnPath {
            cairo_save(cr)
            limit(before, after)
            cairo_new_path(cr)
            cairo_set_source(cr, pattern)
            cairo_set_antialias(cr, antialias)
            let box = extents { cr, x1, y1, x2, y2 in cairo_clip_extents(cr, x1, y1, x2, y2) }
            touching(box, shape: { s in self.copyClipRectangles(to: s); cairo_paint(s) }) { cairo_paint(cr) }
            cairo_restore(cr)
        }
    }

    // MARK: Drawing

    /// The current path filled (by `fill`'s rule) and/or stroked, in the colours and alpha of the
    /// state; the path is consumed.
    private func paint(fill: CGPathFillRule?, stroke: Bool) {
        cairo_set_antialias(cr, antialias)
        if let fill { cairo_set_fill_rule(cr, fill == .evenOdd ? CAIRO_FILL_RULE_EVEN_ODD : CAIRO_FILL_RULE_WINDING) }
        let boxes = (fill != nil ? [extents(cairo_fill_extents)] : []) + (stroke ? [extents(cairo_stroke_extents)] : [])
        let box = boxes.filter { $0.2 > $0.0 && $0.3 > $0.1 }
            .reduce((width, height, 0, 0)) { (min($0.0, $1.0), min($0.1, $1.1), max($0.2, $1.2), max($0.3, $1.3)) }
        // The shadow's shape without the clip: its own extents, not the whole clip.
        let reach = (fill != nil ? [deviceBox(cairo_fill_extents)] : []) + (stroke ? [deviceBox(cairo_stroke_extents)] : [])
        let unclipped = reach.first.map { first in
            reach.dropFirst().reduce(first) { (min($0.0, $1.0), min($0.1, $1.1), max($0.2, $1.2), max($0.3, $1.3)) }
        }
        // One drawing, so that a fill and its stroke cast one shadow.
        let (fillColor, strokeColor) = (state.fill, state.stroke)
        let draw = { (c: OpaquePointer) in
            if fill != nil { self.setSource(fillColor, on: c); cairo_fill_preserve(c) }
            if stroke { self.setSource(strokeColor, on: c); cairo_stroke_preserve(c) }
        }
        touching(box, reach: unclipped, shape: draw) { draw(cr) }
        cairo_new_path(cr)
    }

    private func setSource(_ color: CGColor, on c: OpaquePointer) {
        let a = color.clampedRGBA
        cairo_set_source_rgba(c, a.red, a.green, a.blue, a.alpha * Double(state.alpha))
    }

    private func setSource(_ color: CGColor) {
        let c = color.clampedRGBA
        cairo_set_source_rgba(cr, c.red, c.green, c.blue, c.alpha * Double(state.alpha))
    }

    /// Runs `body` with an empty current path, then puts the current path back.
    private func withOwnPath(_ body: () -> Void) {
        let kept = cairo_copy_path(cr)
        cairo_new_path(cr)
        body()
        cairo_new_path(cr)
        if let kept {
            if kept.pointee.status == CAIRO_STATUS_SUCCESS { cairo_append_path(cr, kept) }
            cairo_path_destroy(kept)
        }
    }

    private var sink: CairoPath { CairoPath(cr: cr) }

    /// A user-space box from one of Cairo's extents functions, as device pixels (x0, y0, x1, y1),
    /// cut to the clip and the surface; the whole surface for an operator that changes pixels
    /// outside what is drawn (Cairo's unbounded ones).
    func extents(_ measure: (OpaquePointer?, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?,
                                     UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?) -> Void) -> (Int, Int, Int, Int) {
        let unbounded: Set<UInt32> = [CAIRO_OPERATOR_IN.rawValue, CAIRO_OPERATOR_OUT.rawValue, CAIRO_OPERATOR_DEST_IN.rawValue,
                                      CAIRO_OPERATOR_DEST_ATOP.rawValue]
        if unbounded.contains(cairo_get_operator(cr).rawValue) { return (0, 0, width, height) }
        let a = deviceBox(measure), c = deviceBox(cairo_clip_extents)
        func clamp(_ v: Double, _ limit: Int) -> Int { v.isFinite ? min(limit, max(0, Int(v))) : (v > 0 ? limit : 0) }
        // One pixel around: antialiasing reaches the pixels an edge passes through.
        return (clamp(max(a.0, c.0).rounded(.down) - 1, width), clamp(max(a.1, c.1).rounded(.down) - 1, height),
                clamp(min(a.2, c.2).rounded(.up) + 1, width), clamp(min(a.3, c.3).rounded(.up) + 1, height))
    }

    /// A user-space box from one of Cairo's extents functions, as a device box (x0, y0, x1, y1)
    /// in Cairo's y-down device space.
    func deviceBox(_ measure: (OpaquePointer?, UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?,
                               UnsafeMutablePointer<Double>?, UnsafeMutablePointer<Double>?) -> Void) -> (Double, Double, Double, Double) {
        var (x1, y1, x2, y2) = (0.0, 0.0, 0.0, 0.0)
        measure(cr, &x1, &y1, &x2, &y2)
        var xs: [Double] = [], ys: [Double] = []
        for (x, y) in [(x1, y1), (x2, y1), (x1, y2), (x2, y2)] {
            var (dx, dy) = (x, y)
            cairo_user_to_device(cr, &dx, &dy)
            xs.append(dx); ys.append(dy)
        }
        return (xs.min()!, ys.min()!, xs.max()!, ys.max()!)
    }

    /// Runs a Cairo drawing call that changes at most the device pixels of `box`, after the
    /// current shadow of `shape` (nil: the call casts none) when one is set: `shape` draws what
    /// the call draws into the Cairo context it is given, set up as ``cr`` (CGContextShadow.swift);
    /// `reach` the device box the shape can touch without the clip (nil: anywhere). In place, Cairo
    /// is told the memory may have changed before and flushes after; otherwise the box is read from
    /// memory into Cairo's surface before and written back after.
    func touching(_ box: (Int, Int, Int, Int), reach: (Double, Double, Double, Double)? = nil,
                  shape: ((OpaquePointer) -> Void)?, _ draw: () -> Void) {
        var (x0, y0, x1, y1) = box
        let shadow = shape.flatMap { state.shadow == nil ? nil : shadowMask(of: $0, reach: reach) }
        if let s = shadow?.box, s.2 > s.0, s.3 > s.1 {
            (x0, y0, x1, y1) = x1 > x0 && y1 > y0 ? (min(x0, s.0), min(y0, s.1), max(x1, s.2), max(y1, s.3)) : s
        }
        guard x1 > x0, y1 > y0 else { return }
        let mask = state.mask
        func drawWithShadow() {
            if let shadow { paintShadow(shadow) }
            draw()
        }
        func drawClipped() { if let mask { masked(by: mask, drawWithShadow) } else { drawWithShadow() } }
        if drawsInPlace {
            cairo_surface_mark_dirty_rectangle(surface, Int32(x0), Int32(y0), Int32(x1 - x0), Int32(y1 - y0))
            drawClipped()
            cairo_surface_flush(surface)
            return
        }
        cairo_surface_flush(surface)
        let pixels = cairo_image_surface_get_data(surface)!, stride = Int(cairo_image_surface_get_stride(surface))
        let bytes = memory.assumingMemoryBound(to: UInt8.self), pp = layout.bytesPerPixel
        func cairoRow(_ y: Int) -> UnsafeMutablePointer<UInt32> {
            UnsafeMutableRawPointer(pixels + y * stride).assumingMemoryBound(to: UInt32.self) + x0
        }
        for y in y0..<y1 { layout.toCairo(bytes + y * bytesPerRow + x0 * pp, cairoRow(y), count: x1 - x0) }
        cairo_surface_mark_dirty_rectangle(surface, Int32(x0), Int32(y0), Int32(x1 - x0), Int32(y1 - y0))
        drawClipped()
        cairo_surface_flush(surface)
        for y in y0..<y1 { layout.fromCairo(cairoRow(y), bytes + y * bytesPerRow + x0 * pp, count: x1 - x0) }
    }
}

extension CGContext {
    /// `draw` into a group, then the group onto the picture through `mask` (clip(to:mask:)).
    fileprivate func masked(by mask: ClipMask, _ draw: () -> Void) {
        let op = cairo_get_operator(cr)
        cairo_push_group(cr)
        if op == CAIRO_OPERATOR_CLEAR {
            // What clear(_:) clears, drawn opaque in the group, then cut out of the picture.
            cairo_save(cr)
            cairo_set_operator(cr, CAIRO_OPERATOR_OVER)
            cairo_set_source_rgba(cr, 0, 0, 0, 1)
            draw()
            cairo_restore(cr)
        } else {
            draw()
        }
        cairo_pop_group_to_source(cr)
        cairo_save(cr)
        cairo_set_operator(cr, op == CAIRO_OPERATOR_CLEAR ? CAIRO_OPERATOR_DEST_OUT : CAIRO_OPERATOR_OVER)
        // The group's pattern keeps the user space of pop_group_to_source; the mask takes its own.
        cairo_set_matrix(cr, &mask.matrix)
        let pattern = cairo_pattern_create_for_surface(mask.surface)
        cairo_pattern_set_filter(pattern, interpolationQuality.cairo)
        cairo_pattern_set_extend(pattern, CAIRO_EXTEND_PAD)
        cairo_mask(cr, pattern)
        cairo_pattern_destroy(pattern)
        cairo_restore(cr)
    }
}

/// A CGContext's current path, which Cairo holds, as a ``PathBuilding`` (in user space).
private struct CairoPath: PathBuilding {
    let cr: OpaquePointer
    var lastPoint: CGPoint? {
        guard cairo_has_current_point(cr) != 0 else { return nil }
        var (x, y) = (0.0, 0.0)
        cairo_get_current_point(cr, &x, &y)
        return CGPoint(x: x, y: y)
    }
    func pathMove(to p: CGPoint) { cairo_move_to(cr, Double(p.x), Double(p.y)) }
    func pathLine(to p: CGPoint) { cairo_line_to(cr, Double(p.x), Double(p.y)) }
    func pathCurve(to p: CGPoint, _ c1: CGPoint, _ c2: CGPoint) {
        cairo_curve_to(cr, Double(c1.x), Double(c1.y), Double(c2.x), Double(c2.y), Double(p.x), Double(p.y))
    }
    func pathClose() { cairo_close_path(cr) }
}
