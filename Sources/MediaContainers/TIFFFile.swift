/// A TIFF file's pages, read from its directories (TIFF 6.0) before anything is decoded: each
/// page's size, samples, alpha, orientation and compression, and the first page's tags (make,
/// model, dates, EXIF and GPS directories) as ``EXIFTags``.
///
/// Bounded: at most ``maximumPages`` directories are followed, each read once (a chain that
/// points back ends there), each of at most ``EXIFTags/maximumEntries`` entries.
public struct TIFFFile: Sendable {
    public struct Page: Sendable, Equatable {
        public let width: Int
        public let height: Int
        /// Bits a sample (the first sample's) and samples a pixel.
        public let bitsPerSample: Int
        public let samplesPerPixel: Int
        /// An extra sample is alpha (associated or not).
        public let hasAlpha: Bool
        /// EXIF's orientation, 1 to 8 (1 when the page says none or another value).
        public let orientation: Int
        /// The TIFF Photometric value: 0 or 1 grey, 2 RGB, 3 palette, 5 CMYK, 6 YCbCr.
        public let photometric: Int
        public let compression: Int
    }

    public static let maximumPages = 4096

    public let pages: [Page]
    /// The first page's tags.
    public let tags: EXIFTags

    /// Whether `start` (a file's first bytes) begins a TIFF file ("II*\0" or "MM\0*").
    public static func isTIFF(_ start: [UInt8]) -> Bool {
        start.count >= 4 && (start.prefix(4) == [0x49, 0x49, 42, 0] || start.prefix(4) == [0x4D, 0x4D, 0, 42])
    }

    public static func read(_ source: some ByteSource) throws(ContainerError) -> TIFFFile {
        guard let reader = TIFFReader(source), let first = reader.u32(4) else { throw ContainerError("it does not begin as a TIFF file does") }
        var pages: [Page] = []
        var seen = Set<Int>()
        var offset: Int? = first
        while let at = offset, pages.count < maximumPages, seen.insert(at).inserted {
            var own = Set<Int>()
            let tags = reader.directory(at: at, base: 0, seen: &own)
            guard !tags.isEmpty else { break }
            func number(_ tag: UInt16) -> Int? {
                if case .integers(let values)? = tags[tag] { return values.first }
                return nil
            }
            guard let width = number(256), let height = number(257) else {
                throw ContainerError("its page \(pages.count + 1) (directory at byte \(at)) states no size")
            }
            let bits = number(258) ?? 1, samples = number(277) ?? 1
            guard (1...64).contains(bits), (1...256).contains(samples) else {
                throw ContainerError("its page \(pages.count + 1) says \(bits) bits a sample and \(samples) samples a pixel, which no picture has")
            }
            let extra: [Int] = if case .integers(let values)? = tags[338] { values } else { [] }
            let orientation = number(274).flatMap { (1...8).contains($0) ? $0 : nil } ?? 1
            pages.append(Page(width: width, height: height, bitsPerSample: bits, samplesPerPixel: samples,
                              hasAlpha: extra.contains(1) || extra.contains(2), orientation: orientation,
                              photometric: number(262) ?? 2, compression: number(259) ?? 1))
            offset = reader.next(after: at)
        }
        guard !pages.isEmpty else { throw ContainerError("its first directory (at byte \(first)) holds no page") }
        return TIFFFile(pages: pages, tags: EXIFTags(tiffStructure: source) ?? EXIFTags())
    }
}
