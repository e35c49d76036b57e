import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import Nodes
import TestSupport

/// The JPEG encoder's files, read back by ffmpeg's decoder (a decoder of its own).
@Suite(.media, .timeLimit(.minutes(10))) struct JPEGEncoderTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// A BGRA picture (rows padded to `bytesPerRow`) of smooth ramps and a hard-edged square.
    static func picture(width: Int, height: Int, bytesPerRow: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0xEE, count: bytesPerRow * height)
        for y in 0..<height {
            for x in 0..<width {
                let i = y * bytesPerRow + x * 4
                let inSquare = x > width / 3 && x < width * 2 / 3 && y > height / 3 && y < height * 2 / 3
                bytes[i] = UInt8(x * 255 / max(1, width - 1))                     // blue
                bytes[i + 1] = UInt8(y * 255 / max(1, height - 1))                // green
                bytes[i + 2] = inSquare ? 230 : UInt8((x + y) * 127 / (width + height))  // red
                bytes[i + 3] = 255
            }
        }
        return bytes
    }

    /// What ffmpeg decodes from `jpeg`, as RGB.
    func decoded(_ jpeg: [UInt8], _ name: String) throws -> (rgb: [UInt8], size: String) {
        let file = folder.appendingPathComponent("\(name).jpg").path, raw = folder.appendingPathComponent("\(name).rgb").path
        try Data(jpeg).write(to: URL(fileURLWithPath: file))
        let size = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", file])
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", file, "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        return ([UInt8](try Data(contentsOf: URL(fileURLWithPath: raw))), size.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Sizes that are and are not whole 8x8 blocks, padded rows: every channel within 3 levels
    /// of the picture on average at quality 95, the file a baseline JPEG of the picture's size.
    @Test(arguments: [[64, 48], [37, 21], [1, 1], [161, 90]])
    func decodesBackToThePicture(size: [Int]) throws {
        let (w, h) = (size[0], size[1])
        let bytesPerRow = w * 4 + 12
        let bgra = Self.picture(width: w, height: h, bytesPerRow: bytesPerRow)
        let jpeg = bgra.withUnsafeBytes { JPEGEncoder(quality: 95).encode(bgra: $0.baseAddress!, width: w, height: h, bytesPerRow: bytesPerRow) }
        #expect(jpeg.prefix(2) == [0xFF, 0xD8] && jpeg.suffix(2) == [0xFF, 0xD9])
        let (rgb, probed) = try decoded(jpeg, "\(w)x\(h)")
        #expect(probed == "mjpeg,\(w),\(h)")
        #expect(rgb.count == w * h * 3)
        var total = 0
        for y in 0..<h {
            for x in 0..<w {
                let s = y * bytesPerRow + x * 4, d = (y * w + x) * 3
                total += abs(Int(rgb[d]) - Int(bgra[s + 2])) + abs(Int(rgb[d + 1]) - Int(bgra[s + 1])) + abs(Int(rgb[d + 2]) - Int(bgra[s]))
            }
        }
        let mean = Double(total) / Double(w * h * 3)
        #expect(mean < 3, "\(w)x\(h): mean difference \(mean)")
    }

    /// Quality trades size for loss: a lower quality makes a smaller file that differs more.
    @Test func qualityTradesSizeForLoss() throws {
        let (w, h) = (160, 120)
        let bgra = Self.picture(width: w, height: h, bytesPerRow: w * 4)
        func encoded(_ q: Int) -> [UInt8] {
            bgra.withUnsafeBytes { JPEGEncoder(quality: q).encode(bgra: $0.baseAddress!, width: w, height: h, bytesPerRow: w * 4) }
        }
        let (high, low) = (encoded(95), encoded(20))
        #expect(low.count < high.count * 2 / 3, "quality 20: \(low.count) bytes, 95: \(high.count)")
        func loss(_ jpeg: [UInt8], _ name: String) throws -> Int {
            let rgb = try decoded(jpeg, name).rgb
            return (0..<(w * h)).reduce(0) { sum, p in
                sum + abs(Int(rgb[p * 3]) - Int(bgra[p * 4 + 2])) + abs(Int(rgb[p * 3 + 1]) - Int(bgra[p * 4 + 1])) + abs(Int(rgb[p * 3 + 2]) - Int(bgra[p * 4]))
            }
        }
        #expect(try loss(low, "low") > loss(high, "high"))
        #expect(JPEGEncoder(quality: 0).quality == 1 && JPEGEncoder(quality: 200).quality == 100)
    }
}
