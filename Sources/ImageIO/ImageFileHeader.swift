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
    /// claims even at its format's highest compression: a PNG's deflate stream shrinks at most
    /// 1032 to 1 (a 258-byte match in two bits), and a Huffman-coded JPEG spends at least one bit
    /// on each 8 × 8 block of luma (its DC difference; arithmetic coding has no such floor and is
    /// bounded by the size limit only). Such a file is not a picture but a request for memory
    /// (decoders allocate the claimed picture first): refused, so a decode never allocates more
    /// than a bounded multiple of the file's size.
    func checked(againstFileSize byteCount: Int) -> Result<ImageFileHeader, Refusal> {
        let possible: Bool
        switch kind {
        case .png:
            let raw = height * (1 + (width * bitsPerPixel + 7) / 8)
            possible = raw <= byteCount * 1032
        case .jpeg:
            let blocks = ((width + 7) / 8) * ((height + 7) / 8)
            possible = arithmetic || blocks <= byteCount * 8
        case .heic, .avif, .webp, .gif, .tiff:
            // HEVC, AV1, VP8 and LZW code a flat picture in almost nothing, and an animation's
            // canvas need not be covered: the size limit bounds them.
            possible = true
        }
        return possible ? .success(self) : .failure(.moreThanItHolds(width: width, height: height, bytes: byteCount))
    }

    /// The header of the picture whose bytes `read(offset, count)` gives (fewer at the end).
    static func read(_ read: (Int, Int) -> [UInt8]) -> Result<ImageFileHeader, Refusal> {
        let start = read(0, 8)
        if start.count >= 8, start == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return png(read) }
        if start.count >= 3, start[0] == 0xFF, start[1] == 0xD8, start[2] == 0xFF { return jpeg(read) }
        return .failure(.notAnImage)
    }

    // MARK: PNG

    private static func png(_ read: (Int, Int) -> [UInt8]) -> Result<ImageFileHeader, Refusal> {
        let ihdr = read(8, 8 + 13)
        guard ihdr.count == 21, bigEndian32(ihdr, 0) == 13, Array(ihdr[4..<8]) == Array("IHDR".utf8) else {
            return .failure(.damaged("a PNG whose first chunk is not a complete IHDR"))
        }
        let width = Int(bigEndian32(ihdr, 8)), height = Int(bigEndian32(ihdr, 12))
        let depth = Int(ihdr[16]), colourType = ihdr[17], interlace = ihdr[20]
        guard width > 0, height > 0 else { return .failure(.damaged("a PNG of \(width) × \(height)")) }
        guard width <= maximumDimension, height <= maximumDimension else { return .failure(.tooLarge(width: width, height: height)) }
        guard [0, 2, 3, 4, 6].contains(colourType), [1, 2, 4, 8, 16].contains(depth) else {
            return .failure(.damaged("a PNG of colour type \(colourType) and depth \(depth)"))
        }
        // The chunks before the picture's data: an eXIf (orientation), a tRNS (alpha).
        var orientation = CGImagePropertyOrientation.up
        var exif: EXIFTags?
        var transparency = false
        var offset = 8 + 25
        for _ in 0..<256 {
            let head = read(offset, 8)
            guard head.count == 8 else { break }
            let length = Int(bigEndian32(head, 0))
            let type = String(decoding: head[4..<8], as: UTF8.self)
            if type == "IDAT" || type == "IEND" || length > 1 << 24 { break }
            if type == "tRNS" { transparency = true }
            if type == "eXIf" {
                exif = EXIFTags(tiff: read(offset + 8, min(length, 1 << 16)))
                orientation = exif.flatMap(Self.orientation) ?? orientation
            }
            offset += 12 + length
        }
        return .success(ImageFileHeader(kind: .png, width: width, height: height, orientation: orientation,
                                        hasAlpha: colourType == 4 || colourType == 6 || transparency, depth: depth,
                                        components: [0: 1, 2: 3, 3: 3, 4: 2, 6: 4][colourType] ?? 3, progressive: false,
                                        interlaced: interlace == 1,
                                        bitsPerPixel: colourType == 3 ? depth : ([0: 1, 2: 3, 4: 2, 6: 4][colourType] ?? 3) * depth,
                                        arithmetic: false, exif: exif))
    }

    // MARK: JPEG

    private static func jpeg(_ read: (Int, Int) -> [UInt8]) -> Result<ImageFileHeader, Refusal> {
        var offset = 2
        var orientation = CGImagePropertyOrientation.up
        var exif: EXIFTags?
        for _ in 0..<1024 {
            var marker = read(offset, 2)
            guard marker.count == 2, marker[0] == 0xFF else { return .failure(.damaged("a JPEG whose segments end before its frame header")) }
            // Fill bytes: 0xFF repeated before a marker.
            while marker.count == 2, marker[1] == 0xFF {
                offset += 1
                marker = read(offset, 2)
            }
            guard marker.count == 2 else { break }
            let code = marker[1]
            offset += 2
            if (0xD0...0xD7).contains(code) || code == 0x01 { continue }  // no length
            if code == 0xD9 || code == 0xDA { return .failure(.damaged("a JPEG with no frame header before its data")) }
            let lengthBytes = read(offset, 2)
            guard lengthBytes.count == 2 else { break }
            let length = Int(lengthBytes[0]) << 8 | Int(lengthBytes[1])
            guard length >= 2 else { return .failure(.damaged("a JPEG segment of length \(length)")) }
            if code == 0xE1 {
                let app1 = read(offset + 2, min(length - 2, 1 << 16))
                if app1.count > 6, Array(app1[0..<6]) == [0x45, 0x78, 0x69, 0x66, 0, 0] {  // "Exif\0\0"
                    if exif == nil, let tags = EXIFTags(tiff: Array(app1[6...])) {
                        exif = tags
                        orientation = Self.orientation(tags) ?? orientation
                    }
                }
            }
            // SOF0…SOF15 but DHT (C4), JPG (C8) and DAC (CC).
            if (0xC0...0xCF).contains(code), ![0xC4, 0xC8, 0xCC].contains(code) {
                let sof = read(offset + 2, 6)
                guard sof.count == 6 else { break }
                let height = Int(sof[1]) << 8 | Int(sof[2]), width = Int(sof[3]) << 8 | Int(sof[4])
                guard width > 0, height > 0 else { return .failure(.damaged("a JPEG of \(width) × \(height)")) }
                guard width <= maximumDimension, height <= maximumDimension else { return .failure(.tooLarge(width: width, height: height)) }
                return .success(ImageFileHeader(kind: .jpeg, width: width, height: height, orientation: orientation, hasAlpha: false,
                                                depth: Int(sof[0]), components: Int(sof[5]), progressive: code == 0xC2 || code == 0xC6
                                                    || code == 0xCA || code == 0xCE, interlaced: false,
                                                bitsPerPixel: Int(sof[0]) * Int(sof[5]), arithmetic: code >= 0xC9, exif: exif))
            }
            offset += length
        }
        return .failure(.damaged("a JPEG whose segments end before its frame header"))
    }

    // MARK: EXIF

    /// The orientation EXIF states (tag 0x0112 of IFD0); nil when none, or not 1…8.
    static func orientation(_ tags: EXIFTags) -> CGImagePropertyOrientation? {
        guard case .integers(let values)? = tags.primary[0x0112], let value = values.first else { return nil }
        return CGImagePropertyOrientation(rawValue: UInt32(clamping: value))
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
