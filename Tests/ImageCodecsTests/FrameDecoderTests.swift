import Foundation
import GraphKitTesting
import ImageCodecs
import MediaContainers
import Testing
import TestSupport

/// FrameDecoder: WebP (still and animated), GIF (animated, frames drawn over part of the canvas)
/// and TIFF (several pages) made in the test by the formats' own tools, decoded in a child
/// process and checked against the pictures they were made from (lossless), or against libwebp's
/// dwebp and ffmpeg's GIF decoder (which composes frames as the format says).
@Suite(.media) struct FrameDecoderTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// Frame `n` of ffmpeg's `testsrc2` as an RGBA PNG of `width` × `height`.
    func still(_ name: String, _ width: Int, _ height: Int, frame n: Int = 0) throws -> URL {
        let png = folder.appendingPathComponent(name + ".png")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(width)x\(height):d=10,format=rgba",
                                             "-vf", "select=eq(n\\,\(n))", "-frames:v", "1", png.path])
        return png
    }

    /// The BGRA pixels of every frame ffmpeg decodes from `file`.
    func ffmpegBGRA(_ file: URL) throws -> [UInt8] {
        let raw = folder.appendingPathComponent(file.lastPathComponent + ".bgra")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", file.path, "-f", "rawvideo", "-pix_fmt", "bgra", raw.path])
        return [UInt8](try Data(contentsOf: raw))
    }

    func decode(_ file: URL, _ format: FrameDecoder.Format, index: Int, _ width: Int, _ height: Int) throws -> [UInt8] {
        let bytes = [UInt8](try Data(contentsOf: file))
        let picture = try bytes.withUnsafeBytes { try FrameDecoder.decode($0, format: format, index: index, width: width, height: height) }
        return Array(picture.memory)
    }

    @Test func anAnimatedLosslessWebPGivesBackEachFrameExactly() throws {
        let frames = try (0..<3).map { try still("f\($0)", 40, 30, frame: $0 * 7) }
        let webp = folder.appendingPathComponent("anim.webp")
        _ = try TestMedia.runTool("img2webp", ["-lossless", "-d", "80"] + frames.map(\.path) + ["-o", webp.path])
        let file = try WebPFile.read(MemoryBytes([UInt8](try Data(contentsOf: webp))))
        #expect(file.isAnimated && file.frames.count == 3 && file.frames.allSatisfy { $0.duration == 80 })
        for (n, png) in frames.enumerated() {
            #expect(try decode(webp, .webp, index: n, 40, 30) == ffmpegBGRA(png), "frame \(n)")
        }
    }

    @Test func aLossyWebPDecodesAsDwebpDecodesIt() throws {
        let png = try still("p", 96, 64)
        let webp = folder.appendingPathComponent("p.webp"), pam = folder.appendingPathComponent("p.pam")
        _ = try TestMedia.runTool("cwebp", ["-quiet", "-q", "70", png.path, "-o", webp.path])
        _ = try TestMedia.runTool("dwebp", ["-quiet", webp.path, "-pam", "-o", pam.path])
        #expect(try decode(webp, .webp, index: 0, 96, 64) == ffmpegBGRA(pam))
    }

    @Test func aGIFsFramesAreComposedAsFFmpegComposesThem() throws {
        // ffmpeg writes each frame after the first as the rectangle that changed, the rest of it
        // transparent: composition decides every pixel.
        let gif = folder.appendingPathComponent("a.gif")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x48:r=10:d=0.5",
                                             "-vf", "split[a][b];[a]palettegen[p];[b][p]paletteuse", "-loop", "0", gif.path])
        let file = try GIFFile.read(MemoryBytes([UInt8](try Data(contentsOf: gif))))
        #expect(file.frames.count == 5 && file.loopCount == 0 && file.frames.allSatisfy { $0.delay == 10 })
        #expect(file.frames.dropFirst().contains { $0.width * $0.height < 64 * 48 || $0.transparent })
        let reference = try ffmpegBGRA(gif)
        let size = 64 * 48 * 4
        for n in 0..<5 {
            #expect(try decode(gif, .gif, index: n, 64, 48) == Array(reference[(n * size)..<((n + 1) * size)]), "frame \(n)")
        }
    }

    @Test func aTIFFsPagesAreEachTheirOwnPicture() throws {
        let pngs = try [still("a", 50, 40), still("b", 30, 20, frame: 3)]
        let pages = try pngs.map { png -> URL in
            let tif = png.deletingPathExtension().appendingPathExtension("tif")
            _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", png.path, "-pix_fmt", "rgba", "-compression_algo", "deflate", tif.path])
            return tif
        }
        let tiff = folder.appendingPathComponent("pages.tif")
        _ = try TestMedia.runTool("tiffcp", pages.map(\.path) + [tiff.path])
        let file = try TIFFFile.read(MemoryBytes([UInt8](try Data(contentsOf: tiff))))
        #expect(file.pages.map(\.width) == [50, 30] && file.pages.allSatisfy(\.hasAlpha))
        #expect(try decode(tiff, .tiff, index: 0, 50, 40) == ffmpegBGRA(pngs[0]))
        #expect(try decode(tiff, .tiff, index: 1, 30, 20) == ffmpegBGRA(pngs[1]))
        #expect { try decode(tiff, .tiff, index: 2, 30, 20) } throws: { "\($0)".contains("no such page") }
    }

    /// A 4:4:4 JPEG (what ffmpeg makes of an RGB picture) decodes as ffmpeg decodes it; GStreamer
    /// 1.22's jpegdec gave 14.8 dB on this one, its rows misplaced.
    @Test func aJPEGDecodesAsFFmpegDecodesIt() throws {
        let png = try still("j", 96, 64)
        let jpeg = folder.appendingPathComponent("j.jpg")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", png.path, "-pix_fmt", "yuvj444p", "-q:v", "2", jpeg.path])
        let decoded = try decode(jpeg, .jpeg, index: 0, 96, 64), reference = try ffmpegBGRA(jpeg)
        var sum = 0.0
        for i in decoded.indices where i % 4 != 3 { sum += pow(Double(decoded[i]) - Double(reference[i]), 2) }
        let psnr = sum == 0 ? Double.infinity : 10 * log10(255 * 255 / (sum / Double(96 * 64 * 3)))
        #expect(psnr >= 45, "\(psnr) dB")
        #expect(stride(from: 3, to: decoded.count, by: 4).allSatisfy { decoded[$0] == 255 })
    }

    /// Random damage (seeded: a failure names its round, and the same round damages the same
    /// bytes again) to each format: a picture or the library's reason, never a crash or a child
    /// that ended without saying.
    @Test func damagedFilesGiveTheLibrarysReasonNeverACrash() throws {
        let png = try still("d", 64, 48)
        let webp = folder.appendingPathComponent("d.webp"), gif = folder.appendingPathComponent("d.gif")
        let jpeg = folder.appendingPathComponent("d.jpg"), tiff = folder.appendingPathComponent("d.tif")
        _ = try TestMedia.runTool("cwebp", ["-quiet", "-lossless", png.path, "-o", webp.path])
        for file in [gif, jpeg] { _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", png.path, file.path]) }
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", png.path, "-compression_algo", "lzw", tiff.path])
        var generator = SplitMix(seed: 72)
        for (file, format) in [(webp, FrameDecoder.Format.webp), (gif, .gif), (jpeg, .jpeg), (tiff, .tiff)] {
            let whole = [UInt8](try Data(contentsOf: file))
            for round in 0..<20 {
                var bytes = whole
                // The header kept, the rest damaged or cut.
                if round % 2 == 0 {
                    for _ in 0..<8 { bytes[Int.random(in: 20..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
                } else {
                    bytes = Array(bytes.prefix(Int.random(in: 20..<bytes.count, using: &generator)))
                }
                do {
                    _ = try bytes.withUnsafeBytes { try FrameDecoder.decode($0, format: format, index: 0, width: 64, height: 48) }
                } catch {
                    let said = "\(error)"
                    #expect(!said.contains("signal") && !said.contains("ended without"), "\(format) round \(round): \(said)")
                }
            }
        }
        // A size other than the file's is said, with both.
        #expect { try decode(webp, .webp, index: 0, 65, 48) } throws: { "\($0)".contains("decodes as 64 × 48, where its header says 65 × 48") }
    }

    /// Frames placed wholly outside the canvas (a GIF may say anything): clipped away, and the
    /// disposal that clears such a frame's place clears nothing (it once asked memset for
    /// 2^64 − 4 bytes).
    @Test func aGIFFrameOutsideItsCanvasIsClippedAway() throws {
        func le(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
        var gif = Array("GIF89a".utf8) + le(8) + le(8) + [0x80, 0, 0] + [0, 0, 0, 255, 255, 255]
        for (x, y) in [(300, 2), (2, 3)] {
            gif += [0x21, 0xF9, 4, 2 << 2, 0, 0, 0, 0]  // disposal 2: clear the frame's place after it
            gif += [0x2C] + le(x) + le(y) + le(1) + le(1) + [0, 2, 2, 0x4C, 0x01, 0]  // one pixel of colour 1
        }
        gif.append(0x3B)
        let picture = try gif.withUnsafeBytes { try FrameDecoder.decode($0, format: .gif, index: 1, width: 8, height: 8) }
        let pixels = Array(picture.memory)
        #expect(Array(pixels[((3 * 8 + 2) * 4)..<((3 * 8 + 2) * 4 + 4)]) == [255, 255, 255, 255])
        #expect(pixels.enumerated().filter { $0.offset / 4 != 3 * 8 + 2 }.allSatisfy { $0.element == 0 })
    }

    @Test func aDecodeThatRunsPastItsTimeIsStopped() throws {
        // A 4096 × 4096 GIF frame takes giflib longer than a millisecond.
        let gif = folder.appendingPathComponent("big.gif")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=4096x4096", "-frames:v", "1", gif.path])
        let bytes = [UInt8](try Data(contentsOf: gif))
        #expect {
            try bytes.withUnsafeBytes { try FrameDecoder.decode($0, format: .gif, index: 0, width: 4096, height: 4096, timeout: 0.001) }
        } throws: { "\($0)".contains("giflib's decoder took more than 0.001 s") }
    }
}
