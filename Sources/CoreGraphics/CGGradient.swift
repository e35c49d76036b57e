import CCairo

/// A gradient, as CoreGraphics' `CGGradient`: colours at locations from 0 to 1 (spread evenly
/// when none are given), drawn by a context's `drawLinearGradient` and `drawRadialGradient`
/// through Cairo's gradient patterns, which interpolate as CoreGraphics does (linearly, in the
/// device RGB the context draws in).
public final class CGGradient: Sendable {
    /// The stops, each a location clamped to 0…1 and a colour as RGBA from 0 to 1.
    let stops: [Stop]
    struct Stop: Sendable {
        var location: Double
        var red, green, blue, alpha: Double
    }

    /// A gradient of `colors` (`CGColor`s) at `locations` (as many as the colours; nil: evenly
    /// from 0 to 1). Nil when `colors` holds no colour, or something else than colours.
    public init?(colorsSpace space: CGColorSpace?, colors: CFArray, locations: UnsafePointer<CGFloat>?) {
        let colours = colors.compactMap { $0 as? CGColor }
        guard !colours.isEmpty, colours.count == colors.count else { return nil }
        stops = colours.enumerated().map { i, c in
            let rgba = c.clampedRGBA
            return Stop(location: Self.location(locations, i, of: colours.count), red: rgba.red, green: rgba.green, blue: rgba.blue, alpha: rgba.alpha)
        }
    }

    /// A gradient of `count` colours given as components of `space` (3 and alpha for RGB, 1 and
    /// alpha for gray), at `locations` (nil: evenly from 0 to 1). Nil for no colour.
    public init?(colorSpace space: CGColorSpace, colorComponents components: UnsafePointer<CGFloat>,
                 locations: UnsafePointer<CGFloat>?, count: Int) {
        guard count > 0 else { return nil }
        let n = space.numberOfComponents + 1
        stops = (0..<count).map { i in
            let c = (0..<n).map { Double(min(max(components[i * n + $0], 0), 1)) }
            let (r, g, b) = n == 2 ? (c[0], c[0], c[0]) : (c[0], c[1], c[2])
            return Stop(location: Self.location(locations, i, of: count), red: r, green: g, blue: b, alpha: c[n - 1])
        }
    }

    private static func location(_ locations: UnsafePointer<CGFloat>?, _ i: Int, of count: Int) -> Double {
        guard let locations else { return count == 1 ? 0 : Double(i) / Double(count - 1) }
        let l = Double(locations[i])
        return l.isFinite ? min(max(l, 0), 1) : 0
    }

    /// The stops added to a Cairo gradient pattern, their alpha multiplied by the context's.
    func addStops(to pattern: OpaquePointer, alpha: Double) {
        for s in stops {
            cairo_pattern_add_color_stop_rgba(pattern, s.location, s.red, s.green, s.blue, s.alpha * alpha)
        }
    }
}

/// Whether a gradient's end colours extend past its start and its end, as CoreGraphics'.
public struct CGGradientDrawingOptions: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let drawsBeforeStartLocation = CGGradientDrawingOptions(rawValue: 1 << 0)
    public static let drawsAfterEndLocation = CGGradientDrawingOptions(rawValue: 1 << 1)
}
