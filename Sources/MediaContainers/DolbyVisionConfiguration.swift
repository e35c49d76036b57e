/// A Dolby Vision stream's configuration, as a video sample entry carries it (Dolby's
/// DOVIDecoderConfigurationRecord in a `dvcC` box for profiles up to 7, `dvvC` for 8 to 10, `dvwC`
/// above): its profile and level, which layers and RPUs the stream has, and what its base layer
/// is to a player without Dolby Vision (the signal compatibility ID: profile 8.4, an iPhone's,
/// is HEVC HLG whose RPUs a decoder ignores). Kept byte for byte: a copy of the track writes the
/// box as it was; a re-encode, whose bitstream has no RPUs, writes none.
public struct DolbyVisionConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// `dvcC`, `dvvC` or `dvwC`.
    public var boxType: String
    /// The box's body as the file holds it (24 bytes in the files Dolby specifies).
    public var body: [UInt8]

    /// The box types that carry the record.
    public static let boxTypes = ["dvcC", "dvvC", "dvwC"]

    /// Nil for another box, a body too short to hold the record's fields (5 bytes), or one
    /// longer than any record (256 bytes: Dolby's is 24, a later version may add some).
    public init?(boxType: String, body: [UInt8]) {
        guard Self.boxTypes.contains(boxType), body.count >= 5, body.count <= 256 else { return nil }
        (self.boxType, self.body) = (boxType, body)
    }

    // The record: dv_version_major (8 bits), dv_version_minor (8), dv_profile (7), dv_level (6),
    // rpu_present_flag, el_present_flag, bl_present_flag (1 each), dv_bl_signal_compatibility_id (4).
    private var fields: UInt16 { UInt16(body[2]) << 8 | UInt16(body[3]) }
    public var versionMajor: Int { Int(body[0]) }
    public var versionMinor: Int { Int(body[1]) }
    public var profile: Int { Int(fields >> 9) }
    public var level: Int { Int((fields >> 3) & 0x3F) }
    public var hasRPU: Bool { fields & 0x4 != 0 }
    public var hasEnhancementLayer: Bool { fields & 0x2 != 0 }
    public var hasBaseLayer: Bool { fields & 0x1 != 0 }
    public var compatibilityID: Int { Int(body[4] >> 4) }

    /// What the base layer is to a player without Dolby Vision, by the compatibility ID: `hdr10`
    /// (1, and 6: Blu-ray's HDR10), `sdr` (2), `hlg` (4), or nil (0: none; others are reserved).
    public var baseLayer: String? {
        switch compatibilityID {
        case 1, 6: "hdr10"
        case 2: "sdr"
        case 4: "hlg"
        default: nil
        }
    }

    /// "Dolby Vision profile 8.4 (HLG base), level 5", as players name a profile with its
    /// compatibility ID.
    public var description: String {
        let base = baseLayer.map { b in " (\(b == "hlg" ? "HLG" : b == "sdr" ? "SDR" : "HDR10") base)" } ?? ""
        return "Dolby Vision profile \(profile).\(compatibilityID)\(base), level \(level)"
    }

    /// The configuration a visual sample entry's child boxes carry; nil when none does.
    static func find(in boxes: [MP4Box]) -> DolbyVisionConfiguration? {
        for box in boxes {
            if let c = DolbyVisionConfiguration(boxType: box.type.description, body: box.body) { return c }
        }
        return nil
    }

    var box: MP4Box { MP4Box(type: boxType, body: body) }
}
