import CoreVideo
import Testing

/// CoreVideo's pixel-buffer functions and pool, against CoreVideo's documented behaviour.
@Suite struct CVPixelBufferTests {
    @Test func packedBuffer() throws {
        var pb: CVPixelBuffer?
        #expect(CVPixelBufferCreate(kCFAllocatorDefault, 100, 50, kCVPixelFormatType_32BGRA, nil, &pb) == kCVReturnSuccess)
        let b = try #require(pb)
        #expect(CVPixelBufferGetWidth(b) == 100 && CVPixelBufferGetHeight(b) == 50)
        #expect(CVPixelBufferGetPixelFormatType(b) == kCVPixelFormatType_32BGRA)
        #expect(CVPixelBufferGetBytesPerRow(b) >= 400 && !CVPixelBufferIsPlanar(b) && CVPixelBufferGetPlaneCount(b) == 0)
        // A packed buffer has no planes: CoreVideo answers nil and 0 for them.
        #expect(CVPixelBufferGetBaseAddressOfPlane(b, 0) == nil && CVPixelBufferGetBytesPerRowOfPlane(b, 0) == 0)
        #expect(CVImageBufferGetEncodedSize(b) == CGSize(width: 100, height: 50))
        #expect(CVPixelBufferLockBaseAddress(b, []) == kCVReturnSuccess)
        let base = try #require(CVPixelBufferGetBaseAddress(b))
        base.storeBytes(of: 0xAB, as: UInt8.self)
        #expect(CVPixelBufferUnlockBaseAddress(b, []) == kCVReturnSuccess)
        // Unlocking what is not locked is an error.
        #expect(CVPixelBufferUnlockBaseAddress(b, []) == kCVReturnError)
        CVPixelBufferLockBaseAddress(b, .readOnly)
        #expect(CVPixelBufferGetBaseAddress(b)!.load(as: UInt8.self) == 0xAB)
        CVPixelBufferUnlockBaseAddress(b, .readOnly)
    }

    @Test func planarBuffers() throws {
        for (type, planes) in [(kCVPixelFormatType_420YpCbCr8Planar, 3), (kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, 2),
                               (kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange, 2), (kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange, 2),
                               (kCVPixelFormatType_420YpCbCr10BiPlanarFullRange, 2)] {
            var pb: CVPixelBuffer?
            #expect(CVPixelBufferCreate(nil, 64, 48, type, nil, &pb) == kCVReturnSuccess)
            let b = try #require(pb)
            // The code it was made with, full range included.
            #expect(CVPixelBufferGetPixelFormatType(b) == type)
            #expect(CVPixelBufferIsPlanar(b) && CVPixelBufferGetPlaneCount(b) == planes)
            #expect(CVPixelBufferGetWidthOfPlane(b, 0) == 64 && CVPixelBufferGetHeightOfPlane(b, 0) == 48)
            #expect(CVPixelBufferGetWidthOfPlane(b, 1) == 32 && CVPixelBufferGetHeightOfPlane(b, 1) == 24)
            CVPixelBufferLockBaseAddress(b, [])
            let y = try #require(CVPixelBufferGetBaseAddressOfPlane(b, 0)), c = try #require(CVPixelBufferGetBaseAddressOfPlane(b, 1))
            // 10-bit samples take two bytes each.
            let sample = type == kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange || type == kCVPixelFormatType_420YpCbCr10BiPlanarFullRange ? 2 : 1
            #expect(c - y >= 64 * 48 * sample && CVPixelBufferGetBytesPerRowOfPlane(b, 0) >= 64 * sample)
            #expect(planes == 3 || CVPixelBufferGetBytesPerRowOfPlane(b, 1) >= 64 * sample)
            #expect(CVPixelBufferGetBaseAddressOfPlane(b, planes) == nil)
            CVPixelBufferUnlockBaseAddress(b, [])
        }
    }

    @Test func refusals() {
        var pb: CVPixelBuffer?
        #expect(CVPixelBufferCreate(nil, 64, 48, kCVPixelFormatType_32ARGB, nil, &pb) == kCVReturnInvalidPixelFormat && pb == nil)
        // Apple's codes for formats GraphKit's frames do not hold: named, and refused where made.
        for code in [kCVPixelFormatType_64RGBAHalf,
                     kCVPixelFormatType_ARGB2101010LEPacked, kCVPixelFormatType_422YpCbCr8, kCVPixelFormatType_OneComponent8, kCVPixelFormatType_24RGB] {
            #expect(CVPixelBufferCreate(nil, 64, 48, code, nil, &pb) == kCVReturnInvalidPixelFormat && pb == nil, "\(code)")
        }
        #expect(kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange == 0x7834_3230 && kCVPixelFormatType_64RGBAHalf == 0x5247_6841)
        #expect(CVPixelBufferCreate(nil, 0, 48, kCVPixelFormatType_32BGRA, nil, &pb) == kCVReturnInvalidSize && pb == nil)
        var pool: CVPixelBufferPool?
        #expect(CVPixelBufferPoolCreate(nil, nil, [kCVPixelBufferPixelFormatTypeKey: kCVPixelFormatType_32BGRA], &pool) == kCVReturnInvalidPixelBufferAttributes)
    }

    /// Writing into a locked buffer never changes pixels someone else holds (copy on write);
    /// a read-only lock copies nothing.
    @Test func poolFramesAreRecycled() throws {
        var pool: CVPixelBufferPool?
        let attributes: [String: Any] = [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32RGBA,
                                         kCVPixelBufferWidthKey as String: 32, kCVPixelBufferHeightKey as String: 16,
                                         kCVPixelBufferIOSurfacePropertiesKey as String: [String: Any]()]
        #expect(CVPixelBufferPoolCreate(kCFAllocatorDefault, nil, attributes as CFDictionary, &pool) == kCVReturnSuccess)
        let p = try #require(pool)
        #expect(CVPixelBufferPoolGetPixelBufferAttributes(p)?[kCVPixelBufferWidthKey] as? Int == 32)
        var first: UnsafeMutableRawPointer?
        for _ in 0..<5 {
            var pb: CVPixelBuffer?
            #expect(CVPixelBufferPoolCreatePixelBuffer(nil, p, &pb) == kCVReturnSuccess)
            let b = try #require(pb)
            #expect(CVPixelBufferGetPixelFormatType(b) == kCVPixelFormatType_32RGBA && CVPixelBufferGetWidth(b) == 32)
            CVPixelBufferLockBaseAddress(b, [])
            let base = CVPixelBufferGetBaseAddress(b)
            CVPixelBufferUnlockBaseAddress(b, [])
            if first == nil { first = base } else { #expect(base == first, "a released frame goes back to the pool") }
        }
        #expect(p.pool.allocations == 1)
    }

    @Test func createWithBytesWrapsAndReleases() throws {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: 16 * 8 * 4, alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 7, count: 16 * 8 * 4)
        final class Flag: @unchecked Sendable { var released = false }
        let flag = Flag()
        do {
            var pb: CVPixelBuffer?
            let status = CVPixelBufferCreateWithBytes(nil, 16, 8, kCVPixelFormatType_32BGRA, memory, 64, { refCon, base in
                Unmanaged<Flag>.fromOpaque(refCon!).takeRetainedValue().released = true
                base.map { UnsafeMutableRawPointer(mutating: $0).deallocate() }
            }, Unmanaged.passRetained(flag).toOpaque(), nil, &pb)
            #expect(status == kCVReturnSuccess)
            let b = try #require(pb)
            CVPixelBufferLockBaseAddress(b, .readOnly)
            #expect(CVPixelBufferGetBaseAddress(b) == memory)
            CVPixelBufferUnlockBaseAddress(b, .readOnly)
            #expect(!flag.released)
        }
        #expect(flag.released, "the callback runs once nothing refers to the bytes")
        var other: CVPixelBuffer?
        #expect(CVPixelBufferCreateWithBytes(nil, 16, 8, kCVPixelFormatType_32BGRA, memory, 100, nil, nil, nil, &other) == kCVReturnInvalidArgument)
    }

    @Test func affineTransform() {
        let r = CGAffineTransform(rotationAngle: .pi / 2)
        let p = CGPoint(x: 1, y: 0).applying(r)
        #expect(abs(p.x) < 1e-12 && abs(p.y - 1) < 1e-12)
        #expect(CGAffineTransform.identity.isIdentity && !r.isIdentity)
        let t = CGAffineTransform(translationX: 10, y: 0).concatenating(CGAffineTransform(scaleX: 2, y: 2))
        #expect(CGPoint(x: 1, y: 1).applying(t) == CGPoint(x: 22, y: 2))
        #expect(t.concatenating(t.inverted()).isIdentity)
        #expect(CGSize(width: 4, height: 2).applying(CGAffineTransform(scaleX: 2, y: 3)) == CGSize(width: 8, height: 6))
    }
}
