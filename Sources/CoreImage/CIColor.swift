import CoreVideo

/// CoreImage's `CIColor`: a colour as CoreImage takes it, four unpremultiplied components in
/// 0…1 (sRGB-encoded values, as this implementation works: see ``CIContext``). `CIImage(color:)`
/// makes an image of one.
public final class CIColor: Sendable, Hashable, CustomStringConvertible {
    public let red: CGFloat
    public let green: CGFloat
    public let blue: CGFloat
    public let alpha: CGFloat

    public init(red: CGFloat, green: CGFloat, blue: CGFloat, alpha: CGFloat) {
        (self.red, self.green, self.blue, self.alpha) = (red, green, blue, alpha)
    }

    /// Opaque.
    public convenience init(red: CGFloat, green: CGFloat, blue: CGFloat) {
        self.init(red: red, green: green, blue: blue, alpha: 1)
    }

    /// The colour of a `CGColor`'s components (gray, gray and alpha, RGB or RGBA).
    public convenience init(cgColor color: CGColor) {
        let c = color.components ?? []
        switch c.count {
        case 1: self.init(red: c[0], green: c[0], blue: c[0], alpha: 1)
        case 2: self.init(red: c[0], green: c[0], blue: c[0], alpha: c[1])
        case 3: self.init(red: c[0], green: c[1], blue: c[2], alpha: 1)
        case 4...: self.init(red: c[0], green: c[1], blue: c[2], alpha: c[3])
        default: self.init(red: 0, green: 0, blue: 0, alpha: 0)
        }
    }

    /// Always 4: red, green, blue, alpha.
    public var numberOfComponents: Int { 4 }
    /// Red, green, blue, alpha, as CoreImage's `components`.
    public var components: [CGFloat] { [red, green, blue, alpha] }
    /// "r g b a", the form CoreImage's `stringRepresentation` gives.
    public var stringRepresentation: String { components.map { "\($0)" }.joined(separator: " ") }
    public var description: String { "CIColor(\(stringRepresentation))" }

    public static func == (l: CIColor, r: CIColor) -> Bool { l.components == r.components }
    public func hash(into h: inout Hasher) { h.combine(components) }

    public static let black = CIColor(red: 0, green: 0, blue: 0)
    public static let white = CIColor(red: 1, green: 1, blue: 1)
    public static let gray = CIColor(red: 0.5, green: 0.5, blue: 0.5)
    public static let red = CIColor(red: 1, green: 0, blue: 0)
    public static let green = CIColor(red: 0, green: 1, blue: 0)
    public static let blue = CIColor(red: 0, green: 0, blue: 1)
    public static let cyan = CIColor(red: 0, green: 1, blue: 1)
    public static let magenta = CIColor(red: 1, green: 0, blue: 1)
    public static let yellow = CIColor(red: 1, green: 1, blue: 0)
    public static let clear = CIColor(red: 0, green: 0, blue: 0, alpha: 0)
}
