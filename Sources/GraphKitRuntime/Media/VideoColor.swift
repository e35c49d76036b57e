import CGStreamer
import GraphKitCore
import MediaContainers

/// A video stream's colour as the file states it (the container's `colr` box, else the
/// bitstream's VUI as GStreamer's parser reads it): primaries, transfer function, matrix and
/// range by ITU-T H.273's code points under the names ffprobe prints (`bt709`, `bt2020`,
/// `smpte2084`, `arib-std-b67`, `bt2020nc`; range `tv` or `pc`), the bit depth and chroma format,
/// and the HDR metadata (mastering display, content light level). A value the file does not
/// state is nil.
public struct VideoColor: Sendable, Equatable {
    public var primaries: String?
    public var transfer: String?
    public var matrix: String?
    /// `tv` (limited: 16–235 for 8 bits) or `pc` (full).
    public var range: String?
    /// Bits a luma sample (8, 10, 12).
    public var bitDepth: Int?
    /// `4:2:0`, `4:2:2`, `4:4:4`, `4:0:0`.
    public var chromaFormat: String?
    public var masteringDisplay: MasteringDisplay?
    public var contentLightLevel: ContentLightLevel?

    /// A CIE 1931 chromaticity.
    public struct Chromaticity: Sendable, Equatable {
        public var x: Double
        public var y: Double
    }

    /// SMPTE ST 2086: the display the video was graded on.
    public struct MasteringDisplay: Sendable, Equatable {
        public var red: Chromaticity
        public var green: Chromaticity
        public var blue: Chromaticity
        public var whitePoint: Chromaticity
        /// cd/m².
        public var maxLuminance: Double
        public var minLuminance: Double
    }

    /// CTA-861.3: the brightest pixel of the stream and its brightest frame's average, cd/m².
    public struct ContentLightLevel: Sendable, Equatable {
        public var maxCLL: Int
        public var maxFALL: Int
    }

    /// High dynamic range by its transfer function: PQ (SMPTE ST 2084, HDR10) or HLG (ARIB STD-B67).
    public enum HDR: String, Sendable { case pq, hlg }
    public var hdr: HDR? {
        switch transfer {
        case "smpte2084"?: .pq
        case "arib-std-b67"?: .hlg
        default: nil
        }
    }

    /// True when nothing is stated.
    public var isEmpty: Bool { self == VideoColor() }

    public init(primaries: String? = nil, transfer: String? = nil, matrix: String? = nil, range: String? = nil, bitDepth: Int? = nil,
                chromaFormat: String? = nil, masteringDisplay: MasteringDisplay? = nil, contentLightLevel: ContentLightLevel? = nil) {
        (self.primaries, self.transfer, self.matrix, self.range) = (primaries, transfer, matrix, range)
        (self.bitDepth, self.chromaFormat) = (bitDepth, chromaFormat)
        (self.masteringDisplay, self.contentLightLevel) = (masteringDisplay, contentLightLevel)
    }

    /// From GStreamer caps' fields: `colorimetry` (a name such as `bt2100-hlg`, or
    /// `range:matrix:transfer:primaries`), `chroma-format`, `bit-depth-luma`,
    /// `mastering-display-info` (ten numbers: red, green and blue x:y and the white point's in
    /// 0.00002 units, then the maximum and minimum luminance in 0.0001 cd/m²) and
    /// `content-light-level` (maxCLL:maxFALL). Anything unreadable is left out.
    public init(colorimetry: String, chromaFormat: String, bitDepth: Int, masteringDisplay: String, contentLightLevel: String) {
        self.init()
        var c = GstVideoColorimetry()
        if !colorimetry.isEmpty, gst_video_colorimetry_from_string(&c, colorimetry) != 0 {
            primaries = Self.primaryNames[Int(gst_video_color_primaries_to_iso(c.primaries))]
            transfer = Self.transferNames[Int(gst_video_transfer_function_to_iso(c.transfer))]
            matrix = Self.matrixNames[Int(gst_video_color_matrix_to_iso(c.matrix))]
            // A stated colour with no range is limited: the bitstream's video_full_range_flag is
            // 0 unless set (H.264 E.2.1, H.273), and GStreamer leaves the range unknown when
            // the VUI states a matrix alone (ffmpeg 7 writes such files; ffprobe says tv).
            range = c.range == GST_VIDEO_COLOR_RANGE_0_255 ? "pc" : "tv"
        }
        self.chromaFormat = chromaFormat.isEmpty ? nil : chromaFormat
        self.bitDepth = (1...16).contains(bitDepth) ? bitDepth : nil
        let m = masteringDisplay.split(separator: ":").compactMap { Double($0) }
        if m.count == 10, m.allSatisfy({ $0.isFinite && $0 >= 0 }) {
            func point(_ i: Int) -> Chromaticity { Chromaticity(x: m[i] * 0.00002, y: m[i + 1] * 0.00002) }
            self.masteringDisplay = MasteringDisplay(red: point(0), green: point(2), blue: point(4), whitePoint: point(6),
                                                     maxLuminance: m[8] * 0.0001, minLuminance: m[9] * 0.0001)
        }
        let l = contentLightLevel.split(separator: ":").compactMap { Int($0) }
        if l.count == 2, l.allSatisfy({ $0 >= 0 }) { self.contentLightLevel = ContentLightLevel(maxCLL: l[0], maxFALL: l[1]) }
    }

    /// The colour an MP4 sample entry states (its `colr` box, else the H.264 SPS's VUI), as the
    /// discoverer would give it: a stated colour with no range is limited, as above.
    package init(_ facts: VideoColourFacts) {
        self.init()
        primaries = facts.primaries.flatMap { Self.primaryNames[$0] }
        transfer = facts.transfer.flatMap { Self.transferNames[$0] }
        matrix = facts.matrix.flatMap { Self.matrixNames[$0] }
        if facts.statesColour { range = facts.fullRange == true ? "pc" : "tv" }
        bitDepth = facts.bitDepth
        chromaFormat = facts.chromaFormat.map { ["4:0:0", "4:2:0", "4:2:2", "4:4:4"][$0] }
    }

    /// ITU-T H.273's code points under ffprobe's names (2, unspecified, is none).
    static let primaryNames: [Int: String] = [1: "bt709", 4: "bt470m", 5: "bt470bg", 6: "smpte170m", 7: "smpte240m", 8: "film", 9: "bt2020",
                                               10: "smpte428", 11: "smpte431", 12: "smpte432", 22: "ebu3213"]
    static let transferNames: [Int: String] = [1: "bt709", 4: "gamma22", 5: "gamma28", 6: "smpte170m", 7: "smpte240m", 8: "linear",
                                                9: "log100", 10: "log316", 11: "iec61966-2-4", 12: "bt1361e", 13: "iec61966-2-1",
                                                14: "bt2020-10", 15: "bt2020-12", 16: "smpte2084", 17: "smpte428", 18: "arib-std-b67"]
    static let matrixNames: [Int: String] = [0: "gbr", 1: "bt709", 4: "fcc", 5: "bt470bg", 6: "smpte170m", 7: "smpte240m", 8: "ycgco",
                                              9: "bt2020nc", 10: "bt2020c"]
}
