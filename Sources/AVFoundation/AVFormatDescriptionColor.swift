import CoreMedia
import CoreVideo
import Foundation
import GraphKitRuntime

extension VideoColor {
    /// A video track's colour as Core Media's format description extensions: Apple's values for
    /// the primaries, transfer function and matrix the file states (ffprobe's names, H.273's code
    /// points, mapped as Core Media maps them: BT.601's transfer is BT.709's curve, and 10- and
    /// 12-bit BT.2020's are `ITU_R_2020`), the range, the bit depth, and HDR10's metadata as the
    /// big-endian SEI payloads Core Video keeps. What the file does not state, or Apple has no
    /// name for, is left out.
    var formatDescriptionExtensions: [String: Any] {
        var e: [String: Any] = [:]
        let primaryValues: [String: CFString] = [
            "bt709": kCMFormatDescriptionColorPrimaries_ITU_R_709_2, "bt2020": kCMFormatDescriptionColorPrimaries_ITU_R_2020,
            "smpte170m": kCMFormatDescriptionColorPrimaries_SMPTE_C, "smpte240m": kCMFormatDescriptionColorPrimaries_SMPTE_C,
            "bt470bg": kCMFormatDescriptionColorPrimaries_EBU_3213, "smpte431": kCMFormatDescriptionColorPrimaries_DCI_P3,
            "smpte432": kCMFormatDescriptionColorPrimaries_P3_D65, "ebu3213": kCMFormatDescriptionColorPrimaries_P22,
        ]
        let transferValues: [String: CFString] = [
            "bt709": kCMFormatDescriptionTransferFunction_ITU_R_709_2, "smpte170m": kCMFormatDescriptionTransferFunction_ITU_R_709_2,
            "bt2020-10": kCMFormatDescriptionTransferFunction_ITU_R_2020, "bt2020-12": kCMFormatDescriptionTransferFunction_ITU_R_2020,
            "smpte2084": kCMFormatDescriptionTransferFunction_SMPTE_ST_2084_PQ, "arib-std-b67": kCMFormatDescriptionTransferFunction_ITU_R_2100_HLG,
            "linear": kCMFormatDescriptionTransferFunction_Linear, "iec61966-2-1": kCMFormatDescriptionTransferFunction_sRGB,
            "smpte240m": kCMFormatDescriptionTransferFunction_SMPTE_240M_1995, "smpte428": kCMFormatDescriptionTransferFunction_SMPTE_ST_428_1,
        ]
        let matrixValues: [String: CFString] = [
            "bt709": kCMFormatDescriptionYCbCrMatrix_ITU_R_709_2, "bt470bg": kCMFormatDescriptionYCbCrMatrix_ITU_R_601_4,
            "smpte170m": kCMFormatDescriptionYCbCrMatrix_ITU_R_601_4, "bt2020nc": kCMFormatDescriptionYCbCrMatrix_ITU_R_2020,
            "smpte240m": kCMFormatDescriptionYCbCrMatrix_SMPTE_240M_1995,
        ]
        if let p = primaries.flatMap({ primaryValues[$0] }) { e[kCMFormatDescriptionExtension_ColorPrimaries] = p }
        if let t = transfer.flatMap({ transferValues[$0] }) { e[kCMFormatDescriptionExtension_TransferFunction] = t }
        if let m = matrix.flatMap({ matrixValues[$0] }) { e[kCMFormatDescriptionExtension_YCbCrMatrix] = m }
        if let range { e[kCMFormatDescriptionExtension_FullRangeVideo] = range == "pc" }
        if let bitDepth { e[kCMFormatDescriptionExtension_BitsPerComponent] = bitDepth }
        if let m = masteringDisplay {
            // D.2.28: the primaries in the SEI's order (green, blue, red) and the white point in
            // 0.00002 units, then the luminance in 0.0001 cd/m².
            var bytes = Data()
            // Clamped into the field before any conversion: a file's claim cannot trap here.
            func units(_ v: Double, _ unit: Double, most: Double) -> Double { v.isFinite ? min(max((v / unit).rounded(), 0), most) : 0 }
            func put16(_ v: Double) { let u = UInt16(units(v, 0.00002, most: 65535)); bytes += [UInt8(u >> 8), UInt8(u & 0xff)] }
            func put32(_ v: Double) {
                let u = UInt32(units(v, 0.0001, most: 4_294_967_295))
                bytes += [UInt8(u >> 24), UInt8(u >> 16 & 0xff), UInt8(u >> 8 & 0xff), UInt8(u & 0xff)]
            }
            for c in [m.green, m.blue, m.red, m.whitePoint] { put16(c.x); put16(c.y) }
            put32(m.maxLuminance); put32(m.minLuminance)
            e[kCMFormatDescriptionExtension_MasteringDisplayColorVolume] = bytes
        }
        if let l = contentLightLevel {
            let cll = UInt16(clamping: l.maxCLL), fall = UInt16(clamping: l.maxFALL)
            e[kCMFormatDescriptionExtension_ContentLightLevelInfo] = Data([UInt8(cll >> 8), UInt8(cll & 0xff), UInt8(fall >> 8), UInt8(fall & 0xff)])
        }
        return e
    }
}
