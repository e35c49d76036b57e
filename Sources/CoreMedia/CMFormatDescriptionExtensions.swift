// A format description's extension keys for colour (CMFormatDescription.h): Core Media defines
// them as the image buffer's attachment keys, the same strings.

public let kCMFormatDescriptionExtension_ColorPrimaries: CFString = kCVImageBufferColorPrimariesKey
public let kCMFormatDescriptionExtension_TransferFunction: CFString = kCVImageBufferTransferFunctionKey
public let kCMFormatDescriptionExtension_YCbCrMatrix: CFString = kCVImageBufferYCbCrMatrixKey
public let kCMFormatDescriptionColorPrimaries_ITU_R_709_2: CFString = kCVImageBufferColorPrimaries_ITU_R_709_2
public let kCMFormatDescriptionColorPrimaries_ITU_R_2020: CFString = kCVImageBufferColorPrimaries_ITU_R_2020
public let kCMFormatDescriptionTransferFunction_ITU_R_709_2: CFString = kCVImageBufferTransferFunction_ITU_R_709_2
public let kCMFormatDescriptionTransferFunction_SMPTE_ST_2084_PQ: CFString = kCVImageBufferTransferFunction_SMPTE_ST_2084_PQ
public let kCMFormatDescriptionTransferFunction_ITU_R_2100_HLG: CFString = kCVImageBufferTransferFunction_ITU_R_2100_HLG
public let kCMFormatDescriptionYCbCrMatrix_ITU_R_709_2: CFString = kCVImageBufferYCbCrMatrix_ITU_R_709_2
public let kCMFormatDescriptionYCbCrMatrix_ITU_R_2020: CFString = kCVImageBufferYCbCrMatrix_ITU_R_2020
public let kCMFormatDescriptionColorPrimaries_EBU_3213: CFString = kCVImageBufferColorPrimaries_EBU_3213
public let kCMFormatDescriptionColorPrimaries_SMPTE_C: CFString = kCVImageBufferColorPrimaries_SMPTE_C
public let kCMFormatDescriptionColorPrimaries_P3_D65: CFString = kCVImageBufferColorPrimaries_P3_D65
public let kCMFormatDescriptionColorPrimaries_DCI_P3: CFString = kCVImageBufferColorPrimaries_DCI_P3
public let kCMFormatDescriptionColorPrimaries_P22: CFString = kCVImageBufferColorPrimaries_P22
public let kCMFormatDescriptionTransferFunction_ITU_R_2020: CFString = kCVImageBufferTransferFunction_ITU_R_2020
public let kCMFormatDescriptionTransferFunction_Linear: CFString = kCVImageBufferTransferFunction_Linear
public let kCMFormatDescriptionTransferFunction_sRGB: CFString = kCVImageBufferTransferFunction_sRGB
public let kCMFormatDescriptionTransferFunction_SMPTE_240M_1995: CFString = kCVImageBufferTransferFunction_SMPTE_240M_1995
public let kCMFormatDescriptionTransferFunction_SMPTE_ST_428_1: CFString = kCVImageBufferTransferFunction_SMPTE_ST_428_1
public let kCMFormatDescriptionYCbCrMatrix_ITU_R_601_4: CFString = kCVImageBufferYCbCrMatrix_ITU_R_601_4
public let kCMFormatDescriptionYCbCrMatrix_SMPTE_240M_1995: CFString = kCVImageBufferYCbCrMatrix_SMPTE_240M_1995
/// Whether the samples use the full range of their values (`Bool`): false, limited ("video") range.
public let kCMFormatDescriptionExtension_FullRangeVideo: CFString = "FullRangeVideo"
/// Bits a component of a sample (`Int`: 8, 10, 12).
public let kCMFormatDescriptionExtension_BitsPerComponent: CFString = "BitsPerComponent"
/// HDR10's mastering display (24 bytes of `Data`) and content light level (4 bytes), as Core Video's.
public let kCMFormatDescriptionExtension_MasteringDisplayColorVolume: CFString = kCVImageBufferMasteringDisplayColorVolumeKey
public let kCMFormatDescriptionExtension_ContentLightLevelInfo: CFString = kCVImageBufferContentLightLevelInfoKey

/// A format description's extensions (colour, range, bit depth, HDR metadata), or nil when it
/// has none. A video track's descriptions have what its file states (`AVAssetTrack.formatDescriptions`).
public func CMFormatDescriptionGetExtensions(_ desc: CMFormatDescription) -> CFDictionary? {
    desc.extensions.isEmpty ? nil : desc.extensions
}

/// One extension of a format description (``CMFormatDescriptionGetExtensions(_:)``), or nil.
public func CMFormatDescriptionGetExtension(_ desc: CMFormatDescription, extensionKey: CFString) -> CFPropertyList? {
    desc.extensions[extensionKey]
}
