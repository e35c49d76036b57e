import Foundation
import CCairo
@_spi(Engine) import GraphKitCore

// A bitmap image as CoreGraphics declares it (Linux has no CoreGraphics): its geometry, its pixel
// layout, and its bytes through `dataProvider?.data` (CFDataGetBytePtr, CFDataGetLength). The
// layouts are those of BitmapLayout (8-bit RGB in any alpha position and byte order, 8-bit
// gray): AVAssetImageGenerator and ImageIO give BGRA (32-bit little-endian, alpha first, opaque),
// a CGContext's makeImage its own layout. No colour management.

/// A read-only bitmap image, as CoreGraphics' `CGImage`: 8-bit pixels in rows of
/// ``bytesPerRow`` bytes, laid out as ``bitmapInfo`` says (BGRA,
/// `kCGImageAlphaNoneSkipFirst | kCGBitmapByteOrder32Little`, from AVFoundation's image generator,
/// as on Apple's platforms).
public final class CGImage: Sendable {
    public let width: Int
    public let height: Int
    public let bitsPerComponent: Int
    public let bitsPerPixel: Int
    public let bytesPerRow: Int
    public let bitmapInfo: CGBitmapInfo
    /// Where the bytes are: ``CGDataProvider/data``.
    public let dataProvider: CGDataProvider?
    /// The space the components are in (not managed: see ``CGColorSpace``).
    public let colorSpace: CGColorSpace?
    public let shouldInterpolate: Bool
    public let renderingIntent: CGColorRenderingIntent
    package let layout: BitmapLayout

    public var alphaInfo: CGImageAlphaInfo { CGImageAlphaInfo(rawValue: bitmapInfo.rawValue & CGBitmapInfo.alphaInfoMask.rawValue) ?? .none }

    /// A CGImage of a BGRA frame of GraphKit's (its rows as they are, copied once); with
    /// `straightAlpha` its fourth byte is alpha, not multiplied in (`.first`), else skipped.
    package init?(bgra frame: SampleBuffer, straightAlpha: Bool = false) {
        guard case .rawVideo(let v)? = frame.format, v.pixelFormat == .bgra, v.width > 0, v.height > 0,
              let layout = frame.planeLayout(v).first else { return nil }
        let needed = layout.offset + layout.stride * (v.height - 1) + v.width * 4
        guard frame.byteCount >= needed else { return nil }
        let bytes = frame.withUnsafeBytes { raw in NSData(bytes: raw.baseAddress! + layout.offset, length: needed - layout.offset) }
        width = v.width
        height = v.height
        bitsPerComponent = 8
        bitsPerPixel = 32
        bytesPerRow = layout.stride
        let alpha: CGImageAlphaInfo = straightAlpha ? .first : .noneSkipFirst
        bitmapInfo = CGBitmapInfo(rawValue: alpha.rawValue | CGBitmapInfo.byteOrder32Little.rawValue)
        dataProvider = CGDataProvider(data: bytes)
        colorSpace = CGColorSpace(name: CGColorSpace.sRGB)
        (shouldInterpolate, renderingIntent) = (true, .defaultIntent)
        self.layout = BitmapLayout(bitmapInfo: bitmapInfo.rawValue, model: .rgb, bitsPerComponent: 8, straightAlpha: true)!
    }

    /// An image of the pixels `provider` gives, as CoreGraphics'
    /// `CGImage(width:height:bitsPerComponent:bitsPerPixel:bytesPerRow:space:bitmapInfo:provider:decode:shouldInterpolate:intent:)`.
    /// Nil for a layout GraphKit does not read (BitmapLayout: 8-bit RGB, 32 bits a pixel, or 8-bit
    /// gray; straight alpha too), a zero size, rows shorter than a row of pixels, or fewer bytes
    /// than the rows need. `decode` arrays are not supported: an image with one is nil.
    public init?(width: Int, height: Int, bitsPerComponent: Int, bitsPerPixel: Int, bytesPerRow: Int, space: CGColorSpace,
                 bitmapInfo: CGBitmapInfo, provider: CGDataProvider, decode: UnsafePointer<CGFloat>?,
                 shouldInterpolate: Bool, intent: CGColorRenderingIntent) {
        guard decode == nil, width > 0, height > 0, bytesPerRow > 0,
              let layout = BitmapLayout(bitmapInfo: bitmapInfo.rawValue, model: space.model, bitsPerComponent: bitsPerComponent,
                                        straightAlpha: true),
              bitsPerPixel == layout.bytesPerPixel * 8,
              let row = BitmapLayout.rowBytes(width: width, bytesPerPixel: layout.bytesPerPixel), bytesPerRow >= row,
              case let (rows, o1) = bytesPerRow.multipliedReportingOverflow(by: height - 1), !o1,
              case let (needed, o2) = rows.addingReportingOverflow(row), !o2,
              let data = provider.data, data.length >= needed else { return nil }
        (self.width, self.height, self.bitsPerComponent, self.bitsPerPixel) = (width, height, bitsPerComponent, bitsPerPixel)
        (self.bytesPerRow, self.bitmapInfo, dataProvider, colorSpace) = (bytesPerRow, bitmapInfo, provider, space)
        (self.shouldInterpolate, renderingIntent, self.layout) = (shouldInterpolate, intent, layout)
    }

    /// A copy of `image`'s description over other bytes (a crop).
    private init(_ image: CGImage, width: Int, height: Int, bytesPerRow: Int, data: CFData) {
        (self.width, self.height, self.bytesPerRow) = (width, height, bytesPerRow)
        (bitsPerComponent, bitsPerPixel, bitmapInfo, colorSpace) = (image.bitsPerComponent, image.bitsPerPixel, image.bitmapInfo, image.colorSpace)
        (shouldInterpolate, renderingIntent, layout) = (image.shouldInterpolate, image.renderingIntent, image.layout)
        dataProvider = CGDataProvider(data: data)
    }

    /// CoreFoundation's type identifier of CGImages.
    public class var typeID: CFTypeID { 0x4347_494D }   // "CGIM"

    /// The pixels as packed BGRA rows (alpha 255 where the layout has none; straight alpha
    /// premultiplied), what GraphKit's encoders take; nil when the bytes are short.
    package func packedBGRA() -> [UInt8]? {
        guard let data = dataProvider?.data, data.length >= bytesPerRow * (height - 1) + width * layout.bytesPerPixel else { return nil }
        let src = data.bytes.assumingMemoryBound(to: UInt8.self)
        var out = [UInt8](repeating: 0, count: width * height * 4)
        out.withUnsafeMutableBytes { raw in
            let words = raw.baseAddress!.assumingMemoryBound(to: UInt32.self)
            for y in 0..<height { layout.toCairo(src + y * bytesPerRow, words + y * width, count: width) }
            // Cairo's words in memory order: B, G, R, A on a little-endian machine.
            if UInt32(littleEndian: 1) != 1 { for i in 0..<width * height { words[i] = words[i].byteSwapped } }
        }
        return out
    }

    /// A Cairo surface (ARGB32) of the pixels, for drawing; nil when it cannot be made.
    func cairoSurface() -> OpaquePointer? {
        guard let data = dataProvider?.data, data.length >= bytesPerRow * (height - 1) + width * layout.bytesPerPixel,
              let surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, Int32(width), Int32(height)) else { return nil }
        guard cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS, let pixels = cairo_image_surface_get_data(surface) else {
            cairo_surface_destroy(surface)
            return nil
        }
        let stride = Int(cairo_image_surface_get_stride(surface)), src = data.bytes.assumingMemoryBound(to: UInt8.self)
        for y in 0..<height {
            layout.toCairo(src + y * bytesPerRow, UnsafeMutableRawPointer(pixels + y * stride).assumingMemoryBound(to: UInt32.self), count: width)
        }
        cairo_surface_mark_dirty(surface)
        return surface
    }

    /// The part of the image inside `rect`, as CoreGraphics' `cropping(to:)`: `rect` in pixels
    /// from the image's top-left corner, made integral (outwards) and cut to the image; nil when
    /// nothing of it is inside. The pixels are copied (Apple's shares them).
    public func cropping(to rect: CGRect) -> CGImage? {
        let r = rect.standardized
        guard r.minX.isFinite, r.minY.isFinite, r.maxX.isFinite, r.maxY.isFinite else { return nil }
        let x0 = max(0, Int(r.minX.rounded(.down))), y0 = max(0, Int(r.minY.rounded(.down)))
        let x1 = min(width, Int(r.maxX.rounded(.up))), y1 = min(height, Int(r.maxY.rounded(.up)))
        guard x1 > x0, y1 > y0, let source = dataProvider?.data else { return nil }
        let pp = layout.bytesPerPixel, rowBytes = (x1 - x0) * pp
        let out = NSMutableData(length: rowBytes * (y1 - y0)) ?? NSMutableData()
        guard out.length == rowBytes * (y1 - y0) else { return nil }
        let src = source.bytes.assumingMemoryBound(to: UInt8.self)
        let dst = out.mutableBytes.assumingMemoryBound(to: UInt8.self)
        for y in y0..<y1 {
            (dst + (y - y0) * rowBytes).update(from: src + y * bytesPerRow + x0 * pp, count: rowBytes)
        }
        return CGImage(self, width: x1 - x0, height: y1 - y0, bytesPerRow: rowBytes, data: out)
    }
}

/// How a pixel's components are ordered and whether one is alpha, as CoreGraphics declares it.
public struct CGBitmapInfo: OptionSet, Sendable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let alphaInfoMask = CGBitmapInfo(rawValue: 0x1F)
    public static let byteOrderMask = CGBitmapInfo(rawValue: 0x7000)
    public static let byteOrder32Little = CGBitmapInfo(rawValue: 2 << 12)
    public static let byteOrder32Big = CGBitmapInfo(rawValue: 4 << 12)
}

/// Where alpha is in a pixel, as CoreGraphics declares it.
public enum CGImageAlphaInfo: UInt32, Sendable {
    case none = 0, premultipliedLast, premultipliedFirst, last, first, noneSkipLast, noneSkipFirst, alphaOnly
}

/// The source of an image's bytes, as CoreGraphics' `CGDataProvider`: here, bytes in memory.
public final class CGDataProvider: @unchecked Sendable {
    // Unchecked: NSData is not Sendable on Linux; a provider's data is immutable bytes (a
    // mutable one handed to init is copied).
    public let data: CFData?

    public init(data: CFData) { self.data = data is NSMutableData ? NSData(data: data as Data) : data }
}

/// A count or an index, as CoreFoundation declares it.
public typealias CFIndex = Int

/// CoreFoundation's immutable bytes, as `CGDataProvider.data` gives them: Foundation's `NSData`,
/// as the two are toll-free bridged on Apple's platforms, so `data as CFData` (from `Data`) and
/// `cfData as Data` compile and mean what they mean there. Read them with ``CFDataGetBytePtr(_:)``
/// and ``CFDataGetLength(_:)``; the bytes live as long as the CFData.
public typealias CFData = NSData

/// CoreFoundation's growable bytes, which ImageIO writes into
/// (`CGImageDestinationCreateWithData`): Foundation's `NSMutableData`, as toll-free bridged on
/// Apple's platforms, so `let data = NSMutableData()` passes as it is, or `as CFMutableData`, and
/// `data as Data` reads it afterwards.
public typealias CFMutableData = NSMutableData

/// The first byte of `data`; valid while `data` lives and, for a CFMutableData, until it changes.
/// Nil for nil.
public func CFDataGetBytePtr(_ data: CFData!) -> UnsafePointer<UInt8>! {
    guard let data else { return nil }
    // An empty NSData may have no storage: one byte of the process's stands in, as CoreFoundation
    // gives a pointer for an empty CFData.
    guard data.length > 0 else { return UnsafePointer(emptyBytes) }
    return data.bytes.assumingMemoryBound(to: UInt8.self)
}

/// The first byte of a mutable `data`, to write into; valid until it changes length.
public func CFDataGetMutableBytePtr(_ data: CFMutableData!) -> UnsafeMutablePointer<UInt8>! {
    guard let data else { return nil }
    guard data.length > 0 else { return emptyBytes }
    return data.mutableBytes.assumingMemoryBound(to: UInt8.self)
}

nonisolated(unsafe) private let emptyBytes = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)

public func CFDataGetLength(_ data: CFData!) -> CFIndex { data?.length ?? 0 }

/// A CFData of `length` bytes copied from `bytes`.
public func CFDataCreate(_ allocator: CFAllocator!, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex) -> CFData! {
    guard length > 0, let bytes else { return NSData() }
    return NSData(bytes: bytes, length: length)
}

/// An empty CFMutableData; `capacity` (0: no limit) is a hint here, not a limit.
public func CFDataCreateMutable(_ allocator: CFAllocator!, _ capacity: CFIndex) -> CFMutableData! {
    NSMutableData(capacity: max(0, capacity)) ?? NSMutableData()
}

/// Appends `length` bytes at `bytes` to `data`.
public func CFDataAppendBytes(_ data: CFMutableData!, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex) {
    guard let data, let bytes, length > 0 else { return }
    data.append(bytes, length: length)
}

/// Sets `data`'s length, cutting it or adding zero bytes.
public func CFDataSetLength(_ data: CFMutableData!, _ length: CFIndex) {
    data?.length = max(0, length)
}

/// The provider's bytes (the same CFData: they are immutable).
public func CGDataProviderCopyData(_ provider: CGDataProvider?) -> CFData? { provider?.data }
