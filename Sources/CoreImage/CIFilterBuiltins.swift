import CoreVideo

// The typed filters of Apple's `CoreImage.CIFilterBuiltins` (`CIFilter.colorMatrix()`, …): on
// Apple's platforms a submodule; a SwiftPM target cannot declare one, so they are part of
// `CoreImage` itself. Code written with `import CoreImage.CIFilterBuiltins` does not compile
// here ("no such module"); with `import CoreImage` alone (which Apple's needs the submodule for)
// it does. Each builder is a CIFilter whose properties read and write its keys.

/// What every typed filter has, as CoreImage's `CIFilterProtocol`.
public protocol CIFilterProtocol: AnyObject {
    var outputImage: CIImage? { get }
}

public protocol CIColorMatrix: CIFilterProtocol {
    var inputImage: CIImage? { get set }
    var rVector: CIVector { get set }
    var gVector: CIVector { get set }
    var bVector: CIVector { get set }
    var aVector: CIVector { get set }
    var biasVector: CIVector { get set }
}

public protocol CISepiaTone: CIFilterProtocol {
    var inputImage: CIImage? { get set }
    var intensity: Float { get set }
}

public protocol CIColorControls: CIFilterProtocol {
    var inputImage: CIImage? { get set }
    var saturation: Float { get set }
    var brightness: Float { get set }
    var contrast: Float { get set }
}

public protocol CIGaussianBlur: CIFilterProtocol {
    var inputImage: CIImage? { get set }
    var radius: Float { get set }
}

public protocol CIAffineTransform: CIFilterProtocol {
    var inputImage: CIImage? { get set }
    var transform: CGAffineTransform { get set }
}

public protocol CICompositeOperation: CIFilterProtocol {
    var inputImage: CIImage? { get set }
    var backgroundImage: CIImage? { get set }
}

extension CIFilter {
    public static func colorMatrix() -> CIFilter & CIColorMatrix { TypedFilter(definition: .colorMatrix) }
    public static func sepiaTone() -> CIFilter & CISepiaTone { TypedFilter(definition: .sepiaTone) }
    public static func colorControls() -> CIFilter & CIColorControls { TypedFilter(definition: .colorControls) }
    public static func gaussianBlur() -> CIFilter & CIGaussianBlur { TypedFilter(definition: .gaussianBlur) }
    public static func affineTransform() -> CIFilter & CIAffineTransform { TypedFilter(definition: .affineTransform) }
    public static func sourceOverCompositing() -> CIFilter & CICompositeOperation { TypedFilter(definition: .sourceOver) }
}

/// The one class behind the typed builders: each property a key of the filter it was made for.
final class TypedFilter: CIFilter, CIColorMatrix, CISepiaTone, CIColorControls, CIGaussianBlur, CIAffineTransform, CICompositeOperation {
    private func vector(_ key: String) -> CIVector { value(forKey: key) as? CIVector ?? CIVector(x: 0, y: 0, z: 0, w: 0) }
    private func number(_ key: String) -> Float { settingsNumber(value(forKey: key)).map(Float.init) ?? 0 }

    var inputImage: CIImage? {
        get { value(forKey: kCIInputImageKey) as? CIImage }
        set { setValue(newValue, forKey: kCIInputImageKey) }
    }
    var backgroundImage: CIImage? {
        get { value(forKey: kCIInputBackgroundImageKey) as? CIImage }
        set { setValue(newValue, forKey: kCIInputBackgroundImageKey) }
    }
    var rVector: CIVector { get { vector("inputRVector") } set { setValue(newValue, forKey: "inputRVector") } }
    var gVector: CIVector { get { vector("inputGVector") } set { setValue(newValue, forKey: "inputGVector") } }
    var bVector: CIVector { get { vector("inputBVector") } set { setValue(newValue, forKey: "inputBVector") } }
    var aVector: CIVector { get { vector("inputAVector") } set { setValue(newValue, forKey: "inputAVector") } }
    var biasVector: CIVector { get { vector("inputBiasVector") } set { setValue(newValue, forKey: "inputBiasVector") } }
    var intensity: Float { get { number(kCIInputIntensityKey) } set { setValue(newValue, forKey: kCIInputIntensityKey) } }
    var saturation: Float { get { number(kCIInputSaturationKey) } set { setValue(newValue, forKey: kCIInputSaturationKey) } }
    var brightness: Float { get { number(kCIInputBrightnessKey) } set { setValue(newValue, forKey: kCIInputBrightnessKey) } }
    var contrast: Float { get { number(kCIInputContrastKey) } set { setValue(newValue, forKey: kCIInputContrastKey) } }
    var radius: Float { get { number(kCIInputRadiusKey) } set { setValue(newValue, forKey: kCIInputRadiusKey) } }
    var transform: CGAffineTransform {
        get { value(forKey: kCIInputTransformKey) as? CGAffineTransform ?? .identity }
        set { setValue(newValue, forKey: kCIInputTransformKey) }
    }
}
