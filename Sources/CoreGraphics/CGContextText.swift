import Foundation
import CCairo

// The text state CoreText draws with (`textMatrix`, `textPosition`), and the one door through
// which CoreText draws into a context with Cairo: in the text's space, with the context's clip,
// alpha and shadow, and the caller's memory kept the picture (`touching`, CGContextDrawing.swift).

extension CGContext {
    /// The transform from text space to user space, as CoreGraphics': identity for a new context;
    /// its translation is ``textPosition``. Not part of the graphics state (``saveGState()`` does
    /// not keep it), as Apple's.
    public var textMatrix: CGAffineTransform {
        get { textTransform }
        set { textTransform = newValue }
    }

    /// Where the next line of text is drawn (`CTLineDraw`): the origin of its baseline, in user
    /// space; the text matrix's translation, as CoreGraphics'.
    public var textPosition: CGPoint {
        get { CGPoint(x: textTransform.tx, y: textTransform.ty) }
        set { (textTransform.tx, textTransform.ty) = (newValue.x, newValue.y) }
    }

    /// Draws for CoreText: `draw` draws into the Cairo context it is given, with the baseline's
    /// origin at (0, 0) and y down (the glyphs' own space: text space flipped, then `glyphs`, the
    /// font matrix), its source the fill colour. `ink` is what it can touch, in that space;
    /// `sizes` the smallest and largest font sizes it draws with. Drawn through the CTM, the text
    /// matrix, the clip and the alpha, and casting the shadow; `draw` runs once more for the
    /// shadow when one is set. The current path is kept.
    ///
    /// Nothing is drawn when the text matrix, or its product with the CTM, the font matrix and a
    /// size, has non-finite numbers or no inverse Cairo can use (Cairo would put the context in
    /// an error state for good). Should Cairo still end in one, the context goes on in a fresh
    /// Cairo context with its state (``spareCairo()``).
    package func drawText(ink: CGRect, glyphs: CGAffineTransform = .identity, sizes: ClosedRange<CGFloat> = 1...1,
                          _ draw: @escaping (OpaquePointer) -> Void) {
        let t = textTransform
        var cm = cairo_matrix_t()
        cairo_get_matrix(cr, &cm)
        let device = CGAffineTransform(a: cm.xx, b: cm.yx, c: cm.xy, d: cm.yy, tx: cm.x0, ty: cm.y0)
        let toDevice = glyphs.concatenating(CGAffineTransform(scaleX: 1, y: -1)).concatenating(t).concatenating(device)
        guard t.isCairoInvertible, glyphs.isCairoInvertible, toDevice.isCairoInvertible,
              [sizes.lowerBound, sizes.upperBound].allSatisfy({ toDevice.scaledBy(x: $0, y: $0).isCairoInvertible }),
              !ink.isNull, !ink.isInfinite, ink.width > 0, ink.height > 0 else { return }
        let kept = cairo_copy_path(cr)
        cairo_new_path(cr)
        let spare = spareCairo()
        cairo_save(cr)
        var m = cairo_matrix_t(xx: Double(t.a), yx: Double(t.b), xy: Double(t.c), yy: Double(t.d), x0: Double(t.tx), y0: Double(t.ty))
        cairo_transform(cr, &m)
        cairo_scale(cr, 1, -1)
        cairo_rectangle(cr, Double(ink.minX), Double(ink.minY), Double(ink.width), Double(ink.height))
        let box = extents(cairo_fill_extents)
        let reach = deviceBox(cairo_fill_extents)
        cairo_new_path(cr)
        let c = state.fill.clampedRGBA
        cairo_set_source_rgba(cr, c.red, c.green, c.blue, c.alpha)
        let alpha = Double(state.alpha)
        let drawn = { (s: OpaquePointer) in
            cairo_move_to(s, 0, 0)
            if !glyphs.isIdentity {
                var g = cairo_matrix_t(xx: Double(glyphs.a), yx: Double(glyphs.b), xy: Double(glyphs.c), yy: Double(glyphs.d),
                                       x0: Double(glyphs.tx), y0: Double(glyphs.ty))
                cairo_transform(s, &g)
            }
            guard alpha < 1 else { return draw(s) }
            cairo_push_group(s)
            draw(s)
            cairo_pop_group_to_source(s)
            cairo_paint_with_alpha(s, alpha)
        }
        touching(box, reach: reach, shape: drawn) { drawn(self.cr) }
        cairo_restore(cr)
        adopt(spare)
        cairo_new_path(cr)
        if let kept {
            if kept.pointee.status == CAIRO_STATUS_SUCCESS { cairo_append_path(cr, kept) }
            cairo_path_destroy(kept)
        }
    }
}
