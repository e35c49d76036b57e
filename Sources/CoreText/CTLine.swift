import Foundation
import CCairo
import CoreGraphics
import CPangoCairo

/// A line of text, as CoreText's `CTLine`: an attributed string shaped once by Pango (HarfBuzz's
/// shaping and kerning, fontconfig's fallback for characters a font lacks), drawn with
/// ``CTLineDraw(_:_:)`` as often as wanted. One line: a newline is not a break. Immutable; any
/// thread may use it.
public final class CTLine: @unchecked Sendable {   // immutable after init; Pango calls take Pango.run's lock
    let layout: OpaquePointer
    /// The font matrix of the line's first run (one a line), in text space.
    let fontMatrix: CGAffineTransform
    /// Ink and logical extents from the baseline's origin, y down (Pango's), in points.
    let ink: CGRect
    let logical: CGRect
    let leading: CGFloat
    /// The smallest and largest font size of its runs.
    let sizes: ClosedRange<CGFloat>

    /// The most UTF-8 bytes a line lays out (Pango counts them in an `Int32`); a longer string
    /// makes an empty line.
    static let maxBytes = Int(Int32.max)

    init(_ string: NSAttributedString) {
        let whole = string.string
        let text = whole.utf8.count <= Self.maxBytes ? whole : ""
        let runs = text.isEmpty ? [] : string.textRuns
        let fonts = runs.compactMap(\.font)
        // Apple's default for runs without a font, made once (CTFont.standard), asked for only
        // when a run (or an empty line) needs it.
        let usesDefault = fonts.count < max(1, runs.count)
        let all = fonts + (usesDefault ? [CTFont.standard] : [])
        fontMatrix = fonts.first?.matrix ?? .identity
        leading = all.map(CTFontGetLeading).max() ?? 0
        sizes = (all.map(\.size).min() ?? 12)...(all.map(\.size).max() ?? 12)
        var inkRect = PangoRectangle(), logicalRect = PangoRectangle()
        layout = Pango.run { ctx in
            let layout = pango_layout_new(ctx)!
            pango_layout_set_single_paragraph_mode(layout, 1)
            pango_layout_set_font_description(layout, (usesDefault ? CTFont.standard : fonts[0]).description)
            pango_layout_set_text(layout, text, Int32(clamping: text.utf8.count))
            let list = pango_attr_list_new()
            func add(_ attribute: UnsafeMutablePointer<PangoAttribute>?, _ run: TextRun) {
                guard let attribute else { return }
                (attribute.pointee.start_index, attribute.pointee.end_index) = (UInt32(clamping: run.bytes.lowerBound),
                                                                                UInt32(clamping: run.bytes.upperBound))
                pango_attr_list_insert(list, attribute)
            }
            for run in runs where !run.bytes.isEmpty {
                if let font = run.font { add(pango_attr_font_desc_new(font.description), run) }
                // A run without a colour is black; one from the context takes the source drawText sets.
                guard !run.colorFromContext else { continue }
                let c = (run.color ?? CGColor(gray: 0, alpha: 1)).clampedRGBA
                func u16(_ v: Double) -> UInt16 { UInt16((v * 65535).rounded()) }
                add(pango_attr_foreground_new(u16(c.red), u16(c.green), u16(c.blue)), run)
                add(pango_attr_foreground_alpha_new(u16(c.alpha)), run)
            }
            pango_layout_set_attributes(layout, list)
            pango_attr_list_unref(list)
            pango_layout_line_get_extents(pango_layout_get_line_readonly(layout, 0), &inkRect, &logicalRect)
            return layout
        }
        func rect(_ r: PangoRectangle) -> CGRect {
            CGRect(x: Pango.points(r.x), y: Pango.points(r.y), width: Pango.points(r.width), height: Pango.points(r.height))
        }
        (ink, logical) = (rect(inkRect), rect(logicalRect))
    }

    deinit { Pango.run { _ in g_object_unref(UnsafeMutableRawPointer(layout)) } }

    /// The font matrix in the glyphs' y-down space: flipped around it.
    var glyphMatrix: CGAffineTransform {
        let m = fontMatrix
        return CGAffineTransform(a: m.a, b: -m.b, c: -m.c, d: m.d, tx: m.tx, ty: -m.ty)
    }
}

/// A line of `attrString`, its runs in the fonts (``kCTFontAttributeName``, default Helvetica 12
/// as Apple's, that is fontconfig's sans-serif) and colours (``kCTForegroundColorAttributeName``
/// or `NSAttributedString.Key.foregroundColor`, a `CGColor`; default black) of its attributes.
public func CTLineCreateWithAttributedString(_ attrString: CFAttributedString) -> CTLine {
    CTLine(attrString)
}

/// Draws `line` in `context` with its baseline's origin at the context's ``CGContext/textPosition``,
/// through the text matrix, the CTM, the clip, the alpha and the shadow. Glyphs are antialiased
/// (gray) and unhinted whatever `setShouldAntialias` says. The text position is not moved.
public func CTLineDraw(_ line: CTLine, _ context: CGContext) {
    let matrix = line.glyphMatrix
    let ink = line.ink.applying(matrix).insetBy(dx: -1, dy: -1)
    context.drawText(ink: ink, glyphs: matrix, sizes: line.sizes) { cr in
        // The one recursive lock is held for the whole rasterisation: Pango's font map and its
        // glyph caches are shared by every line and not thread-safe, so text draws one line at
        // a time in a process (shaping was done when the line was made).
        Pango.run { _ in pango_cairo_show_layout_line(cr, pango_layout_get_line_readonly(line.layout, 0)) }
    }
}

/// The line's advance width, as CoreText's: its ascent (above the baseline), descent (below it,
/// positive) and leading (the largest line gap of its fonts) through the pointers that are not nil.
public func CTLineGetTypographicBounds(_ line: CTLine, _ ascent: UnsafeMutablePointer<CGFloat>?,
                                      _ descent: UnsafeMutablePointer<CGFloat>?, _ leading: UnsafeMutablePointer<CGFloat>?) -> Double {
    ascent?.pointee = -line.logical.minY
    descent?.pointee = line.logical.maxY
    leading?.pointee = line.leading
    return Double(line.logical.width)
}

/// The bounds of the line's ink in text space (y up, origin the baseline's), as CoreText's; with a
/// context, moved to its text position and through its text matrix.
public func CTLineGetImageBounds(_ line: CTLine, _ context: CGContext?) -> CGRect {
    let flipped = line.ink.applying(line.glyphMatrix)
    let bounds = CGRect(x: flipped.minX, y: -flipped.maxY, width: flipped.width, height: flipped.height)
    guard let context, !bounds.isEmpty else { return bounds }
    return bounds.applying(context.textMatrix)
}
