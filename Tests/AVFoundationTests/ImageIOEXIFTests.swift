import Foundation
import GraphKitTesting
import ImageIO
import Testing
import TestSupport

/// A photo's EXIF in ImageIO's properties as Apple gives it ({TIFF}, {Exif}, {GPS},
/// {MakerApple}), from a JPEG whose tags exiftool wrote, from the HEIC heif-enc made of it (its
/// Exif item), and from Apple's maker note (written by the test: exiftool does not write it);
/// each value checked against exiftool's own reading.
@Suite(.media, .timeLimit(.minutes(5))) struct ImageIOEXIFTests {
    static let tags = ["-Make=Apple", "-Model=iPhone 15 Pro", "-Orientation#=6", "-DateTimeOriginal=2024:05:01 12:34:56",
                       "-OffsetTimeOriginal=+02:00", "-SubSecTimeOriginal=123", "-ExposureTime=0.008", "-FNumber=1.78", "-ISO=64",
                       "-FocalLength=6.86", "-LensModel=iPhone 15 Pro back camera 6.86mm f/1.78", "-GPSLatitude=48.8584",
                       "-GPSLatitudeRef=N", "-GPSLongitude=2.2945", "-GPSLongitudeRef=W", "-GPSAltitude=35.2", "-GPSAltitudeRef=0",
                       "-GPSDateStamp=2024:05:01", "-GPSTimeStamp=10:34:56"]

    static func properties(_ url: URL) throws -> [String: Any] {
        let source = try #require(CGImageSourceCreateWithURL(url as CFURL, nil))
        return try #require(CGImageSourceCopyPropertiesAtIndex(source, 0, nil) as? [String: Any])
    }

    static func exiftool(_ url: URL) throws -> [String: Any] {
        let json = try TestMedia.runTool("exiftool", ["-json", "-n", "-EXIF:all", url.path])
        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]]
        return try #require(parsed?.first)
    }

    static func checkAgainstExiftool(_ p: [String: Any], _ e: [String: Any]) throws {
        let tiff = try #require(p[kCGImagePropertyTIFFDictionary as String] as? [String: Any])
        let exif = try #require(p[kCGImagePropertyExifDictionary as String] as? [String: Any])
        let gps = try #require(p[kCGImagePropertyGPSDictionary as String] as? [String: Any])
        #expect(tiff[kCGImagePropertyTIFFMake as String] as? String == e["Make"] as? String)
        #expect(tiff[kCGImagePropertyTIFFModel as String] as? String == e["Model"] as? String)
        #expect(tiff[kCGImagePropertyTIFFOrientation as String] as? Int == e["Orientation"] as? Int)
        #expect(exif[kCGImagePropertyExifDateTimeOriginal as String] as? String == e["DateTimeOriginal"] as? String)
        #expect(exif[kCGImagePropertyExifOffsetTimeOriginal as String] as? String == e["OffsetTimeOriginal"] as? String)
        #expect(exif[kCGImagePropertyExifSubsecTimeOriginal as String] as? String == "123")
        #expect(exif[kCGImagePropertyExifISOSpeedRatings as String] as? [Int] == [try #require(e["ISO"] as? Int)])
        #expect(exif[kCGImagePropertyExifVersion as String] as? [Int] == [2, 3, 2])
        #expect(exif[kCGImagePropertyExifLensModel as String] as? String == e["LensModel"] as? String)
        for (key, theirs) in [(kCGImagePropertyExifExposureTime, "ExposureTime"), (kCGImagePropertyExifFNumber, "FNumber"),
                              (kCGImagePropertyExifFocalLength, "FocalLength")] {
            let ours = try #require(exif[key as String] as? Double, "\(key)"), expected = try #require(e[theirs] as? Double)
            #expect(abs(ours - expected) < 1e-6, "\(key): \(ours) against \(expected)")
        }
        // GPS as Apple gives it: degrees unsigned, with their references.
        #expect(gps[kCGImagePropertyGPSLatitudeRef as String] as? String == "N")
        #expect(gps[kCGImagePropertyGPSLongitudeRef as String] as? String == "W")
        let latitude = try #require(gps[kCGImagePropertyGPSLatitude as String] as? Double)
        let longitude = try #require(gps[kCGImagePropertyGPSLongitude as String] as? Double)
        #expect(abs(latitude - (try #require(e["GPSLatitude"] as? Double))) < 1e-4)
        #expect(abs(longitude - abs(try #require(e["GPSLongitude"] as? Double))) < 1e-4)
        #expect(abs((gps[kCGImagePropertyGPSAltitude as String] as? Double ?? 0) - 35.2) < 1e-6)
        #expect(gps[kCGImagePropertyGPSAltitudeRef as String] as? Int == 0)
        #expect(gps[kCGImagePropertyGPSDateStamp as String] as? String == "2024:05:01")
        #expect(gps[kCGImagePropertyGPSTimeStamp as String] as? String == "10:34:56")
    }

    @Test func aJPEGsAndItsHEICsEXIFAreAsExiftoolReadsThem() throws {
        let folder = try TestMedia.temporaryFolder()
        let jpeg = folder.appendingPathComponent("photo.jpg")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240", "-frames:v", "1", jpeg.path])
        try TestMedia.runTool("exiftool", ["-q", "-overwrite_original"] + Self.tags + [jpeg.path])
        let p = try Self.properties(jpeg)
        try Self.checkAgainstExiftool(p, try Self.exiftool(jpeg))
        #expect(p[kCGImagePropertyOrientation as String] as? Int == 6)

        // heif-enc keeps the JPEG's EXIF as the HEIC's Exif item.
        let heic = folder.appendingPathComponent("photo.heic")
        try TestMedia.runTool("heif-enc", ["-q", "60", "-o", heic.path, jpeg.path])
        try Self.checkAgainstExiftool(try Self.properties(heic), try Self.exiftool(heic))
    }

    /// Apple's maker note: its tags under {MakerApple} by number, the Live Photo's content
    /// identifier (17) among them.
    @Test func applesMakerNoteGivesMakerApple() throws {
        let folder = try TestMedia.temporaryFolder()
        let plain = folder.appendingPathComponent("plain.jpg")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x48", "-frames:v", "1", plain.path])
        var exif = EXIFBuilder(little: false)
        exif.primary = [(0x010F, .ascii("Apple"))]
        exif.exif = [(0x9003, .ascii("2024:05:01 12:34:56"))]
        exif.makerApple = [(17, .ascii("7C1B2A4E-1111-4C4C-9D9D-0123456789AB")), (33, .rationals([(101, 100)])), (48, .rationals([(15, 100)]))]
        var bytes = [UInt8](try Data(contentsOf: plain))
        bytes.insert(contentsOf: EXIFBuilder.jpegSegment(exif.bytes()), at: 2)
        let jpeg = folder.appendingPathComponent("apple.jpg")
        try Data(bytes).write(to: jpeg)
        let apple = try #require(try Self.properties(jpeg)[kCGImagePropertyMakerAppleDictionary as String] as? [String: Any])
        #expect(apple["17"] as? String == "7C1B2A4E-1111-4C4C-9D9D-0123456789AB")
        #expect(apple["33"] as? Double == 1.01 && apple["48"] as? Double == 0.15)
        // exiftool reads the same note the same way.
        let e = try TestMedia.runTool("exiftool", ["-json", "-n", "-MakerNotes:all", jpeg.path])
        #expect(e.contains("7C1B2A4E-1111-4C4C-9D9D-0123456789AB"), "\(e)")
    }
}
