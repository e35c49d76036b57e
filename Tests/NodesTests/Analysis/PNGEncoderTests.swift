import Foundation
import GraphKitTesting
@testable import Nodes
import Testing
import TestSupport

/// The PNG writer on its own: rows that do not compress, so that zlib's output fills its buffer
/// several times over and goes out as several IDAT chunks, read back by libpng (through Cairo).
@Suite struct PNGEncoderTests {
    let folder = try! TestMedia.temporaryFolder()

    @Test func rowsThatDoNotCompressComeBackBitForBit() throws {
        let (width, height) = (4001, 300)  // 501 bytes a row, the last with 7 unused bits
        var generator = SplitMix(seed: 0x9E37_79B9_7F4A_7C15)  // the same rows every run
        func random() -> UInt8 { UInt8(truncatingIfNeeded: generator.next()) }
        var rows: [[UInt8]] = []
        for _ in 0..<height {
            var row = (0..<((width + 7) / 8)).map { _ in random() }
            row[row.count - 1] &= 0x80  // pixels past the width are 0
            rows.append(row)
        }
        var bytes: [UInt8] = []
        let png = PNGEncoder(width: width, height: height, palette: [[0, 0, 0, 255], [255, 255, 255, 255]])
        try png.start { bytes += $0 }
        for row in rows {
            try png.appendRow({ pixels in for i in pixels.indices { pixels[i] = row[i] } }) { bytes += $0 }
        }
        try png.finish { bytes += $0 }
        let path = folder.appendingPathComponent("noise.png").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        // The chunks: IHDR, PLTE (no tRNS: both colours opaque), full IDATs of 64 KB, the rest, IEND.
        var chunks: [(type: String, length: Int)] = []
        var at = 8
        while at < bytes.count {
            let length = bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) }
            chunks.append((String(decoding: bytes[(at + 4)..<(at + 8)], as: UTF8.self), length))
            at += 12 + length
        }
        #expect(chunks.map(\.type) == ["IHDR", "PLTE"] + Array(repeating: "IDAT", count: chunks.count - 3) + ["IEND"])
        let idat = chunks.filter { $0.type == "IDAT" }.map(\.length)
        #expect(idat.count >= 3 && idat.dropLast().allSatisfy { $0 == 65_536 }, "\(idat)")

        let picture = try Pixels(png: path)
        #expect(picture.width == width && picture.height == height)
        let wrong = (0..<height).flatMap { y in
            (0..<width).compactMap { x -> (Int, Int)? in
                let white = rows[y][x >> 3] & (0x80 >> UInt8(x & 7)) != 0
                return picture[x, y] == (white ? 0xFFFF_FFFF : 0xFF00_0000) ? nil : (x, y)
            }
        }
        #expect(wrong.isEmpty, "pixels \(wrong.prefix(5))")
    }
}
