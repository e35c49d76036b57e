import CoreImage
import Testing

private typealias T = CoreImageTestImages

/// Where CoreImage's geometry puts pixels (origin bottom left, y up), blurs, compositing,
/// bitmaps, and inputs that must not trap.
@Suite struct CoreImageGeometryTests {
    let context = CIContext()

    /// A 4 × 4 buffer whose pixel at memory (column, row) is (40·column, 40·row, 7, 255).
    let grid = T.buffer(4, 4) { x, y in (UInt8(40 * x), UInt8(40 * y), 7, 255) }

    func render(_ image: CIImage, _ width: Int = 4, _ height: Int = 4) -> [[UInt8]] {
        let out = T.blank(width, height)
        context.render(image, to: out)
        return T.pixels(out)
    }

    @Test func extentsAsApples() {
        let image = CIImage(cvPixelBuffer: grid)
        #expect(image.extent == CGRect(x: 0, y: 0, width: 4, height: 4))
        #expect(CIImage(color: .red).extent.isInfinite)
        #expect(CIImage.empty().extent.isNull)
        #expect(image.clampedToExtent().extent.isInfinite)
        #expect(image.cropped(to: CGRect(x: 1, y: 1, width: 10, height: 2)).extent == CGRect(x: 1, y: 1, width: 3, height: 2))
        #expect(image.transformed(by: CGAffineTransform(translationX: 5, y: -2)).extent == CGRect(x: 5, y: -2, width: 4, height: 4))
        #expect(image.applyingGaussianBlur(sigma: 2).extent == CGRect(x: -6, y: -6, width: 16, height: 16))
        #expect(image.composited(over: image.transformed(by: CGAffineTransform(translationX: 2, y: 2))).extent
                == CGRect(x: 0, y: 0, width: 6, height: 6))
    }

    /// Cropping to the bottom-left quadrant keeps memory rows 2 and 3 (the bottom), columns 0, 1.
    @Test func cropKeepsTheBottomLeftInCoreImageCoordinates() {
        let out = render(CIImage(cvPixelBuffer: grid).cropped(to: CGRect(x: 0, y: 0, width: 2, height: 2)))
        for row in 0..<4 {
            for col in 0..<4 {
                let expected: [UInt8] = row >= 2 && col < 2 ? [UInt8(40 * col), UInt8(40 * row), 7, 255] : [0, 0, 0, 0]
                #expect(out[row * 4 + col] == expected, "row \(row), column \(col)")
            }
        }
    }

    /// A translation by (1, 2) moves image (0, 0), memory (0, 3), to image (1, 2), memory (1, 1).
    @Test func translationMovesUpAndRight() {
        let out = render(CIImage(cvPixelBuffer: grid).transformed(by: CGAffineTransform(translationX: 1, y: 2)))
        #expect(out[1 * 4 + 1] == [0, 120, 7, 255])
        #expect(out[0 * 4 + 1] == [0, 80, 7, 255])  // image (0, 1), memory row 2, moved to row 0
        #expect(out[3 * 4 + 0] == [0, 0, 0, 0])     // nothing moved to the bottom-left
        #expect(out[2 * 4 + 3] == [0, 0, 0, 0])     // nor below y = 2
    }

    /// Scaling by 2 about the origin: each source pixel covers 2 × 2; at source centres exact.
    @Test func scaleResamplesBilinearly() {
        let image = CIImage(cvPixelBuffer: grid).transformed(by: CGAffineTransform(scaleX: 2, y: 2))
        let out = render(image, 8, 8)
        // Output pixel (1, 1) has centre (1.5, 1.5), source (0.75, 0.75): between source pixels
        // 0 and 1 both ways, weights 0.75 / 0.25. Source x 0 and 1 → R 0 and 40 → 10.
        #expect(out[6 * 8 + 1][0] == 10)
    }

    @Test func compositeOverPutsTheTopFirst() {
        let half = CIImage(color: CIColor(red: 1, green: 0, blue: 0, alpha: 0.5)).cropped(to: CGRect(x: 0, y: 0, width: 2, height: 4))
        let out = render(half.composited(over: CIImage(cvPixelBuffer: grid)))
        // Left half: red at 0.5 over the grid; right half: the grid.
        #expect(out[0] == [128, 0, 4, 255])
        #expect(out[3] == [120, 0, 7, 255])
        let f = CIFilter.sourceOverCompositing()
        f.inputImage = half
        f.backgroundImage = CIImage(cvPixelBuffer: grid)
        #expect(render(f.outputImage!) == out)
    }

    @Test func clampRepeatsTheEdges() {
        let image = CIImage(cvPixelBuffer: grid).cropped(to: CGRect(x: 0, y: 0, width: 1, height: 1)).clampedToExtent()
        #expect(render(image).allSatisfy { $0 == [0, 120, 7, 255] })
    }

    /// One white pixel spreads as a Gaussian of sigma = radius: weights symmetric, summing to 1,
    /// the centre the square of the 1-D centre weight.
    @Test func gaussianBlurOfAPoint() throws {
        let n = 15
        let dot = T.buffer(n, n) { x, y in x == 7 && y == 7 ? (255, 255, 255, 255) : (0, 0, 0, 0) }
        let f = CIFilter.gaussianBlur()
        f.inputImage = CIImage(cvPixelBuffer: dot)
        f.radius = 2
        let image = try #require(f.outputImage)
        #expect(image.extent == CGRect(x: -6, y: -6, width: 27, height: 27))
        var bytes = [UInt8](repeating: 0, count: 27 * 27 * 4)
        context.render(image, toBitmap: &bytes, rowBytes: 27 * 4, bounds: image.extent, format: .RGBA8)
        let alpha = stride(from: 3, to: bytes.count, by: 4).map { Double(bytes[$0]) / 255 }
        let weights = (-6...6).map { exp(-Double($0 * $0) / 8) }, total = weights.reduce(0, +)
        let centre = (weights[6] / total) * (weights[6] / total)
        #expect(abs(alpha[13 * 27 + 13] - centre) <= 1.0 / 255)
        // The weights sum to 1, within each stored pixel's rounding (half a step each).
        let touched = alpha.filter { $0 > 0 }.count
        #expect(abs(alpha.reduce(0, +) - 1) <= Double(touched) * 0.5 / 255)
        for y in 0..<27 { for x in 0..<27 { #expect(alpha[y * 27 + x] == alpha[(26 - y) * 27 + (26 - x)]) } }
        #expect(alpha[13 * 27 + 15] < alpha[13 * 27 + 14] && alpha[13 * 27 + 14] < alpha[13 * 27 + 13])
    }

    /// The same render into a BGRA buffer and into RGBA8, BGRA8 and ARGB8 bitmaps: the same
    /// values in each order.
    @Test func bitmapMatchesBufferApartFromOrder() {
        let pb = T.varied(19, 11)
        let image = CIImage(cvPixelBuffer: pb).applyingFilter("CISepiaTone").transformed(by: CGAffineTransform(translationX: 0.5, y: 0))
        let out = T.blank(19, 11)
        context.render(image, to: out)
        let expected = T.pixels(out)
        for (format, order) in [(CIFormat.RGBA8, [0, 1, 2, 3]), (.BGRA8, [2, 1, 0, 3]), (.ARGB8, [1, 2, 3, 0])] {
            var bytes = [UInt8](repeating: 9, count: 19 * 11 * 4 + 4)
            context.render(image, toBitmap: &bytes, rowBytes: 19 * 4, bounds: CGRect(x: 0, y: 0, width: 19, height: 11), format: format)
            let pixels = (0..<19 * 11).map { i in order.map { bytes[4 * i + $0] } }
            #expect(pixels == expected, "\(format)")
            #expect(bytes.suffix(4) == [9, 9, 9, 9])
        }
    }

    @Test func infiniteImageFillsTheBuffer() {
        #expect(render(CIImage(color: CIColor(red: 0, green: 1, blue: 0))).allSatisfy { $0 == [0, 255, 0, 255] })
        #expect(render(CIImage.red.applyingFilter("CIColorControls", parameters: [kCIInputSaturationKey: 0])).allSatisfy {
            $0 == [54, 54, 54, 255]
        })
    }

    @Test func namesAndMissingInputs() {
        #expect(CIFilter(name: "CINoSuchFilter") == nil)
        #expect(CIFilter(name: "CIColorMatrix", parameters: [:]) != nil)
        #expect(CIFilter(name: "CISepiaTone")?.outputImage == nil)
        let f = CIFilter(name: "CIGaussianBlur")!
        f.setValue(CIImage(cvPixelBuffer: grid), forKey: kCIInputImageKey)
        f.setValue("wide", forKey: kCIInputRadiusKey)
        #expect(f.outputImage == nil)
        #expect(CIImage(cvPixelBuffer: grid).applyingFilter("CINoSuchFilter").extent.isNull)
        #expect(CIFilter.filterNames(inCategory: nil).contains("CIColorMatrix"))
        let crop = CIFilter(name: "CICrop", parameters: [kCIInputImageKey: CIImage(cvPixelBuffer: grid),
                                                           "inputRectangle": CIVector(cgRect: CGRect(x: 1, y: 0, width: 2, height: 9))])
        #expect(crop?.outputImage?.extent == CGRect(x: 1, y: 0, width: 2, height: 4))
    }

    @Test func badSizesDoNotTrap() {
        let image = CIImage(cvPixelBuffer: grid)
        var bytes = [UInt8](repeating: 1, count: 64)
        context.render(image, toBitmap: &bytes, rowBytes: 16, bounds: CGRect(x: 0, y: 0, width: 1e12, height: 1e12), format: .RGBA8)
        context.render(image, toBitmap: &bytes, rowBytes: 4, bounds: CGRect(x: 0, y: 0, width: 4, height: 4), format: .RGBA8)
        context.render(image, toBitmap: &bytes, rowBytes: Int.max / 2, bounds: CGRect(x: 0, y: 0, width: 4, height: 4), format: .RGBA8)
        context.render(image, toBitmap: &bytes, rowBytes: 16, bounds: CGRect(x: 0, y: 0, width: 4, height: 4), format: .RGBA16)
        context.render(image, toBitmap: &bytes, rowBytes: 16, bounds: .infinite, format: .RGBA8)
        context.render(image, toBitmap: &bytes, rowBytes: 16, bounds: .null, format: .RGBA8)
        #expect(bytes.allSatisfy { $0 == 1 })
        // A larger image into a smaller buffer, a huge blur, a degenerate or huge transform.
        #expect(render(CIImage(cvPixelBuffer: T.varied()).applyingFilter("CIColorMatrix"), 2, 2).count == 4)
        _ = render(image.applyingGaussianBlur(sigma: 1e9))
        _ = render(image.transformed(by: CGAffineTransform(scaleX: 0, y: 1)))
        _ = render(image.transformed(by: CGAffineTransform(scaleX: 1e-9, y: 1e-9)))
        _ = render(image.transformed(by: CGAffineTransform(scaleX: .nan, y: 1)))
        _ = render(image.applyingFilter("CIColorMatrix", parameters: ["inputRVector": CIVector(x: .nan, y: .infinity, z: 0, w: 0)]))
        _ = render(CIImage(color: .red).cropped(to: CGRect(x: -1e300, y: -1e300, width: 1e300, height: 1e300)))
        // A buffer rendered onto itself, through the general path.
        let same = T.buffer(4, 4) { x, y in (UInt8(40 * x), UInt8(40 * y), 7, 255) }
        context.render(CIImage(cvPixelBuffer: same).transformed(by: CGAffineTransform(translationX: 0, y: 1)), to: same)
        #expect(T.pixels(same)[0] == [0, 40, 7, 255])
    }

    @Test func orientationTurnsThePicture() {
        // EXIF 6: shown turned 90° clockwise; a 4 × 2 picture becomes 2 × 4 at the origin.
        let wide = T.buffer(4, 2) { x, y in (UInt8(40 * x), UInt8(40 * y), 0, 255) }
        let upright = CIImage(cvPixelBuffer: wide).oriented(forExifOrientation: 6)
        #expect(upright.extent == CGRect(x: 0, y: 0, width: 2, height: 4))
        // Turned clockwise, the stored top-left pixel ends at the top right.
        #expect(render(upright, 2, 4)[1] == [0, 0, 0, 255])
        // The stored top-right, memory (3, 0), lands at the bottom right.
        #expect(render(upright, 2, 4)[3 * 2 + 1] == [120, 0, 0, 255])
        #expect(render(CIImage(cvPixelBuffer: wide).oriented(.right), 2, 4) == render(upright, 2, 4))
        #expect(render(CIImage(cvPixelBuffer: wide).oriented(.up), 4, 2) == T.pixels(wide))
    }

    @Test func biPlanarInAndOut() {
        // Mid grey NV12 (video range: Y 126 ≈ 0.5) read as opaque grey.
        var pb: CVPixelBuffer?
        CVPixelBufferCreate(nil, 4, 4, kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange, nil, &pb)
        let nv12 = pb!
        CVPixelBufferLockBaseAddress(nv12, [])
        let y = CVPixelBufferGetBaseAddressOfPlane(nv12, 0)!, c = CVPixelBufferGetBaseAddressOfPlane(nv12, 1)!
        memset(y, 126, CVPixelBufferGetBytesPerRowOfPlane(nv12, 0) * 4)
        memset(c, 128, CVPixelBufferGetBytesPerRowOfPlane(nv12, 1) * 2)
        CVPixelBufferUnlockBaseAddress(nv12, [])
        #expect(render(CIImage(cvPixelBuffer: nv12)).allSatisfy { $0 == [128, 128, 128, 255] })
        // White BGRA into full-range NV12: Y 255, chroma 128.
        var out: CVPixelBuffer?
        CVPixelBufferCreate(nil, 4, 4, kCVPixelFormatType_420YpCbCr8BiPlanarFullRange, nil, &out)
        context.render(CIImage(color: .white), to: out!)
        CVPixelBufferLockBaseAddress(out!, .readOnly)
        #expect(CVPixelBufferGetBaseAddressOfPlane(out!, 0)!.load(fromByteOffset: 5, as: UInt8.self) == 255)
        #expect(CVPixelBufferGetBaseAddressOfPlane(out!, 1)!.load(fromByteOffset: 1, as: UInt8.self) == 128)
        CVPixelBufferUnlockBaseAddress(out!, .readOnly)
    }
}
