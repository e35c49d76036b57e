import CoreVideo

/// CoreImage's `CIFormat`: the layout of a bitmap ``CIContext`` renders into. ``RGBA8``,
/// ``BGRA8`` and ``ARGB8`` (8 bits a component, premultiplied, in that byte order) are rendered;
/// the others are Apple's names, accepted so code that mentions them compiles, and a render to
/// them writes nothing.
public struct CIFormat: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    // Apple's values (CIImage.h's kCIFormat… constants).
    public static let ARGB8 = CIFormat(rawValue: 264)
    public static let BGRA8 = CIFormat(rawValue: 266)
    public static let RGBA8 = CIFormat(rawValue: 24)
    public static let ABGR8 = CIFormat(rawValue: 1424)
    public static let RGBA16 = CIFormat(rawValue: 291)
    public static let RGBAh = CIFormat(rawValue: 2069)
    public static let RGBAf = CIFormat(rawValue: 34)
    public static let RGB10 = CIFormat(rawValue: 292)
    public static let A8 = CIFormat(rawValue: 265)
    public static let R8 = CIFormat(rawValue: 267)
    public static let RG8 = CIFormat(rawValue: 268)
    public static let L8 = CIFormat(rawValue: 318)

    /// The byte of R, G, B and A in a 4-byte pixel, for the formats rendered; nil for the others.
    var byteOrder: [UInt8]? {
        switch self {
        case .RGBA8: [0, 1, 2, 3]
        case .BGRA8: [2, 1, 0, 3]
        case .ARGB8: [1, 2, 3, 0]
        case .ABGR8: [3, 2, 1, 0]
        default: nil
        }
    }
}

/// A key of `CIContext(options:)`. Every one is accepted; none changes how this implementation
/// renders (one software renderer, one working space: see ``CIContext``).
public struct CIContextOption: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let workingColorSpace = CIContextOption(rawValue: "working_color_space")
    public static let workingFormat = CIContextOption(rawValue: "working_format")
    public static let outputColorSpace = CIContextOption(rawValue: "output_color_space")
    public static let useSoftwareRenderer = CIContextOption(rawValue: "software_renderer")
    public static let highQualityDownsample = CIContextOption(rawValue: "high_quality_downsample")
    public static let outputPremultiplied = CIContextOption(rawValue: "output_premultiplied")
    public static let cacheIntermediates = CIContextOption(rawValue: "kCIContextCacheIntermediates")
    public static let priorityRequestLow = CIContextOption(rawValue: "priority_request_low")
    public static let allowLowPower = CIContextOption(rawValue: "allow_low_power")
    public static let name = CIContextOption(rawValue: "name")
}

/// A key of `CIImage(cvPixelBuffer:options:)`. Every one is accepted and none is used: an image
/// of a pixel buffer is its stored values (see ``CIContext``).
public struct CIImageOption: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let colorSpace = CIImageOption(rawValue: "kCIImageColorSpace")
    public static let properties = CIImageOption(rawValue: "kCIImageProperties")
    public static let applyOrientationProperty = CIImageOption(rawValue: "kCIImageApplyOrientationProperty")
    public static let nearestSampling = CIImageOption(rawValue: "kCIImageNearestSampling")
    public static let toneMapHDRtoSDR = CIImageOption(rawValue: "kCIImageToneMapHDRtoSDR")
}
