import Foundation
import GraphKit
import GraphKitTesting
import Testing
import TestSupport

/// `graphctl probe` of HEIC and AVIF photos: each image with its coding, size, orientation,
/// alpha, grid, thumbnails, auxiliary images and metadata blocks, read from the file's meta box
/// (heif-enc makes them, and HEIFBuilder puts a turned grid together around its coded pictures);
/// a damaged one exits 66 naming the fault.
@Suite(.media) struct ProbePhotoTests {
    static func object(_ v: JSONValue?) -> [String: JSONValue] {
        guard case .object(let members)? = v else { return [:] }
        return Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    static func pattern(_ folder: URL, _ name: String, _ size: String, alpha: Bool = false) throws -> URL {
        let png = folder.appendingPathComponent(name + ".png")
        let filter = alpha ? ["-vf", "format=rgba,geq=r='r(X,Y)':g='g(X,Y)':b='b(X,Y)':a='255*X/W'"] : []
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=\(size)", "-frames:v", "1"] + filter + [png.path])
        return png
    }

    @Test func aHEICWithAThumbnailAndAnAVIFWithAlpha() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let heic = folder.appendingPathComponent("p.heic"), avif = folder.appendingPathComponent("a.avif")
        try TestMedia.runTool("heif-enc", ["-q", "80", "-t", "128", "-o", heic.path, try Self.pattern(folder, "p", "640x480").path])
        try TestMedia.runTool("heif-enc", ["-A", "-q", "80", "-o", avif.path, try Self.pattern(folder, "a", "128x64", alpha: true).path])

        let r = try Graphctl.run("probe", "--json", heic.path)
        #expect(r.status == 0, "\(r.stderr)")
        let json = Self.object(try JSONParser.parse(r.stdout))
        #expect(json["container"] == .string("heif") && json["brand"] == .string("heic"))
        guard case .array(let images)? = json["images"], images.count == 1 else { Issue.record("\(r.stdout)"); return }
        let image = Self.object(images[0])
        #expect(image["codec"] == .string("hevc") && image["width"] == .number(640) && image["height"] == .number(480))
        #expect(image["orientation"] == .number(1) && image["alpha"] == .bool(false) && image["primary"] == .bool(true))
        #expect(image["thumbnails"] == .array([.object([("item", .number(2)), ("width", .number(128)), ("height", .number(96))])]))
        let text = try Graphctl.run("probe", heic.path).stdout
        #expect(text.contains("heif (heic), 1 image") && text.contains("hevc, 640x480") && text.contains("thumbnail 128x96"), "\(text)")

        let a = Self.object(try JSONParser.parse(try Graphctl.run("probe", "--json", avif.path).stdout))
        guard case .array(let avifImages)? = a["images"] else { Issue.record("no images"); return }
        let alpha = Self.object(avifImages.first)
        #expect(alpha["codec"] == .string("av1") && alpha["alpha"] == .bool(true))
        guard case .array(let auxiliary)? = alpha["auxiliary"] else { Issue.record("no auxiliary"); return }
        #expect(Self.object(auxiliary.first)["type"] == .string("urn:mpeg:mpegB:cicp:systems:auxiliary:alpha"))
    }

    /// An iPhone-shaped grid: 2x2 tiles turned a quarter (irot 3: EXIF 6), with Exif metadata
    /// (a date, a place, Apple's maker note with a Live Photo's identifier).
    @Test func aTurnedGridIsOneImageOfItsTiles() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tile = try HEIFBuilder.encoded(png: try Self.pattern(folder, "t", "64x64"), in: folder)
        var items = [HEIFBuilder.Item(id: 1, type: "grid", data: HEIFBuilder.gridData(rows: 2, columns: 2, width: 128, height: 128),
                                      properties: [HEIFBuilder.ispe(128, 128), HEIFBuilder.irot(3)], references: [("dimg", [2, 3, 4, 5])])]
        for id in UInt32(2)...5 { items.append(.init(id: id, type: "hvc1", hidden: true, data: tile.data, properties: [tile.configuration, HEIFBuilder.ispe(64, 64)])) }
        var exif = EXIFBuilder(little: true)
        exif.primary = [(0x0110, .ascii("iPhone 15 Pro"))]
        exif.exif = [(0x9003, .ascii("2024:05:01 12:34:56"))]
        exif.gps = [(1, .ascii("S")), (2, .rationals([(33, 1), (51, 1), (3240, 100)])), (3, .ascii("E")), (4, .rationals([(151, 1), (12, 1), (0, 1)]))]
        exif.makerApple = [(17, .ascii("7C1B2A4E-1111-4C4C-9D9D-0123456789AB"))]
        let exifItem = [0, 0, 0, 0] + exif.bytes()
        items.append(.init(id: 6, type: "Exif", data: exifItem, references: [("cdsc", [1])]))
        let grid = folder.appendingPathComponent("grid.heic")
        try Data(HEIFBuilder(primary: 1, items: items).bytes()).write(to: grid)
        let r = try Graphctl.run("probe", "--json", grid.path)
        #expect(r.status == 0, "\(r.stderr)")
        guard case .array(let images)? = Self.object(try JSONParser.parse(r.stdout))["images"], images.count == 1 else { Issue.record("\(r.stdout)"); return }
        let image = Self.object(images[0])
        #expect(image["codec"] == .string("hevc") && image["width"] == .number(128) && image["orientation"] == .number(6))
        #expect(Self.object(image["grid"])["tiles"] == .number(4) && Self.object(image["grid"])["rows"] == .number(2))
        guard case .array(let metadata)? = image["metadata"] else { Issue.record("no metadata"); return }
        #expect(Self.object(metadata.first)["type"] == .string("Exif") && Self.object(metadata.first)["size"] == .number(Double(exifItem.count)))
        // What the EXIF says: the camera, the date, the place (south negative), the Live Photo.
        let said = Self.object(image["exif"])
        #expect(said["model"] == .string("iPhone 15 Pro") && said["dateTimeOriginal"] == .string("2024:05:01 12:34:56"))
        #expect(said["contentIdentifier"] == .string("7C1B2A4E-1111-4C4C-9D9D-0123456789AB"))
        let gps = Self.object(said["gps"])
        guard case .number(let latitude)? = gps["latitude"], case .number(let longitude)? = gps["longitude"] else { Issue.record("\(said)"); return }
        #expect(abs(latitude + 33.859) < 1e-6 && abs(longitude - 151.2) < 1e-6)
    }

    /// HDR gain maps, Apple's (an auxiliary image, its headroom tags in the maker note) and ISO
    /// 21496-1's (a tmap item over the image and its gain map): found and described, and the
    /// tmap, an alternative rendition, not counted as an image of its own.
    @Test func gainMapsAreFoundAndDescribed() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let picture = try HEIFBuilder.encoded(png: try Self.pattern(folder, "base", "64x64"), in: folder)
        let map = try HEIFBuilder.encoded(png: try Self.pattern(folder, "map", "64x64"), in: folder)
        func probe(_ items: [HEIFBuilder.Item], _ name: String) throws -> [String: JSONValue] {
            let file = folder.appendingPathComponent(name)
            try Data(HEIFBuilder(primary: 1, items: items).bytes()).write(to: file)
            let r = try Graphctl.run("probe", "--json", file.path)
            #expect(r.status == 0, "\(r.stderr)")
            guard case .array(let images)? = Self.object(try JSONParser.parse(r.stdout))["images"] else { return [:] }
            #expect(images.count == 1, "\(r.stdout)")
            return Self.object(Self.object(images.first)["gainMap"])
        }
        let base = HEIFBuilder.Item(id: 1, type: "hvc1", data: picture.data, properties: [picture.configuration, HEIFBuilder.ispe(64, 64)])
        var exif = EXIFBuilder(little: false)
        exif.makerApple = [(33, .rationals([(101, 100)])), (48, .rationals([(15, 1000)]))]
        let apple = try probe([base,
                               .init(id: 2, type: "hvc1", hidden: true, data: map.data,
                                     properties: [map.configuration, HEIFBuilder.ispe(64, 64), HEIFBuilder.auxC(HEIFFile.appleGainMapType)],
                                     references: [("auxl", [1])]),
                               .init(id: 3, type: "Exif", data: [0, 0, 0, 0] + exif.bytes(), references: [("cdsc", [1])])], "apple.heic")
        #expect(apple["kind"] == .string("apple") && apple["item"] == .number(2) && apple["width"] == .number(64))
        #expect(Self.object(apple["makerApple"])["33"] == .number(1.01) && Self.object(apple["makerApple"])["48"] == .number(0.015))

        // ISO 21496-1: version 0, headrooms 0 and 23/10 (log2), one channel's fractions after.
        var metadata: [UInt8] = [0, 0, 0, 0, 0, 0]
        for v: UInt32 in [0, 1, 23, 10] + [0, 1, 23, 10, 1, 1, 1, 64, 1, 64] { metadata += HEIFBuilder.be32(v) }
        let iso = try probe([base,
                             .init(id: 2, type: "hvc1", hidden: true, data: map.data, properties: [map.configuration, HEIFBuilder.ispe(64, 64)]),
                             .init(id: 3, type: "tmap", data: metadata, properties: [HEIFBuilder.ispe(64, 64)], references: [("dimg", [1, 2])])],
                            "iso.heic")
        #expect(iso["kind"] == .string("iso21496-1") && iso["toneMapItem"] == .number(3) && iso["item"] == .number(2))
        #expect(iso["baseHeadroom"] == .number(0) && iso["alternateHeadroom"] == .number(2.3))
    }

    @Test func aDamagedHEIFExits66NamingTheFault() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let heic = folder.appendingPathComponent("p.heic")
        try TestMedia.runTool("heif-enc", ["-q", "50", "-o", heic.path, try Self.pattern(folder, "p", "64x48").path])
        let cut = folder.appendingPathComponent("cut.heic")
        try Data(try Data(contentsOf: heic).prefix(200)).write(to: cut)
        let r = try Graphctl.run("probe", cut.path)
        #expect(r.status == 66)
        #expect(r.stderr.contains("cut.heic") && r.stderr.contains("damaged HEIF file") && r.stderr.contains("meta box"), "\(r.stderr)")
    }
}
