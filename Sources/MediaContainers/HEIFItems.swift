/// What a HEIF file (ISO/IEC 23008-12: HEIC, AVIF, HEIF) says of its images before anything is
/// decoded: its brands, its items (each image, tile, thumbnail, auxiliary image and metadata
/// block), the primary one, each item's properties (`ispe` size, `irot` and `imir` turned into
/// an EXIF orientation, `pixi` depth, `auxC` type, `colr`), the references between them
/// (`dimg` tiles, `thmb`, `auxl`, `cdsc`) and where each item's bytes are (`iloc`).
///
/// Read from the `meta` box alone, with every count bounded by the bytes that hold it, so a
/// file can be described, and refused, before a decoder sees it. Decoding is the image codecs'
/// (ImageCodecs, over libheif); what libheif 1.15 does not say (the orientation as EXIF numbers
/// it, auxiliary types it does not know) is read here.
public struct HEIFFile: Sendable {
    public struct Item: Sendable {
        public let id: UInt32
        /// `hvc1` (HEVC), `av01` (AV1), `grid`, `iovl`, `iden`, `Exif`, `mime`, `tmap`, …
        public let type: FourCC
        public let name: String
        /// Flagged hidden (`infe` flags bit 0): a tile or a part, not an image to show.
        public let hidden: Bool
        /// The content type of a `mime` item (XMP is `application/rdf+xml`).
        public let contentType: String?
        /// `ispe`: the picture's size as stored, before its rotation.
        public internal(set) var width: Int?
        public internal(set) var height: Int?
        /// The EXIF orientation (1…8) its `irot` and `imir` make, in the order `ipma` lists them.
        public internal(set) var orientation: Int = 1
        /// `pixi`: bits of the first channel.
        public internal(set) var bitDepth: Int?
        /// `pixi`: how many channels.
        public internal(set) var channels: Int?
        /// `auxC`: what an auxiliary image is (`urn:mpeg:hevc:2015:auxid:1` is alpha).
        public internal(set) var auxiliaryType: String?
        /// `colr` of type `nclx`: primaries, transfer, matrix (ITU-T H.273), full range.
        public internal(set) var nclx: ColourDescription?
        /// `colr` of type `prof` or `rICC`: an ICC profile's bytes.
        public internal(set) var iccProfile: [UInt8]?
        /// The decoder's configuration: `hvcC` or `av1C`, its type and body.
        public internal(set) var codecConfiguration: (type: FourCC, body: [UInt8])?
        /// The references from this item, by type: `dimg` (the tiles a grid is made of, in
        /// order), `thmb` and `auxl` (to the image this one is a thumbnail or auxiliary of),
        /// `cdsc` (metadata describing the image).
        public internal(set) var references: [FourCC: [UInt32]] = [:]
        /// `iloc`: where the item's bytes are, as (offset, length) in the file, or in `idat`
        /// when ``storedInItemData``.
        public internal(set) var extents: [Extent] = []
        public internal(set) var storedInItemData = false

        /// `clap`: the part of the stored picture that is shown (libheif pads a picture to its
        /// coding's block size and crops it so), in stored coordinates.
        public internal(set) var cleanAperture: Rect?

        /// An image, not metadata.
        public var isImage: Bool { HEIFFile.imageTypes.contains(type) }

        /// The part of the stored picture that is the image: its clean aperture, or all of it.
        public var shown: Rect? {
            guard let width, let height else { return nil }
            return cleanAperture ?? Rect(x: 0, y: 0, width: width, height: height)
        }
    }

    /// A rectangle of pixels.
    public struct Rect: Sendable, Equatable {
        public let x: Int
        public let y: Int
        public let width: Int
        public let height: Int

        public init(x: Int, y: Int, width: Int, height: Int) {
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    public struct Extent: Sendable, Equatable {
        public let offset: UInt64
        public let length: UInt64
    }

    public struct ColourDescription: Sendable, Equatable {
        public let primaries: Int
        public let transfer: Int
        public let matrix: Int
        public let fullRange: Bool
    }

    /// The item types that are images.
    public static let imageTypes: Set<FourCC> = ["hvc1", "av01", "grid", "iovl", "iden", "jpeg", "avc1", "unci", "tmap"]

    public let majorBrand: FourCC
    public let compatibleBrands: [FourCC]
    public let primaryID: UInt32
    public let items: [Item]
    /// `idat`'s bytes (items stored in the `meta` box itself, as a grid's description often is).
    public let itemData: [UInt8]

    /// The most items a file may describe: far more than a 48 MP grid of 512 × 512 tiles (192)
    /// with its thumbnails, auxiliary images and metadata.
    public static let maximumItems = 65_536
    /// The largest `meta` box read: iPhone photos' are a few KB; a million items would not fill it.
    public static let maximumMetaBytes = 16 << 20

    public func item(_ id: UInt32) -> Item? { items.first { $0.id == id } }

    public var primary: Item? { item(primaryID) }

    /// The images a viewer shows, as libheif's top-level images and Apple's
    /// `CGImageSourceGetCount` count them: image items that are not hidden, not a tile of
    /// another, not a thumbnail and not an auxiliary image, and not a gain map's tone-mapped
    /// rendition (`tmap`, the HDR alternative of an image: ``gainMap(of:)``); the primary first.
    public var topLevelImages: [Item] {
        var inner = Set<UInt32>()
        for item in items {
            if item.type != "tmap" { inner.formUnion(item.references["dimg"] ?? []) }
            if item.references["thmb"] != nil || item.references["auxl"] != nil || item.type == "tmap" { inner.insert(item.id) }
        }
        let shown = items.filter { $0.isImage && !$0.hidden && !inner.contains($0.id) }
        return shown.filter { $0.id == primaryID } + shown.filter { $0.id != primaryID }
    }

    /// The items that refer to `id` with a reference of `type` (`thmb`: its thumbnails;
    /// `auxl`: its auxiliary images; `cdsc`: its metadata).
    public func items(referring type: FourCC, to id: UInt32) -> [Item] {
        items.filter { $0.references[type]?.contains(id) == true }
    }

    /// `auxC` types that mean "the image's alpha": HEVC's and MPEG's.
    public static let alphaTypes: Set<String> = ["urn:mpeg:hevc:2015:auxid:1", "urn:mpeg:mpegB:cicp:systems:auxiliary:alpha"]

    /// Whether `image` has an alpha plane (an auxiliary image of an alpha type).
    public func hasAlpha(_ image: UInt32) -> Bool {
        items(referring: "auxl", to: image).contains { Self.alphaTypes.contains($0.auxiliaryType ?? "") }
    }

    /// What `item` is coded as: its own type, or for a grid its first tile's.
    public func codedType(of item: Item) -> FourCC {
        item.type == "grid" ? item.references["dimg"]?.first.flatMap(self.item)?.type ?? item.type : item.type
    }

    /// An image's HDR gain map: Apple's (an auxiliary image of type
    /// `urn:com:apple:photo:2020:aux:hdrgainmap`, its headroom in the maker note) or ISO
    /// 21496-1's (a `tmap` item deriving the HDR rendition from the image and a gain map image,
    /// its metadata the item's data).
    public enum GainMap: Sendable, Equatable {
        case apple(map: UInt32)
        case iso21496(toneMap: UInt32, map: UInt32)
    }

    public static let appleGainMapType = "urn:com:apple:photo:2020:aux:hdrgainmap"

    public func gainMap(of image: UInt32) -> GainMap? {
        if let tmap = items.first(where: { $0.type == "tmap" && $0.references["dimg"]?.first == image }),
           let map = tmap.references["dimg"]?.dropFirst().first {
            return .iso21496(toneMap: tmap.id, map: map)
        }
        if let map = items(referring: "auxl", to: image).first(where: { $0.auxiliaryType == Self.appleGainMapType }) {
            return .apple(map: map.id)
        }
        return nil
    }

    /// ISO 21496-1's gain map metadata (a `tmap` item's data): the headrooms, log2 of the
    /// peak over SDR white, for which the base image and its HDR alternative are made; nil when
    /// the data is not version 0 of it.
    public static func toneMapHeadrooms(_ data: [UInt8]) -> (base: Double, alternate: Double)? {
        var r = ByteReader(data)
        guard (try? r.u8()) == 0, let minimum = try? r.u16(), minimum == 0, (try? r.u16()) != nil, (try? r.u8()) != nil,
              let bn = try? r.u32(), let bd = try? r.u32(), let an = try? r.u32(), let ad = try? r.u32(), bd > 0, ad > 0 else { return nil }
        return (Double(bn) / Double(bd), Double(an) / Double(ad))
    }

    /// The largest item whose bytes ``data(of:in:)`` reads: an Exif block, XMP, a grid's
    /// description, one tile (a 512 × 512 tile of an iPhone photo is about 100 KB).
    public static let maximumItemBytes = 64 << 20

    /// The bytes of `item`: its extents, one after another, from `source` (the whole file) or
    /// from `idat`. Throws when they lie outside it or add up to more than ``maximumItemBytes``.
    public func data(of item: Item, in source: some ByteSource) throws(ContainerError) -> [UInt8] {
        var total: UInt64 = 0
        for extent in item.extents {
            total = total.addingReportingOverflow(extent.length).overflow ? .max : total + extent.length
        }
        guard total <= UInt64(Self.maximumItemBytes) else {
            throw ContainerError("item \(item.id) (\(item.type)) claims \(total) bytes, more than the \(Self.maximumItemBytes) read")
        }
        var bytes: [UInt8] = []
        for extent in item.extents {
            let limit = item.storedInItemData ? UInt64(itemData.count) : source.count
            let (end, overflow) = extent.offset.addingReportingOverflow(extent.length)
            guard !overflow, end <= limit else {
                throw ContainerError("item \(item.id) (\(item.type)) lies at \(extent.offset)+\(extent.length), past the \(limit) bytes \(item.storedInItemData ? "of idat" : "of the file")")
            }
            if item.storedInItemData {
                bytes += itemData[Int(extent.offset)..<Int(end)]
            } else {
                bytes += try source.read(at: extent.offset, count: Int(extent.length))
            }
        }
        return bytes
    }

    /// Whether `source` starts as a HEIF file: an `ftyp` whose brands name one.
    public static func isHEIF(_ prefix: [UInt8]) -> Bool {
        guard prefix.count >= 12, Array(prefix[4..<8]) == Array("ftyp".utf8) else { return false }
        var reader = ByteReader(prefix[8...])
        var brands: [FourCC] = []
        while reader.remaining >= 4, let brand = try? reader.fourCC() { brands.append(brand) }
        return brands.contains { heifBrands.contains($0) }
    }

    /// Brands that say "images in a `meta` box": HEIF's still and sequence brands, HEIC's, AVIF's.
    static let heifBrands: Set<FourCC> = ["mif1", "msf1", "heic", "heix", "heim", "heis", "hevc", "hevx", "avif", "avis", "mif2", "miaf"]

    /// The file in `source`, described; throws naming what is wrong when it is not a HEIF file
    /// or its `meta` box is damaged.
    public static func read(_ source: some ByteSource) throws(ContainerError) -> HEIFFile {
        var walker = BoxWalker(source)
        var ftyp: BoxExtent?
        var meta: BoxExtent?
        var boxes = 0
        while let step = try walker.next() {
            boxes += 1
            guard case .box(let box) = step else { break }
            if box.type == "ftyp", ftyp == nil { ftyp = box }
            if box.type == "meta", meta == nil { meta = box }
            if meta != nil || boxes > 1024 { break }
        }
        guard let ftyp, ftyp.size <= 4096 else { throw ContainerError("no file type box (ftyp) at its start: not a HEIF file") }
        var brandReader = ByteReader(try source.read(at: ftyp.bodyOffset, count: Int(ftyp.size) - ftyp.header.length))
        let major = try brandReader.fourCC()
        _ = try brandReader.u32()
        var compatible: [FourCC] = []
        while brandReader.remaining >= 4 { compatible.append(try brandReader.fourCC()) }
        guard heifBrands.contains(major) || compatible.contains(where: heifBrands.contains) else {
            throw ContainerError("its brands (\(([major] + compatible).map(\.description).joined(separator: ", "))) name no HEIF image brand")
        }
        guard let meta else { throw ContainerError("no meta box: a HEIF file describes its images there") }
        guard meta.end <= source.count else { throw ContainerError("its meta box runs past the file's end") }
        guard meta.size <= UInt64(maximumMetaBytes) else {
            throw ContainerError("its meta box is \(meta.size) bytes, more than the \(maximumMetaBytes) read")
        }
        let body = try source.read(at: meta.bodyOffset, count: Int(meta.size) - meta.header.length)
        return try parseMeta(body, major: major, compatible: compatible)
    }

    // MARK: The meta box

    private static func parseMeta(_ body: [UInt8], major: FourCC, compatible: [FourCC]) throws(ContainerError) -> HEIFFile {
        var reader = ByteReader(body)
        _ = try reader.versionAndFlags()
        let children = try boxes(in: reader.rest())
        func child(_ type: FourCC) -> ArraySlice<UInt8>? { children.first { $0.type == type }?.body }
        guard let handler = child("hdlr") else { throw ContainerError("its meta box has no handler (hdlr)") }
        var h = ByteReader(handler)
        _ = try h.versionAndFlags()
        _ = try h.u32()
        let handlerType = try h.fourCC()
        guard handlerType == "pict" else { throw ContainerError("its meta box's handler is \(handlerType), not pict: it holds no images") }
        guard let pitm = child("pitm") else { throw ContainerError("its meta box names no primary item (pitm)") }
        var p = ByteReader(pitm)
        let primaryID = try p.versionAndFlags().version == 0 ? UInt32(try p.u16()) : try p.u32()
        guard let iinf = child("iinf") else { throw ContainerError("its meta box has no item list (iinf)") }
        var items = try itemInfos(iinf)
        var index: [UInt32: Int] = [:]
        for (n, item) in items.enumerated() where index[item.id] == nil { index[item.id] = n }
        guard index[primaryID] != nil else { throw ContainerError("its primary item \(primaryID) is not in its item list") }
        if let iloc = child("iloc") { try locations(iloc, into: &items, index: index) }
        if let iref = child("iref") { try references(iref, into: &items, index: index) }
        if let iprp = child("iprp") { try properties(iprp, into: &items, index: index) }
        return HEIFFile(majorBrand: major, compatibleBrands: compatible, primaryID: primaryID, items: items,
                        itemData: child("idat").map(Array.init) ?? [])
    }

    private struct Child { let type: FourCC; let body: ArraySlice<UInt8> }

    /// The boxes one after another in `bytes`, each body a slice (no copy).
    private static func boxes(in bytes: ArraySlice<UInt8>) throws(ContainerError) -> [Child] {
        var result: [Child] = []
        var reader = ByteReader(bytes)
        while reader.remaining >= 8 {
            let size = Int(try reader.u32())
            let type = try reader.fourCC()
            var length = size - 8
            if size == 1 {
                let large = try reader.u64()
                guard large >= 16, large - 16 <= UInt64(reader.remaining) else { throw ContainerError("its \(type) box claims \(large) bytes") }
                length = Int(large) - 16
            } else if size == 0 {
                length = reader.remaining
            }
            guard length >= 0, length <= reader.remaining else {
                throw ContainerError("its \(type) box claims \(size) bytes where \(reader.remaining + 8) are left")
            }
            result.append(Child(type: type, body: try reader.bytes(length)))
        }
        return result
    }

    private static func itemInfos(_ iinf: ArraySlice<UInt8>) throws(ContainerError) -> [Item] {
        var reader = ByteReader(iinf)
        let version = try reader.versionAndFlags().version
        let count = version == 0 ? UInt32(try reader.u16()) : try reader.u32()
        // Each entry is a box of at least 12 bytes: a count the bytes cannot hold is refused.
        guard Int(count) <= maximumItems, UInt64(count) * 12 <= UInt64(reader.remaining) else {
            throw ContainerError("its item list claims \(count) items in \(reader.remaining) bytes")
        }
        var items: [Item] = []
        for entry in try boxes(in: reader.rest()) where entry.type == "infe" {
            guard items.count < Int(count) else { break }
            var e = ByteReader(entry.body)
            let (version, flags) = try e.versionAndFlags()
            guard version >= 2 else { continue }  // versions 0 and 1 name no item type: not images
            let id = version == 2 ? UInt32(try e.u16()) : try e.u32()
            _ = try e.u16()  // protection index
            let type = try e.fourCC()
            let name = cString(&e)
            var contentType: String?
            if type == "mime" { contentType = cString(&e) }
            items.append(Item(id: id, type: type, name: name, hidden: flags & 1 != 0, contentType: contentType))
        }
        return items
    }

    /// A NUL-terminated string (or what is left), as UTF-8, at most 1 KiB of it kept.
    private static func cString(_ reader: inout ByteReader) -> String {
        var bytes: [UInt8] = []
        while let byte = try? reader.u8(), byte != 0 { if bytes.count < 1024 { bytes.append(byte) } }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func locations(_ iloc: ArraySlice<UInt8>, into items: inout [Item], index: [UInt32: Int]) throws(ContainerError) {
        var reader = ByteReader(iloc)
        let version = try reader.versionAndFlags().version
        guard version <= 2 else { throw ContainerError("its item locations (iloc) are of version \(version), which is not defined") }
        let sizes = try reader.u16()
        let offsetSize = Int(sizes >> 12), lengthSize = Int((sizes >> 8) & 0xF), baseSize = Int((sizes >> 4) & 0xF)
        let indexSize = version >= 1 ? Int(sizes & 0xF) : 0
        for size in [offsetSize, lengthSize, baseSize, indexSize] where ![0, 4, 8].contains(size) {
            throw ContainerError("its item locations (iloc) use fields of \(size) bytes (0, 4 or 8 are defined)")
        }
        let count = version < 2 ? UInt32(try reader.u16()) : try reader.u32()
        guard UInt64(count) * 6 <= UInt64(reader.remaining) else {
            throw ContainerError("its item locations (iloc) claim \(count) items in \(reader.remaining) bytes")
        }
        func field(_ size: Int) throws(ContainerError) -> UInt64 { size == 0 ? 0 : size == 4 ? UInt64(try reader.u32()) : try reader.u64() }
        for _ in 0..<count {
            let id = version < 2 ? UInt32(try reader.u16()) : try reader.u32()
            let method = version >= 1 ? try reader.u16() & 0xF : 0
            _ = try reader.u16()  // data reference index
            let base = try field(baseSize)
            let extentCount = try reader.u16()
            var extents: [Extent] = []
            for _ in 0..<extentCount {
                _ = try field(indexSize)
                let offset = try field(offsetSize), length = try field(lengthSize)
                let (start, overflow) = base.addingReportingOverflow(offset)
                guard !overflow else { throw ContainerError("item \(id)'s location overflows: base \(base), offset \(offset)") }
                extents.append(Extent(offset: start, length: length))
            }
            if let n = index[id] {
                items[n].extents = extents
                items[n].storedInItemData = method == 1
            }
        }
    }

    private static func references(_ iref: ArraySlice<UInt8>, into items: inout [Item], index: [UInt32: Int]) throws(ContainerError) {
        var reader = ByteReader(iref)
        let version = try reader.versionAndFlags().version
        for reference in try boxes(in: reader.rest()) {
            var r = ByteReader(reference.body)
            let from = version == 0 ? UInt32(try r.u16()) : try r.u32()
            let count = try r.u16()
            var to: [UInt32] = []
            for _ in 0..<count { to.append(version == 0 ? UInt32(try r.u16()) : try r.u32()) }
            if let n = index[from] { items[n].references[reference.type, default: []] += to }
        }
    }

    private static func properties(_ iprp: ArraySlice<UInt8>, into items: inout [Item], index: [UInt32: Int]) throws(ContainerError) {
        let children = try boxes(in: iprp)
        guard let ipco = children.first(where: { $0.type == "ipco" }) else { return }
        let properties = try boxes(in: ipco.body)
        for ipma in children where ipma.type == "ipma" {
            var reader = ByteReader(ipma.body)
            let (version, flags) = try reader.versionAndFlags()
            let count = try reader.u32()
            guard UInt64(count) * 3 <= UInt64(reader.remaining) else {
                throw ContainerError("its property associations (ipma) claim \(count) items in \(reader.remaining) bytes")
            }
            for _ in 0..<count {
                let id = version < 1 ? UInt32(try reader.u16()) : try reader.u32()
                let associations = try reader.u8()
                for _ in 0..<associations {
                    let entry = flags & 1 != 0 ? Int(try reader.u16() & 0x7FFF) : Int(try reader.u8() & 0x7F)
                    // Index 0 means "no property"; indices count from 1.
                    guard entry > 0, entry <= properties.count, let n = index[id] else { continue }
                    try apply(properties[entry - 1], to: &items[n])
                }
            }
        }
    }

    private static func apply(_ property: Child, to item: inout Item) throws(ContainerError) {
        var r = ByteReader(property.body)
        switch property.type {
        case "ispe":
            _ = try r.versionAndFlags()
            item.width = Int(try r.u32())
            item.height = Int(try r.u32())
        case "irot":
            item.orientation = Orientation(exif: item.orientation).rotated(quarterTurns: Int(try r.u8() & 3)).exif
        case "imir":
            // Axis 0 exchanges top and bottom, 1 left and right: ISO/IEC 23008-12:2022's reading,
            // which libheif, libavif and Apple's files follow (the 2017 text named the axis).
            item.orientation = Orientation(exif: item.orientation).mirrored(topToBottom: try r.u8() & 1 == 0).exif
        case "pixi":
            _ = try r.versionAndFlags()
            let channels = try r.u8()
            item.channels = Int(channels)
            if channels > 0 { item.bitDepth = Int(try r.u8()) }
        case "auxC":
            _ = try r.versionAndFlags()
            item.auxiliaryType = cString(&r)
        case "clap":
            // ISO/IEC 14496-12 12.1.4: a width, height and offset of the centre, as fractions.
            var f: [Double] = []
            for n in 0..<8 {
                let v = try r.u32()
                f.append(n % 2 == 1 ? Double(v) : n >= 4 ? Double(Int32(bitPattern: v)) : Double(v))
            }
            guard let storedWidth = item.width, let storedHeight = item.height, f[1] > 0, f[3] > 0, f[5] > 0, f[7] > 0 else { break }
            // A crop listed after a turn or a mirror is in the turned picture's coordinates.
            let (width, height) = item.orientation >= 5 ? (storedHeight, storedWidth) : (storedWidth, storedHeight)
            let (w, h) = ((f[0] / f[1]).rounded(), (f[2] / f[3]).rounded())
            let left = (f[4] / f[5] + Double(width - 1) / 2 - (w - 1) / 2).rounded(.down)
            let top = (f[6] / f[7] + Double(height - 1) / 2 - (h - 1) / 2).rounded(.down)
            guard w.isFinite, h.isFinite, left.isFinite, top.isFinite, w >= 1, h >= 1, left >= 0, top >= 0,
                  left + w <= Double(width), top + h <= Double(height) else {
                throw ContainerError("item \(item.id)'s clean aperture (clap) lies outside its \(width) × \(height) picture")
            }
            let crop = Rect(x: Int(left), y: Int(top), width: Int(w), height: Int(h))
            item.cleanAperture = Orientation(exif: item.orientation).stored(crop, width: storedWidth, height: storedHeight)
        case "hvcC", "av1C":
            item.codecConfiguration = (property.type, Array(property.body))
        case "colr":
            let kind = try r.fourCC()
            if kind == "nclx" {
                let primaries = try r.u16(), transfer = try r.u16(), matrix = try r.u16()
                item.nclx = ColourDescription(primaries: Int(primaries), transfer: Int(transfer), matrix: Int(matrix),
                                              fullRange: try r.u8() & 0x80 != 0)
            } else if kind == "prof" || kind == "rICC" {
                item.iccProfile = Array(r.rest())
            }
        default: break
        }
    }

    /// An orientation as a rotation (anticlockwise quarter turns) followed by a left-right flip:
    /// the form the eight EXIF orientations and HEIF's `irot` and `imir` compose in.
    struct Orientation: Equatable {
        var turns: Int
        var flipped: Bool

        /// EXIF 1…8 as (turns, flip): what turns the stored picture upright.
        private static let exifForms: [Orientation] = [
            .init(turns: 0, flipped: false), .init(turns: 0, flipped: true), .init(turns: 2, flipped: false),
            .init(turns: 2, flipped: true), .init(turns: 3, flipped: true), .init(turns: 3, flipped: false),
            .init(turns: 1, flipped: true), .init(turns: 1, flipped: false),
        ]

        init(turns: Int, flipped: Bool) {
            self.turns = ((turns % 4) + 4) % 4
            self.flipped = flipped
        }

        init(exif: Int) { self = Self.exifForms[(1...8).contains(exif) ? exif - 1 : 0] }

        var exif: Int { Self.exifForms.firstIndex(of: self)! + 1 }

        /// Then turned anticlockwise by `quarterTurns` (`irot`): a turn after a flip is the flip
        /// after the opposite turn.
        func rotated(quarterTurns: Int) -> Orientation {
            Orientation(turns: flipped ? turns - quarterTurns : turns + quarterTurns, flipped: flipped)
        }

        /// The rectangle of the stored `width` × `height` picture that shows as `shown` once turned.
        func stored(_ shown: Rect, width w: Int, height h: Int) -> Rect {
            // Where the shown pixel (x, y) is in the stored picture, for EXIF's orientation.
            func at(_ x: Int, _ y: Int) -> (Int, Int) {
                switch exif {
                case 2: (w - 1 - x, y)
                case 3: (w - 1 - x, h - 1 - y)
                case 4: (x, h - 1 - y)
                case 5: (y, x)
                case 6: (y, h - 1 - x)
                case 7: (w - 1 - y, h - 1 - x)
                case 8: (w - 1 - y, x)
                default: (x, y)
                }
            }
            let a = at(shown.x, shown.y), b = at(shown.x + shown.width - 1, shown.y + shown.height - 1)
            return Rect(x: min(a.0, b.0), y: min(a.1, b.1), width: abs(a.0 - b.0) + 1, height: abs(a.1 - b.1) + 1)
        }

        /// Then mirrored (`imir`): left to right, or top to bottom (a half turn and a left-right
        /// flip).
        func mirrored(topToBottom: Bool) -> Orientation {
            Orientation(turns: topToBottom ? turns + 2 : turns, flipped: !flipped)
        }
    }
}
