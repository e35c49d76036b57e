import AVFoundation
import Testing

/// CoreGraphics as code written on a Mac spells it (Swift 5 mode, as this target is): a waveform
/// drawer of the usual shape, paths, colour spaces by name, images made and read. It must compile
/// unchanged and draw what it says.
@Suite struct CoreGraphicsAppleSpellingsTests {
    /// The waveform drawer app code writes: one bar a sample, centred, in an RGBA context.
    func drawWaveform(samples: [Float], width w: Int, height h: Int) -> CGImage? {
        guard let ctx = CGContext(data: nil, width: w, height: h, bitsPerComponent: 8, bytesPerRow: 0,
                                  space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: CGImageAlphaInfo.premultipliedLast.rawValue) else { return nil }
        ctx.setFillColor(CGColor(red: 0, green: 0, blue: 0, alpha: 1))
        ctx.fill(CGRect(x: 0, y: 0, width: w, height: h))
        ctx.setFillColor(CGColor(red: 0.2, green: 0.8, blue: 0.3, alpha: 1))
        ctx.setShouldAntialias(false)
        let mid = CGFloat(h) / 2
        for (i, s) in samples.enumerated() {
            let bar = CGFloat(abs(s)) * mid
            ctx.fill(CGRect(x: CGFloat(i), y: mid - bar, width: 1, height: bar * 2))
        }
        return ctx.makeImage()
    }

    @Test func waveformDrawer() throws {
        let image = try #require(drawWaveform(samples: [0, 0.5, 1, 0.25], width: 4, height: 8))
        #expect(image.width == 4 && image.height == 8 && image.bitsPerPixel == 32)
        let bytes = try #require(CFDataGetBytePtr(image.dataProvider?.data))
        func green(_ x: Int, _ row: Int) -> Bool { bytes[row * image.bytesPerRow + x * 4 + 1] == 204 }
        // Column 1 (0.5): rows 2..<6; column 2 (1): every row; column 0: none.
        #expect((0..<8).filter { green(1, $0) } == Array(2..<6))
        #expect((0..<8).filter { green(2, $0) } == Array(0..<8))
        #expect((0..<8).filter { green(0, $0) }.isEmpty)
    }

    @Test func pathsSpacesAndImages() throws {
        var t = CGAffineTransform(translationX: 5, y: 0)
        let rectPath = CGPath(rect: CGRect(x: 0, y: 0, width: 10, height: 4), transform: &t)
        #expect(rectPath.boundingBoxOfPath == CGRect(x: 5, y: 0, width: 10, height: 4))
        let path = CGMutablePath()
        path.move(to: CGPoint(x: 0, y: 0))
        path.addLine(to: CGPoint(x: 10, y: 0))
        path.addQuadCurve(to: CGPoint(x: 20, y: 0), control: CGPoint(x: 15, y: 10))
        path.addCurve(to: CGPoint(x: 30, y: 0), control1: CGPoint(x: 22, y: -10), control2: CGPoint(x: 28, y: -10))
        path.addArc(center: CGPoint(x: 30, y: 10), radius: 10, startAngle: -.pi / 2, endAngle: .pi / 2, clockwise: false)
        path.addEllipse(in: CGRect(x: 0, y: 20, width: 4, height: 4))
        path.addRect(CGRect(x: -1, y: -1, width: 1, height: 1))
        path.closeSubpath()
        let box = path.boundingBoxOfPath
        #expect(abs(box.maxY - 24) < 0.01 && abs(box.minX + 1) < 0.01 && abs(box.maxX - 40) < 0.01)
        #expect(abs(box.minY + 7.5) < 0.05)   // the cubic's lowest point: -7.5
        #expect(path.boundingBox.minY == -10)   // control points counted

        for name in [CGColorSpace.sRGB, CGColorSpace.displayP3, CGColorSpace.genericRGBLinear, CGColorSpace.itur_2100_PQ, CGColorSpace.displayP3_HLG] {
            let space = try #require(CGColorSpace(name: name))
            #expect(space.model == .rgb && space.copyICCData() == nil && space.name == name)
        }
        #expect(CGColorSpace(name: "kCGColorSpaceNoSuchThing" as CFString) == nil)
        let components: [CGFloat] = [1, 0.5, 0, 1]
        let color = try #require(CGColor(colorSpace: CGColorSpace(name: CGColorSpace.displayP3)!, components: components))
        #expect(color.numberOfComponents == 4 && color.colorSpace?.name == CGColorSpace.displayP3)

        // An image made from bytes, drawn scaled into a gray context and read back.
        let rgba: [UInt8] = [255, 255, 255, 255, 0, 0, 0, 255]   // white, black
        let provider = CGDataProvider(data: Data(rgba) as CFData)
        let image = try #require(CGImage(width: 2, height: 1, bitsPerComponent: 8, bitsPerPixel: 32, bytesPerRow: 8,
                                         space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: CGBitmapInfo(rawValue: CGImageAlphaInfo.premultipliedLast.rawValue),
                                         provider: provider, decode: nil, shouldInterpolate: false, intent: .defaultIntent))
        #expect(image.colorSpace?.model == .rgb)
        #expect(CGImage(width: 2, height: 2, bitsPerComponent: 8, bitsPerPixel: 32, bytesPerRow: 8, space: CGColorSpaceCreateDeviceRGB(),
                        bitmapInfo: CGBitmapInfo(rawValue: CGImageAlphaInfo.premultipliedLast.rawValue), provider: provider, decode: nil,
                        shouldInterpolate: false, intent: .defaultIntent) == nil)   // 16 bytes needed, 8 given
        let gray = try #require(CGContext(data: nil, width: 4, height: 1, bitsPerComponent: 8, bytesPerRow: 4,
                                          space: CGColorSpaceCreateDeviceGray(), bitmapInfo: CGImageAlphaInfo.none.rawValue))
        gray.interpolationQuality = .none
        gray.setAllowsAntialiasing(false)
        gray.setBlendMode(.copy)
        gray.concatenate(.identity)
        let mid: [CGFloat] = [0.5, 1]
        gray.setFillColor(mid)
        gray.setStrokeColor(mid)
        gray.draw(image, in: CGRect(x: 0, y: 0, width: gray.width, height: gray.height))
        let row = UnsafeBufferPointer(start: gray.data!.assumingMemoryBound(to: UInt8.self), count: 4)
        #expect(Array(row) == [255, 255, 0, 0])

        // A layer drawn into it: white in its right half, drawn over the context's left half.
        let layer = try #require(CGLayer(gray, size: CGSize(width: 2, height: 1), auxiliaryInfo: nil))
        layer.context?.setFillColor(gray: 1, alpha: 1)
        layer.context?.fill(CGRect(x: 1, y: 0, width: 1, height: 1))
        gray.setBlendMode(.normal)
        gray.draw(layer, at: .zero)
        #expect(Array(row) == [255, 255, 0, 0])
        gray.draw(layer, in: CGRect(x: 2, y: 0, width: 2, height: 1))
        #expect(Array(row) == [255, 255, 0, 255])
    }
}
