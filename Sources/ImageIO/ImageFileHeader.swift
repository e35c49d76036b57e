import CoreVideo
import Glibc
import MediaContainers

/// What a picture's own bytes say before anything is decoded: its type, size, orientation and
/// samples. Read from a JPEG's or PNG's first segments or chunks only, and from a HEIF file's
/// `meta` box (HEIFImages.swift), so that a picture can be refused (too large, not a picture)
/// before a decoder allocates anything for it.
struct ImageFileHeader: Equatable, Sendable {
    enum Kind: Sendable {
        case jpeg, png, heic, avif, webp, gif, tiff

        var identifier: String {
            switch self {
            case .jpeg: "public.jpeg"
            case .png: "public.png"
            case .heic: "public.heic"
            case .avif: "public.avif"
            case .webp: "org.webmproject.webp"
            case .gif: "com.compuserve.gif"
            case .tiff: "public.tiff"
            }
        }
    }

    let kind: Kind
    let width: Int
    let height: Int
    let orientation: CGImagePropertyOrientation
    let hasAlpha: Bool
    let depth: Int
    let components: Int
    let progressive: Bool
    let interlaced: Bool
    /// Bits a pixel as stored (a PNG's palette index counts as its depth).
    let bitsPerPixel: Int
    /// A JPEG's entropy coding is arithmetic (SOF9…SOF15), which has no least cost a block.
    let arithmetic: Bool
    /// A HEIF picture's item, its size as coded and the part of it shown (its clean aperture:
    /// ``width`` × ``height``), its largest thumbnail item and its colour (`nclx`).
    var item: UInt32 = 0
    var coded: HEIFFile.Rect? = nil
    var shown: HEIFFile.Rect? = nil
    var thumbnail: Thumbnail? = nil
    var nclx: HEIFFile.ColourDescription? = nil
    /// The picture's EXIF (a JPEG's APP1, a PNG's eXIf, a HEIF image's Exif item, a WebP's EXIF
    /// chunk, a TIFF's first page's own tags).
    var exif: EXIFTags? = nil
    /// A frame of an animation (a GIF's, a WebP's): its delay in seconds as stored, and the
    /// file's animation (FrameImages.swift).
    var delay: Double? = nil
    var animation: Animation? = nil

    /// The largest width or height of a picture GraphKit decodes: 16384 pixels
    /// (`FrameSizeLimit.side`, the engine's limit for every frame), so a decoded picture (8-bit
    /// BGRA) holds at most 1 GiB whatever the file claims. A header claiming more is refused
    /// before decoding (what a 100-byte PNG claiming 100000 × 100000 would otherwise make the
    /// decoder allocate: 40 GB). `FrameSizeLimit` reads the sizes an MP4 or MOV states; a bare
    /// JPEG's or PNG's is read here.
    static let maximumDimension = FrameSizeLimit.side

    /// Why the bytes are not a picture GraphKit reads, for messages.
    enum Refusal: Error, Equatable, CustomStringConvertible {
        case notAnImage
        case damaged(String)
        case tooLarge(width: Int, height: Int)
        case moreThanItHolds(width: Int, height: Int, bytes: Int)

        var description: String {
            switch self {
            case .notAnImage: "not a JPEG, PNG, HEIC, AVIF, WebP, GIF or TIFF picture"
            case .damaged(let why): "a damaged picture: \(why)"
            case .tooLarge(let w, let h): "a picture of \(w) × \(h), larger than the \(maximumDimension) pixels a side GraphKit decodes"
            case .moreThanItHolds(let w, let h, let bytes):
                "a header claiming \(w) × \(h) pixels, more than its \(bytes) bytes can hold at the format's highest compression"
            }
        }
    }

    /// The header, unless the whole file (`byteCount` bytes) is too small to hold the picture it
    /// claims even at its format's highest compression (``StillImageHeader/fits(in:)``).
    func checked(againstFileSize byteCount: Int) -> Result<ImageFileHeader, Refusal> {
        let possible: Bool
        switch kind {
        case .png, .jpeg:
            possible = StillImageHeader.fits(kind: kind == .png ? .png : .jpeg, width: width, height: height, bitsPerPixel: bitsPerPixel,
                                             arithmetic: arithmetic, in: byteCount)
        case .heic, .avif, .webp, .gif, .tiff:
            // HEVC, AV1, VP8 and LZW code a flat picture in almost nothing, and an animation's
            // canvas need not be covered: the size limit bounds them.
            possible = true
        }
        return possible ? .success(self) : .failure(.moreThanItHolds(width: width, height: height, bytes: byteCount))
    }

    /// The header of the picture whose bytes `read(offset, count)` gives (fewer at the end): a
    /// JPEG's or PNG's, read by the container library (``StillImageHeader``).
    static func read(_ read: (Int, Int) -> [UInt8]) -> Result<ImageFileHeader, Refusal> {
        guard let header = StillImageHeader.read(read) else { return .failure(.notAnImage) }
        switch header {
        case .failure(let error): return .failure(.damaged(error.reason))
        case .success(let h):
            guard h.width <= maximumDimension, h.height <= maximumDimension else { return .failure(.tooLarge(width: h.width, height: h.height)) }
            return .success(ImageFileHeader(kind: h.kind == .jpeg ? .jpeg : .png, width: h.width, height: h.height,
                                            orientation: CGImagePropertyOrientation(rawValue: UInt32(h.orientation)) ?? .up,
                                            hasAlpha: h.hasAlpha, depth: h.depth, components: h.components, progressive: h.progressive,
                                            interlaced: h.interlaced, bitsPerPixel: h.bitsPerPixel, arithmetic: h.arithmetic, exif: h.exif))
        }
    }

    // MARK: EXIF

    /// The orientation EXIF states (tag 0x0112 of IFD0); nil when none, or not 1…8.
    static func orientation(_ tags: EXIFTags) -> CGImagePropertyOrientation? {
        tags.orientation.flatMap { CGImagePropertyOrientation(rawValue: UInt32($0)) }
    }

    /// EXIF's TIFF structure holding only an orientation (big-endian, one directory of one entry).
    static func exifTIFF(orientation: CGImagePropertyOrientation) -> [UInt8] {
        [0x4D, 0x4D, 0, 42, 0, 0, 0, 8,  // header: big-endian, 42, first directory at 8
         0, 1,  // one entry
         0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, UInt8(orientation.rawValue), 0, 0,  // Orientation, SHORT, 1 value
         0, 0, 0, 0]  // no next directory
    }

    /// A JPEG's APP1 segment holding the orientation as EXIF.
    static func jpegExifSegment(orientation: CGImagePropertyOrientation) -> [UInt8] {
        let payload: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0] + exifTIFF(orientation: orientation)
        let length = payload.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
    }

    /// A PNG eXIf chunk (PNG's third edition) holding the orientation.
    static func pngExifChunk(orientation: CGImagePropertyOrientation) -> [UInt8] {
        let data = exifTIFF(orientation: orientation)
        let typed = Array("eXIf".utf8) + data
        return bigEndianBytes(UInt32(data.count)) + typed + bigEndianBytes(crc32(typed))
    }

    // MARK: Bytes

    static func bigEndian32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
    }

    static func bigEndianBytes(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }

    /// CRC-32 as PNG's chunks use it (ISO 3309, polynomial 0xEDB88320).
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }
}
