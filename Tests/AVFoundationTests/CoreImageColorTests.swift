import CKernels
import CoreImage
import Testing

private typealias T = CoreImageTestImages

/// CoreImage's colour filters against their definitions, through CIContext's one-pass kernel.
@Suite struct CoreImageColorTests {
    let context = CIContext()

    /// Renders `image` into a new BGRA buffer the size of `like`; its pixels as (R, G, B, A).
    func rendered(_ image: CIImage, like pb: CVPixelBuffer) -> [[UInt8]] {
        let out = T.blank(CVPixelBufferGetWidth(pb), CVPixelBufferGetHeight(pb))
        context.render(image, to: out)
        return T.pixels(out)
    }

    @Test func colorMatrixIsExactTo1Over255() throws {
        let pb = T.varied()
        let rows: [[Double]] = [[0.6, 0.3, 0.2, 0], [-0.2, 1.1, 0.1, 0.05], [0.25, 0.25, 0.5, 0], [0.1, 0, 0, 0.8]]
        let bias = [0.05, -0.02, 0.1, 0.1]
        let f = try #require(CIFilter(name: "CIColorMatrix"))
        f.setValue(CIImage(cvPixelBuffer: pb), forKey: kCIInputImageKey)
        for (key, v) in zip(["inputRVector", "inputGVector", "inputBVector", "inputAVector"], rows) {
            f.setValue(CIVector(x: v[0], y: v[1], z: v[2], w: v[3]), forKey: key)
        }
        f.setValue(CIVector(x: bias[0], y: bias[1], z: bias[2], w: bias[3]), forKey: "inputBiasVector")
        let out = rendered(try #require(f.outputImage), like: pb)
        var worst = 0.0
        for (p, q) in zip(T.pixels(pb), out) {
            let e = T.expectedMatrix(p, rows, bias)
            for c in 0..<4 { worst = max(worst, abs(e[c] - Double(q[c]))) }
        }
        #expect(worst <= 1.0, "largest difference from the definition: \(worst)/255")
    }

    @Test func identityMatrixGivesTheInputBytes() throws {
        let pb = T.varied()
        let f = CIFilter.colorMatrix()
        f.inputImage = CIImage(cvPixelBuffer: pb)
        #expect(rendered(try #require(f.outputImage), like: pb) == T.pixels(pb))
        // No filter at all, and RGBA out of BGRA in: the same values.
        let rgba = T.blank(67, 40, type: kCVPixelFormatType_32RGBA)
        context.render(CIImage(cvPixelBuffer: pb), to: rgba)
        #expect(T.pixels(rgba) == T.pixels(pb))
    }

    @Test func biasAndAlphaRows() throws {
        let pb = T.buffer(9, 3) { x, _ in (UInt8(x * 20), 100, 200, 255) }
        let f = CIFilter.colorMatrix()
        f.inputImage = CIImage(cvPixelBuffer: pb)
        f.rVector = CIVector(x: 0, y: 0, z: 0, w: 0)
        f.biasVector = CIVector(x: 0.5, y: 0, z: 0, w: 0)
        f.aVector = CIVector(x: 0, y: 0, z: 0, w: 0.5)
        let out = rendered(try #require(f.outputImage), like: pb)
        // R = 0.5 (then premultiplied by alpha 0.5), G and B premultiplied, alpha halved.
        #expect(out[0] == [64, 50, 100, 128])
        #expect(out.allSatisfy { $0 == [64, 50, 100, 128] })
    }

    @Test func sepiaToneFollowsItsFormula() throws {
        let pb = T.varied(opaque: true)
        for intensity in [1.0, 0.4] {
            let image = CIImage(cvPixelBuffer: pb).applyingFilter("CISepiaTone", parameters: [kCIInputIntensityKey: intensity])
            let s = [0.393, 0.769, 0.189, 0.349, 0.686, 0.168, 0.272, 0.534, 0.131]
            let rows = (0..<3).map { r in (0..<3).map { c in (r == c ? 1 - intensity : 0) + intensity * s[3 * r + c] } + [0] } + [[0, 0, 0, 1]]
            var worst = 0.0
            for (p, q) in zip(T.pixels(pb), rendered(image, like: pb)) {
                let e = T.expectedMatrix(p, rows, [0, 0, 0, 0])
                for c in 0..<4 { worst = max(worst, abs(e[c] - Double(q[c]))) }
            }
            #expect(worst <= 1.0, "intensity \(intensity): \(worst)/255")
        }
    }

    @Test func colorControlsFollowTheirFormula() throws {
        let pb = T.varied(opaque: true)
        for (s, b, c) in [(0.0, 0.0, 1.0), (1.5, 0.1, 1.2), (0.7, -0.2, 0.6)] {
            let f = CIFilter.colorControls()
            f.inputImage = CIImage(cvPixelBuffer: pb)
            (f.saturation, f.brightness, f.contrast) = (Float(s), Float(b), Float(c))
            var worst = 0.0
            for (p, q) in zip(T.pixels(pb), rendered(try #require(f.outputImage), like: pb)) {
                let rgb = (0..<3).map { Double(p[$0]) / 255 }
                let luma = 0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]
                for k in 0..<3 {
                    let v = ((luma + (rgb[k] - luma) * Double(Float(s)) + Double(Float(b))) - 0.5) * Double(Float(c)) + 0.5
                    worst = max(worst, abs(min(1, max(0, v)) * 255 - Double(q[k])))
                }
                #expect(q[3] == 255)
            }
            #expect(worst <= 1.0, "saturation \(s), brightness \(b), contrast \(c): \(worst)/255")
        }
    }

    /// Colour filters in a row are one matrix, clamped once at the end (as Apple's unclamped
    /// working space): doubling then halving gives back bright pixels a clamp between would cut.
    @Test func chainedColorFiltersClampOnce() throws {
        let pb = T.varied(opaque: true)
        let double = CIImage(cvPixelBuffer: pb).applyingFilter("CIColorMatrix", parameters: [
            "inputRVector": CIVector(x: 2, y: 0, z: 0, w: 0), "inputGVector": CIVector(x: 0, y: 2, z: 0, w: 0),
            "inputBVector": CIVector(x: 0, y: 0, z: 2, w: 0)])
        let back = double.applyingFilter("CIColorMatrix", parameters: [
            "inputRVector": CIVector(x: 0.5, y: 0, z: 0, w: 0), "inputGVector": CIVector(x: 0, y: 0.5, z: 0, w: 0),
            "inputBVector": CIVector(x: 0, y: 0, z: 0.5, w: 0)])
        #expect(rendered(back, like: pb) == T.pixels(pb))
    }

    /// The AVX2 kernel and the one-pixel path give the same bytes (the render above used both:
    /// 67 is not a multiple of 8).
    @Test func vectorAndScalarKernelsAgree() {
        var rng = T.Seeded(state: 7)
        let src = (0..<4 * 1000).map { _ in rng.next() }
        let m: [Float] = [0.9, 0.2, -0.1, 0.05, 3, 0.3, 0.6, 0.1, 0, -2, 0.2, 0.1, 0.7, 0, 0, 0.1, 0, 0, 0.9, 10]
        var a = [UInt8](repeating: 0, count: src.count), b = a
        gk_ci_color_matrix(m, src, 4000, [2, 1, 0, 3], &a, 4000, [0, 1, 2, 3], 1000, 1)
        gk_ci_color_matrix_scalar(m, src, [2, 1, 0, 3], &b, [0, 1, 2, 3], 1000)
        #expect(a == b)
        // Alpha kept, mostly opaque pixels (the vector path's step without divisions), with
        // and without A weights.
        let opaque = src.enumerated().map { $0.offset % 4 == 3 && $0.offset % 40 != 3 ? 255 : $0.element }
        // Sums past 0…255 either way (the packs clamp them), and too large to convert (clamped first).
        for (weighsA, scale) in [(false, Float(1)), (true, 1), (false, 4), (true, -3), (false, 1e12)] {
            let kept: [Float] = [0.393 * scale, 0.769, 0.189, weighsA ? 0.1 : 0, 0, 0.349, 0.686 * scale, 0.168, 0, 0.02,
                                 0.272, 0.534, 0.131 * scale, 0, -30, 0, 0, 0, 1, 0]
            gk_ci_color_matrix(kept, opaque, 4000, [2, 1, 0, 3], &a, 4000, [2, 1, 0, 3], 1000, 1)
            gk_ci_color_matrix_scalar(kept, opaque, [2, 1, 0, 3], &b, [2, 1, 0, 3], 1000)
            #expect(a == b, "scale \(scale)")
        }
    }
}
