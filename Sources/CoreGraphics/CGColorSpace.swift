import Foundation

/// A colour space, as CoreGraphics' `CGColorSpace`: its model (RGB or gray) and, when made by
/// name, its name. GraphKit does no colour management: drawing treats every RGB space as device
/// RGB and every gray space as device gray, so a context made with `CGColorSpace.displayP3` draws
/// the same bytes as one made with `CGColorSpaceCreateDeviceRGB()` (the space travels with the
/// context's images, ``CGImage/colorSpace``, for code that reads it).
public final class CGColorSpace: Sendable, Equatable {
    /// The space's name (``sRGB`` and the others below), nil for the device spaces, as on Apple's.
    public let name: CFString?
    public let model: CGColorSpaceModel

    init(model: CGColorSpaceModel, name: CFString?) {
        self.model = model
        self.name = name
    }

    /// The space of `name`, one of the names below; nil for any other, as CoreGraphics returns
    /// for a name it does not know.
    public convenience init?(name: CFString) {
        guard let model = Self.named[name] else { return nil }
        self.init(model: model, name: name)
    }

    /// Components a colour of this space has, alpha not counted.
    public var numberOfComponents: Int { model == .monochrome ? 1 : 3 }
    /// The ICC profile's bytes: nil here (no colour management), as Apple's gives for a space
    /// without one.
    public func copyICCData() -> CFData? { nil }
    public var isWideGamutRGB: Bool { name.map { Self.wide.contains($0) } ?? false }
    /// Whether the space is HDR (PQ or HLG transfer).
    public var isHDR: Bool { name.map { $0.contains("PQ") || $0.contains("HLG") } ?? false }

    public static func == (a: CGColorSpace, b: CGColorSpace) -> Bool { a.model == b.model && a.name == b.name }

    public static let sRGB: CFString = "kCGColorSpaceSRGB"
    public static let extendedSRGB: CFString = "kCGColorSpaceExtendedSRGB"
    public static let linearSRGB: CFString = "kCGColorSpaceLinearSRGB"
    public static let extendedLinearSRGB: CFString = "kCGColorSpaceExtendedLinearSRGB"
    public static let genericRGBLinear: CFString = "kCGColorSpaceGenericRGBLinear"
    public static let displayP3: CFString = "kCGColorSpaceDisplayP3"
    public static let displayP3_HLG: CFString = "kCGColorSpaceDisplayP3_HLG"
    public static let displayP3_PQ: CFString = "kCGColorSpaceDisplayP3_PQ"
    public static let extendedDisplayP3: CFString = "kCGColorSpaceExtendedDisplayP3"
    public static let adobeRGB1998: CFString = "kCGColorSpaceAdobeRGB1998"
    public static let itur_709: CFString = "kCGColorSpaceITUR_709"
    public static let itur_2020: CFString = "kCGColorSpaceITUR_2020"
    public static let itur_2100_PQ: CFString = "kCGColorSpaceITUR_2100_PQ"
    public static let itur_2100_HLG: CFString = "kCGColorSpaceITUR_2100_HLG"
    public static let genericGrayGamma2_2: CFString = "kCGColorSpaceGenericGrayGamma2_2"
    public static let linearGray: CFString = "kCGColorSpaceLinearGray"
    public static let extendedGray: CFString = "kCGColorSpaceExtendedGray"

    private static let wide: Set<CFString> = [displayP3, displayP3_HLG, displayP3_PQ, extendedDisplayP3, adobeRGB1998,
                                              itur_2020, itur_2100_PQ, itur_2100_HLG, extendedSRGB, extendedLinearSRGB]
    private static let named: [CFString: CGColorSpaceModel] = {
        var names: [CFString: CGColorSpaceModel] = [:]
        for n in [sRGB, extendedSRGB, linearSRGB, extendedLinearSRGB, genericRGBLinear, displayP3, displayP3_HLG, displayP3_PQ,
                  extendedDisplayP3, adobeRGB1998, itur_709, itur_2020, itur_2100_PQ, itur_2100_HLG] { names[n] = .rgb }
        for n in [genericGrayGamma2_2, linearGray, extendedGray] { names[n] = .monochrome }
        return names
    }()
}

/// What a colour space's components mean, as CoreGraphics declares it.
public enum CGColorSpaceModel: Int32, Sendable {
    case unknown = -1, monochrome = 0, rgb, cmyk, lab, deviceN, indexed, pattern, XYZ
}

/// Device RGB, as CoreGraphics' `CGColorSpaceCreateDeviceRGB()`.
public func CGColorSpaceCreateDeviceRGB() -> CGColorSpace { CGColorSpace(model: .rgb, name: nil) }
/// Device gray, as CoreGraphics' `CGColorSpaceCreateDeviceGray()`.
public func CGColorSpaceCreateDeviceGray() -> CGColorSpace { CGColorSpace(model: .monochrome, name: nil) }
/// The space of `name`, as `CGColorSpace(name:)`.
public func CGColorSpaceCreateWithName(_ name: CFString) -> CGColorSpace? { CGColorSpace(name: name) }
