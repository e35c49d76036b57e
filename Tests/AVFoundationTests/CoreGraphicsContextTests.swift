import CoreGraphics
import CoreVideo
import Testing

/// CGContext's pixels, checked exactly: Apple's bottom-left origin, byte orders, premultiplied
/// alpha, clipping, transforms, the graphics state, gray, images, a pixel buffer's memory, and
/// the arguments Apple's initializer refuses.
@Suite struct CoreGraphicsContextTests {
    static let bgra = CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue
    static let rgba = CGImageAlphaInfo.premultipliedLast.rawValue

    /// The bytes of pixel (x, row), rows counted from the first in memory.
    static func pixel(_ ctx: CGContext, _ x: Int, _ row: Int) -> [UInt8] {
        let p = ctx.data!.assumingMemoryBound(to: UInt8.self) + row * ctx.bytesPerRow + x * ctx.bitsPerPixel / 8
        return Array(UnsafeBufferPointer(start: p, count: ctx.bitsPerPixel / 8))
    }

    /// The memory rows where any pixel's first byte is not 0.
    static func paintedRows(_ ctx: CGContext) -> [Int] {
        (0..<ctx.height).filter { row in (0..<ctx.width).contains { pixel(ctx, $0, row) != [UInt8](repeating: 0, count: ctx.bitsPerPixel / 8) } }
    }

    @Test func theOriginIsTheBottomLeftCorner() throws {
        for info in [Self.bgra, Self.rgba] {
            let ctx = try #require(CGContext(data: nil, width: 100, height: 50, bitsPerComponent: 8, bytesPerRow: 0,
                                             space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: info))
            #expect(ctx.bytesPerRow == 400 && ctx.ctm == .identity)
            ctx.setFillColor(CGColor(red: 1, green: 0, blue: 0, alpha: 1))
            ctx.fill(CGRect(x: 0, y: 0, width: 10, height: 10))
            #expect(Self.paintedRows(ctx) == Array(40..<50))
            #expect((0..<100).filter { Self.pixel(ctx, $0, 45) != [0, 0, 0, 0] } == Array(0..<10))
        }
    }

    @Test func byteOrdersAndPremultipliedAlpha() throws {
        let cases: [(UInt32, [UInt8])] = [
            (Self.bgra, [0, 64, 128, 128]),                                                       // B G R A
            (Self.rgba, [128, 64, 0, 128]),                                                       // R G B A
            (CGImageAlphaInfo.premultipliedLast.rawValue | CGBitmapInfo.byteOrder32Little.rawValue, [128, 0, 64, 128]), // A B G R
            (CGImageAlphaInfo.premultipliedFirst.rawValue, [128, 128, 64, 0]),                    // A R G B
            (CGImageAlphaInfo.noneSkipLast.rawValue, [255, 128, 0, 255]),                         // R G B x
            (CGImageAlphaInfo.noneSkipFirst.rawValue | CGBitmapInfo.byteOrder32Big.rawValue, [255, 255, 128, 0]), // x R G B
        ]
        for (info, expected) in cases {
            let ctx = try #require(CGContext(data: nil, width: 4, height: 4, bitsPerComponent: 8, bytesPerRow: 0,
                                             space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: info))
            // Red 1, green 0.5 at alpha 0.5 (opaque without alpha): premultiplied 128, 64.
            let a: CGFloat = ctx.alphaInfo == .noneSkipLast || ctx.alphaInfo == .noneSkipFirst ? 1 : 0.5
            ctx.setFillColor(red: 1, green: a == 1 ? 128.0 / 255 : 0.5, blue: 0, alpha: a)
            ctx.fill(CGRect(x: 0, y: 0, width: 4, height: 4))
            let got = Self.pixel(ctx, 1, 1)
            #expect(got.enumerated().allSatisfy { abs(Int($1) - Int(expected[$0])) <= 1 }, "info \(info): \(got) vs \(expected)")
        }
    }

    @Test func strokeWidthClipTransformAndState() throws {
        let ctx = try #require(CGContext(data: nil, width: 40, height: 40, bitsPerComponent: 8, bytesPerRow: 0,
                                         space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: Self.rgba))
        ctx.setShouldAntialias(false)
        ctx.setStrokeColor(CGColor(red: 0, green: 0, blue: 1, alpha: 1))
        // CoreGraphics' default width is 1: a line along y = 30 covers y 29.5..<30.5, one row.
        ctx.strokeLineSegments(between: [CGPoint(x: 0, y: 30), CGPoint(x: 40, y: 30)])
        #expect(Self.paintedRows(ctx).count == 1)
        ctx.clear(CGRect(x: 0, y: 0, width: 40, height: 40))
        ctx.setLineWidth(4)
        // A horizontal line at y = 20 (user) is 4 wide: y 18..<22, memory rows 18..<22.
        ctx.move(to: CGPoint(x: 0, y: 20)); ctx.addLine(to: CGPoint(x: 40, y: 20)); ctx.strokePath()
        #expect(Self.paintedRows(ctx) == Array(18..<22))
        #expect(ctx.isPathEmpty)

        ctx.clear(CGRect(x: 0, y: 0, width: 40, height: 40))
        #expect(Self.paintedRows(ctx).isEmpty)
        ctx.saveGState()
        ctx.clip(to: CGRect(x: 0, y: 0, width: 40, height: 5))
        ctx.translateBy(x: 10, y: 0)
        #expect(ctx.ctm == CGAffineTransform(translationX: 10, y: 0))
        ctx.setFillColor(gray: 1, alpha: 1)
        ctx.fill(CGRect(x: 0, y: 0, width: 5, height: 40))   // x 10..<15, cut to y 0..<5
        ctx.restoreGState()
        #expect(ctx.ctm == .identity)
        #expect(Self.paintedRows(ctx) == Array(35..<40))
        #expect((0..<40).filter { Self.pixel(ctx, $0, 37)[3] != 0 } == Array(10..<15))
        // The fill colour came back with the state: black.
        ctx.fill(CGRect(x: 0, y: 39, width: 1, height: 1))
        #expect(Self.pixel(ctx, 0, 0) == [0, 0, 0, 255])
        // Scale 2 then a 1×1 rect at (1, 1): device 2..<4 in x and y.
        ctx.clear(CGRect(x: 0, y: 0, width: 40, height: 40))
        ctx.scaleBy(x: 2, y: 2)
        ctx.fill(CGRect(x: 1, y: 1, width: 1, height: 1))
        #expect(Self.paintedRows(ctx) == [36, 37])
        #expect((0..<40).filter { Self.pixel(ctx, $0, 36)[3] != 0 } == [2, 3])
    }

    /// clip(to:mask:): a gray mask's white draws, its black does not; clear(_:) obeys it too.
    @Test func clipToMask() throws {
        let gray = CGColorSpaceCreateDeviceGray()
        let mask = try #require(CGImage(width: 2, height: 1, bitsPerComponent: 8, bitsPerPixel: 8, bytesPerRow: 2, space: gray,
                                        bitmapInfo: CGBitmapInfo(rawValue: 0), provider: CGDataProvider(data: Data([255, 0]) as CFData),
                                        decode: nil, shouldInterpolate: false, intent: .defaultIntent))
        for info in [Self.rgba, Self.bgra] {
            let ctx = try #require(CGContext(data: nil, width: 8, height: 2, bitsPerComponent: 8, bytesPerRow: 0,
                                             space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: info))
            ctx.interpolationQuality = .none
            ctx.setFillColor(gray: 1, alpha: 1)
            ctx.fill(CGRect(x: 0, y: 0, width: 8, height: 2))
            ctx.saveGState()
            ctx.clip(to: CGRect(x: 0, y: 0, width: 4, height: 2), mask: mask)
            ctx.clear(CGRect(x: 0, y: 0, width: 8, height: 2))
            ctx.setFillColor(CGColor(red: 1, green: 0, blue: 0, alpha: 1))
            ctx.fill(CGRect(x: 0, y: 1, width: 8, height: 1))   // memory row 0
            ctx.restoreGState()
            let red: [UInt8] = info == Self.rgba ? [255, 0, 0, 255] : [0, 0, 255, 255]
            #expect((0..<8).map { Self.pixel(ctx, $0, 0) } == [red, red] + Array(repeating: [255, 255, 255, 255], count: 6), "info \(info)")
            #expect((0..<8).map { Self.pixel(ctx, $0, 1) } == [[0, 0, 0, 0], [0, 0, 0, 0]] + Array(repeating: [255, 255, 255, 255], count: 6))
        }
    }

    @Test func grayContext() throws {
        let ctx = try #require(CGContext(data: nil, width: 8, height: 4, bitsPerComponent: 8, bytesPerRow: 0,
                                         space: CGColorSpaceCreateDeviceGray(), bitmapInfo: CGImageAlphaInfo.none.rawValue))
        #expect(ctx.bitsPerPixel == 8 && ctx.bytesPerRow == 8)
        ctx.setFillColor(gray: 0.5, alpha: 1)
        ctx.fill(CGRect(x: 0, y: 0, width: 8, height: 2))
        #expect(Self.pixel(ctx, 3, 3) == [128] && Self.pixel(ctx, 3, 0) == [0])
        ctx.setFillColor(CGColor(red: 1, green: 1, blue: 1, alpha: 1))
        ctx.fill(CGRect(x: 0, y: 2, width: 8, height: 2))
        #expect(Self.pixel(ctx, 0, 0) == [255] && Self.pixel(ctx, 0, 3) == [128])
    }

    @Test func makeImageCopiesAndDrawsBack() throws {
        let ctx = try #require(CGContext(data: nil, width: 20, height: 10, bitsPerComponent: 8, bytesPerRow: 0,
                                         space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: Self.rgba))
        ctx.setFillColor(CGColor(red: 0, green: 1, blue: 0, alpha: 1))
        ctx.fill(CGRect(x: 0, y: 5, width: 20, height: 5))   // the top half: rows 0..<5
        let image = try #require(ctx.makeImage())
        #expect(image.width == 20 && image.bytesPerRow == 80 && image.alphaInfo == .premultipliedLast && image.colorSpace?.model == .rgb)
        ctx.clear(CGRect(x: 0, y: 0, width: 20, height: 10))
        let bytes = CFDataGetBytePtr(image.dataProvider!.data)!
        #expect(Array(UnsafeBufferPointer(start: bytes, count: 4)) == [0, 255, 0, 255])
        #expect(Array(UnsafeBufferPointer(start: bytes + 9 * 80, count: 4)) == [0, 0, 0, 0])
        // Drawn back into a BGRA context, upright: the green half on top.
        let other = try #require(CGContext(data: nil, width: 20, height: 10, bitsPerComponent: 8, bytesPerRow: 0,
                                           space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: Self.bgra))
        other.draw(image, in: CGRect(x: 0, y: 0, width: 20, height: 10))
        #expect(Self.pixel(other, 10, 2) == [0, 255, 0, 255] && Self.pixel(other, 10, 7) == [0, 0, 0, 0])
        // Tiled 4 high from the bottom: memory rows 6..<10 are the first tile (green on top),
        // then 2..<6, then -2..<2.
        other.clear(CGRect(x: 0, y: 0, width: 20, height: 10))
        other.interpolationQuality = .none
        other.draw(image, in: CGRect(x: 0, y: 0, width: 10, height: 4), byTiling: true)
        #expect((0..<10).map { Self.pixel(other, 15, $0)[1] } == [0, 0, 255, 255, 0, 0, 255, 255, 0, 0])
    }

    @Test func drawsIntoAPixelBuffer() throws {
        var pb: CVPixelBuffer?
        #expect(CVPixelBufferCreate(kCFAllocatorDefault, 64, 32, kCVPixelFormatType_32BGRA, nil, &pb) == kCVReturnSuccess)
        let buffer = try #require(pb)
        CVPixelBufferLockBaseAddress(buffer, [])
        let base = CVPixelBufferGetBaseAddress(buffer)
        let ctx = try #require(CGContext(data: base, width: 64, height: 32, bitsPerComponent: 8,
                                         bytesPerRow: CVPixelBufferGetBytesPerRow(buffer), space: CGColorSpaceCreateDeviceRGB(),
                                         bitmapInfo: CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue))
        #expect(ctx.data == base)
        ctx.setFillColor(CGColor(red: 1, green: 0, blue: 0, alpha: 1))
        ctx.fill(CGRect(x: 0, y: 0, width: 64, height: 1))
        CVPixelBufferUnlockBaseAddress(buffer, [])
        CVPixelBufferLockBaseAddress(buffer, .readOnly)
        let last = CVPixelBufferGetBaseAddress(buffer)!.assumingMemoryBound(to: UInt8.self) + 31 * CVPixelBufferGetBytesPerRow(buffer)
        #expect(Array(UnsafeBufferPointer(start: last, count: 4)) == [0, 0, 255, 255])
        CVPixelBufferUnlockBaseAddress(buffer, .readOnly)
    }

    /// What the caller writes in memory between calls is what the next call draws over, in a
    /// layout drawn in a surface of Cairo's (RGBA) as in one drawn in place (BGRA).
    @Test func memoryWrittenBetweenCallsIsKept() throws {
        for info in [Self.rgba, Self.bgra] {
            var memory = [UInt8](repeating: 0, count: 16 * 4 * 4)
            try memory.withUnsafeMutableBytes { raw in
                let ctx = try #require(CGContext(data: raw.baseAddress, width: 16, height: 4, bitsPerComponent: 8, bytesPerRow: 64,
                                                 space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: info))
                ctx.setFillColor(gray: 1, alpha: 1)
                ctx.fill(CGRect(x: 0, y: 0, width: 1, height: 4))
                for i in 0..<4 { raw[4 * 5 + i] = 255 }   // row 0, pixel 5: opaque white, by hand
                ctx.setFillColor(gray: 0, alpha: 0.5)
                ctx.fill(CGRect(x: 0, y: 0, width: 16, height: 4))
                #expect(Self.pixel(ctx, 5, 0).filter { $0 == 128 || $0 == 127 }.count == 3, "info \(info)")
                #expect(Self.pixel(ctx, 0, 2).filter { $0 == 128 || $0 == 127 }.count == 3, "info \(info)")
            }
        }
    }

    @Test func refusesWhatAppleRefuses() {
        let rgb = CGColorSpaceCreateDeviceRGB()
        #expect(CGContext(data: nil, width: 0, height: 10, bitsPerComponent: 8, bytesPerRow: 0, space: rgb, bitmapInfo: Self.rgba) == nil)
        #expect(CGContext(data: nil, width: 10, height: 10, bitsPerComponent: 8, bytesPerRow: 39, space: rgb, bitmapInfo: Self.rgba) == nil)
        #expect(CGContext(data: nil, width: 10, height: 10, bitsPerComponent: 5, bytesPerRow: 0, space: rgb, bitmapInfo: Self.rgba) == nil)
        #expect(CGContext(data: nil, width: 10, height: 10, bitsPerComponent: 8, bytesPerRow: 0, space: rgb,
                          bitmapInfo: CGImageAlphaInfo.last.rawValue) == nil)   // straight alpha: Apple refuses it too
        #expect(CGContext(data: nil, width: 10, height: 10, bitsPerComponent: 8, bytesPerRow: 0, space: CGColorSpaceCreateDeviceGray(),
                          bitmapInfo: Self.rgba) == nil)
        #expect(CGContext(data: nil, width: Int.max / 2, height: 3, bitsPerComponent: 8, bytesPerRow: 0, space: rgb, bitmapInfo: Self.rgba) == nil)
        #expect(CGContext(data: nil, width: 30000, height: 30000, bitsPerComponent: 8, bytesPerRow: Int.max / 1000, space: rgb,
                          bitmapInfo: Self.rgba) == nil)
        // Rows farther apart than Cairo's 32-bit stride: drawn through a surface of Cairo's, no trap.
        var one = [UInt8](repeating: 0, count: 16)
        one.withUnsafeMutableBytes { raw in
            let far = CGContext(data: raw.baseAddress, width: 4, height: 1, bitsPerComponent: 8, bytesPerRow: 1 << 33, space: rgb, bitmapInfo: Self.bgra)
            far?.setFillColor(gray: 1, alpha: 1)
            far?.fill(CGRect(x: 0, y: 0, width: 4, height: 1))
        }
        #expect(one == [UInt8](repeating: 255, count: 16))
        // An unaligned row length is drawn in a surface of Cairo's and still lands in memory.
        let ctx = CGContext(data: nil, width: 3, height: 2, bitsPerComponent: 8, bytesPerRow: 13, space: rgb, bitmapInfo: Self.bgra)
        ctx?.setFillColor(gray: 1, alpha: 1)
        ctx?.fill(CGRect(x: 0, y: 0, width: 3, height: 1))
        #expect(ctx.map { Self.pixel($0, 2, 1) } == [255, 255, 255, 255])
    }
}
