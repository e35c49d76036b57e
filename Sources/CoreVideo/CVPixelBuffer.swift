@_exported import CoreGraphics
@_spi(Engine) import GraphKitCore

/// A result code of CoreVideo's functions.
public typealias CVReturn = Int32
public let kCVReturnSuccess: CVReturn = 0
public let kCVReturnFirst: CVReturn = -6660
public let kCVReturnError: CVReturn = -6660
public let kCVReturnInvalidArgument: CVReturn = -6661
public let kCVReturnAllocationFailed: CVReturn = -6662
public let kCVReturnUnsupported: CVReturn = -6663
public let kCVReturnInvalidPixelFormat: CVReturn = -6680
public let kCVReturnInvalidSize: CVReturn = -6681
public let kCVReturnInvalidPixelBufferAttributes: CVReturn = -6682
public let kCVReturnPoolAllocationFailed: CVReturn = -6690
public let kCVReturnInvalidPoolAttributes: CVReturn = -6691

// MARK: Pixel formats (the four-character codes CoreVideo uses)

/// BGRA, 8 bits a component, packed: GraphKit's `bgra`.
public let kCVPixelFormatType_32BGRA: OSType = 0x4247_5241  // 'BGRA'
/// RGBA, 8 bits a component, packed: GraphKit's `rgba`.
public let kCVPixelFormatType_32RGBA: OSType = 0x5247_4241  // 'RGBA'
/// ARGB: not a format GraphKit holds; refused with `kCVReturnInvalidPixelFormat`.
public let kCVPixelFormatType_32ARGB: OSType = 0x0000_0020
/// Three planes, Y then Cb then Cr, chroma halved both ways (4:2:0), video range: GraphKit's `i420`.
public let kCVPixelFormatType_420YpCbCr8Planar: OSType = 0x7934_3230  // 'y420'
/// As `_420YpCbCr8Planar`, full range (GraphKit's frames do not record the range: the same `i420`).
public let kCVPixelFormatType_420YpCbCr8PlanarFullRange: OSType = 0x6634_3230  // 'f420'
/// Two planes, Y then interleaved CbCr (4:2:0), video range: GraphKit's `nv12`.
public let kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange: OSType = 0x3432_3076  // '420v'
/// As `_420YpCbCr8BiPlanarVideoRange`, full range (the same `nv12`).
public let kCVPixelFormatType_420YpCbCr8BiPlanarFullRange: OSType = 0x3432_3066  // '420f'
/// 10-bit 4:2:0, luma plane then interleaved chroma, each sample in a 16-bit little-endian
/// word's high 10 bits, video range: GraphKit's `p010_10le` (GStreamer's P010_10LE).
public let kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange: OSType = 0x7834_3230  // 'x420'
/// As `_420YpCbCr10BiPlanarVideoRange`, full range (the same `p010_10le`).
public let kCVPixelFormatType_420YpCbCr10BiPlanarFullRange: OSType = 0x7866_3230  // 'xf20'

extension PixelFormat {
    /// GraphKit's pixel format for a CoreVideo one; nil for one GraphKit does not hold.
    package init?(cvPixelFormat type: OSType) {
        switch type {
        case kCVPixelFormatType_32BGRA: self = .bgra
        case kCVPixelFormatType_32RGBA: self = .rgba
        case kCVPixelFormatType_420YpCbCr8Planar, kCVPixelFormatType_420YpCbCr8PlanarFullRange: self = .i420
        case kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange, kCVPixelFormatType_420YpCbCr8BiPlanarFullRange: self = .nv12
        case graphKit420YpCbCr10PlanarLE: self = .i420_10le
        case kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange, kCVPixelFormatType_420YpCbCr10BiPlanarFullRange: self = .p010_10le
        default: return nil
        }
    }

    /// The CoreVideo code for this format (video range for the 4:2:0 ones).
    package var cvPixelFormat: OSType {
        switch self {
        case .bgra: kCVPixelFormatType_32BGRA
        case .rgba: kCVPixelFormatType_32RGBA
        case .i420: kCVPixelFormatType_420YpCbCr8Planar
        case .nv12: kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange
        case .i420_10le: graphKit420YpCbCr10PlanarLE
        case .p010_10le: kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange
        }
    }
}

/// GraphKit's code for I420 of 10-bit samples in 16-bit little-endian words ('gk10'): CoreVideo
/// has 10-bit 4:2:0 only biplanar (`kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange`, its
/// samples in a word's high bits), a layout of its own.
package let graphKit420YpCbCr10PlanarLE: OSType = 0x676B_3130

// MARK: Attribute keys (CoreVideo's own strings)

public let kCVPixelBufferPixelFormatTypeKey: CFString = "PixelFormatType"
public let kCVPixelBufferWidthKey: CFString = "Width"
public let kCVPixelBufferHeightKey: CFString = "Height"
/// Accepted and ignored: GraphKit's rows are 4-byte aligned.
public let kCVPixelBufferBytesPerRowAlignmentKey: CFString = "BytesPerRowAlignment"
/// Accepted and ignored (no IOSurface on Linux).
public let kCVPixelBufferIOSurfacePropertiesKey: CFString = "IOSurfaceProperties"
/// Accepted and ignored: every frame is plain memory.
public let kCVPixelBufferCGImageCompatibilityKey: CFString = "CGImageCompatibility"
/// Accepted and ignored: every frame is plain memory.
public let kCVPixelBufferCGBitmapContextCompatibilityKey: CFString = "CGBitmapContextCompatibility"
/// Accepted and ignored.
public let kCVPixelBufferMetalCompatibilityKey: CFString = "MetalCompatibility"
/// Accepted and ignored: the pool makes frames as they are needed and keeps those returned.
public let kCVPixelBufferPoolMinimumBufferCountKey: CFString = "MinimumBufferCount"

/// The keys GraphKit reads or knowingly ignores in pixel-buffer attributes.
package let knownPixelBufferAttributeKeys: Set<String> = [
    kCVPixelBufferPixelFormatTypeKey, kCVPixelBufferWidthKey, kCVPixelBufferHeightKey, kCVPixelBufferBytesPerRowAlignmentKey,
    kCVPixelBufferIOSurfacePropertiesKey, kCVPixelBufferCGImageCompatibilityKey, kCVPixelBufferCGBitmapContextCompatibilityKey,
    kCVPixelBufferMetalCompatibilityKey,
]

// MARK: CVBuffer, CVImageBuffer, CVPixelBuffer

/// A frame of pixels, as CoreVideo's `CVBuffer`/`CVImageBuffer`/`CVPixelBuffer` (one class, the
/// two others names for it, as in CoreVideo). Underneath, a raw video `SampleBuffer`: handing it
/// to a writer does not copy it.
///
/// Lock it (`CVPixelBufferLockBaseAddress`) before touching its bytes, as on Apple's platforms:
/// locking for writing (no `.readOnly` flag) gives this buffer its own pixels if anyone else
/// still holds them (an encoder reading an earlier append), so writing never changes a frame
/// already handed over. Addresses stay valid until the matching unlock.
public final class CVBuffer: Sendable {
    private struct State {
        var sample: SampleBuffer
        var locks = 0
        var base: UnsafeMutableRawPointer?
    }
    private let state: Guarded<State>
    /// Its attachments (`CVBufferSetAttachment`), by key.
    package let attachments = Attachments()
    /// The code it was made with (a full-range code stays full-range here).
    package let pixelFormatType: OSType
    package let videoFormat: MediaFormat.VideoFormat

    package init(sample: SampleBuffer, videoFormat: MediaFormat.VideoFormat, pixelFormatType: OSType? = nil) {
        state = Guarded(State(sample: sample))
        self.videoFormat = videoFormat
        self.pixelFormatType = pixelFormatType ?? videoFormat.pixelFormat.cvPixelFormat
    }

    /// The frame, as the engine takes it.
    package var sample: SampleBuffer { state.withLock { $0.sample } }

    fileprivate func lock(readOnly: Bool) {
        state.withLock { s in
            if s.locks == 0 || (!readOnly && s.base == nil) {
                if readOnly {
                    s.base = s.sample.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
                } else {
                    s.base = s.sample.withUnsafeMutableBytes { $0.baseAddress }
                }
            }
            s.locks += 1
        }
    }

    fileprivate func unlock() -> Bool {
        state.withLock { s in
            guard s.locks > 0 else { return false }
            s.locks -= 1
            return true
        }
    }

    /// The start of the pixels: the locked address, or (unlocked, which CoreVideo leaves
    /// undefined) the current one.
    fileprivate var baseAddress: UnsafeMutableRawPointer? {
        state.withLock { s in
            s.base ?? s.sample.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
        }
    }

    fileprivate var planes: [(offset: Int, stride: Int, width: Int, height: Int)] {
        state.withLock { $0.sample.planeLayout(videoFormat) }
    }

    fileprivate var byteCount: Int { state.withLock { $0.sample.byteCount } }
}

public typealias CVImageBuffer = CVBuffer
public typealias CVPixelBuffer = CVImageBuffer

/// How a pixel buffer is locked.
public struct CVPixelBufferLockFlags: OptionSet, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    /// Only read while locked: no copy is made even when someone else holds the pixels.
    public static let readOnly = CVPixelBufferLockFlags(rawValue: 1)
}

@discardableResult
public func CVPixelBufferLockBaseAddress(_ pixelBuffer: CVPixelBuffer, _ lockFlags: CVPixelBufferLockFlags) -> CVReturn {
    pixelBuffer.lock(readOnly: lockFlags.contains(.readOnly))
    return kCVReturnSuccess
}

/// Unlocks; `kCVReturnError` when the buffer is not locked.
@discardableResult
public func CVPixelBufferUnlockBaseAddress(_ pixelBuffer: CVPixelBuffer, _ unlockFlags: CVPixelBufferLockFlags) -> CVReturn {
    pixelBuffer.unlock() ? kCVReturnSuccess : kCVReturnError
}

/// The first byte of the pixels (of the first plane for a planar format: CoreVideo gives a
/// planar description block there instead, which GraphKit does not have; use
/// `CVPixelBufferGetBaseAddressOfPlane`).
public func CVPixelBufferGetBaseAddress(_ pixelBuffer: CVPixelBuffer) -> UnsafeMutableRawPointer? {
    pixelBuffer.baseAddress
}

public func CVPixelBufferGetBaseAddressOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> UnsafeMutableRawPointer? {
    let planes = pixelBuffer.planes
    guard planes.count > 1, planes.indices.contains(planeIndex) else { return nil }
    return pixelBuffer.baseAddress.map { $0 + planes[planeIndex].offset }
}

/// Bytes from one row to the next (of the first plane for a planar format).
public func CVPixelBufferGetBytesPerRow(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.planes.first?.stride ?? 0 }

/// 0 for a plane a packed format does not have, as CoreVideo.
public func CVPixelBufferGetBytesPerRowOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    let planes = pixelBuffer.planes
    return planes.count > 1 && planes.indices.contains(planeIndex) ? planes[planeIndex].stride : 0
}

public func CVPixelBufferGetWidth(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.videoFormat.width }
public func CVPixelBufferGetHeight(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.videoFormat.height }

public func CVPixelBufferGetWidthOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    let planes = pixelBuffer.planes
    return planes.count > 1 && planes.indices.contains(planeIndex) ? planes[planeIndex].width : 0
}

public func CVPixelBufferGetHeightOfPlane(_ pixelBuffer: CVPixelBuffer, _ planeIndex: Int) -> Int {
    let planes = pixelBuffer.planes
    return planes.count > 1 && planes.indices.contains(planeIndex) ? planes[planeIndex].height : 0
}

public func CVPixelBufferGetPixelFormatType(_ pixelBuffer: CVPixelBuffer) -> OSType { pixelBuffer.pixelFormatType }

/// The number of planes: 0 for a packed (non-planar) format, as CoreVideo.
public func CVPixelBufferGetPlaneCount(_ pixelBuffer: CVPixelBuffer) -> Int {
    let count = pixelBuffer.planes.count
    return count > 1 ? count : 0
}

public func CVPixelBufferIsPlanar(_ pixelBuffer: CVPixelBuffer) -> Bool { pixelBuffer.planes.count > 1 }

public func CVPixelBufferGetDataSize(_ pixelBuffer: CVPixelBuffer) -> Int { pixelBuffer.byteCount }

public func CVImageBufferGetEncodedSize(_ imageBuffer: CVImageBuffer) -> CGSize {
    CGSize(width: imageBuffer.videoFormat.width, height: imageBuffer.videoFormat.height)
}

public func CVImageBufferGetDisplaySize(_ imageBuffer: CVImageBuffer) -> CGSize { CVImageBufferGetEncodedSize(imageBuffer) }

/// A video format for a size and CoreVideo code, or the CVReturn saying why not.
package func cvVideoFormat(width: Int, height: Int, pixelFormatType: OSType) -> Result<MediaFormat.VideoFormat, CVReturnError> {
    guard let format = PixelFormat(cvPixelFormat: pixelFormatType) else { return .failure(.init(kCVReturnInvalidPixelFormat)) }
    guard (1...16384).contains(width), (1...16384).contains(height) else { return .failure(.init(kCVReturnInvalidSize)) }
    return .success(.init(pixelFormat: format, width: width, height: height, frameRate: FrameRate(0, 1)))
}

/// A CVReturn as an Error, for Result.
package struct CVReturnError: Error { package let code: CVReturn; init(_ code: CVReturn) { self.code = code } }

/// A new zero-filled frame. Refuses (`kCVReturnInvalidPixelFormat`) a format GraphKit does not
/// hold, and (`kCVReturnInvalidSize`) a size outside 1…16384.
@discardableResult
public func CVPixelBufferCreate(_ allocator: CFAllocator?, _ width: Int, _ height: Int, _ pixelFormatType: OSType,
                                _ pixelBufferAttributes: CFDictionary?, _ pixelBufferOut: UnsafeMutablePointer<CVPixelBuffer?>) -> CVReturn {
    switch cvVideoFormat(width: width, height: height, pixelFormatType: pixelFormatType) {
    case .failure(let e):
        pixelBufferOut.pointee = nil
        return e.code
    case .success(let v):
        let sample = SampleBuffer(format: .rawVideo(v), byteCount: v.defaultFrameSize ?? 0)
        pixelBufferOut.pointee = CVPixelBuffer(sample: sample, videoFormat: v, pixelFormatType: pixelFormatType)
        return kCVReturnSuccess
    }
}

/// Called once the pixel buffer no longer refers to the caller's bytes.
public typealias CVPixelBufferReleaseBytesCallback = @convention(c) (UnsafeMutableRawPointer?, UnsafeRawPointer?) -> Void

/// A pixel buffer over the caller's memory, without copying. Packed formats (BGRA, RGBA) only,
/// with `bytesPerRow` of exactly 4 × width, GraphKit's layout (else `kCVReturnInvalidArgument`);
/// `releaseCallback` is called once, when no buffer refers to the memory any more.
@discardableResult
public func CVPixelBufferCreateWithBytes(_ allocator: CFAllocator?, _ width: Int, _ height: Int, _ pixelFormatType: OSType,
                                         _ baseAddress: UnsafeMutableRawPointer, _ bytesPerRow: Int,
                                         _ releaseCallback: CVPixelBufferReleaseBytesCallback?, _ releaseRefCon: UnsafeMutableRawPointer?,
                                         _ pixelBufferAttributes: CFDictionary?,
                                         _ pixelBufferOut: UnsafeMutablePointer<CVPixelBuffer?>) -> CVReturn {
    pixelBufferOut.pointee = nil
    let v: MediaFormat.VideoFormat
    switch cvVideoFormat(width: width, height: height, pixelFormatType: pixelFormatType) {
    case .failure(let e): return e.code
    case .success(let format): v = format
    }
    guard v.pixelFormat == .bgra || v.pixelFormat == .rgba, bytesPerRow == width * 4 else { return kCVReturnInvalidArgument }
    let refCon = UInt(bitPattern: releaseRefCon), base = UInt(bitPattern: baseAddress)
    let memory = UnsafeMutableRawBufferPointer(start: baseAddress, count: bytesPerRow * height)
    let sample = SampleBuffer(format: .rawVideo(v), wrapping: memory) {
        releaseCallback?(UnsafeMutableRawPointer(bitPattern: refCon), UnsafeRawPointer(bitPattern: base))
    }
    pixelBufferOut.pointee = CVPixelBuffer(sample: sample, videoFormat: v, pixelFormatType: pixelFormatType)
    return kCVReturnSuccess
}

/// The pixel format `attributes` ask for with `kCVPixelBufferPixelFormatTypeKey` (a code, or an
/// array of codes, of which the first is used): `defaultFormat` when they do not say, nil when
/// the value is not a code.
package func pixelFormatType(in attributes: CFDictionary, default defaultFormat: OSType) -> OSType? {
    switch attributes[kCVPixelBufferPixelFormatTypeKey] {
    case nil: defaultFormat
    case let list as [Any]: list.first.flatMap(settingsInteger).flatMap(OSType.init(exactly:))
    case let value: settingsInteger(value).flatMap(OSType.init(exactly:))
    }
}

// MARK: CVPixelBufferPool

/// Frames to draw into, recycled, as CoreVideo's `CVPixelBufferPool`: over GraphKit's
/// `PixelBufferPool`. A frame goes back to the pool once its last holder (your variable, the
/// encoder) lets go of it.
public final class CVPixelBufferPool: @unchecked Sendable {
    // Unchecked: its attributes are a CFDictionary ([String: Any], as CoreVideo's API takes them),
    // which the compiler cannot prove Sendable; set once when made and only read after.
    package let pool: PixelBufferPool
    package let pixelFormatType: OSType
    package let attributes: CFDictionary

    package init(pool: PixelBufferPool, pixelFormatType: OSType, attributes: CFDictionary) {
        self.pool = pool
        self.pixelFormatType = pixelFormatType
        self.attributes = attributes
    }

    /// A pool making frames as `attributes` say (`kCVPixelBufferPixelFormatTypeKey`,
    /// `kCVPixelBufferWidthKey`, `kCVPixelBufferHeightKey`), or the CVReturn saying why not.
    package static func make(attributes: CFDictionary?, defaultWidth: Int? = nil, defaultHeight: Int? = nil,
                             defaultFormat: OSType = kCVPixelFormatType_32BGRA) -> Result<CVPixelBufferPool, CVReturnError> {
        let a = attributes ?? [:]
        guard let type = CoreVideo.pixelFormatType(in: a, default: defaultFormat) else { return .failure(.init(kCVReturnInvalidPixelBufferAttributes)) }
        guard let width = a[kCVPixelBufferWidthKey].map(settingsInteger) ?? defaultWidth,
              let height = a[kCVPixelBufferHeightKey].map(settingsInteger) ?? defaultHeight else {
            return .failure(.init(kCVReturnInvalidPixelBufferAttributes))
        }
        switch cvVideoFormat(width: width, height: height, pixelFormatType: type) {
        case .failure(let e): return .failure(e)
        case .success(let v):
            guard let pool = try? PixelBufferPool(pixelFormat: v.pixelFormat, width: width, height: height) else {
                return .failure(.init(kCVReturnPoolAllocationFailed))
            }
            return .success(CVPixelBufferPool(pool: pool, pixelFormatType: type, attributes: a))
        }
    }

    /// A frame from the pool.
    package func makePixelBuffer() -> CVPixelBuffer? {
        guard let sample = try? pool.makePixelBuffer() else { return nil }
        return CVPixelBuffer(sample: sample, videoFormat: pool.format, pixelFormatType: pixelFormatType)
    }
}

/// A pool of frames as `pixelBufferAttributes` say (format, width and height are required);
/// `poolAttributes` are accepted and ignored.
@discardableResult
public func CVPixelBufferPoolCreate(_ allocator: CFAllocator?, _ poolAttributes: CFDictionary?, _ pixelBufferAttributes: CFDictionary?,
                                    _ poolOut: UnsafeMutablePointer<CVPixelBufferPool?>) -> CVReturn {
    switch CVPixelBufferPool.make(attributes: pixelBufferAttributes) {
    case .success(let pool):
        poolOut.pointee = pool
        return kCVReturnSuccess
    case .failure(let e):
        poolOut.pointee = nil
        return e.code
    }
}

/// A frame from `pixelBufferPool` (its pixels are what its last user left: draw every one).
@discardableResult
public func CVPixelBufferPoolCreatePixelBuffer(_ allocator: CFAllocator?, _ pixelBufferPool: CVPixelBufferPool,
                                               _ pixelBufferOut: UnsafeMutablePointer<CVPixelBuffer?>) -> CVReturn {
    pixelBufferOut.pointee = pixelBufferPool.makePixelBuffer()
    return pixelBufferOut.pointee == nil ? kCVReturnPoolAllocationFailed : kCVReturnSuccess
}

public func CVPixelBufferPoolGetPixelBufferAttributes(_ pool: CVPixelBufferPool) -> CFDictionary? {
    var a = pool.attributes
    a[kCVPixelBufferPixelFormatTypeKey] = pool.pixelFormatType
    a[kCVPixelBufferWidthKey] = pool.pool.format.width
    a[kCVPixelBufferHeightKey] = pool.pool.format.height
    return a
}
