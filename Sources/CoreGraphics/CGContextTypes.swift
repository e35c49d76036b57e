import CCairo

// The small enumerations of CoreGraphics' drawing, with the Cairo setting each becomes.

/// How a stroke's open ends are drawn, as CoreGraphics declares it.
public enum CGLineCap: Int32, Sendable {
    case butt = 0, round, square
    var cairo: cairo_line_cap_t { [CAIRO_LINE_CAP_BUTT, CAIRO_LINE_CAP_ROUND, CAIRO_LINE_CAP_SQUARE][Int(rawValue)] }
}

/// How a stroke's corners are drawn, as CoreGraphics declares it.
public enum CGLineJoin: Int32, Sendable {
    case miter = 0, round, bevel
    var cairo: cairo_line_join_t { [CAIRO_LINE_JOIN_MITER, CAIRO_LINE_JOIN_ROUND, CAIRO_LINE_JOIN_BEVEL][Int(rawValue)] }
}

/// What `drawPath(using:)` does with the current path, as CoreGraphics declares it.
public enum CGPathDrawingMode: Int32, Sendable {
    case fill = 0, eoFill, stroke, fillStroke, eoFillStroke
}

/// How an image is resampled when drawn larger or smaller, as CoreGraphics declares it; Cairo's
/// filters: nearest, fast, good, best (default is good).
public enum CGInterpolationQuality: Int32, Sendable {
    case `default` = 0, none, low, high, medium
    var cairo: cairo_filter_t {
        switch self {
        case .none: CAIRO_FILTER_NEAREST
        case .low: CAIRO_FILTER_FAST
        case .default, .medium: CAIRO_FILTER_GOOD
        case .high: CAIRO_FILTER_BEST
        }
    }
}

/// How an image's colours map to a space they do not fit, as CoreGraphics declares it (kept on
/// an image; GraphKit does no colour management).
public enum CGColorRenderingIntent: Int32, Sendable {
    case defaultIntent = 0, absoluteColorimetric, relativeColorimetric, perceptual, saturation
}

/// How what is drawn combines with what is there, as CoreGraphics declares it: each as Cairo's
/// operator of the same definition (PDF's blend modes and Porter-Duff's), except `plusDarker`,
/// which Cairo lacks and draws as `darken`.
public enum CGBlendMode: Int32, Sendable {
    case normal = 0, multiply, screen, overlay, darken, lighten, colorDodge, colorBurn, softLight, hardLight,
         difference, exclusion, hue, saturation, color, luminosity,
         clear, copy, sourceIn, sourceOut, sourceAtop, destinationOver, destinationIn, destinationOut, destinationAtop,
         xor, plusDarker, plusLighter

    var cairo: cairo_operator_t {
        switch self {
        case .normal: CAIRO_OPERATOR_OVER
        case .multiply: CAIRO_OPERATOR_MULTIPLY
        case .screen: CAIRO_OPERATOR_SCREEN
        case .overlay: CAIRO_OPERATOR_OVERLAY
        case .darken, .plusDarker: CAIRO_OPERATOR_DARKEN
        case .lighten: CAIRO_OPERATOR_LIGHTEN
        case .colorDodge: CAIRO_OPERATOR_COLOR_DODGE
        case .colorBurn: CAIRO_OPERATOR_COLOR_BURN
        case .softLight: CAIRO_OPERATOR_SOFT_LIGHT
        case .hardLight: CAIRO_OPERATOR_HARD_LIGHT
        case .difference: CAIRO_OPERATOR_DIFFERENCE
        case .exclusion: CAIRO_OPERATOR_EXCLUSION
        case .hue: CAIRO_OPERATOR_HSL_HUE
        case .saturation: CAIRO_OPERATOR_HSL_SATURATION
        case .color: CAIRO_OPERATOR_HSL_COLOR
        case .luminosity: CAIRO_OPERATOR_HSL_LUMINOSITY
        case .clear: CAIRO_OPERATOR_CLEAR
        case .copy: CAIRO_OPERATOR_SOURCE
        case .sourceIn: CAIRO_OPERATOR_IN
        case .sourceOut: CAIRO_OPERATOR_OUT
        case .sourceAtop: CAIRO_OPERATOR_ATOP
        case .destinationOver: CAIRO_OPERATOR_DEST_OVER
        case .destinationIn: CAIRO_OPERATOR_DEST_IN
        case .destinationOut: CAIRO_OPERATOR_DEST_OUT
        case .destinationAtop: CAIRO_OPERATOR_DEST_ATOP
        case .xor: CAIRO_OPERATOR_XOR
        case .plusLighter: CAIRO_OPERATOR_ADD
        }
    }
}
