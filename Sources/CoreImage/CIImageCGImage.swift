import CoreVideo
import ImageIO
import UniformTypeIdentifiers

// CoreImage and CoreGraphics' images: a CIImage of a CGImage, a CGImage of a CIImage, and a
// picture file written straight from a CIImage (through ImageIO's encoders).

extension CIImage {
    /// An image of `image`'s pixels, in CoreImage's coordinates (its top row at the top): drawn
    /// once into a BGRA buffer (any layout CGImage holds), read when rendered. Empty when the
    /// picture cannot be held (a side past 16,384 pixels).
    public convenience init(cgImage image: CGImage) {
        var made: CVPixelBuffer?
        guard CVPixelBufferCreate(kCFAllocatorDefault, image.width, image.height, kCVPixelFormatType_32BGRA, nil, &made) == kCVReturnSuccess,
              let buffer = made else {
            self.init(.empty, cgImage: image)
            return
        }
        CVPixelBufferLockBaseAddress(buffer, [])
        if let context = CGContext(data: CVPixelBufferGetBaseAddress(buffer), width: image.width, height: image.height, bitsPerComponent: 8,
                                   bytesPerRow: CVPixelBufferGetBytesPerRow(buffer), space: CGColorSpaceCreateDeviceRGB(),
                                   bitmapInfo: CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue) {
            context.draw(image, in: CGRect(x: 0, y: 0, width: image.width, height: image.height))
        }
        CVPixelBufferUnlockBaseAddress(buffer, [])
        self.init(.pixels(buffer), cgImage: image)
    }

    /// As ``init(cgImage:)``; the options are accepted and none is used (``CIImageOption``).
    public convenience init(cgImage image: CGImage, options: [CIImageOption: Any]?) { self.init(cgImage: image) }

    /// The CGImage the image was made of, when it is that unchanged; nil otherwise, as Apple's.
    public var cgImage: CGImage? { sourceCGImage }

    /// The colour space of the pixels it was made of: device RGB for a pixel buffer's or a
    /// CGImage's (nothing here is colour managed), nil for a colour or an empty image.
    public var colorSpace: CGColorSpace? {
        switch recipe {
        case .empty, .color: nil
        default: CGColorSpaceCreateDeviceRGB()
        }
    }
}

extension CIContext {
    /// Apple's `render(_:to:bounds:colorSpace:)`: the colour space is accepted and not used.
    public func render(_ image: CIImage, to buffer: CVPixelBuffer, bounds: CGRect, colorSpace: CGColorSpace?) {
        render(image, to: buffer, bounds: bounds)
    }

    /// Apple's `render(_:toBitmap:rowBytes:bounds:format:colorSpace:)`: the colour space is
    /// accepted and not used.
    public func render(_ image: CIImage, toBitmap data: UnsafeMutableRawPointer, rowBytes: Int, bounds: CGRect, format: CIFormat,
                       colorSpace: CGColorSpace?) {
        render(image, toBitmap: data, rowBytes: rowBytes, bounds: bounds, format: format)
    }

    /// The part of `image` inside `fromRect` as a BGRA CGImage (premultiplied, as Apple's), its
    /// top row the rectangle's top; nil for an empty or infinite rectangle, or one past 16,384
    /// pixels a side.
    public func createCGImage(_ image: CIImage, from fromRect: CGRect) -> CGImage? {
        createCGImage(image, from: fromRect, format: .BGRA8, colorSpace: nil)
    }

    /// As ``createCGImage(_:from:)`` in `format` (``CIFormat/BGRA8``, ``CIFormat/RGBA8``,
    /// ``CIFormat/ARGB8``, ``CIFormat/ABGR8``; nil for another); the colour space is not used.
    public func createCGImage(_ image: CIImage, from fromRect: CGRect, format: CIFormat, colorSpace: CGColorSpace?) -> CGImage? {
        let r = fromRect.integral
        guard !r.isNull, !r.isInfinite, r.width >= 1, r.height >= 1, r.width <= 16_384, r.height <= 16_384,
              let info = format.bitmapInfo else { return nil }
        let (width, height) = (Int(r.width), Int(r.height))
        let rowBytes = width * 4
        let data = NSMutableData(length: rowBytes * height) ?? NSMutableData()
        guard data.length == rowBytes * height else { return nil }
        render(image, toBitmap: data.mutableBytes, rowBytes: rowBytes, bounds: r, format: format)
        return CGImage(width: width, height: height, bitsPerComponent: 8, bitsPerPixel: 32, bytesPerRow: rowBytes,
                       space: colorSpace ?? CGColorSpaceCreateDeviceRGB(), bitmapInfo: info, provider: CGDataProvider(data: data),
                       decode: nil, shouldInterpolate: false, intent: .defaultIntent)
    }

    /// Writes the image's extent as a PNG at `url` (through ImageIO); throws when the image is
    /// empty or infinite, or the file cannot be written, naming it.
    public func writePNGRepresentation(of image: CIImage, to url: URL, format: CIFormat, colorSpace: CGColorSpace,
                                       options: [CIImageRepresentationOption: Any] = [:]) throws {
        try write(image, to: url, type: kUTTypePNG, format: format, properties: nil)
    }

    /// Writes the image's extent as a JPEG at `url`; `kCGImageDestinationLossyCompressionQuality`
    /// in `options` is the quality (0…1), as ImageIO takes it.
    public func writeJPEGRepresentation(of image: CIImage, to url: URL, colorSpace: CGColorSpace,
                                        options: [CIImageRepresentationOption: Any] = [:]) throws {
        let quality = options[CIImageRepresentationOption(rawValue: kCGImageDestinationLossyCompressionQuality)]
        try write(image, to: url, type: kUTTypeJPEG, format: .BGRA8,
                  properties: quality.map { [kCGImageDestinationLossyCompressionQuality: $0] })
    }

    private func write(_ image: CIImage, to url: URL, type: String, format: CIFormat, properties: [String: Any]?) throws {
        func failure(_ why: String) -> NSError {
            NSError(domain: "CIContext", code: 1, userInfo: [NSLocalizedDescriptionKey: "cannot write \(url.path): \(why)"])
        }
        guard let picture = createCGImage(image, from: image.extent, format: format == .RGBA8 || format == .ARGB8 || format == .ABGR8 ? format : .BGRA8,
                                          colorSpace: nil) else {
            throw failure("the image is empty or has no bounds (crop an infinite one first)")
        }
        guard let destination = CGImageDestinationCreateWithURL(url as CFURL, type as CFString, 1, nil) else { throw failure("not a file ImageIO can make") }
        CGImageDestinationAddImage(destination, picture, properties as CFDictionary?)
        guard CGImageDestinationFinalize(destination) else { throw failure("ImageIO could not write it") }
    }
}

/// Keys of `CIContext.write…Representation`'s options.
public struct CIImageRepresentationOption: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

extension CIFormat {
    /// CoreGraphics' name for the 8-bit formats rendered (premultiplied alpha, as CoreImage's
    /// bitmaps are); nil for the others.
    var bitmapInfo: CGBitmapInfo? {
        switch self {
        case .BGRA8: CGBitmapInfo(rawValue: CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue)
        case .RGBA8: CGBitmapInfo(rawValue: CGImageAlphaInfo.premultipliedLast.rawValue)
        case .ARGB8: CGBitmapInfo(rawValue: CGImageAlphaInfo.premultipliedFirst.rawValue)
        case .ABGR8: CGBitmapInfo(rawValue: CGImageAlphaInfo.premultipliedLast.rawValue | CGBitmapInfo.byteOrder32Little.rawValue)
        default: nil
        }
    }
}
