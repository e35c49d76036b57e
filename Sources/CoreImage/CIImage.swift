@_exported import CoreVideo

/// CoreImage's `CIImage`: an immutable recipe for an image, not its pixels. Nothing is computed
/// until a ``CIContext`` renders it; each method returns a new recipe.
///
/// Coordinates are CoreImage's: the origin at the bottom left, y up, one unit a pixel. An image
/// of a pixel buffer covers (0, 0, width, height), and the buffer's first row in memory is its
/// top, y = height − 1 … height.
public final class CIImage: Sendable, CustomStringConvertible {
    let recipe: Recipe
    /// The image it was made of by ``init(cgImage:)``, unchanged (Apple's `cgImage`).
    let sourceCGImage: CGImage?

    init(_ recipe: Recipe, cgImage: CGImage? = nil) {
        self.recipe = recipe
        sourceCGImage = cgImage
    }

    /// An image of the pixel buffer's stored values (read when rendered, as Apple's). BGRA,
    /// RGBA and 4:2:0 bi-planar (`420v`, `420f`) buffers are read; an image of another format
    /// renders as transparent.
    public convenience init(cvPixelBuffer pixelBuffer: CVPixelBuffer) { self.init(.pixels(pixelBuffer)) }

    /// As ``init(cvPixelBuffer:)``; the options are accepted and none is used (``CIImageOption``).
    public convenience init(cvPixelBuffer pixelBuffer: CVPixelBuffer, options: [CIImageOption: Any]?) {
        self.init(.pixels(pixelBuffer))
    }

    public convenience init(cvImageBuffer imageBuffer: CVImageBuffer) { self.init(.pixels(imageBuffer)) }

    public convenience init(cvImageBuffer imageBuffer: CVImageBuffer, options: [CIImageOption: Any]?) {
        self.init(.pixels(imageBuffer))
    }

    /// One colour everywhere: an image with an infinite extent (crop it before rendering it
    /// anywhere but into a buffer or bounds of its own).
    public convenience init(color: CIColor) {
        let a = Float(color.alpha)
        self.init(.color(SIMD4(Float(color.red) * a, Float(color.green) * a, Float(color.blue) * a, a)))
    }

    /// An image with nothing in it: its extent is `CGRect.null`.
    public static func empty() -> CIImage { CIImage(.empty) }

    public static var black: CIImage { CIImage(color: .black) }
    public static var white: CIImage { CIImage(color: .white) }
    public static var gray: CIImage { CIImage(color: .gray) }
    public static var red: CIImage { CIImage(color: .red) }
    public static var green: CIImage { CIImage(color: .green) }
    public static var blue: CIImage { CIImage(color: .blue) }
    public static var cyan: CIImage { CIImage(color: .cyan) }
    public static var magenta: CIImage { CIImage(color: .magenta) }
    public static var yellow: CIImage { CIImage(color: .yellow) }
    public static var clear: CIImage { CIImage(color: .clear) }

    /// The rectangle outside which the image is transparent: `CGRect.infinite` for a colour or a
    /// clamped image, `CGRect.null` for an empty one.
    public var extent: CGRect { recipe.extent }

    /// The pixel buffer the image was made of, when it is one unchanged, as Apple's.
    public var pixelBuffer: CVPixelBuffer? {
        if case .pixels(let pb) = recipe { return pb }
        return nil
    }

    /// The image moved by `matrix` (CoreImage's y-up coordinates); resampled bilinearly.
    public func transformed(by matrix: CGAffineTransform) -> CIImage {
        matrix.isIdentity ? self : CIImage(.transform(recipe, matrix))
    }

    /// As ``transformed(by:)``; the higher-quality downsampling Apple offers is not done.
    public func transformed(by matrix: CGAffineTransform, highQualityDownsample: Bool) -> CIImage { transformed(by: matrix) }

    /// The part inside `rect`; transparent outside. Its extent is `rect ∩ extent`.
    public func cropped(to rect: CGRect) -> CIImage { CIImage(.crop(recipe, rect)) }

    /// The edge pixels repeated outwards forever: an infinite extent.
    public func clampedToExtent() -> CIImage {
        let e = extent
        return e.isInfinite || e.isNull ? self : CIImage(.clamp(recipe, e))
    }

    /// The pixels of `rect` clamped outwards.
    public func clamped(to rect: CGRect) -> CIImage { CIImage(.clamp(.crop(recipe, rect), rect)) }

    /// This image over `dest` (CISourceOverCompositing).
    public func composited(over dest: CIImage) -> CIImage { CIImage(.over(recipe, dest.recipe)) }

    /// The output of the filter named `filterName` with this image as its `inputImage` and the
    /// other parameters given; an empty image when there is no such filter or it has no output,
    /// as Apple's.
    public func applyingFilter(_ filterName: String, parameters params: [String: Any]) -> CIImage {
        guard let filter = CIFilter(name: filterName, parameters: params) else { return .empty() }
        filter.setValue(self, forKey: kCIInputImageKey)
        return filter.outputImage ?? .empty()
    }

    public func applyingFilter(_ filterName: String) -> CIImage { applyingFilter(filterName, parameters: [:]) }

    /// CIGaussianBlur with `inputRadius` = `sigma`, the standard deviation, as Apple's.
    public func applyingGaussianBlur(sigma: Double) -> CIImage {
        applyingFilter("CIGaussianBlur", parameters: [kCIInputRadiusKey: sigma])
    }

    /// Alpha set to 1 inside `extent` (RGB unpremultiplied first), as Apple's.
    public func settingAlphaOne(in extent: CGRect) -> CIImage {
        let opaque = CIImage(recipe.applying(ColorMatrix(m: [1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1])))
        return opaque.cropped(to: extent).composited(over: self)
    }

    public var description: String { "CIImage(extent: \(extent))" }
}
