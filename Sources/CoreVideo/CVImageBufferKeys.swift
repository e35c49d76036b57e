// The attachment keys and values of an image buffer (CVImageBuffer.h), with Apple's string
// values: what a frame's colour, pixel shape and clean aperture are called in a format
// description's extensions (kCMFormatDescriptionExtension_* are the same strings) and in a
// writer's `AVVideoColorPropertiesKey` (whose values are these strings too).

public let kCVImageBufferColorPrimariesKey: CFString = "CVImageBufferColorPrimaries"
public let kCVImageBufferColorPrimaries_ITU_R_709_2: CFString = "ITU_R_709_2"
public let kCVImageBufferColorPrimaries_EBU_3213: CFString = "EBU_3213"
public let kCVImageBufferColorPrimaries_SMPTE_C: CFString = "SMPTE_C"
public let kCVImageBufferColorPrimaries_P3_D65: CFString = "P3_D65"
public let kCVImageBufferColorPrimaries_ITU_R_2020: CFString = "ITU_R_2020"
public let kCVImageBufferColorPrimaries_DCI_P3: CFString = "DCI_P3"
public let kCVImageBufferColorPrimaries_P22: CFString = "P22"

public let kCVImageBufferTransferFunctionKey: CFString = "CVImageBufferTransferFunction"
public let kCVImageBufferTransferFunction_ITU_R_709_2: CFString = "ITU_R_709_2"
public let kCVImageBufferTransferFunction_ITU_R_2020: CFString = "ITU_R_2020"
public let kCVImageBufferTransferFunction_SMPTE_ST_2084_PQ: CFString = "SMPTE_ST_2084_PQ"
public let kCVImageBufferTransferFunction_ITU_R_2100_HLG: CFString = "ITU_R_2100_HLG"
public let kCVImageBufferTransferFunction_Linear: CFString = "Linear"
public let kCVImageBufferTransferFunction_sRGB: CFString = "IEC_sRGB"
public let kCVImageBufferTransferFunction_SMPTE_240M_1995: CFString = "SMPTE_240M_1995"
public let kCVImageBufferTransferFunction_SMPTE_ST_428_1: CFString = "SMPTE_ST_428_1"

public let kCVImageBufferYCbCrMatrixKey: CFString = "CVImageBufferYCbCrMatrix"
public let kCVImageBufferYCbCrMatrix_ITU_R_709_2: CFString = "ITU_R_709_2"
public let kCVImageBufferYCbCrMatrix_ITU_R_601_4: CFString = "ITU_R_601_4"
public let kCVImageBufferYCbCrMatrix_ITU_R_2020: CFString = "ITU_R_2020"
public let kCVImageBufferYCbCrMatrix_SMPTE_240M_1995: CFString = "SMPTE_240M_1995"

/// HDR10's metadata, as the HEVC SEI payloads carry them (big-endian `Data`): the mastering
/// display colour volume (ISO/IEC 23008-2 D.2.28, 24 bytes) and the content light level
/// (D.2.35, 4 bytes).
public let kCVImageBufferMasteringDisplayColorVolumeKey: CFString = "MasteringDisplayColorVolume"
public let kCVImageBufferContentLightLevelInfoKey: CFString = "ContentLightLevelInfo"

public let kCVImageBufferPixelAspectRatioKey: CFString = "CVPixelAspectRatio"
public let kCVImageBufferPixelAspectRatioHorizontalSpacingKey: CFString = "HorizontalSpacing"
public let kCVImageBufferPixelAspectRatioVerticalSpacingKey: CFString = "VerticalSpacing"

public let kCVImageBufferCleanApertureKey: CFString = "CVCleanAperture"
public let kCVImageBufferCleanApertureWidthKey: CFString = "Width"
public let kCVImageBufferCleanApertureHeightKey: CFString = "Height"
/// An image's ICC profile (Data); accepted as an attachment, not applied.
public let kCVImageBufferICCProfileKey: CFString = "CVImageBufferICCProfile"
/// Whether an image's alpha is straight or premultiplied (an attachment): GraphKit's BGRA is opaque.
public let kCVImageBufferAlphaChannelModeKey: CFString = "AlphaChannelMode"
public let kCVImageBufferAlphaChannelMode_StraightAlpha: CFString = "StraightAlpha"
public let kCVImageBufferAlphaChannelMode_PremultipliedAlpha: CFString = "PremultipliedAlpha"
/// How long a pool keeps an unused buffer (a pool attribute): accepted, not used (the pool keeps
/// what its users have given back).
public let kCVPixelBufferPoolMaximumBufferAgeKey: CFString = "MaximumBufferAge"
