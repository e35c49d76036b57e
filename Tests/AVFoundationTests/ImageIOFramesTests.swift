import Foundation
import GraphKitTesting
import ImageIO
import MediaContainers
import Testing
import UniformTypeIdentifiers
import TestSupport

/// ImageIO reading WebP, GIF and TIFF as Apple's does: an animation's frames as the source's
/// pictures (composed on the canvas), their delays in `{GIF}` and `{WebP}` (clamped to 0.1 s and
/// as stored), the file's loop count and frame list; a TIFF's pages, its orientation and tags; a
/// WebP's EXIF. Pictures made in the test by ffmpeg, libwebp's and libtiff's own tools.
@Suite(.media, .timeLimit(.minutes(5))) struct ImageIOFramesTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func tool(_ name: String, _ arguments: [String]) throws { _ = try TestMedia.runTool(name, arguments) }

    func source(_ url: URL) throws -> CGImageSource { try #require(CGImageSourceCreateWithURL(url as CFURL, nil)) }

    func properties(_ source: CGImageSource, _ index: Int) throws -> [String: Any] {
        try #require(CGImageSourceCopyPropertiesAtIndex(source, index, nil) as? [String: Any])
    }

    @Test func anAnimatedGIFsFramesAndDelaysAreApples() throws {
        // Five frames of 0.05 s (clamped to 0.1 s, as Apple's), played 3 more times.
        let gif = folder.appendingPathComponent("a.gif")
        try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x48:r=20:d=0.25",
                            "-vf", "split[a][b];[a]palettegen[p];[b][p]paletteuse", "-loop", "3", gif.path])
        let source = try source(gif)
        #expect(CGImageSourceGetStatus(source) == .statusComplete)
        #expect(CGImageSourceGetType(source) as String? == UTType.gif.identifier)
        #expect(CGImageSourceGetCount(source) == 5)
        let p = try properties(source, 2)
        #expect(p[kCGImagePropertyPixelWidth as String] as? Int == 64 && p[kCGImagePropertyPixelHeight as String] as? Int == 48)
        let frame = try #require(p[kCGImagePropertyGIFDictionary as String] as? [String: Any])
        #expect(frame[kCGImagePropertyGIFDelayTime as String] as? Double == 0.1)
        #expect(frame[kCGImagePropertyGIFUnclampedDelayTime as String] as? Double == 0.05)
        let file = try #require(CGImageSourceCopyProperties(source, nil) as? [String: Any])
        let gifFile = try #require(file[kCGImagePropertyGIFDictionary as String] as? [String: Any])
        #expect(gifFile[kCGImagePropertyGIFLoopCount as String] as? Int == 3)
        #expect(gifFile[kCGImagePropertyGIFCanvasPixelWidth as String] as? Int == 64)
        #expect((gifFile[kCGImagePropertyGIFFrameInfoArray as String] as? [[String: Any]])?.count == 5)
        // Each frame whole, as ffmpeg composes it.
        let raw = folder.appendingPathComponent("a.bgra")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", gif.path, "-f", "rawvideo", "-pix_fmt", "bgra", raw.path])
        let reference = [UInt8](try Data(contentsOf: raw)), size = 64 * 48 * 4
        for n in [0, 4] {
            let image = try #require(CGImageSourceCreateImageAtIndex(source, n, nil))
            #expect(ImageIOTests.pixels(image) == Array(reference[(n * size)..<((n + 1) * size)]), "frame \(n)")
        }
        #expect(CGImageSourceCreateImageAtIndex(source, 5, nil) == nil)
    }

    @Test func aWebPsEXIFOrientationAndAnimationAreRead() throws {
        let pngs = try (0..<2).map { n -> URL in
            let png = folder.appendingPathComponent("f\(n).png")
            try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=60x40:d=2,format=rgba", "-vf", "select=eq(n\\,\(n * 9))",
                                "-frames:v", "1", png.path])
            return png
        }
        let anim = folder.appendingPathComponent("anim.webp")
        try tool("img2webp", ["-lossless", "-loop", "0", "-d", "250"] + pngs.map(\.path) + ["-o", anim.path])
        let source = try source(anim)
        #expect(CGImageSourceGetType(source) as String? == UTType.webP.identifier && CGImageSourceGetCount(source) == 2)
        let frame = try #require(try properties(source, 1)[kCGImagePropertyWebPDictionary as String] as? [String: Any])
        #expect(frame[kCGImagePropertyWebPDelayTime as String] as? Double == 0.25)
        // A still WebP with an EXIF chunk saying orientation 6: a thumbnail with transform is upright.
        var exif = EXIFBuilder(little: false)
        exif.primary = [(0x0112, .shorts([6])), (0x010F, .ascii("Pixel"))]
        let exifFile = folder.appendingPathComponent("exif.bin"), plain = folder.appendingPathComponent("p.webp")
        let tagged = folder.appendingPathComponent("tagged.webp")
        try Data(exif.bytes()).write(to: exifFile)
        try tool("cwebp", ["-quiet", "-lossless", pngs[0].path, "-o", plain.path])
        try tool("webpmux", ["-set", "exif", exifFile.path, plain.path, "-o", tagged.path])
        let still = try self.source(tagged)
        let p = try properties(still, 0)
        #expect(p[kCGImagePropertyOrientation as String] as? Int == 6)
        #expect((p[kCGImagePropertyTIFFDictionary as String] as? [String: Any])?[kCGImagePropertyTIFFMake as String] as? String == "Pixel")
        let options = [kCGImageSourceCreateThumbnailFromImageAlways: true, kCGImageSourceCreateThumbnailWithTransform: true] as CFDictionary
        let upright = try #require(CGImageSourceCreateThumbnailAtIndex(still, 0, options))
        #expect(upright.width == 40 && upright.height == 60)
    }

    @Test func aTIFFsPagesOrientationAndTagsAreRead() throws {
        let png = folder.appendingPathComponent("t.png"), tif = folder.appendingPathComponent("t.tif")
        try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=48x32", "-frames:v", "1", png.path])
        try tool("ffmpeg", ["-v", "error", "-y", "-i", png.path, "-pix_fmt", "rgb24", tif.path])
        try tool("tiffset", ["-s", "274", "8", tif.path])
        try tool("tiffset", ["-s", "271", "Scanner Co", tif.path])
        // A second page of another size, decoded too.
        let small = folder.appendingPathComponent("small.tif"), pages = folder.appendingPathComponent("pages.tif")
        try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=20x10", "-frames:v", "1", "-pix_fmt", "rgb24", small.path])
        try tool("tiffcp", [tif.path, small.path, pages.path])
        let source = try source(pages)
        #expect(CGImageSourceGetType(source) as String? == UTType.tiff.identifier && CGImageSourceGetCount(source) == 2)
        let p = try properties(source, 0)
        #expect(p[kCGImagePropertyOrientation as String] as? Int == 8 && p[kCGImagePropertyHasAlpha as String] as? Bool == false)
        #expect((p[kCGImagePropertyTIFFDictionary as String] as? [String: Any])?[kCGImagePropertyTIFFMake as String] as? String == "Scanner Co")
        // The picture as stored (its orientation apart), the same pixels as the PNG.
        let image = try #require(CGImageSourceCreateImageAtIndex(source, 0, nil))
        let raw = folder.appendingPathComponent("t.bgra")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "bgra", raw.path])
        #expect(ImageIOTests.pixels(image) == [UInt8](try Data(contentsOf: raw)))
        #expect(try properties(source, 1)[kCGImagePropertyPixelWidth as String] as? Int == 20)
        let second = try #require(CGImageSourceCreateImageAtIndex(source, 1, nil))
        let red = Array(ImageIOTests.pixels(second).prefix(4))
        #expect(second.width == 20 && second.height == 10 && red[0] < 5 && red[1] < 5 && red[2] > 245 && red[3] == 255, "\(red)")
        #expect((CGImageSourceCopyTypeIdentifiers() as? [String]).map { Set([UTType.gif.identifier, UTType.tiff.identifier, UTType.webP.identifier]).isSubset(of: $0) } == true)
    }

    @Test func hostileClaimsAreRefusedBeforeAnythingIsDecoded() throws {
        // A GIF claiming a 65535 × 65535 screen; a WebP canvas of 16 M × 16 M.
        var gif = Array("GIF89a".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0]
        gif += [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x4C, 0x01, 0, 0x3B]
        let big = try #require(CGImageSourceCreateWithData(Data(gif) as CFData, nil))
        #expect(CGImageSourceGetStatus(big) == .statusInvalidData && CGImageSourceGetCount(big) == 0)
        let vp8x: [UInt8] = Array("VP8X".utf8) + [10, 0, 0, 0, 0x02, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        let webp = Array("RIFF".utf8) + [22, 0, 0, 0] + Array("WEBP".utf8) + vp8x
        let wide = try #require(CGImageSourceCreateWithData(Data(webp) as CFData, nil))
        #expect(CGImageSourceGetStatus(wide) == .statusInvalidData && CGImageSourceCreateImageAtIndex(wide, 0, nil) == nil)
    }
}
