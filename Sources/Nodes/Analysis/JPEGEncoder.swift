import Glibc

/// Baseline JPEG (JFIF, 8-bit, Huffman tables of the standard's Annex K, no chroma subsampling)
/// of a BGRA picture: the thumbnails' second format beside ``PNGEncoder``, written in Swift as the
/// PNG encoder is, so a picture becomes a file without a pipeline of its own (GStreamer's
/// `jpegenc` would need one per picture) and without a library the project does not already use.
///
/// `quality` (1...100) scales the standard's quantization tables as libjpeg does (`-quality`,
/// ffmpeg's `-q:v` the other way round): 50 is the tables as printed, 100 all ones. Chroma is
/// kept at full resolution (4:4:4): thumbnails are small, and the edges of drawn text and
/// graphics stay clean.
package struct JPEGEncoder {
    package let quality: Int
    private let luma: [UInt16]
    private let chroma: [UInt16]

    package init(quality: Int) {
        self.quality = min(100, max(1, quality))
        let scale = self.quality < 50 ? 5000 / self.quality : 200 - 2 * self.quality
        func scaled(_ table: [UInt16]) -> [UInt16] {
            table.map { UInt16(min(255, max(1, (Int($0) * scale + 50) / 100))) }
        }
        luma = scaled(Self.lumaBase)
        chroma = scaled(Self.chromaBase)
    }

    /// The JPEG file of a `width` × `height` BGRA picture whose rows start `bytesPerRow` apart.
    package func encode(bgra: UnsafeRawPointer, width: Int, height: Int, bytesPerRow: Int) -> [UInt8] {
        precondition(width > 0 && height > 0 && width <= 65_535 && height <= 65_535)
        var out: [UInt8] = [0xFF, 0xD8]
        // JFIF APP0: version 1.1, no units, 1:1 pixel aspect, no thumbnail.
        out += [0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46, 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        // The two quantization tables, in zigzag order.
        out += [0xFF, 0xDB, 0, 132, 0]
        out += Self.zigzag.map { UInt8(luma[$0]) }
        out.append(1)
        out += Self.zigzag.map { UInt8(chroma[$0]) }
        // SOF0: three components, each sampled 1×1, Y on table 0, Cb and Cr on table 1.
        out += [0xFF, 0xC0, 0, 17, 8, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8), UInt8(width & 0xFF), 3,
                1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1]
        // The four Huffman tables.
        var dht: [UInt8] = []
        for (tc, table) in [(0x00, Self.dcLuma), (0x10, Self.acLuma), (0x01, Self.dcChroma), (0x11, Self.acChroma)] {
            dht.append(UInt8(tc))
            dht += table.bits
            dht += table.values
        }
        out += [0xFF, 0xC4, UInt8((dht.count + 2) >> 8), UInt8((dht.count + 2) & 0xFF)] + dht
        // SOS: all three components, Y on tables 0, chroma on tables 1; the whole spectrum.
        out += [0xFF, 0xDA, 0, 12, 3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 63, 0]

        let codes = (dcLuma: Self.dcLuma.codes, acLuma: Self.acLuma.codes, dcChroma: Self.dcChroma.codes, acChroma: Self.acChroma.codes)
        var writer = BitWriter()
        var previousDC = [0, 0, 0]
        var planes = [[Float]](repeating: [Float](repeating: 0, count: 64), count: 3)
        let src = bgra.assumingMemoryBound(to: UInt8.self)
        for by in stride(from: 0, to: height, by: 8) {
            for bx in stride(from: 0, to: width, by: 8) {
                // One 8×8 block of each component, the picture's edge repeated past its border.
                for y in 0..<8 {
                    let row = src + min(by + y, height - 1) * bytesPerRow
                    for x in 0..<8 {
                        let p = row + min(bx + x, width - 1) * 4
                        let b = Float(p[0]), g = Float(p[1]), r = Float(p[2])
                        planes[0][y * 8 + x] = 0.299 * r + 0.587 * g + 0.114 * b - 128
                        planes[1][y * 8 + x] = -0.168_736 * r - 0.331_264 * g + 0.5 * b
                        planes[2][y * 8 + x] = 0.5 * r - 0.418_688 * g - 0.081_312 * b
                    }
                }
                for c in 0..<3 {
                    let q = c == 0 ? luma : chroma
                    let coefficients = Self.quantizedDCT(planes[c], q)
                    let (dc, ac) = c == 0 ? (codes.dcLuma, codes.acLuma) : (codes.dcChroma, codes.acChroma)
                    Self.encodeBlock(coefficients, previousDC: &previousDC[c], dc: dc, ac: ac, into: &writer)
                }
            }
        }
        writer.padToByte()
        out += writer.bytes
        out += [0xFF, 0xD9]
        return out
    }

    // MARK: Blocks

    /// The block's DCT (the standard's normalisation), divided by the quantization table and
    /// rounded, in zigzag order.
    private static func quantizedDCT(_ block: [Float], _ q: [UInt16]) -> [Int] {
        var rows = [Float](repeating: 0, count: 64)
        for y in 0..<8 {
            for u in 0..<8 {
                var s: Float = 0
                for x in 0..<8 { s += block[y * 8 + x] * cosines[x * 8 + u] }
                rows[y * 8 + u] = s
            }
        }
        var out = [Int](repeating: 0, count: 64)
        for v in 0..<8 {
            for u in 0..<8 {
                var s: Float = 0
                for y in 0..<8 { s += rows[y * 8 + u] * cosines[y * 8 + v] }
                let cu: Float = u == 0 ? 0.707_106_78 : 1, cv: Float = v == 0 ? 0.707_106_78 : 1
                let f = 0.25 * cu * cv * s
                out[v * 8 + u] = Int((f / Float(q[v * 8 + u])).rounded())
            }
        }
        return zigzag.map { out[$0] }
    }

    /// cos((2x + 1)uπ / 16) at [x * 8 + u].
    private static let cosines: [Float] = (0..<64).map { i in
        let x = Float(i / 8), u = Float(i % 8)
        return Float(cos(Double((2 * x + 1) * u) * Double.pi / 16))
    }

    private static func encodeBlock(_ zz: [Int], previousDC: inout Int, dc: [(code: UInt16, length: UInt8)],
                                    ac: [(code: UInt16, length: UInt8)], into w: inout BitWriter) {
        let diff = zz[0] - previousDC
        previousDC = zz[0]
        let dcSize = magnitudeBits(diff)
        w.write(dc[dcSize])
        if dcSize > 0 { w.write(bits: amplitude(diff, dcSize), count: dcSize) }
        var run = 0
        for k in 1..<64 {
            let v = zz[k]
            if v == 0 {
                run += 1
                continue
            }
            while run > 15 {
                w.write(ac[0xF0])  // ZRL: sixteen zeros
                run -= 16
            }
            let size = magnitudeBits(v)
            w.write(ac[run << 4 | size])
            w.write(bits: amplitude(v, size), count: size)
            run = 0
        }
        if run > 0 { w.write(ac[0x00]) }  // EOB
    }

    /// The number of bits of |v| (the standard's category SSSS).
    private static func magnitudeBits(_ v: Int) -> Int {
        var m = abs(v), n = 0
        while m > 0 { n += 1; m >>= 1 }
        return n
    }

    /// v's `size` low bits as the standard writes them: negative values as v - 1 (ones' complement).
    private static func amplitude(_ v: Int, _ size: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: v < 0 ? v - 1 : v) & ((1 << UInt32(size)) - 1)
    }

    // MARK: Tables (ITU T.81, Annex K)

    private static let zigzag: [Int] = [
        0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
        35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
    ]
    private static let lumaBase: [UInt16] = [
        16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56, 14, 17, 22, 29, 51, 87, 80, 62,
        18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92, 49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99,
    ]
    private static let chromaBase: [UInt16] = [
        17, 18, 24, 47, 99, 99, 99, 99, 18, 21, 26, 66, 99, 99, 99, 99, 24, 26, 56, 99, 99, 99, 99, 99, 47, 66, 99, 99, 99, 99, 99, 99,
        99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99, 99,
    ]

    private struct HuffmanTable {
        /// How many codes of each length 1...16.
        let bits: [UInt8]
        let values: [UInt8]

        /// Code and length by symbol (the standard's canonical assignment).
        var codes: [(code: UInt16, length: UInt8)] {
            var table = [(code: UInt16, length: UInt8)](repeating: (0, 0), count: 256)
            var code: UInt16 = 0, k = 0
            for length in 1...16 {
                for _ in 0..<Int(bits[length - 1]) {
                    table[Int(values[k])] = (code, UInt8(length))
                    code += 1
                    k += 1
                }
                code <<= 1
            }
            return table
        }
    }

    private static let dcLuma = HuffmanTable(bits: [0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], values: Array(0...11))
    private static let dcChroma = HuffmanTable(bits: [0, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0], values: Array(0...11))
    private static let acLuma = HuffmanTable(bits: [0, 2, 1, 3, 3, 2, 4, 3, 5, 5, 4, 4, 0, 0, 1, 0x7D], values: [
        0x01, 0x02, 0x03, 0x00, 0x04, 0x11, 0x05, 0x12, 0x21, 0x31, 0x41, 0x06, 0x13, 0x51, 0x61, 0x07, 0x22, 0x71, 0x14, 0x32, 0x81, 0x91,
        0xA1, 0x08, 0x23, 0x42, 0xB1, 0xC1, 0x15, 0x52, 0xD1, 0xF0, 0x24, 0x33, 0x62, 0x72, 0x82, 0x09, 0x0A, 0x16, 0x17, 0x18, 0x19, 0x1A,
        0x25, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x34, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A, 0x53,
        0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78, 0x79,
        0x7A, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3, 0xA4, 0xA5,
        0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9,
        0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE1, 0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF1, 0xF2,
        0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA,
    ])
    private static let acChroma = HuffmanTable(bits: [0, 2, 1, 2, 4, 4, 3, 4, 7, 5, 4, 4, 0, 1, 2, 0x77], values: [
        0x00, 0x01, 0x02, 0x03, 0x11, 0x04, 0x05, 0x21, 0x31, 0x06, 0x12, 0x41, 0x51, 0x07, 0x61, 0x71, 0x13, 0x22, 0x32, 0x81, 0x08, 0x14,
        0x42, 0x91, 0xA1, 0xB1, 0xC1, 0x09, 0x23, 0x33, 0x52, 0xF0, 0x15, 0x62, 0x72, 0xD1, 0x0A, 0x16, 0x24, 0x34, 0xE1, 0x25, 0xF1, 0x17,
        0x18, 0x19, 0x1A, 0x26, 0x27, 0x28, 0x29, 0x2A, 0x35, 0x36, 0x37, 0x38, 0x39, 0x3A, 0x43, 0x44, 0x45, 0x46, 0x47, 0x48, 0x49, 0x4A,
        0x53, 0x54, 0x55, 0x56, 0x57, 0x58, 0x59, 0x5A, 0x63, 0x64, 0x65, 0x66, 0x67, 0x68, 0x69, 0x6A, 0x73, 0x74, 0x75, 0x76, 0x77, 0x78,
        0x79, 0x7A, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8A, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A, 0xA2, 0xA3,
        0xA4, 0xA5, 0xA6, 0xA7, 0xA8, 0xA9, 0xAA, 0xB2, 0xB3, 0xB4, 0xB5, 0xB6, 0xB7, 0xB8, 0xB9, 0xBA, 0xC2, 0xC3, 0xC4, 0xC5, 0xC6, 0xC7,
        0xC8, 0xC9, 0xCA, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9, 0xDA, 0xE2, 0xE3, 0xE4, 0xE5, 0xE6, 0xE7, 0xE8, 0xE9, 0xEA, 0xF2,
        0xF3, 0xF4, 0xF5, 0xF6, 0xF7, 0xF8, 0xF9, 0xFA,
    ])

    /// The entropy-coded segment: bits most significant first, a 0 stuffed after every 0xFF.
    private struct BitWriter {
        var bytes: [UInt8] = []
        private var accumulator: UInt32 = 0
        private var count = 0

        mutating func write(_ code: (code: UInt16, length: UInt8)) {
            write(bits: UInt32(code.code), count: Int(code.length))
        }

        mutating func write(bits: UInt32, count n: Int) {
            accumulator = accumulator << UInt32(n) | (bits & ((1 << UInt32(n)) - 1))
            count += n
            while count >= 8 {
                let byte = UInt8(truncatingIfNeeded: accumulator >> UInt32(count - 8))
                bytes.append(byte)
                if byte == 0xFF { bytes.append(0) }
                count -= 8
            }
            accumulator &= (1 << UInt32(count)) &- 1
        }

        /// The last byte filled with ones, as the standard asks.
        mutating func padToByte() {
            if count > 0 { write(bits: (1 << UInt32(8 - count)) - 1, count: 8 - count) }
        }
    }
}
