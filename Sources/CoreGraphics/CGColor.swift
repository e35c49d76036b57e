import Foundation

/// A colour, as CoreGraphics' `CGColor`, as far as media code gives one (a video composition's
/// background): red, green, blue and alpha from 0 to 1, in device RGB. No colour spaces or
/// patterns: this is what AVFoundation reads of it.
public final class CGColor: Sendable, Equatable {
    public let components: [CGFloat]?
    public let alpha: CGFloat
    public let numberOfComponents: Int

    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        components = [red, green, blue, alpha]
        self.alpha = alpha
        numberOfComponents = 4
    }

    /// A grey (`gray` from 0, black, to 1, white).
    public init(gray: CGFloat, alpha: CGFloat) {
        components = [gray, alpha]
        self.alpha = alpha
        numberOfComponents = 2
    }

    public static let black = CGColor(gray: 0, alpha: 1)
    public static let white = CGColor(gray: 1, alpha: 1)
    public static let clear = CGColor(gray: 0, alpha: 0)

    /// Red, green and blue, from 0 to 1, whichever way it was made.
    public var rgb: (red: Double, green: Double, blue: Double) {
        let c = (components ?? [0, 1]).map(Double.init)
        return c.count >= 3 ? (c[0], c[1], c[2]) : (c[0], c[0], c[0])
    }

    public static func == (a: CGColor, b: CGColor) -> Bool { a.components == b.components && a.alpha == b.alpha }
}
