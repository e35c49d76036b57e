import Foundation
import GraphKitTesting
import ImageIO
import MediaContainers
import Testing
import UniformTypeIdentifiers
import TestSupport

/// ImageIO reading HEIC and AVIF as an upload service does: type, count, properties as Apple
/// spells them, the picture as stored with its orientation apart, thumbnails (the file's own or
/// made from the picture, turned upright when asked), alpha; the pictures made in the test by
/// heif-enc (and put together around its coded pictures where it writes no such file: irot,
/// imir) and checked against libheif's own heif-convert, which applies the orientation itself.
@Suite(.media, .timeLimit(.minutes(5))) struct ImageIOHEIFTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// ffmpeg's test pattern as a PNG (an alpha ramp across it when `alpha`).
    func pattern(_ name: String, _ width: Int, _ height: Int, alpha: Bool = false) throws -> URL {
        let png = folder.appendingPathComponent(name + ".png")
        let filter = alpha ? ["-vf", "format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='255*X/W'"] : []
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(width)x\(height)", "-frames:v", "1"] + filter + [png.path])
        return png
    }

    func heifEnc(_ inputs: [URL], _ name: String, _ options: [String] = []) throws -> URL {
        let out = folder.appendingPathComponent(name)
        try TestMedia.runTool("heif-enc", ["-q", "90"] + options + ["-o", out.path] + inputs.map(\.path))
        return out
    }

    /// libheif's picture of `file` (its orientation applied), as BGRA with its size.
    func heifConvert(_ file: URL) throws -> (pixels: [UInt8], width: Int, height: Int) {
        let png = folder.appendingPathComponent(file.lastPathComponent + ".converted.png")
        try TestMedia.runTool("heif-convert", [file.path, png.path])
        let size = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=width,height", "-of", "csv=p=0", png.path])
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",").compactMap { Int($0) }
        let raw = folder.appendingPathComponent(file.lastPathComponent + ".bgra")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "bgra", raw.path])
        return ([UInt8](try Data(contentsOf: raw)), size[0], size[1])
    }

    static func largestColourDifference(_ a: [UInt8], _ b: [UInt8]) -> Int {
        zip(a, b).enumerated().filter { $0.offset % 4 != 3 }.reduce(0) { max($0, abs(Int($1.element.0) - Int($1.element.1))) }
    }

    func source(_ url: URL) throws -> CGImageSource {
        try #require(CGImageSourceCreateWithURL(url as CFURL, nil))
    }

    @Test func aHEICReadsAsApplesImageIOReadsIt() throws {
        let heic = try heifEnc([try pattern("p", 320, 240)], "p.heic")
        let source = try source(heic)
        #expect(CGImageSourceGetStatus(source) == .statusComplete)
        #expect(CGImageSourceGetType(source) as String? == UTType.heic.identifier)
        #expect(CGImageSourceGetCount(source) == 1)
        let properties = try #require(CGImageSourceCopyPropertiesAtIndex(source, 0, nil) as? [String: Any])
        #expect(properties[kCGImagePropertyPixelWidth as String] as? Int == 320)
        #expect(properties[kCGImagePropertyPixelHeight as String] as? Int == 240)
        #expect(properties[kCGImagePropertyOrientation as String] as? Int == 1)
        #expect(properties[kCGImagePropertyHasAlpha as String] as? Bool == false)
        #expect(properties[kCGImagePropertyDepth as String] as? Int == 8)
        let image = try #require(CGImageSourceCreateImageAtIndex(source, 0, nil))
        #expect(image.width == 320 && image.height == 240)
        let reference = try heifConvert(heic)
        #expect(Self.largestColourDifference(ImageIOTests.pixels(image), reference.pixels) <= 1)
        // The same from the file's bytes.
        let fromData = try #require(CGImageSourceCreateWithData(try Data(contentsOf: heic) as CFData, nil))
        let again = try #require(CGImageSourceCreateImageAtIndex(fromData, 0, nil))
        #expect(ImageIOTests.pixels(again) == ImageIOTests.pixels(image))
        #expect((CGImageSourceCopyTypeIdentifiers() as? [String])?.contains(UTType.heic.identifier) == true)
    }

    /// irot and imir: the properties give the EXIF orientation, the image is the picture as
    /// stored, and a thumbnail with transform is the picture as libheif shows it.
    @Test(arguments: [([3], nil), ([1], nil), ([2], nil), ([], 0), ([1], 0), ([3], 1)] as [([Int], Int?)])
    func aTurnedOrMirroredHEICGivesItsOrientationAndTurnsWhenAsked(_ turns: [Int], _ mirror: Int?) throws {
        let coded = try HEIFBuilder.encoded(png: try pattern("t", 96, 64), in: folder)
        let properties = [coded.configuration, HEIFBuilder.ispe(96, 64)] + turns.map(HEIFBuilder.irot) + (mirror.map { [HEIFBuilder.imir(axis: $0)] } ?? [])
        let file = folder.appendingPathComponent("turned.heic")
        try Data(HEIFBuilder(primary: 1, items: [.init(id: 1, type: "hvc1", data: coded.data, properties: properties)]).bytes()).write(to: file)
        let source = try source(file)
        let orientation = try #require((CGImageSourceCopyPropertiesAtIndex(source, 0, nil) as? [String: Any])?[kCGImagePropertyOrientation as String] as? Int)
        #expect(orientation != 1)
        let stored = try #require(CGImageSourceCreateImageAtIndex(source, 0, nil))
        #expect(stored.width == 96 && stored.height == 64)
        let options: [CFString: Any] = [kCGImageSourceCreateThumbnailFromImageAlways: true, kCGImageSourceCreateThumbnailWithTransform: true]
        let upright = try #require(CGImageSourceCreateThumbnailAtIndex(source, 0, options as CFDictionary))
        let reference = try heifConvert(file)
        #expect(upright.width == reference.width && upright.height == reference.height)
        #expect(Self.largestColourDifference(ImageIOTests.pixels(upright), reference.pixels) <= 1, "orientation \(orientation)")
    }

    /// The file's own thumbnail serves when no option asks otherwise, or when it is at least the
    /// size asked; the picture is decoded when it is too small.
    @Test func theFilesOwnThumbnailIsTakenWhenItIsLargeEnough() throws {
        let heic = try heifEnc([try pattern("big", 640, 480)], "thumbed.heic", ["-t", "160"])
        let source = try source(heic)
        #expect(CGImageSourceGetCount(source) == 1)
        let own = try #require(CGImageSourceCreateThumbnailAtIndex(source, 0, nil))
        #expect(own.width == 160 && own.height == 120)
        func thumbnail(_ side: Int) throws -> CGImage {
            try #require(CGImageSourceCreateThumbnailAtIndex(source, 0, [kCGImageSourceCreateThumbnailFromImageIfAbsent: true,
                                                                         kCGImageSourceThumbnailMaxPixelSize: side] as CFDictionary))
        }
        // 100 px from the 160-px thumbnail; 320 px from the picture (the thumbnail is too small).
        #expect(try thumbnail(100).width == 100)
        #expect(try thumbnail(320).width == 320)
        // Without one, a file with no thumbnail gives none (as Apple's).
        let plain = try self.source(try heifEnc([try pattern("small", 64, 48)], "plain.heic"))
        #expect(CGImageSourceCreateThumbnailAtIndex(plain, 0, nil) == nil)
    }

    @Test func anAVIFWithAlphaKeepsItsAlpha() throws {
        let avif = try heifEnc([try pattern("a", 128, 64, alpha: true)], "a.avif", ["-A"])
        let source = try source(avif)
        #expect(CGImageSourceGetType(source) as String? == "public.avif")
        let properties = try #require(CGImageSourceCopyPropertiesAtIndex(source, 0, nil) as? [String: Any])
        #expect(properties[kCGImagePropertyHasAlpha as String] as? Bool == true)
        let image = try #require(CGImageSourceCreateImageAtIndex(source, 0, nil))
        #expect(image.alphaInfo == .first)
        let pixels = ImageIOTests.pixels(image)
        #expect(pixels[3] < 16 && pixels[127 * 4 + 3] > 235)
    }

    @Test func aFileOfSeveralImagesHasEach() throws {
        let heic = try heifEnc([try pattern("one", 64, 48), try pattern("two", 80, 32)], "two.heic")
        let source = try source(heic)
        #expect(CGImageSourceGetCount(source) == 2)
        let second = try #require(CGImageSourceCopyPropertiesAtIndex(source, 1, nil) as? [String: Any])
        #expect(second[kCGImagePropertyPixelWidth as String] as? Int == 80)
        let image = try #require(CGImageSourceCreateImageAtIndex(source, 1, nil))
        #expect(image.width == 80 && image.height == 32)
        #expect(CGImageSourceCreateImageAtIndex(source, 2, nil) == nil)
    }

    /// Claims past the limit are refused before anything is decoded; a file cut short gives no
    /// image and no crash.
    @Test func hostileHEIFFilesAreRefusedNotDecoded() throws {
        // A grid claiming 100000 × 100000 from four tiny tiles.
        var items = [HEIFBuilder.Item(id: 1, type: "grid", data: HEIFBuilder.gridData(rows: 2, columns: 2, width: 100_000 & 0xFFFF, height: 100),
                                      properties: [HEIFBuilder.ispe(100_000, 100_000)], references: [("dimg", [2, 3, 4, 5])])]
        for id in UInt32(2)...5 { items.append(.init(id: id, type: "hvc1", hidden: true, data: [0, 0, 0, 1], properties: [HEIFBuilder.ispe(50_000, 50_000)])) }
        let bomb = try #require(CGImageSourceCreateWithData(Data(HEIFBuilder(primary: 1, items: items).bytes()) as CFData, nil))
        #expect(CGImageSourceGetStatus(bomb) == .statusInvalidData)
        #expect(CGImageSourceGetCount(bomb) == 0 && CGImageSourceCreateImageAtIndex(bomb, 0, nil) == nil)

        // A real HEIC cut in its coded picture: described, then refused by the decoder.
        let heic = try heifEnc([try pattern("cut", 160, 120)], "cut.heic")
        var bytes = try Data(contentsOf: heic)
        bytes.removeLast(bytes.count / 3)
        let cut = try #require(CGImageSourceCreateWithData(bytes as CFData, nil))
        #expect(CGImageSourceGetCount(cut) == 1)
        #expect(CGImageSourceCreateImageAtIndex(cut, 0, nil) == nil)
    }
}
