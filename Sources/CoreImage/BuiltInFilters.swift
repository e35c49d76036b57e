import CoreVideo

// The filters GraphKit has, by Apple's names, and the arithmetic of each. Every colour filter is
// a ColorMatrix on unpremultiplied values, so a chain of them renders in one pass (Renderer).

extension FilterDefinition {
    static let builtIn: [String: FilterDefinition] = Dictionary(
        uniqueKeysWithValues: [colorMatrix, sepiaTone, colorControls, gaussianBlur, affineTransform, sourceOver, crop].map { ($0.name, $0) })

    /// CIColorMatrix: out = M · (R, G, B, A) + bias on unpremultiplied values, clamped to 0…1.
    static let colorMatrix = FilterDefinition(
        name: "CIColorMatrix", categories: [kCICategoryColorAdjustment, kCICategoryVideo],
        inputKeys: [kCIInputImageKey, "inputRVector", "inputGVector", "inputBVector", "inputAVector", "inputBiasVector"],
        defaults: ["inputRVector": CIVector(x: 1, y: 0, z: 0, w: 0), "inputGVector": CIVector(x: 0, y: 1, z: 0, w: 0),
                   "inputBVector": CIVector(x: 0, y: 0, z: 1, w: 0), "inputAVector": CIVector(x: 0, y: 0, z: 0, w: 1),
                   "inputBiasVector": CIVector(x: 0, y: 0, z: 0, w: 0)]
    ) { p in
        guard let image = p.image(kCIInputImageKey) else { return nil }
        let keys = ["inputRVector", "inputGVector", "inputBVector", "inputAVector", "inputBiasVector"]
        let vectors = keys.map { p.vector($0) }
        guard vectors.allSatisfy({ $0 != nil }) else { return nil }
        let v = vectors.map { vector in (0..<4).map { Double(vector!.value(at: $0)) } }
        return CIImage(image.recipe.applying(ColorMatrix(r: v[0], g: v[1], b: v[2], a: v[3], bias: v[4])))
    }

    /// The sepia weights. Apple does not publish CISepiaTone's; these are the common sepia
    /// matrix (as in CSS filter effects' sepia()), so a result is close to Apple's, not equal.
    static let sepiaWeights: [Double] = [0.393, 0.769, 0.189, 0.349, 0.686, 0.168, 0.272, 0.534, 0.131]

    /// CISepiaTone: mix(rgb, S · rgb, intensity), with S ``sepiaWeights``; intensity 1 is the
    /// full effect, 0 none (Apple's documentation of `intensity`).
    static let sepiaTone = FilterDefinition(
        name: "CISepiaTone", categories: [kCICategoryColorEffect, kCICategoryVideo],
        inputKeys: [kCIInputImageKey, kCIInputIntensityKey], defaults: [kCIInputIntensityKey: 1.0]
    ) { p in
        guard let image = p.image(kCIInputImageKey), let i = p.number(kCIInputIntensityKey) else { return nil }
        return CIImage(image.recipe.applying(sepiaMatrix(intensity: i)))
    }

    static func sepiaMatrix(intensity i: Double) -> ColorMatrix {
        let w = (0..<9).map { k in (k % 4 == 0 ? 1 - i : 0) + i * sepiaWeights[k] }
        return ColorMatrix(rgb: w, bias: [0, 0, 0])
    }

    /// Rec. 709 luma weights, CIColorControls' grey.
    static let lumaWeights: [Double] = [0.2126, 0.7152, 0.0722]

    /// CIColorControls, as Apple documents it: saturation mixes each colour with its luma
    /// (Rec. 709 weights; 0 grey, 1 unchanged), then brightness is added, then contrast scales
    /// around 0.5: rgb' = (mix(luma, rgb, s) + b − 0.5) · c + 0.5.
    static let colorControls = FilterDefinition(
        name: "CIColorControls", categories: [kCICategoryColorAdjustment, kCICategoryVideo],
        inputKeys: [kCIInputImageKey, kCIInputSaturationKey, kCIInputBrightnessKey, kCIInputContrastKey],
        defaults: [kCIInputSaturationKey: 1.0, kCIInputBrightnessKey: 0.0, kCIInputContrastKey: 1.0]
    ) { p in
        guard let image = p.image(kCIInputImageKey), let s = p.number(kCIInputSaturationKey),
              let b = p.number(kCIInputBrightnessKey), let c = p.number(kCIInputContrastKey) else { return nil }
        return CIImage(image.recipe.applying(colorControlsMatrix(saturation: s, brightness: b, contrast: c)))
    }

    static func colorControlsMatrix(saturation s: Double, brightness b: Double, contrast c: Double) -> ColorMatrix {
        let w = (0..<9).map { k in c * ((k % 4 == 0 ? s : 0) + (1 - s) * lumaWeights[k % 3]) }
        let k = c * (b - 0.5) + 0.5
        return ColorMatrix(rgb: w, bias: [k, k, k])
    }

    /// CIGaussianBlur: a Gaussian of standard deviation `inputRadius` (Apple's
    /// `applyingGaussianBlur(sigma:)` is this filter with radius = sigma); the extent grows by
    /// ⌈3 · radius⌉ each way. A radius of 0 or less leaves the image as it is.
    static let gaussianBlur = FilterDefinition(
        name: "CIGaussianBlur", categories: [kCICategoryBlur, kCICategoryVideo],
        inputKeys: [kCIInputImageKey, kCIInputRadiusKey], defaults: [kCIInputRadiusKey: 10.0]
    ) { p in
        guard let image = p.image(kCIInputImageKey), let r = p.number(kCIInputRadiusKey), !r.isNaN else { return nil }
        return r > 0 ? CIImage(.blur(image.recipe, r)) : image
    }

    /// CIAffineTransform: `inputTransform` a CGAffineTransform (or a 6-value CIVector).
    static let affineTransform = FilterDefinition(
        name: "CIAffineTransform", categories: [kCICategoryGeometryAdjustment, kCICategoryVideo],
        inputKeys: [kCIInputImageKey, kCIInputTransformKey], defaults: [kCIInputTransformKey: CGAffineTransform.identity]
    ) { p in
        guard let image = p.image(kCIInputImageKey), let t = p.transform(kCIInputTransformKey) else { return nil }
        return image.transformed(by: t)
    }

    /// CISourceOverCompositing: `inputImage` over `inputBackgroundImage`.
    static let sourceOver = FilterDefinition(
        name: "CISourceOverCompositing", categories: [kCICategoryCompositeOperation, kCICategoryVideo],
        inputKeys: [kCIInputImageKey, kCIInputBackgroundImageKey], defaults: [:]
    ) { p in
        guard let image = p.image(kCIInputImageKey), let background = p.image(kCIInputBackgroundImageKey) else { return nil }
        return image.composited(over: background)
    }

    /// CICrop: `inputRectangle` a CIVector (x, y, width, height); Apple's default 0, 0, 300, 300.
    static let crop = FilterDefinition(
        name: "CICrop", categories: [kCICategoryGeometryAdjustment, kCICategoryVideo],
        inputKeys: [kCIInputImageKey, "inputRectangle"], defaults: ["inputRectangle": CIVector(x: 0, y: 0, z: 300, w: 300)]
    ) { p in
        guard let image = p.image(kCIInputImageKey), let r = p.vector("inputRectangle") else { return nil }
        return image.cropped(to: r.cgRectValue)
    }
}
