import CoreVideo

// CoreImage's parameter keys (their values are Apple's strings).
public let kCIInputImageKey = "inputImage"
public let kCIOutputImageKey = "outputImage"
public let kCIInputBackgroundImageKey = "inputBackgroundImage"
public let kCIInputIntensityKey = "inputIntensity"
public let kCIInputRadiusKey = "inputRadius"
public let kCIInputSaturationKey = "inputSaturation"
public let kCIInputBrightnessKey = "inputBrightness"
public let kCIInputContrastKey = "inputContrast"
public let kCIInputTransformKey = "inputTransform"
public let kCIInputColorKey = "inputColor"
public let kCIInputExtentKey = "inputExtent"
public let kCIInputScaleKey = "inputScale"
public let kCIInputAngleKey = "inputAngle"
public let kCIInputCenterKey = "inputCenter"
public let kCIAttributeFilterName = "CIAttributeFilterName"
public let kCIAttributeFilterDisplayName = "CIAttributeFilterDisplayName"
public let kCICategoryColorAdjustment = "CICategoryColorAdjustment"
public let kCICategoryColorEffect = "CICategoryColorEffect"
public let kCICategoryBlur = "CICategoryBlur"
public let kCICategoryGeometryAdjustment = "CICategoryGeometryAdjustment"
public let kCICategoryCompositeOperation = "CICategoryCompositeOperation"
public let kCICategoryBuiltIn = "CICategoryBuiltIn"
public let kCICategoryVideo = "CICategoryVideo"

/// CoreImage's `CIFilter`: a named filter whose parameters are set by key and whose
/// ``outputImage`` is a new ``CIImage`` recipe. The filters GraphKit has are listed by
/// ``filterNames(inCategory:)`` (BuiltInFilters.swift); `CIFilter(name:)` is nil for any other,
/// as Apple's is for a name it does not know.
///
/// A value of the wrong type for a key, or a missing input image, makes ``outputImage`` nil
/// (Apple raises an exception for some of these; nothing here traps).
open class CIFilter: CustomStringConvertible {
    let definition: FilterDefinition
    private var values: [String: Any]

    init(definition: FilterDefinition) {
        self.definition = definition
        values = definition.defaults
    }

    /// For a subclass that computes its own ``outputImage`` (a custom filter): no keys, no output.
    public init() {
        definition = FilterDefinition(name: "CIFilter", categories: [], inputKeys: [], defaults: [:]) { _ in nil }
        values = [:]
    }

    /// The filter called `name`, its parameters at their defaults; nil when GraphKit has no such
    /// filter.
    public convenience init?(name: String) {
        guard let d = FilterDefinition.builtIn[name] else { return nil }
        self.init(definition: d)
    }

    /// As ``init(name:)``, then each of `params` set.
    public convenience init?(name: String, parameters params: [String: Any]?) {
        self.init(name: name)
        for (k, v) in params ?? [:] { setValue(v, forKey: k) }
    }

    public var name: String { definition.name }
    public var inputKeys: [String] { definition.inputKeys }
    public var outputKeys: [String] { [kCIOutputImageKey] }
    /// The filter's name and categories (`kCIAttributeFilterName`, "CIAttributeFilterCategories").
    public var attributes: [String: Any] {
        [kCIAttributeFilterName: name, kCIAttributeFilterDisplayName: name, "CIAttributeFilterCategories": definition.categories]
    }

    /// Every parameter back to its default (the input image removed).
    public func setDefaults() { values = definition.defaults }

    /// Sets a parameter; nil removes it. A key the filter does not have is kept and not used.
    open func setValue(_ value: Any?, forKey key: String) { values[key] = value }

    /// A parameter's value, or the ``outputImage`` for `kCIOutputImageKey`.
    open func value(forKey key: String) -> Any? { key == kCIOutputImageKey ? outputImage : values[key] }

    /// The filtered image: nil without an input image, or when a parameter has the wrong type.
    open var outputImage: CIImage? { definition.output(Parameters(values: values)) }

    /// The names of the filters GraphKit has in `category` (all of them for nil or
    /// `kCICategoryBuiltIn`).
    public static func filterNames(inCategory category: String?) -> [String] {
        FilterDefinition.builtIn.values.filter { d in category == nil || category == kCICategoryBuiltIn || d.categories.contains(category!) }
            .map(\.name).sorted()
    }

    public static func filterNames(inCategories categories: [String]?) -> [String] {
        guard let categories, !categories.isEmpty else { return filterNames(inCategory: nil) }
        return FilterDefinition.builtIn.values.filter { d in categories.allSatisfy { $0 == kCICategoryBuiltIn || d.categories.contains($0) } }
            .map(\.name).sorted()
    }

    public var description: String { "CIFilter(\(name))" }
}

/// A filter's parameters as set, read with the type each needs.
struct Parameters {
    let values: [String: Any]

    func image(_ key: String) -> CIImage? { values[key] as? CIImage }
    func number(_ key: String) -> Double? { settingsNumber(values[key]) }
    func vector(_ key: String) -> CIVector? { values[key] as? CIVector }
    func transform(_ key: String) -> CGAffineTransform? {
        switch values[key] {
        case let t as CGAffineTransform: t
        case let v as CIVector where v.count == 6: v.cgAffineTransformValue
        default: nil
        }
    }
}

/// What a filter is: its name, keys and defaults, and how its output is made.
struct FilterDefinition: Sendable {
    let name: String
    let categories: [String]
    let inputKeys: [String]
    let defaults: [String: any Sendable]
    let output: @Sendable (Parameters) -> CIImage?

    init(name: String, categories: [String], inputKeys: [String], defaults: [String: any Sendable],
         output: @escaping @Sendable (Parameters) -> CIImage?) {
        (self.name, self.categories, self.inputKeys, self.defaults, self.output) = (name, categories, inputKeys, defaults, output)
    }
}
