@_exported import CoreVideo
@_exported import UniformTypeIdentifiers

// ImageIO's keys (CGImageProperties.h, CGImageSource.h, CGImageDestination.h) with Apple's string
// values, so a dictionary written on a Mac (`[kCGImageDestinationLossyCompressionQuality: 0.8]`)
// means the same here. Those GraphKit acts on are said so where they are declared; the others
// compile and are read back where ImageIO would give them, or ignored.

// MARK: What a picture's properties say (CGImageSourceCopyPropertiesAtIndex)

/// Width in pixels, an Int (given by ``CGImageSourceCopyPropertiesAtIndex(_:_:_:)``).
public let kCGImagePropertyPixelWidth: CFString = "PixelWidth"
/// Height in pixels, an Int.
public let kCGImagePropertyPixelHeight: CFString = "PixelHeight"
/// How the picture is meant to be shown, a ``CGImagePropertyOrientation`` raw value (1…8), from
/// a JPEG's EXIF or a PNG's eXIf chunk; written by ``CGImageDestinationAddImage(_:_:_:)``.
public let kCGImagePropertyOrientation: CFString = "Orientation"
/// Bits a sample, an Int (8 for the pictures GraphKit reads).
public let kCGImagePropertyDepth: CFString = "Depth"
/// Whether the picture has alpha, a Bool (a PNG of colour type 4 or 6, or with a tRNS chunk).
public let kCGImagePropertyHasAlpha: CFString = "HasAlpha"
/// The colour model, ``kCGImagePropertyColorModelRGB`` or ``kCGImagePropertyColorModelGray``.
public let kCGImagePropertyColorModel: CFString = "ColorModel"
public let kCGImagePropertyColorModelRGB: CFString = "RGB"
public let kCGImagePropertyColorModelGray: CFString = "Gray"
public let kCGImagePropertyColorModelCMYK: CFString = "CMYK"
public let kCGImagePropertyDPIWidth: CFString = "DPIWidth"
public let kCGImagePropertyDPIHeight: CFString = "DPIHeight"
public let kCGImagePropertyIsFloat: CFString = "IsFloat"
public let kCGImagePropertyIsIndexed: CFString = "IsIndexed"
public let kCGImagePropertyProfileName: CFString = "ProfileName"
/// The file's size in bytes, an Int (in ``CGImageSourceCopyProperties(_:_:)``).
public let kCGImagePropertyFileSize: CFString = "FileSize"

// The per-format dictionaries. GraphKit gives `{TIFF}` (with the orientation), `{Exif}`, `{GPS}`,
// `{MakerApple}`, `{JFIF}`, `{PNG}`, `{GIF}` and `{WebP}` where the file has them; the others are
// names only.
public let kCGImagePropertyTIFFDictionary: CFString = "{TIFF}"
public let kCGImagePropertyExifDictionary: CFString = "{Exif}"
public let kCGImagePropertyGPSDictionary: CFString = "{GPS}"
public let kCGImagePropertyIPTCDictionary: CFString = "{IPTC}"
public let kCGImagePropertyJFIFDictionary: CFString = "{JFIF}"
public let kCGImagePropertyPNGDictionary: CFString = "{PNG}"
public let kCGImagePropertyGIFDictionary: CFString = "{GIF}"
public let kCGImagePropertyHEICSDictionary: CFString = "{HEICS}"
public let kCGImagePropertyWebPDictionary: CFString = "{WebP}"
public let kCGImagePropertyMakerAppleDictionary: CFString = "{MakerApple}"
public let kCGImagePropertyOpenEXRDictionary: CFString = "{OpenEXR}"
/// The orientation inside `{TIFF}`, as ``kCGImagePropertyOrientation``.
public let kCGImagePropertyTIFFOrientation: CFString = "Orientation"
public let kCGImagePropertyTIFFArtist: CFString = "Artist"
public let kCGImagePropertyTIFFDateTime: CFString = "DateTime"
public let kCGImagePropertyTIFFSoftware: CFString = "Software"
public let kCGImagePropertyPNGInterlaceType: CFString = "InterlaceType"
public let kCGImagePropertyExifPixelXDimension: CFString = "PixelXDimension"
public let kCGImagePropertyExifPixelYDimension: CFString = "PixelYDimension"
public let kCGImagePropertyExifDateTimeOriginal: CFString = "DateTimeOriginal"

// Animation: a GIF's and a WebP's frames are read (`{GIF}`, `{WebP}`: the delays; the file's loop
// count, canvas and FrameInfo); APNG and HEICS sequences are not (an APNG reads as its first
// picture; a HEIF file's images are separate pictures).
public let kCGImagePropertyGIFDelayTime: CFString = "DelayTime"
public let kCGImagePropertyGIFUnclampedDelayTime: CFString = "UnclampedDelayTime"
public let kCGImagePropertyGIFLoopCount: CFString = "LoopCount"
public let kCGImagePropertyGIFHasGlobalColorMap: CFString = "HasGlobalColorMap"
public let kCGImagePropertyGIFCanvasPixelWidth: CFString = "CanvasPixelWidth"
public let kCGImagePropertyGIFCanvasPixelHeight: CFString = "CanvasPixelHeight"
public let kCGImagePropertyGIFFrameInfoArray: CFString = "FrameInfo"
public let kCGImagePropertyAPNGDelayTime: CFString = "DelayTime"
public let kCGImagePropertyAPNGUnclampedDelayTime: CFString = "UnclampedDelayTime"
public let kCGImagePropertyAPNGLoopCount: CFString = "LoopCount"
public let kCGImagePropertyAPNGCanvasPixelWidth: CFString = "CanvasPixelWidth"
public let kCGImagePropertyAPNGCanvasPixelHeight: CFString = "CanvasPixelHeight"
public let kCGImagePropertyAPNGFrameInfoArray: CFString = "FrameInfo"
public let kCGImagePropertyHEICSDelayTime: CFString = "DelayTime"
public let kCGImagePropertyHEICSUnclampedDelayTime: CFString = "UnclampedDelayTime"
public let kCGImagePropertyHEICSLoopCount: CFString = "LoopCount"
public let kCGImagePropertyHEICSCanvasPixelWidth: CFString = "CanvasPixelWidth"
public let kCGImagePropertyHEICSCanvasPixelHeight: CFString = "CanvasPixelHeight"
public let kCGImagePropertyHEICSFrameInfoArray: CFString = "FrameInfo"
public let kCGImagePropertyWebPDelayTime: CFString = "DelayTime"
public let kCGImagePropertyWebPUnclampedDelayTime: CFString = "UnclampedDelayTime"
public let kCGImagePropertyWebPLoopCount: CFString = "LoopCount"
public let kCGImagePropertyWebPCanvasPixelWidth: CFString = "CanvasPixelWidth"
public let kCGImagePropertyWebPCanvasPixelHeight: CFString = "CanvasPixelHeight"
public let kCGImagePropertyWebPFrameInfoArray: CFString = "FrameInfo"

// MARK: Reading options (CGImageSource)

/// A type identifier to try first when the file's own bytes do not say (ignored: GraphKit reads a
/// picture's type from its bytes only).
public let kCGImageSourceTypeIdentifierHint: CFString = "kCGImageSourceTypeIdentifierHint"
/// Whether to keep the decoded picture (ignored: each call decodes; a CGImage holds its pixels).
public let kCGImageSourceShouldCache: CFString = "kCGImageSourceShouldCache"
/// Whether to decode when the image is made (always, here).
public let kCGImageSourceShouldCacheImmediately: CFString = "kCGImageSourceShouldCacheImmediately"
public let kCGImageSourceShouldAllowFloat: CFString = "kCGImageSourceShouldAllowFloat"
/// Make the thumbnail from the picture even when the file holds one (GraphKit never reads a
/// file's own thumbnail, so this and ``kCGImageSourceCreateThumbnailFromImageIfAbsent`` mean the
/// same).
public let kCGImageSourceCreateThumbnailFromImageAlways: CFString = "kCGImageSourceCreateThumbnailFromImageAlways"
/// Make the thumbnail from the picture when the file holds none (always, here).
public let kCGImageSourceCreateThumbnailFromImageIfAbsent: CFString = "kCGImageSourceCreateThumbnailFromImageIfAbsent"
/// The largest width or height of a thumbnail, in pixels (the picture is scaled down to fit, its
/// aspect kept; never up).
public let kCGImageSourceThumbnailMaxPixelSize: CFString = "kCGImageSourceThumbnailMaxPixelSize"
/// Turn the thumbnail as its orientation says (``kCGImagePropertyOrientation``), upright.
public let kCGImageSourceCreateThumbnailWithTransform: CFString = "kCGImageSourceCreateThumbnailWithTransform"
public let kCGImageSourceSubsampleFactor: CFString = "kCGImageSourceSubsampleFactor"
public let kCGImageSourceDecodeRequest: CFString = "kCGImageSourceDecodeRequest"
public let kCGImageSourceDecodeToHDR: CFString = "kCGImageSourceDecodeToHDR"
public let kCGImageSourceDecodeToSDR: CFString = "kCGImageSourceDecodeToSDR"

// MARK: Writing options (CGImageDestination)

/// JPEG's quality from 0.0 (the smallest file) to 1.0 (the best picture), a number: libjpeg's
/// quality scale 1…100 (`max(1, round(q × 100))`), whose tables GraphKit's JPEG encoder uses.
/// Absent: 0.75, libjpeg's default. Ignored for PNG, which is lossless.
public let kCGImageDestinationLossyCompressionQuality: CFString = "kCGImageDestinationLossyCompressionQuality"
/// A colour to put behind transparent pixels (ignored: the pictures GraphKit writes are opaque).
public let kCGImageDestinationBackgroundColor: CFString = "kCGImageDestinationBackgroundColor"
/// Whether to embed a thumbnail (ignored: none is written).
public let kCGImageDestinationEmbedThumbnail: CFString = "kCGImageDestinationEmbedThumbnail"
/// The largest width or height to write, in pixels: a larger picture is scaled down to fit.
public let kCGImageDestinationImageMaxPixelSize: CFString = "kCGImageDestinationImageMaxPixelSize"
public let kCGImageDestinationOptimizeColorForSharing: CFString = "kCGImageDestinationOptimizeColorForSharing"
public let kCGImageDestinationDateTime: CFString = "kCGImageDestinationDateTime"
public let kCGImageDestinationMetadata: CFString = "kCGImageDestinationMetadata"
public let kCGImageDestinationMergeMetadata: CFString = "kCGImageDestinationMergeMetadata"
public let kCGImageMetadataShouldExcludeXMP: CFString = "kCGImageMetadataShouldExcludeXMP"
public let kCGImageMetadataShouldExcludeGPS: CFString = "kCGImageMetadataShouldExcludeGPS"

// MARK: Orientation

/// How a picture is meant to be shown, as ImageIO's `CGImagePropertyOrientation` (EXIF's and
/// TIFF's values 1…8).
public enum CGImagePropertyOrientation: UInt32, Sendable, CaseIterable {
    /// As stored.
    case up = 1
    /// Mirrored left to right.
    case upMirrored = 2
    /// Turned 180°.
    case down = 3
    /// Mirrored top to bottom.
    case downMirrored = 4
    /// Mirrored along the top-left to bottom-right diagonal.
    case leftMirrored = 5
    /// Stored turned 90° counterclockwise: shown turned 90° clockwise.
    case right = 6
    /// Mirrored along the top-right to bottom-left diagonal.
    case rightMirrored = 7
    /// Stored turned 90° clockwise: shown turned 90° counterclockwise.
    case left = 8
}

/// Where an image source is, as ImageIO's `CGImageSourceStatus`.
public enum CGImageSourceStatus: Int32, Sendable {
    case statusUnexpectedEOF = -5
    case statusInvalidData = -4
    case statusUnknownType = -3
    case statusReadingHeader = -2
    case statusIncomplete = -1
    case statusComplete = 0
}

/// A property value given as a number, whatever its Swift type (Int, Double, NSNumber, CGFloat).
func propertyNumber(_ value: Any?) -> Double? { settingsNumber(value) }
