/// What a JPEG's or PNG's first segments or chunks say before anything is decoded: its size,
/// samples, coding and EXIF (a JPEG's APP1, a PNG's eXIf), so that a picture can be refused (too
/// large, not a picture) before a decoder allocates anything for it. Read through `read(offset,
/// count)` (fewer bytes at the end), at most 1,024 segments or 256 chunks, each value within 64
/// KiB.
public struct StillImageHeader: Sendable, Equatable {
    public enum Kind: Sendable { case jpeg, png }

    public let kind: Kind
    public let width: Int
    public let height: Int
    public let hasAlpha: Bool
    /// Bits a sample, and samples a pixel.
    public let depth: Int
    public let components: Int
    public let progressive: Bool
    public let interlaced: Bool
    /// Bits a pixel as stored (a PNG's palette index counts as its depth).
    public let bitsPerPixel: Int
    /// A JPEG's entropy coding is arithmetic (SOF9…SOF15), which has no least cost a block.
    public let arithmetic: Bool
    public let exif: EXIFTags?

    /// EXIF's orientation, 1 to 8 (1 when it states none or another value).
    public var orientation: Int { exif?.orientation ?? 1 }

    /// The header of the JPEG or PNG whose bytes `read` gives, or why it is damaged; nil when
    /// the bytes are neither.
    public static func read(_ read: (Int, Int) -> [UInt8]) -> Result<StillImageHeader, ContainerError>? {
        let start = read(0, 8)
        if start.count >= 8, start == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] { return png(read) }
        if start.count >= 3, start[0] == 0xFF, start[1] == 0xD8, start[2] == 0xFF { return jpeg(read) }
        return nil
    }

    /// Whether a file of `byteCount` bytes can hold the picture this header claims even at its
    /// format's highest compression: a PNG's deflate stream shrinks at most 1032 to 1 (a 258-byte
    /// match in two bits), and a Huffman-coded JPEG spends at least one bit on each 8 × 8 block
    /// of luma (its DC difference; arithmetic coding has no such floor and is bounded by the size
    /// limit only). A file that cannot is not a picture but a request for memory (decoders
    /// allocate the claimed picture first): refused, so a decode never allocates more than a
    /// bounded multiple of the file's size.
    public func fits(in byteCount: Int) -> Bool {
        Self.fits(kind: kind, width: width, height: height, bitsPerPixel: bitsPerPixel, arithmetic: arithmetic, in: byteCount)
    }

    public static func fits(kind: Kind, width: Int, height: Int, bitsPerPixel: Int, arithmetic: Bool, in byteCount: Int) -> Bool {
        // In Double: a header's sizes go to 2^32 − 1, whose products pass Int's range.
        let (w, h, bytes) = (Double(width), Double(height), Double(byteCount))
        switch kind {
        case .png: return h * (1 + ((w * Double(bitsPerPixel) + 7) / 8).rounded(.down)) <= bytes * 1032
        case .jpeg: return arithmetic || ((w + 7) / 8).rounded(.down) * ((h + 7) / 8).rounded(.down) <= bytes * 8
        }
    }

    static func be32(_ b: [UInt8], _ at: Int) -> UInt32 {
        UInt32(b[at]) << 24 | UInt32(b[at + 1]) << 16 | UInt32(b[at + 2]) << 8 | UInt32(b[at + 3])
    }

    static func png(_ read: (Int, Int) -> [UInt8]) -> Result<StillImageHeader, ContainerError> {
        let ihdr = read(8, 8 + 13)
        guard ihdr.count == 21, be32(ihdr, 0) == 13, Array(ihdr[4..<8]) == Array("IHDR".utf8) else {
            return .failure(ContainerError("a PNG whose first chunk is not a complete IHDR"))
        }
        let width = Int(be32(ihdr, 8)), height = Int(be32(ihdr, 12))
        let depth = Int(ihdr[16]), colourType = ihdr[17], interlace = ihdr[20]
        guard width > 0, height > 0 else { return .failure(ContainerError("a PNG of \(width) × \(height)")) }
        guard [0, 2, 3, 4, 6].contains(colourType), [1, 2, 4, 8, 16].contains(depth) else {
            return .failure(ContainerError("a PNG of colour type \(colourType) and depth \(depth)"))
        }
        // The chunks before the picture's data: an eXIf (orientation), a tRNS (alpha).
        var exif: EXIFTags?
        var transparency = false
        var offset = 8 + 25
        for _ in 0..<256 {
            let head = read(offset, 8)
            guard head.count == 8 else { break }
            let length = Int(be32(head, 0))
            let type = String(decoding: head[4..<8], as: UTF8.self)
            if type == "IDAT" || type == "IEND" || length > 1 << 24 { break }
            if type == "tRNS" { transparency = true }
            if type == "eXIf" {
                exif = EXIFTags(tiff: read(offset + 8, min(length, 1 << 16)))
            }
            offset += 12 + length
        }
        return .success(StillImageHeader(kind: .png, width: width, height: height,
                                        hasAlpha: colourType == 4 || colourType == 6 || transparency, depth: depth,
                                        components: [0: 1, 2: 3, 3: 3, 4: 2, 6: 4][colourType] ?? 3, progressive: false,
                                        interlaced: interlace == 1,
                                        bitsPerPixel: colourType == 3 ? depth : ([0: 1, 2: 3, 4: 2, 6: 4][colourType] ?? 3) * depth,
                                        arithmetic: false, exif: exif))
    }

    static func jpeg(_ read: (Int, Int) -> [UInt8]) -> Result<StillImageHeader, ContainerError> {
        var offset = 2
        var exif: EXIFTags?
        for _ in 0..<1024 {
            var marker = read(offset, 2)
            guard marker.count == 2, marker[0] == 0xFF else { return .failure(ContainerError("a JPEG whose segments end before its frame header")) }
            // Fill bytes: 0xFF repeated before a marker (at most 64 KiB of them in all).
            while marker.count == 2, marker[1] == 0xFF, offset < 1 << 16 {
                offset += 1
                marker = read(offset, 2)
            }
            guard marker.count == 2 else { break }
            let code = marker[1]
            offset += 2
            if (0xD0...0xD7).contains(code) || code == 0x01 { continue }  // no length
            if code == 0xD9 || code == 0xDA { return .failure(ContainerError("a JPEG with no frame header before its data")) }
            let lengthBytes = read(offset, 2)
            guard lengthBytes.count == 2 else { break }
            let length = Int(lengthBytes[0]) << 8 | Int(lengthBytes[1])
            guard length >= 2 else { return .failure(ContainerError("a JPEG segment of length \(length)")) }
            if code == 0xE1 {
                let app1 = read(offset + 2, min(length - 2, 1 << 16))
                if app1.count > 6, Array(app1[0..<6]) == [0x45, 0x78, 0x69, 0x66, 0, 0] {  // "Exif\0\0"
                    if exif == nil, let tags = EXIFTags(tiff: Array(app1[6...])) {
                        exif = tags
                    }
                }
            }
            // SOF0…SOF15 but DHT (C4), JPG (C8) and DAC (CC).
            if (0xC0...0xCF).contains(code), ![0xC4, 0xC8, 0xCC].contains(code) {
                let sof = read(offset + 2, 6)
                guard sof.count == 6 else { break }
                let height = Int(sof[1]) << 8 | Int(sof[2]), width = Int(sof[3]) << 8 | Int(sof[4])
                guard width > 0, height > 0 else { return .failure(ContainerError("a JPEG of \(width) × \(height)")) }
                        return .success(StillImageHeader(kind: .jpeg, width: width, height: height, hasAlpha: false,
                                                depth: Int(sof[0]), components: Int(sof[5]), progressive: code == 0xC2 || code == 0xC6
                                                    || code == 0xCA || code == 0xCE, interlaced: false,
                                                bitsPerPixel: Int(sof[0]) * Int(sof[5]), arithmetic: code >= 0xC9, exif: exif))
            }
            offset += length
        }
        return .failure(ContainerError("a JPEG whose segments end before its frame header"))
    }
}
