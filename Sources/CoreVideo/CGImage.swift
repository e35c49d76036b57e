import Foundation
@_spi(Engine) import GraphKitCore

// A bitmap image as CoreGraphics declares it (Linux has no CoreGraphics), as far as code that
// gets one from AVAssetImageGenerator reads it: its geometry, its pixel layout, and its bytes
// through `dataProvider?.data` (CFDataGetBytePtr, CFDataGetLength). No drawing, no colour
// management: an image here is 8-bit BGRA (32-bit little-endian, alpha first, opaque).

/// A read-only bitmap image, as CoreGraphics' `CGImage`: 8-bit BGRA pixels in rows of
/// ``bytesPerRow`` bytes (`kCGImageAlphaNoneSkipFirst | kCGBitmapByteOrder32Little`, what
/// AVFoundation's image generator gives on Apple's platforms).
public final class CGImage: Sendable {
    public let width: Int
    public let height: Int
    public let bitsPerComponent: Int
    public let bitsPerPixel: Int
    public let bytesPerRow: Int
    public let bitmapInfo: CGBitmapInfo
    /// Where the bytes are: ``CGDataProvider/data``.
    public let dataProvider: CGDataProvider?

    public var alphaInfo: CGImageAlphaInfo { CGImageAlphaInfo(rawValue: bitmapInfo.rawValue & CGBitmapInfo.alphaInfoMask.rawValue) ?? .none }

    /// A CGImage of a BGRA frame of GraphKit's (its rows as they are, copied once).
    package init?(bgra frame: SampleBuffer) {
        guard case .rawVideo(let v)? = frame.format, v.pixelFormat == .bgra, v.width > 0, v.height > 0,
              let layout = frame.planeLayout(v).first else { return nil }
        let needed = layout.offset + layout.stride * (v.height - 1) + v.width * 4
        guard frame.byteCount >= needed else { return nil }
        let bytes = frame.withUnsafeBytes { raw in [UInt8](raw[layout.offset..<needed]) }
        width = v.width
        height = v.height
        bitsPerComponent = 8
        bitsPerPixel = 32
        bytesPerRow = layout.stride
        bitmapInfo = CGBitmapInfo(rawValue: CGImageAlphaInfo.noneSkipFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue)
        dataProvider = CGDataProvider(data: CFData(bytes))
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
public final class CGDataProvider: Sendable {
    public let data: CFData?

    public init(data: CFData) { self.data = data }
}

/// A count or an index, as CoreFoundation declares it.
public typealias CFIndex = Int

/// CoreFoundation's immutable bytes, as `CGDataProvider.data` gives them: read them with
/// ``CFDataGetBytePtr(_:)`` and ``CFDataGetLength(_:)``, or as `Data` with ``bytes``. The bytes
/// live as long as the CFData.
public final class CFData: @unchecked Sendable {
    // Unchecked: memory written once, in init, and only read afterwards.
    private let memory: UnsafeMutableRawBufferPointer

    public init<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        memory = .allocate(byteCount: max(1, bytes.count), alignment: 16)
        _ = memory.initializeMemory(as: UInt8.self, from: bytes)
        length = bytes.count
    }

    deinit { memory.deallocate() }

    public let length: Int
    /// A copy of the bytes.
    public var bytes: Data { Data(bytes: memory.baseAddress!, count: length) }
    fileprivate var pointer: UnsafePointer<UInt8> { UnsafePointer(memory.baseAddress!.assumingMemoryBound(to: UInt8.self)) }
}

/// The first byte of `data`; valid while `data` lives.
public func CFDataGetBytePtr(_ data: CFData!) -> UnsafePointer<UInt8>! { data?.pointer }

public func CFDataGetLength(_ data: CFData!) -> CFIndex { data?.length ?? 0 }

/// The provider's bytes (the same CFData: they are immutable).
public func CGDataProviderCopyData(_ provider: CGDataProvider?) -> CFData? { provider?.data }
