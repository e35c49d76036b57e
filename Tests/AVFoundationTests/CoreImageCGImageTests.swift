import CoreImage
import Foundation
import GraphKitTesting
import ImageIO
import Testing
import TestSupport

/// CoreImage meets CoreGraphics: a CIImage of a drawn CGImage, a CGImage of a CIImage, and
/// pictures written straight from a CIImage, pixels where Apple's coordinates put them.
@Suite struct CoreImageCGImageTests {
    /// A 64 × 32 picture drawn with CoreGraphics: black, a red 16 × 8 square at its bottom left.
    static func drawn() throws -> CGImage {
        let context = try #require(CGContext(data: nil, width: 64, height: 32, bitsPerComponent: 8, bytesPerRow: 0,
                                             space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: CGImageAlphaInfo.premultipliedLast.rawValue))
        context.setFillColor(CGColor(red: 0, green: 0, blue: 0, alpha: 1))
        context.fill(CGRect(x: 0, y: 0, width: 64, height: 32))
        context.setFillColor(CGColor(red: 1, green: 0, blue: 0, alpha: 1))
        context.fill(CGRect(x: 0, y: 0, width: 16, height: 8))
        return try #require(context.makeImage())
    }

    @Test func aCGImageBecomesACIImageTheRightWayUp() throws {
        let picture = try Self.drawn()
        let image = CIImage(cgImage: picture)
        #expect(image.extent == CGRect(x: 0, y: 0, width: 64, height: 32))
        #expect(image.cgImage === picture && image.colorSpace != nil && CIImage(color: .red).colorSpace == nil)
        let out = CoreImageTestImages.blank(64, 32)
        CIContext().render(image, to: out)
        let px = CoreImageTestImages.pixels(out)
        // Memory's last rows are the picture's bottom: the red square is there, on the left.
        #expect(px[31 * 64 + 0] == [255, 0, 0, 255] && px[24 * 64 + 15] == [255, 0, 0, 255])
        #expect(px[23 * 64 + 0] == [0, 0, 0, 255] && px[31 * 64 + 16] == [0, 0, 0, 255] && px[0] == [0, 0, 0, 255])
        #expect(image.transformed(by: CGAffineTransform(translationX: 1, y: 0)).cgImage == nil, "a changed image has none")
    }

    @Test func aCIImageBecomesACGImage() throws {
        let buffer = CoreImageTestImages.varied(40, 20, opaque: true)
        let context = CIContext()
        let picture = try #require(context.createCGImage(CIImage(cvPixelBuffer: buffer), from: CGRect(x: 0, y: 0, width: 40, height: 20)))
        #expect(picture.width == 40 && picture.height == 20 && picture.bytesPerRow == 160)
        // Its first row is the image's top, as the buffer's: the same bytes.
        let bytes = try #require(picture.dataProvider?.data)
        let expected = CoreImageTestImages.pixels(buffer)
        let p = CFDataGetBytePtr(bytes)!
        for i in [0, 17, 399, 799] {
            #expect([p[4 * i + 2], p[4 * i + 1], p[4 * i], p[4 * i + 3]] == expected[i], "pixel \(i)")
        }
        // A part of it: the rectangle's top row first.
        let corner = try #require(context.createCGImage(CIImage(cvPixelBuffer: buffer), from: CGRect(x: 30, y: 0, width: 10, height: 5)))
        let q = CFDataGetBytePtr(corner.dataProvider!.data!)!
        #expect([q[2], q[1], q[0], q[3]] == expected[15 * 40 + 30])
        #expect(context.createCGImage(CIImage(color: .red), from: .infinite) == nil)
        #expect(context.createCGImage(CIImage(color: .red), from: CGRect(x: 0, y: 0, width: 0, height: 4)) == nil)
        #expect(context.createCGImage(CIImage(color: .red), from: CGRect(x: 0, y: 0, width: 4, height: 4), format: .RGBAh, colorSpace: nil) == nil)
    }

    @Test(.media) func picturesAreWrittenStraightFromAnImage() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let image = CIImage(cgImage: try Self.drawn())
        let png = folder.appendingPathComponent("out.png"), jpeg = folder.appendingPathComponent("out.jpg")
        let context = CIContext()
        try context.writePNGRepresentation(of: image, to: png, format: .RGBA8, colorSpace: CGColorSpaceCreateDeviceRGB())
        try context.writeJPEGRepresentation(of: image, to: jpeg, colorSpace: CGColorSpaceCreateDeviceRGB(),
                                            options: [CIImageRepresentationOption(rawValue: kCGImageDestinationLossyCompressionQuality): 0.9])
        // ffmpeg's decode of the PNG: the bottom-left pixel red, the top-left black.
        let raw = folder.appendingPathComponent("png.rgba")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "rgba", raw.path])
        let rgba = [UInt8](try Data(contentsOf: raw))
        #expect(rgba.count == 64 * 32 * 4 && Array(rgba[(31 * 64) * 4..<(31 * 64) * 4 + 3]) == [255, 0, 0] && Array(rgba[0..<3]) == [0, 0, 0])
        let probed = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", jpeg.path])
        #expect(probed.trimmingCharacters(in: .whitespacesAndNewlines) == "mjpeg,64,32")
        #expect(throws: NSError.self) { try context.writePNGRepresentation(of: CIImage(color: .red), to: png, format: .RGBA8, colorSpace: CGColorSpaceCreateDeviceRGB()) }
    }
}
