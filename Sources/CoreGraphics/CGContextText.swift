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
    /// origin at (0, 0) and y down (the glyphs' own space: text space flipped), its source the
    /// fill colour. `ink` is what it can touch, in that space. Drawn through the CTM, the text
    /// matrix, the clip and the alpha, and casting the shadow; `draw` runs once more for the
    /// shadow when one is set. The current path is kept.
    package func drawText(ink: CGRect, _ draw: @escaping (OpaquePointer) -> Void) {
        let t = textTransform
        guard [t.a, t.b, t.c, t.d, t.tx, t.ty].allSatisfy(\.isFinite), t.a * t.d - t.b * t.c != 0,
              !ink.isNull, !ink.isInfinite, ink.width > 0, ink.height > 0 else { return }
        let kept = cairo_copy_path(cr)
        cairo_new_path(cr)
        cairo_save(cr)
        var m = cairo_matrix_t(xx: Double(t.a), yx: Double(t.b), xy: Double(t.c), yy: Double(t.d), x0: Double(t.tx), y0: Double(t.ty))
        cairo_transform(cr, &m)
        cairo_scale(cr, 1, -1)
        cairo_rectangle(cr, Double(ink.minX), Double(ink.minY), Double(ink.width), Double(ink.height))
        let box = extents(cairo_fill_extents)
        cairo_new_path(cr)
        let c = state.fill.clampedRGBA
        cairo_set_source_rgba(cr, c.red, c.green, c.blue, c.alpha)
        let alpha = Double(state.alpha)
        let drawn = { (s: OpaquePointer) in
            cairo_move_to(s, 0, 0)
            guard alpha < 1 else { return draw(s) }
            cairo_push_group(s)
            draw(s)
            cairo_pop_group_to_source(s)
            cairo_paint_with_alpha(s, alpha)
        }
        touching(box, shape: drawn) { drawn(cr) }
        cairo_restore(cr)
        cairo_new_path(cr)
        if let kept {
            if kept.pointee.status == CAIRO_STATUS_SUCCESS { cairo_append_path(cr, kept) }
            cairo_path_destroy(kept)
        }
    }
}
