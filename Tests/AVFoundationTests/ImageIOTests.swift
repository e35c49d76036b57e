import AVFoundation
import Foundation
import GraphKitTesting
import ImageIO
import Testing
import UniformTypeIdentifiers
import TestSupport

/// ImageIO as a thumbnail service uses it: a picture from AVAssetImageGenerator written with
/// CGImageDestination as JPEG (two qualities) and PNG, to a URL and to a CFMutableData, read back
/// by ffprobe and ffmpeg and by CGImageSource; failures that leave nothing behind; sources that
/// refuse what is not a picture, or a picture too large to decode.
@Suite(.media, .timeLimit(.minutes(10))) struct ImageIOTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// A 320x240 picture with detail and colour (ffmpeg's testsrc2), cut from a movie by
    /// AVAssetImageGenerator, as a thumbnail service gets one.
    func picture() throws -> CGImage {
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: try movie()))
        return try generator.copyCGImage(at: .zero, actualTime: nil)
    }

    /// 1 s of 320x240 testsrc2, H.264.
    func movie() throws -> URL {
        let url = folder.appendingPathComponent("movie.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=1",
                                         "-c:v", "libx264", "-crf", "18", "-pix_fmt", "yuv420p", url.path])
        return url
    }

    /// Writes `image` as Apple code does; whether Finalize said it worked.
    func write(_ image: CGImage, to url: URL, type: UTType, quality: Double? = nil, orientation: CGImagePropertyOrientation? = nil) -> Bool {
        guard let destination = CGImageDestinationCreateWithURL(url as CFURL, type.identifier as CFString, 1, nil) else { return false }
        var properties: [CFString: Any] = [:]
        if let quality { properties[kCGImageDestinationLossyCompressionQuality] = quality }
        if let orientation { properties[kCGImagePropertyOrientation] = orientation.rawValue }
        CGImageDestinationAddImage(destination, image, properties as CFDictionary)
        return CGImageDestinationFinalize(destination)
    }

    func fileSize(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int)
    }

    /// The bytes of an image, row by row, without row padding: BGRA.
    static func pixels(_ image: CGImage) -> [UInt8] {
        let data = CGDataProviderCopyData(image.dataProvider)
        let base = CFDataGetBytePtr(data)!
        var out: [UInt8] = []
        out.reserveCapacity(image.width * image.height * 4)
        for y in 0..<image.height {
            out += UnsafeBufferPointer(start: base + y * image.bytesPerRow, count: image.width * 4)
        }
        return out
    }

    /// The mean absolute difference of the colour bytes (blue, green, red) of two pictures.
    static func meanError(_ a: [UInt8], _ b: [UInt8]) -> Double {
        var sum = 0, n = 0
        for i in stride(from: 0, to: min(a.count, b.count), by: 4) {
            for c in 0..<3 { sum += abs(Int(a[i + c]) - Int(b[i + c])) }
            n += 3
        }
        return Double(sum) / Double(max(1, n))
    }

    /// JPEG at 0.2 and 0.9 and PNG, to URLs: ffprobe reads each as what it is, at the picture's
    /// size; the better quality is the larger file, and its quantization tables are libjpeg's at
    /// quality 90 (0.2 gives quality 20's); no temporary file is left beside them.
    @Test func writesJPEGAtTwoQualitiesAndPNGToURLs() throws {
        let image = try picture()
        let low = folder.appendingPathComponent("low.jpg"), high = folder.appendingPathComponent("high.jpg")
        let png = folder.appendingPathComponent("picture.png")
        #expect(write(image, to: low, type: .jpeg, quality: 0.2))
        #expect(write(image, to: high, type: .jpeg, quality: 0.9))
        #expect(write(image, to: png, type: .png))
        for (url, codec) in [(low, "mjpeg"), (high, "mjpeg"), (png, "png")] {
            let stream = try #require(try MediaProbe(url.path).stream("video"))
            #expect(stream.codecName == codec)
            #expect((stream.width, stream.height) == (320, 240))
            // ffmpeg decodes the whole picture without complaint.
            #expect(try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", url.path, "-f", "null", "-"]).isEmpty)
        }
        #expect(try fileSize(high) > fileSize(low) * 2)
        // The first luma quantizer (DQT right after SOI and JFIF's APP0): libjpeg's 16 scaled.
        let highBytes = try [UInt8](Data(contentsOf: high)), lowBytes = try [UInt8](Data(contentsOf: low))
        #expect(Array(highBytes[20..<22]) == [0xFF, 0xDB])
        #expect(highBytes[25] == 3 && lowBytes[25] == 40)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(names == ["high.jpg", "low.jpg", "movie.mp4", "picture.png"])
    }

    /// Into an NSMutableData (passed as it is, as Apple code does) and a CFDataCreateMutable:
    /// the bytes are a JPEG and a PNG that ffprobe reads, and CFData's functions see them.
    @Test func writesIntoCFMutableData() throws {
        let image = try picture()
        let data = NSMutableData()
        let jpeg = try #require(CGImageDestinationCreateWithData(data, UTType.jpeg.identifier as CFString, 1, nil))
        CGImageDestinationAddImage(jpeg, image, [kCGImageDestinationLossyCompressionQuality: 0.85] as CFDictionary)
        #expect(CGImageDestinationFinalize(jpeg))
        let jpegData = data as Data
        #expect(jpegData.starts(with: [0xFF, 0xD8, 0xFF]) && jpegData.suffix(2) == Data([0xFF, 0xD9]))
        #expect(CFDataGetLength(data) == jpegData.count && CFDataGetBytePtr(data)[1] == 0xD8)

        let cfData: CFMutableData = CFDataCreateMutable(nil, 0)
        let png = try #require(CGImageDestinationCreateWithData(cfData, kUTTypePNG, 1, nil))
        CGImageDestinationAddImage(png, image, nil)
        #expect(CGImageDestinationFinalize(png))
        #expect((cfData as Data).starts(with: [0x89, 0x50, 0x4E, 0x47]))

        for (bytes, name, codec) in [(jpegData, "data.jpg", "mjpeg"), (cfData as Data, "data.png", "png")] {
            let url = folder.appendingPathComponent(name)
            try bytes.write(to: url)
            let stream = try #require(try MediaProbe(url.path).stream("video"))
            #expect(stream.codecName == codec && stream.width == 320 && stream.height == 240)
        }
        // A second Finalize, or one with no image, fails.
        #expect(!CGImageDestinationFinalize(png))
        let empty = try #require(CGImageDestinationCreateWithData(NSMutableData(), "public.png" as CFString, 1, nil))
        #expect(!CGImageDestinationFinalize(empty))
    }

    /// PNG is lossless: read back by CGImageSource (from the file and from the data) its pixels
    /// are the picture's, byte for byte; JPEG at 0.9 comes back within a small mean error, and
    /// ffmpeg decodes the same pixels from the PNG.
    @Test func pngRoundTripsExactlyAndJPEGClosely() throws {
        let image = try picture()
        let original = Self.pixels(image)
        let png = folder.appendingPathComponent("exact.png"), jpg = folder.appendingPathComponent("close.jpg")
        #expect(write(image, to: png, type: .png))
        #expect(write(image, to: jpg, type: .jpeg, quality: 0.9))

        let source = try #require(CGImageSourceCreateWithURL(png as CFURL, nil))
        #expect(CGImageSourceGetCount(source) == 1 && CGImageSourceGetType(source) == "public.png")
        let decoded = try #require(CGImageSourceCreateImageAtIndex(source, 0, nil))
        #expect((decoded.width, decoded.height) == (320, 240))
        #expect(Self.pixels(decoded) == original)

        let fromData = try #require(CGImageSourceCreateWithData(try Data(contentsOf: png) as CFData, nil))
        #expect(Self.pixels(try #require(CGImageSourceCreateImageAtIndex(fromData, 0, nil))) == original)

        // ffmpeg's own decoder agrees (its BGRA of the PNG, opaque).
        let raw = folder.appendingPathComponent("ffmpeg.bgra")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "bgra", raw.path])
        #expect(try [UInt8](Data(contentsOf: raw)) == original)

        let jpegSource = try #require(CGImageSourceCreateWithURL(jpg as CFURL, nil))
        #expect(CGImageSourceGetType(jpegSource) == UTType.jpeg.identifier)
        let lossy = try #require(CGImageSourceCreateImageAtIndex(jpegSource, 0, nil))
        let error = Self.meanError(Self.pixels(lossy), original)
        #expect(error > 0 && error < 3, "mean error \(error)")
    }

    /// Properties come from the header: size, type, and the orientation written with the picture
    /// (EXIF in the JPEG, eXIf in the PNG), which ffprobe ignores and ImageIO reads back;
    /// thumbnails fit the largest side and turn upright with the transform.
    @Test func propertiesOrientationAndThumbnails() throws {
        let image = try picture()
        for (name, type) in [("turned.jpg", UTType.jpeg), ("turned.png", UTType.png)] {
            let url = folder.appendingPathComponent(name)
            #expect(write(image, to: url, type: type, quality: 0.8, orientation: .right))
            #expect(try MediaProbe(url.path).stream("video")?.width == 320)
            let source = try #require(CGImageSourceCreateWithURL(url as CFURL, nil))
            let properties = try #require(CGImageSourceCopyPropertiesAtIndex(source, 0, nil) as? [CFString: Any])
            #expect(properties[kCGImagePropertyPixelWidth] as? Int == 320)
            #expect(properties[kCGImagePropertyPixelHeight] as? Int == 240)
            #expect(properties[kCGImagePropertyOrientation] as? UInt32 == CGImagePropertyOrientation.right.rawValue)
            #expect(CGImagePropertyOrientation(rawValue: properties[kCGImagePropertyOrientation] as? UInt32 ?? 1) == .right)
            #expect((properties[kCGImagePropertyTIFFDictionary] as? [CFString: Any])?[kCGImagePropertyTIFFOrientation] as? Int == 6)
            #expect(CGImageSourceCopyPropertiesAtIndex(source, 1, nil) == nil)

            // Without asking for one made from the picture, there is no thumbnail (the file holds none).
            #expect(CGImageSourceCreateThumbnailAtIndex(source, 0, [kCGImageSourceThumbnailMaxPixelSize: 100] as CFDictionary) == nil)
            let small = try #require(CGImageSourceCreateThumbnailAtIndex(source, 0, [
                kCGImageSourceCreateThumbnailFromImageAlways: true, kCGImageSourceThumbnailMaxPixelSize: 100,
            ] as CFDictionary))
            #expect((small.width, small.height) == (100, 75))
            let upright = try #require(CGImageSourceCreateThumbnailAtIndex(source, 0, [
                kCGImageSourceCreateThumbnailFromImageAlways: true, kCGImageSourceThumbnailMaxPixelSize: 100,
                kCGImageSourceCreateThumbnailWithTransform: true,
            ] as CFDictionary))
            #expect((upright.width, upright.height) == (75, 100))
            // Turned clockwise: the stored picture's bottom-left corner is shown top-left.
            let stored = Self.pixels(small), shown = Self.pixels(upright)
            #expect(Array(shown[0..<3]) == Array(stored[(74 * 100) * 4..<(74 * 100) * 4 + 3]))
        }
        // A picture written unturned says up.
        let plain = folder.appendingPathComponent("plain.jpg")
        #expect(write(image, to: plain, type: .jpeg))
        let properties = CGImageSourceCopyPropertiesAtIndex(try #require(CGImageSourceCreateWithURL(plain as CFURL, nil)), 0, nil)
        #expect(properties?[kCGImagePropertyOrientation] as? Int == 1)
    }

    /// The less common calls: file properties set on the destination, a largest size, an image
    /// added from a source (its orientation kept), a source's file properties, and CFData's
    /// other functions.
    @Test func destinationPropertiesAndImagesFromSources() throws {
        let image = try picture()
        // Quality from SetProperties, the largest side from the image's properties.
        let small = folder.appendingPathComponent("small.jpg")
        let destination = try #require(CGImageDestinationCreateWithURL(small as CFURL, kUTTypeJPEG, 1, nil))
        CGImageDestinationSetProperties(destination, [kCGImageDestinationLossyCompressionQuality: 0.2] as CFDictionary)
        CGImageDestinationAddImage(destination, image, [kCGImageDestinationImageMaxPixelSize: 160] as CFDictionary)
        CGImageDestinationAddImage(destination, image, nil)  // past its count: not added
        #expect(CGImageDestinationFinalize(destination))
        let stream = try #require(try MediaProbe(small.path).stream("video"))
        #expect((stream.codecName, stream.width, stream.height) == ("mjpeg", 160, 120))
        #expect(try [UInt8](Data(contentsOf: small))[25] == 40)  // quality 20's first luma quantizer

        // A turned JPEG copied into a PNG through its source: same pixels, same orientation.
        let turned = folder.appendingPathComponent("turned.jpg")
        #expect(write(image, to: turned, type: .jpeg, quality: 0.9, orientation: .left))
        let source = try #require(CGImageSourceCreateWithURL(turned as CFURL, nil))
        #expect(CGImageSourceGetPrimaryImageIndex(source) == 0)
        #expect(CGImageSourceCopyProperties(source, nil)?[kCGImagePropertyFileSize] as? Int == (try fileSize(turned)))
        let copy = NSMutableData()
        let png = try #require(CGImageDestinationCreateWithData(copy, kUTTypePNG, 1, nil))
        CGImageDestinationAddImageFromSource(png, source, 0, nil)
        #expect(CGImageDestinationFinalize(png))
        let copied = try #require(CGImageSourceCreateWithData(copy, nil))
        #expect(CGImageSourceCopyPropertiesAtIndex(copied, 0, nil)?[kCGImagePropertyOrientation] as? Int == 8)
        let a = try #require(CGImageSourceCreateImageAtIndex(source, 0, nil)), b = try #require(CGImageSourceCreateImageAtIndex(copied, 0, nil))
        #expect(Self.pixels(a) == Self.pixels(b))

        // CFData's functions on Foundation's data.
        let bytes: [UInt8] = [1, 2, 3]
        let made: CFData = CFDataCreate(kCFAllocatorDefault, bytes, 3)
        #expect(CFDataGetLength(made) == 3 && CFDataGetBytePtr(made)[2] == 3 && (made as Data) == Data(bytes))
        let growing: CFMutableData = CFDataCreateMutable(kCFAllocatorDefault, 0)
        CFDataAppendBytes(growing, bytes, 3)
        CFDataSetLength(growing, 5)
        CFDataGetMutableBytePtr(growing)[4] = 9
        #expect(growing as Data == Data([1, 2, 3, 0, 9]))
        #expect(CFDataGetBytePtr(NSData()) != nil && CFDataGetLength(nil) == 0)
    }

    /// A thumbnail service written for Apple's platforms (AppleCorpus/ThumbnailService.swift),
    /// compiled unchanged: its posters are a JPEG and a PNG of the size it asks for, which ffprobe
    /// reads; its in-memory PNG downsamples; a missing folder and a movie type are its errors.
    @Test func appleThumbnailServiceRuns() throws {
        let video = try movie()
        let service = ThumbnailService(maximumSide: 160, quality: 0.7)
        let jpeg = try service.savePoster(of: video, at: 0.5, to: folder.appendingPathComponent("poster.jpg"))
        #expect((jpeg.pixelWidth, jpeg.pixelHeight, jpeg.orientation, jpeg.typeIdentifier) == (160, 120, .up, "public.jpeg"))
        let probed = try #require(try MediaProbe(jpeg.url.path).stream("video"))
        #expect((probed.codecName, probed.width, probed.height) == ("mjpeg", 160, 120))
        let png = try service.savePoster(of: video, at: 0.5, to: folder.appendingPathComponent("poster.png"))
        #expect((png.pixelWidth, png.typeIdentifier) == (160, "public.png"))
        #expect(try MediaProbe(png.url.path).stream("video")?.codecName == "png")

        let data = try #require(service.pngData(of: try picture()))
        #expect(data.starts(with: [0x89, 0x50, 0x4E, 0x47]))
        let small = try #require(service.downsample(data, to: 80))
        #expect((small.width, small.height) == (80, 60))

        #expect(throws: ThumbnailError.self) {
            try service.savePoster(of: video, at: 0.5, to: folder.appendingPathComponent("nowhere/poster.jpg"))
        }
        #expect(throws: ThumbnailError.self) {
            try service.savePoster(of: video, at: 0.5, to: folder.appendingPathComponent("poster.mp4"))
        }
    }

    /// CGImage.cropping(to:): the pixels inside the rectangle (from the top-left corner, made
    /// integral), cut to the image; nil outside it. A square crop saves as a square thumbnail.
    @Test func croppingCutsThePixels() throws {
        let image = try picture()
        let square = try #require(image.cropping(to: CGRect(x: 40, y: 0, width: 240, height: 240)))
        #expect((square.width, square.height, square.bytesPerRow) == (240, 240, 960))
        let all = Self.pixels(image), cut = Self.pixels(square)
        for y in [0, 120, 239] {
            #expect(Array(cut[(y * 240) * 4..<(y * 240 + 240) * 4]) == Array(all[(y * 320 + 40) * 4..<(y * 320 + 280) * 4]))
        }
        let edge = try #require(image.cropping(to: CGRect(x: 300.5, y: 230.2, width: 100, height: 100)))
        #expect((edge.width, edge.height) == (20, 10))
        #expect(image.cropping(to: CGRect(x: 400, y: 0, width: 10, height: 10)) == nil)
        let url = folder.appendingPathComponent("square.jpg")
        #expect(write(square, to: url, type: .jpeg, quality: 0.8))
        #expect(try MediaProbe(url.path).stream("video")?.width == 240)
    }

    /// Finalize fails, returning false and leaving nothing, where the folder is missing or the
    /// name is a folder or a symbolic link; a file already there is replaced only by a complete
    /// new one. A named pipe is not opened as a source.
    @Test func failedFinalizeLeavesNoFile() throws {
        let image = try picture()
        let missing = folder.appendingPathComponent("missing/thumb.jpg")
        #expect(!write(image, to: missing, type: .jpeg))
        #expect(!FileManager.default.fileExists(atPath: missing.deletingLastPathComponent().path))

        let directory = folder.appendingPathComponent("taken.jpg")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        #expect(!write(image, to: directory, type: .jpeg))
        var isFolder: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: directory.path, isDirectory: &isFolder) && isFolder.boolValue)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)

        // An existing file: a failed Finalize (no image) leaves it as it was; a good one replaces it.
        let existing = folder.appendingPathComponent("existing.png")
        try Data("old".utf8).write(to: existing)
        let nothing = try #require(CGImageDestinationCreateWithURL(existing as CFURL, UTType.png.identifier as CFString, 1, nil))
        #expect(!CGImageDestinationFinalize(nothing))
        #expect(try Data(contentsOf: existing) == Data("old".utf8))
        #expect(write(image, to: existing, type: .png))
        #expect(try MediaProbe(existing.path).stream("video")?.codecName == "png")

        // A symbolic link at the name is not written through (GraphKit's rule for outputs).
        let target = folder.appendingPathComponent("elsewhere.jpg"), link = folder.appendingPathComponent("link.jpg")
        try Data("kept".utf8).write(to: target)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        #expect(!write(image, to: link, type: .jpeg))
        #expect(try Data(contentsOf: target) == Data("kept".utf8))

        // A named pipe is not a picture to read, and opening it does not wait for a writer.
        let pipe = folder.appendingPathComponent("pipe.png")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        #expect(CGImageSourceCreateWithURL(pipe as CFURL, nil) == nil)

        let left = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(left == ["elsewhere.jpg", "existing.png", "link.jpg", "movie.mp4", "pipe.png", "taken.jpg"], "left behind: \(left)")
    }

    /// Types: a destination writes JPEG and PNG only (by any of Apple's spellings of their
    /// identifiers), and says so; a source reads HEIC and AVIF too.
    @Test func destinationTypes() throws {
        #expect(CGImageDestinationCopyTypeIdentifiers() as? [String] == ["public.jpeg", "public.png"])
        #expect(CGImageSourceCopyTypeIdentifiers() as! [String] == ["public.jpeg", "public.png", "public.heic", "public.avif", "org.webmproject.webp", "com.compuserve.gif", "public.tiff"])
        let url = folder.appendingPathComponent("x.heic")
        #expect(CGImageDestinationCreateWithURL(url as CFURL, UTType.heic.identifier as CFString, 1, nil) == nil)
        #expect(CGImageDestinationCreateWithURL(URL(string: "https://example.com/a.jpg")! as CFURL, kUTTypeJPEG, 1, nil) == nil)
        #expect(CGImageDestinationCreateWithURL(url as CFURL, kUTTypeJPEG, 1, nil) != nil)
        #expect(CGImageDestinationCreateWithURL(url as CFURL, "public.png" as CFString, 1, nil) != nil)
    }

    /// A text file is a source of no image; a truncated JPEG gives no crash (what its data holds,
    /// or no image when its header is cut); a 66-byte PNG claiming 100000 × 100000 is refused at
    /// once, before anything decodes it, and so is a picture within the size limit that its bytes
    /// cannot hold.
    @Test func sourcesRefuseWhatIsNotAPicture() throws {
        let text = folder.appendingPathComponent("notes.jpg")
        try Data("these are not the pixels you are looking for\n".utf8).write(to: text)
        let notAnImage = try #require(CGImageSourceCreateWithURL(text as CFURL, nil))
        #expect(CGImageSourceGetCount(notAnImage) == 0 && CGImageSourceGetType(notAnImage) == nil)
        #expect(CGImageSourceGetStatus(notAnImage) == .statusUnknownType)
        #expect(CGImageSourceCreateImageAtIndex(notAnImage, 0, nil) == nil)
        #expect(CGImageSourceCopyPropertiesAtIndex(notAnImage, 0, nil) == nil)
        #expect(CGImageSourceCreateWithURL(folder.appendingPathComponent("absent.png") as CFURL, nil) == nil)

        let image = try picture()
        let whole = NSMutableData()
        let destination = try #require(CGImageDestinationCreateWithData(whole, kUTTypeJPEG, 1, nil))
        CGImageDestinationAddImage(destination, image, nil)
        #expect(CGImageDestinationFinalize(destination))
        // Cut in its data: the header is whole, and the decoder gives what it has, at the
        // header's size (as ImageIO gives a partial picture) on GStreamer 1.22; 1.26's jpegdec
        // gives nothing for it. Either way no crash, no wait, and never a picture of another size.
        let truncated = (whole as Data).prefix(whole.length / 2)
        let cut = try #require(CGImageSourceCreateWithData(truncated as CFData, nil))
        #expect(CGImageSourceGetCount(cut) == 1)
        if let partial = CGImageSourceCreateImageAtIndex(cut, 0, nil) {
            #expect((partial.width, partial.height) == (320, 240))
        }
        // Cut before its frame header: no picture, and nothing decoded.
        let headless = try #require(CGImageSourceCreateWithData((whole as Data).prefix(100) as CFData, nil))
        #expect(CGImageSourceGetCount(headless) == 0 && CGImageSourceGetStatus(headless) == .statusInvalidData)
        #expect(CGImageSourceCreateImageAtIndex(headless, 0, nil) == nil)

        // A PNG signature, an IHDR of 100000 × 100000 8-bit RGBA, a tiny IDAT, IEND.
        var bomb: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let typed = Array(type.utf8) + data
            var crc: UInt32 = 0xFFFF_FFFF
            for byte in typed {
                crc ^= UInt32(byte)
                for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
            }
            crc = ~crc
            func be(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
            return be(UInt32(data.count)) + typed + be(crc)
        }
        bomb += chunk("IHDR", [0x00, 0x01, 0x86, 0xA0, 0x00, 0x01, 0x86, 0xA0, 8, 6, 0, 0, 0])
        bomb += chunk("IDAT", [0x78, 0x9C, 0x63, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01])
        bomb += chunk("IEND", [])
        let bombURL = folder.appendingPathComponent("bomb.png")
        try Data(bomb).write(to: bombURL)
        let started = ContinuousClock.now
        for source in [CGImageSourceCreateWithURL(bombURL as CFURL, nil), CGImageSourceCreateWithData(Data(bomb) as CFData, nil)] {
            let source = try #require(source)
            #expect(CGImageSourceGetCount(source) == 0)
            #expect(CGImageSourceGetStatus(source) == .statusInvalidData)
            #expect(CGImageSourceCreateImageAtIndex(source, 0, nil) == nil)
            #expect(CGImageSourceCreateThumbnailAtIndex(source, 0, [kCGImageSourceCreateThumbnailFromImageAlways: true] as CFDictionary) == nil)
        }
        #expect(ContinuousClock.now - started < .seconds(1))

        // Within the size limit but more than the bytes can hold: a 16000 × 16000 PNG in 70
        // bytes (deflate shrinks 1032 to 1 at most), and our JPEG's frame header patched to
        // 16000 × 16000 (at least a bit a block: 500 KB). Both refused before decoding.
        var claim = bomb
        claim.replaceSubrange(8..<33, with: chunk("IHDR", [0, 0, 0x3E, 0x80, 0, 0, 0x3E, 0x80, 8, 6, 0, 0, 0]))
        var patched = [UInt8](whole as Data)
        let sof = try #require((0..<patched.count - 1).first { patched[$0] == 0xFF && patched[$0 + 1] == 0xC0 })
        patched.replaceSubrange(sof + 5..<sof + 9, with: [0x3E, 0x80, 0x3E, 0x80])
        for bytes in [claim, patched] {
            let source = try #require(CGImageSourceCreateWithData(Data(bytes) as CFData, nil))
            #expect(CGImageSourceGetCount(source) == 0 && CGImageSourceGetStatus(source) == .statusInvalidData)
            #expect(CGImageSourceCreateImageAtIndex(source, 0, nil) == nil)
        }
        // The same JPEG claiming 640 × 480 is within what its bytes can hold: read, decoded.
        patched.replaceSubrange(sof + 5..<sof + 9, with: [0x01, 0xE0, 0x02, 0x80])
        let plausible = try #require(CGImageSourceCreateWithData(Data(patched) as CFData, nil))
        #expect(CGImageSourceGetCount(plausible) == 1)
    }
}
