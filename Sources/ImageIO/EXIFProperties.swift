import CoreVideo
import MediaContainers

// A picture's EXIF as Apple's ImageIO gives it in its properties: `{TIFF}`, `{Exif}`, `{GPS}` and
// `{MakerApple}` dictionaries keyed by Apple's names (kCGImagePropertyTIFFMake, …), numbers as
// NSNumbers, GPS coordinates in decimal degrees, from the tags the container library reads
// (EXIFTags: a JPEG's APP1, a PNG's eXIf, a HEIF file's Exif item).

/// IFD0's tags by Apple's `{TIFF}` keys.
let tiffKeys: [UInt16: String] = [
    0x010E: kCGImagePropertyTIFFImageDescription, 0x010F: kCGImagePropertyTIFFMake,
    0x0110: kCGImagePropertyTIFFModel, 0x0112: kCGImagePropertyTIFFOrientation,
    0x011A: kCGImagePropertyTIFFXResolution, 0x011B: kCGImagePropertyTIFFYResolution,
    0x0128: kCGImagePropertyTIFFResolutionUnit, 0x0131: kCGImagePropertyTIFFSoftware,
    0x0132: kCGImagePropertyTIFFDateTime, 0x013B: kCGImagePropertyTIFFArtist,
    0x013C: kCGImagePropertyTIFFHostComputer, 0x8298: kCGImagePropertyTIFFCopyright,
    0x0103: kCGImagePropertyTIFFCompression, 0x0106: kCGImagePropertyTIFFPhotometricInterpretation,
]

/// The Exif IFD's tags by Apple's `{Exif}` keys.
let exifKeys: [UInt16: String] = [
    0x829A: kCGImagePropertyExifExposureTime, 0x829D: kCGImagePropertyExifFNumber,
    0x8822: kCGImagePropertyExifExposureProgram, 0x8824: kCGImagePropertyExifSpectralSensitivity,
    0x8827: kCGImagePropertyExifISOSpeedRatings, 0x8830: kCGImagePropertyExifSensitivityType,
    0x9000: kCGImagePropertyExifVersion, 0x9003: kCGImagePropertyExifDateTimeOriginal,
    0x9004: kCGImagePropertyExifDateTimeDigitized, 0x9010: kCGImagePropertyExifOffsetTime,
    0x9011: kCGImagePropertyExifOffsetTimeOriginal, 0x9012: kCGImagePropertyExifOffsetTimeDigitized,
    0x9101: kCGImagePropertyExifComponentsConfiguration, 0x9201: kCGImagePropertyExifShutterSpeedValue,
    0x9202: kCGImagePropertyExifApertureValue, 0x9203: kCGImagePropertyExifBrightnessValue,
    0x9204: kCGImagePropertyExifExposureBiasValue, 0x9205: kCGImagePropertyExifMaxApertureValue,
    0x9206: kCGImagePropertyExifSubjectDistance, 0x9207: kCGImagePropertyExifMeteringMode,
    0x9208: kCGImagePropertyExifLightSource, 0x9209: kCGImagePropertyExifFlash,
    0x920A: kCGImagePropertyExifFocalLength, 0x9214: kCGImagePropertyExifSubjectArea,
    0x9290: kCGImagePropertyExifSubsecTime, 0x9291: kCGImagePropertyExifSubsecTimeOriginal,
    0x9292: kCGImagePropertyExifSubsecTimeDigitized, 0xA000: kCGImagePropertyExifFlashPixVersion,
    0xA001: kCGImagePropertyExifColorSpace, 0xA002: kCGImagePropertyExifPixelXDimension,
    0xA003: kCGImagePropertyExifPixelYDimension, 0xA217: kCGImagePropertyExifSensingMethod,
    0xA301: kCGImagePropertyExifSceneType, 0xA401: kCGImagePropertyExifCustomRendered,
    0xA402: kCGImagePropertyExifExposureMode, 0xA403: kCGImagePropertyExifWhiteBalance,
    0xA404: kCGImagePropertyExifDigitalZoomRatio, 0xA405: kCGImagePropertyExifFocalLenIn35mmFilm,
    0xA406: kCGImagePropertyExifSceneCaptureType, 0xA420: kCGImagePropertyExifImageUniqueID,
    0xA430: kCGImagePropertyExifCameraOwnerName, 0xA431: kCGImagePropertyExifBodySerialNumber,
    0xA432: kCGImagePropertyExifLensSpecification, 0xA433: kCGImagePropertyExifLensMake,
    0xA434: kCGImagePropertyExifLensModel, 0xA435: kCGImagePropertyExifLensSerialNumber,
    0xA460: kCGImagePropertyExifCompositeImage,
]

/// The GPS IFD's tags by Apple's `{GPS}` keys.
let gpsKeys: [UInt16: String] = [
    0x00: kCGImagePropertyGPSVersion, 0x01: kCGImagePropertyGPSLatitudeRef, 0x02: kCGImagePropertyGPSLatitude,
    0x03: kCGImagePropertyGPSLongitudeRef, 0x04: kCGImagePropertyGPSLongitude,
    0x05: kCGImagePropertyGPSAltitudeRef, 0x06: kCGImagePropertyGPSAltitude,
    0x07: kCGImagePropertyGPSTimeStamp, 0x08: kCGImagePropertyGPSSatellites, 0x09: kCGImagePropertyGPSStatus,
    0x0A: kCGImagePropertyGPSMeasureMode, 0x0B: kCGImagePropertyGPSDOP, 0x0C: kCGImagePropertyGPSSpeedRef,
    0x0D: kCGImagePropertyGPSSpeed, 0x0E: kCGImagePropertyGPSTrackRef, 0x0F: kCGImagePropertyGPSTrack,
    0x10: kCGImagePropertyGPSImgDirectionRef, 0x11: kCGImagePropertyGPSImgDirection,
    0x12: kCGImagePropertyGPSMapDatum, 0x13: kCGImagePropertyGPSDestLatitudeRef,
    0x14: kCGImagePropertyGPSDestLatitude, 0x15: kCGImagePropertyGPSDestLongitudeRef,
    0x16: kCGImagePropertyGPSDestLongitude, 0x17: kCGImagePropertyGPSDestBearingRef,
    0x18: kCGImagePropertyGPSDestBearing, 0x19: kCGImagePropertyGPSDestDistanceRef,
    0x1A: kCGImagePropertyGPSDestDistance, 0x1D: kCGImagePropertyGPSDateStamp,
    0x1E: kCGImagePropertyGPSDifferental, 0x1F: kCGImagePropertyGPSHPositioningError,
]

/// Tags Apple gives as arrays even when they hold one value.
private let alwaysArrays: Set<String> = ["ISOSpeedRatings", "SubjectArea", "LensSpecification", "ExifVersion", "FlashPixVersion",
                                         "ComponentsConfiguration", "GPSVersion"]

/// The dictionaries Apple's ImageIO adds to a picture's properties for its EXIF: only those that
/// have a tag it names.
func exifDictionaries(_ tags: EXIFTags) -> [String: Any] {
    var out: [String: Any] = [:]
    let tiff = dictionary(tags.primary, tiffKeys)
    if !tiff.isEmpty { out[kCGImagePropertyTIFFDictionary] = tiff }
    let exif = dictionary(tags.exif, exifKeys)
    if !exif.isEmpty { out[kCGImagePropertyExifDictionary] = exif }
    var gps = dictionary(tags.gps, gpsKeys)
    // Coordinates as decimal degrees, times as text, as Apple gives them.
    for tag: UInt16 in [0x02, 0x04, 0x14, 0x16] {  // latitude, longitude, and the destination's
        if let key = gpsKeys[tag], let degrees = EXIFTags.degrees(tags.gps[tag]) { gps[key] = NSNumber(value: degrees) }
    }
    if case .numbers(let hms)? = tags.gps[0x07], hms.count == 3, hms.allSatisfy({ $0.isFinite && $0 >= 0 && $0 < 100 }) {
        // Whole seconds as "10:34:56", fractions as "10:34:56.25", as Apple's dumps show them.
        gps[kCGImagePropertyGPSTimeStamp] = hms[2] == hms[2].rounded()
            ? String(format: "%02d:%02d:%02d", Int(hms[0]), Int(hms[1]), Int(hms[2]))
            : String(format: "%02d:%02d:%05.2f", Int(hms[0]), Int(hms[1]), hms[2])
    }
    if !gps.isEmpty { out[kCGImagePropertyGPSDictionary] = gps }
    var apple: [String: Any] = [:]
    for (tag, value) in tags.makerApple { if let v = converted(value, key: "", keepBytes: true) { apple[String(tag)] = v } }
    if !apple.isEmpty { out[kCGImagePropertyMakerAppleDictionary] = apple }
    return out
}

private func dictionary(_ tags: [UInt16: EXIFTags.Value], _ keys: [UInt16: String]) -> [String: Any] {
    var out: [String: Any] = [:]
    for (tag, value) in tags {
        guard let key = keys[tag], let v = converted(value, key: key, keepBytes: false) else { continue }
        out[key] = v
    }
    return out
}

private func converted(_ value: EXIFTags.Value, key: String, keepBytes: Bool) -> Any? {
    let array = alwaysArrays.contains(key)
    switch value {
    case .text(let s): return s
    case .integers(let v): return v.count == 1 && !array ? NSNumber(value: v[0]) : v.map { NSNumber(value: $0) }
    case .numbers(let v): return v.count == 1 && !array ? NSNumber(value: v[0]) : v.map { NSNumber(value: $0) }
    case .bytes(let b):
        // Versions ("0232") as Apple gives them: their digits, [2, 3, 2].
        if key == "ExifVersion" || key == "FlashPixVersion" {
            let digits = b.compactMap { $0 >= 0x30 && $0 <= 0x39 ? Int($0 - 0x30) : nil }
            return Array(digits.drop { $0 == 0 }).map { NSNumber(value: $0) }
        }
        if key == "ComponentsConfiguration" || key == "SceneType" { return array ? b.map { NSNumber(value: $0) } : NSNumber(value: b.first ?? 0) }
        return keepBytes ? Data(b) : nil
    }
}
