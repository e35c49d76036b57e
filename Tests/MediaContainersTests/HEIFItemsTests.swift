import MediaContainers
import Testing
import TestSupport

/// HEIFFile: a HEIF file's items described from its meta box, before any decoder sees it.
@Suite struct HEIFItemsTests {
    /// An iPhone-shaped file: a grid of four hidden tiles, turned by irot, with a thumbnail, an
    /// alpha plane and an Exif block, as libheif and Apple's writers lay them out.
    static func phoneShaped(properties gridProperties: [[UInt8]] = [HEIFBuilder.ispe(128, 96), HEIFBuilder.irot(3)]) -> HEIFBuilder {
        let tile = [0x00, 0x01, 0x02] as [UInt8]
        var items = [HEIFBuilder.Item(id: 1, type: "grid", data: HEIFBuilder.gridData(rows: 2, columns: 2, width: 128, height: 96),
                                      properties: gridProperties, references: [("dimg", [2, 3, 4, 5])])]
        for id in UInt32(2)...5 { items.append(.init(id: id, type: "hvc1", hidden: true, data: tile, properties: [HEIFBuilder.ispe(64, 48)])) }
        items.append(.init(id: 6, type: "hvc1", data: tile, properties: [HEIFBuilder.ispe(32, 24)], references: [("thmb", [1])]))
        items.append(.init(id: 7, type: "hvc1", hidden: true, data: tile,
                           properties: [HEIFBuilder.ispe(128, 96), HEIFBuilder.auxC("urn:mpeg:hevc:2015:auxid:1")], references: [("auxl", [1])]))
        items.append(.init(id: 8, type: "Exif", data: [0, 0, 0, 6] + Array("Exif".utf8) + [0, 0], references: [("cdsc", [1])]))
        return HEIFBuilder(primary: 1, items: items)
    }

    @Test func anIPhoneShapedFileIsDescribedItemByItem() throws {
        let bytes = Self.phoneShaped().bytes()
        let file = try HEIFFile.read(MemoryBytes(bytes))
        #expect(HEIFFile.isHEIF(Array(bytes.prefix(32))))
        #expect(file.majorBrand == "heic")
        let primary = try #require(file.primary)
        #expect(primary.type == "grid" && primary.width == 128 && primary.height == 96 && primary.orientation == 6)
        #expect(primary.references["dimg"] == [2, 3, 4, 5])
        // One image to show: the tiles, the thumbnail and the alpha plane are parts of it.
        #expect(file.topLevelImages.map(\.id) == [1])
        #expect(file.items(referring: "thmb", to: 1).map(\.id) == [6])
        #expect(file.items(referring: "auxl", to: 1).first?.auxiliaryType == "urn:mpeg:hevc:2015:auxid:1")
        let exif = try #require(file.items(referring: "cdsc", to: 1).first)
        #expect(exif.type == "Exif" && !exif.isImage)
        #expect(try file.data(of: exif, in: MemoryBytes(bytes)) == [0, 0, 0, 6] + Array("Exif".utf8) + [0, 0])
        #expect(try file.data(of: try #require(file.item(1)), in: MemoryBytes(bytes)) == [0, 0, 1, 1, 0, 128, 0, 96])
    }

    /// HEIF's irot (anticlockwise quarter turns) and imir (axis 0: top-bottom, 1: left-right),
    /// applied in the order the file lists them, against EXIF's eight orientations, each defined
    /// here on a picture's pixels as the EXIF standard draws them.
    @Test(arguments: [[], ["r1"], ["r2"], ["r3"], ["m0"], ["m1"], ["r1", "m0"], ["r1", "m1"], ["r3", "m0"],
                      ["m0", "r1"], ["m1", "r3"], ["r2", "m1"], ["m0", "m1"], ["r1", "r1", "m0"]])
    func irotAndImirBecomeTheEXIFOrientationThatShowsTheSamePicture(_ steps: [String]) throws {
        let stored = [[1, 2, 3], [4, 5, 6]]
        var shown = stored
        var properties = [HEIFBuilder.ispe(3, 2)]
        for step in steps {
            let n = Int(step.dropFirst())!
            if step.hasPrefix("r") {
                for _ in 0..<n { shown = Self.turnedAnticlockwise(shown) }
                properties.append(HEIFBuilder.irot(n))
            } else {
                shown = n == 0 ? shown.reversed() : shown.map { $0.reversed() }
                properties.append(HEIFBuilder.imir(axis: n))
            }
        }
        let file = try HEIFFile.read(MemoryBytes(HEIFBuilder(primary: 1, items: [.init(id: 1, type: "hvc1", data: [0], properties: properties)]).bytes()))
        let orientation = try #require(file.primary?.orientation)
        #expect(Self.upright(stored, exif: orientation) == shown, "\(steps) gave EXIF \(orientation)")
    }

    /// clap: the part shown, in stored coordinates, whether listed before a turn (as MIAF
    /// orders them) or after one (then in the turned picture's coordinates).
    @Test func theCleanApertureIsThePartShownInStoredCoordinates() throws {
        func read(_ properties: [[UInt8]]) throws -> HEIFFile.Rect? {
            try HEIFFile.read(MemoryBytes(HEIFBuilder(primary: 1, items: [.init(id: 1, type: "hvc1", data: [0], properties: properties)]).bytes())).primary?.cleanAperture
        }
        // libheif 1.19 codes 80 × 32 as 80 × 64 and crops the bottom.
        #expect(try read([HEIFBuilder.ispe(80, 64), HEIFBuilder.clap(width: 80, height: 32, x: 0, y: 0, storedWidth: 80, storedHeight: 64)])
                == HEIFFile.Rect(x: 0, y: 0, width: 80, height: 32))
        #expect(try read([HEIFBuilder.ispe(100, 60), HEIFBuilder.clap(width: 50, height: 20, x: 30, y: 10, storedWidth: 100, storedHeight: 60),
                          HEIFBuilder.irot(1)]) == HEIFFile.Rect(x: 30, y: 10, width: 50, height: 20))
        // After a quarter turn anticlockwise the picture is 60 × 100; its top-left 20 × 50
        // is the stored picture's top-right 50 × 20.
        #expect(try read([HEIFBuilder.ispe(100, 60), HEIFBuilder.irot(1),
                          HEIFBuilder.clap(width: 20, height: 50, x: 0, y: 0, storedWidth: 60, storedHeight: 100)])
                == HEIFFile.Rect(x: 50, y: 0, width: 50, height: 20))
        // A crop outside the picture is refused by name.
        #expect(throws: ContainerError.self) {
            try read([HEIFBuilder.ispe(80, 64), HEIFBuilder.clap(width: 90, height: 32, x: 0, y: 0, storedWidth: 80, storedHeight: 64)])
        }
    }

    static func turnedAnticlockwise(_ m: [[Int]]) -> [[Int]] {
        let columns = m[0].count
        return (0..<columns).map { c in m.map { $0[columns - 1 - c] } }
    }

    static func transposed(_ m: [[Int]]) -> [[Int]] { (0..<m[0].count).map { c in m.map { $0[c] } } }

    /// The picture as EXIF's `orientation` says to show it.
    static func upright(_ m: [[Int]], exif orientation: Int) -> [[Int]] {
        let half = turnedAnticlockwise(turnedAnticlockwise(m))
        switch orientation {
        case 2: return m.map { $0.reversed() }
        case 3: return half
        case 4: return m.reversed()
        case 5: return transposed(m)
        case 6: return turnedAnticlockwise(half)  // a quarter turn clockwise
        case 7: return turnedAnticlockwise(turnedAnticlockwise(transposed(m)))
        case 8: return turnedAnticlockwise(m)
        default: return m
        }
    }

    @Test func claimsTheBytesCannotHoldAreRefusedByName() throws {
        // An item list claiming a billion items in a few bytes.
        var bytes = HEIFBuilder(primary: 1, items: [.init(id: 1, type: "hvc1", data: [0], properties: [HEIFBuilder.ispe(8, 8)])]).bytes()
        let iinf = try #require(bytes.firstRange(of: Array("iinf".utf8)))
        bytes.replaceSubrange((iinf.upperBound + 4)..<(iinf.upperBound + 6), with: [0xFF, 0xFF])
        #expect(throws: ContainerError.self) { try HEIFFile.read(MemoryBytes(bytes)) }

        // An item whose bytes lie past the file's end.
        var file = HEIFBuilder(primary: 1, items: [.init(id: 1, type: "hvc1", data: [1, 2, 3], properties: [HEIFBuilder.ispe(8, 8)])]).bytes()
        file.removeLast(2)
        let parsed = try HEIFFile.read(MemoryBytes(file))
        let error = try #require(throws: ContainerError.self) { try parsed.data(of: parsed.primary!, in: MemoryBytes(file)) }
        #expect(error.reason.contains("past the"))

        // No primary item in the list; not a HEIF brand; no meta box.
        let noPrimary = HEIFBuilder(primary: 9, items: [.init(id: 1, type: "hvc1", data: [0])]).bytes()
        #expect(throws: ContainerError.self) { try HEIFFile.read(MemoryBytes(noPrimary)) }
        var mp4 = HEIFBuilder(primary: 1, items: [.init(id: 1, type: "hvc1", data: [0])])
        mp4.brands = ["isom", "mp41"]
        #expect(throws: ContainerError.self) { try HEIFFile.read(MemoryBytes(mp4.bytes())) }
        #expect(!HEIFFile.isHEIF(Array(mp4.bytes().prefix(32))))
    }

    /// Every byte of the meta box damaged in turn, and random runs of damage: the reader throws
    /// or describes, it never traps, and what it describes stays within the file.
    @Test func damageAnywhereInTheMetaBoxNeverTraps() throws {
        let bytes = Self.phoneShaped().bytes()
        var random = SplitMix(seed: 72)
        var described = 0
        for round in 0..<3_000 {
            var damaged = bytes
            if round < bytes.count {
                damaged[round] ^= 0xFF
            } else {
                for _ in 0..<Int(random.next() % 6 + 1) { damaged[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next()) }
            }
            guard let file = try? HEIFFile.read(MemoryBytes(damaged)) else { continue }
            described += 1
            #expect(file.items.count <= 8)
            for item in file.items { _ = try? file.data(of: item, in: MemoryBytes(damaged)) }
            _ = file.topLevelImages
        }
        #expect(described > 0)
    }
}
