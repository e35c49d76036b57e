import Foundation
import CoreGraphics
import CPangoCairo

/// A font at a size, as CoreText's `CTFont`: Apple's name mapped to a fontconfig family and style
/// (CTFontNames.swift), the face fontconfig finds for it (DejaVu on a bare Debian), drawn by Pango.
/// Immutable; any thread may use it.
public final class CTFont: @unchecked Sendable {   // immutable after init; Pango calls take Pango.run's lock
    /// The name asked for, the size in points (user-space units), the font matrix.
    let name: String
    let size: CGFloat
    let matrix: CGAffineTransform
    /// Pango's description of the request (families, weight, slant, size), owned.
    let description: OpaquePointer
    /// The face found for it, held.
    private let font: UnsafeMutablePointer<PangoFont>?

    /// The sizes a font has, in points: 1/1024 (Pango's unit) to 16,384 (a glyph of 16,384
    /// pixels at scale 1 already; larger ones only cost Cairo memory and time).
    static let sizes: ClosedRange<CGFloat> = 1.0 / 1024 ... 16_384

    /// Apple's default font, Helvetica 12, for the runs of a line that name none: made once.
    static let standard = CTFontCreateWithName("Helvetica", 12, nil)

    init(name: String, size: CGFloat, matrix: CGAffineTransform) {
        let request = FontRequest(name: name)
        (self.name, self.size, self.matrix) = (name, size, matrix)
        let d = pango_font_description_new()!
        pango_font_description_set_family(d, request.families)
        pango_font_description_set_weight(d, PangoWeight(rawValue: UInt32(request.weight)))
        pango_font_description_set_style(d, request.italic ? PANGO_STYLE_ITALIC : PANGO_STYLE_NORMAL)
        pango_font_description_set_absolute_size(d, Double(size) * Double(PANGO_SCALE))
        description = d
        font = Pango.run { pango_context_load_font($0, d) }
    }

    deinit {
        Pango.run { _ in
            pango_font_description_free(description)
            if let font { g_object_unref(font) }
        }
    }

    /// Pango's metrics of the face: ascent, descent and height (ascent + descent + line gap), in points.
    var metrics: (ascent: CGFloat, descent: CGFloat, height: CGFloat) {
        guard let font else { return (0, 0, 0) }
        return Pango.run { _ in
            let m = pango_font_get_metrics(font, nil)
            defer { pango_font_metrics_unref(m) }
            return (Pango.points(pango_font_metrics_get_ascent(m)), Pango.points(pango_font_metrics_get_descent(m)),
                    Pango.points(pango_font_metrics_get_height(m)))
        }
    }

    /// The family of the face found ("DejaVu Sans"), or the request's first family.
    var familyName: String {
        guard let font else { return FontRequest(name: name).families.components(separatedBy: ",")[0] }
        return Pango.run { _ in
            let d = pango_font_describe(font)
            defer { pango_font_description_free(d) }
            return pango_font_description_get_family(d).map { String(cString: $0) } ?? ""
        }
    }

    /// The PostScript name of the face found ("DejaVuSans-Bold"), from its name table.
    var postScriptName: String {
        guard let font else { return name }
        return Pango.run { _ in
            let face = hb_font_get_face(pango_font_get_hb_font(font))
            var length: UInt32 = 128
            var buffer = [CChar](repeating: 0, count: 128)
            // Name ID 6, the PostScript name (OpenType's name table). HarfBuzz 6 (Debian 12) has
            // it as an integer constant, HarfBuzz 10 (Debian 13) as an enum case: the number works with both.
            let total = hb_ot_name_get_utf8(face, hb_ot_name_id_t(6), nil, &length, &buffer)
            return total > 0 ? String(cString: buffer) : name
        }
    }
}

/// A font of the face Apple calls `name` (a PostScript name such as "Helvetica-Bold", a family or
/// a full name) at `size` points (0: 12, Apple's default), with `matrix` (nil: identity) applied to
/// its glyphs. Fontconfig finds the face (see CTFontNames.swift for the mapping of Apple's names);
/// a name it does not know gives its default sans-serif face, as Apple gives a system font.
///
/// A size that is not a positive finite number is 12, as 0 is; one within ``CTFont/sizes``' range
/// is kept, others are brought to its nearer end (Pango keeps sizes in an `Int32` of 1/1024
/// points, and Cairo would rasterise glyphs as large as asked). A matrix with non-finite numbers
/// or no usable inverse is identity (drawing with it would stop Cairo drawing in the context).
public func CTFontCreateWithName(_ name: CFString, _ size: CGFloat, _ matrix: UnsafePointer<CGAffineTransform>?) -> CTFont {
    let size = size > 0 && size.isFinite ? min(CTFont.sizes.upperBound, max(CTFont.sizes.lowerBound, size)) : 12
    let matrix = matrix?.pointee ?? .identity
    return CTFont(name: name, size: size, matrix: matrix.isCairoInvertible ? matrix : .identity)
}

/// The point size.
public func CTFontGetSize(_ font: CTFont) -> CGFloat { font.size }
/// The font matrix given when it was made (identity for nil).
public func CTFontGetMatrix(_ font: CTFont) -> CGAffineTransform { font.matrix }
/// The scaled ascent (points above the baseline) of the face found.
public func CTFontGetAscent(_ font: CTFont) -> CGFloat { font.metrics.ascent }
/// The scaled descent (points below the baseline, positive) of the face found.
public func CTFontGetDescent(_ font: CTFont) -> CGFloat { font.metrics.descent }
/// The scaled line gap of the face found (its height less ascent and descent; 0 for none).
public func CTFontGetLeading(_ font: CTFont) -> CGFloat {
    let m = font.metrics
    return max(0, m.height - m.ascent - m.descent)
}
/// The PostScript name of the face fontconfig found ("DejaVuSans-Bold" for "Helvetica-Bold" on a
/// machine without Helvetica), as Apple's names the face it found.
public func CTFontCopyPostScriptName(_ font: CTFont) -> CFString { font.postScriptName }
/// The family of the face fontconfig found ("DejaVu Sans").
public func CTFontCopyFamilyName(_ font: CTFont) -> CFString { font.familyName }
