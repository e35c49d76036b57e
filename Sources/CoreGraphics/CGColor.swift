import Foundation

/// A colour, as CoreGraphics' `CGColor`, as media code gives one (a video composition's
/// background, a CGContext's fill): red, green, blue and alpha from 0 to 1, or gray and alpha.
/// Its space is kept but not managed: drawing reads the components as device RGB or gray
/// (``CGColorSpace``). No patterns.
public final class CGColor: Sendable, Equatable {
    public let components: [CGFloat]?
    public let alpha: CGFloat
    public let numberOfComponents: Int
    public let colorSpace: CGColorSpace?

    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        components = [red, green, blue, alpha]
        self.alpha = alpha
        numberOfComponents = 4
        colorSpace = CGColorSpace(name: CGColorSpace.sRGB)
    }

    /// A grey (`gray` from 0, black, to 1, white).
    public init(gray: CGFloat, alpha: CGFloat) {
        components = [gray, alpha]
        self.alpha = alpha
        numberOfComponents = 2
        colorSpace = CGColorSpace(name: CGColorSpace.genericGrayGamma2_2)
    }

    /// A colour of `space` from its components followed by alpha (4 for an RGB space, 2 for a
    /// gray one), as CoreGraphics' `CGColor(colorSpace:components:)`; nil for a nil pointer or
    /// another model.
    public init?(colorSpace space: CGColorSpace, components: UnsafePointer<CGFloat>?) {
        guard let components, space.model == .rgb || space.model == .monochrome else { return nil }
        let count = space.numberOfComponents + 1
        self.components = Array(UnsafeBufferPointer(start: components, count: count))
        alpha = components[count - 1]
        numberOfComponents = count
        colorSpace = space
    }

    public static let black = CGColor(gray: 0, alpha: 1)
    public static let white = CGColor(gray: 1, alpha: 1)
    public static let clear = CGColor(gray: 0, alpha: 0)

    /// Red, green, blue and alpha, each clamped to 0…1 (NaN as 0), whichever way it was made.
    package var clampedRGBA: (red: Double, green: Double, blue: Double, alpha: Double) {
        func clamp(_ v: Double) -> Double { v.isNaN ? 0 : min(1, max(0, v)) }
        let (r, g, b) = rgb
        return (clamp(r), clamp(g), clamp(b), clamp(Double(alpha)))
    }

    /// Red, green and blue, from 0 to 1, whichever way it was made.
    public var rgb: (red: Double, green: Double, blue: Double) {
        let c = (components ?? [0, 1]).map(Double.init)
        return c.count >= 3 ? (c[0], c[1], c[2]) : (c[0], c[0], c[0])
    }

    public static func == (a: CGColor, b: CGColor) -> Bool { a.components == b.components && a.alpha == b.alpha }
}
