import Foundation
import GraphKitTesting
import MediaContainers
import Testing

/// HEIF files put together in the tests from parts (ISO/IEC 23008-12): items with their data,
/// properties and references, as an iPhone or libheif writes them (`ftyp`, `meta` with `hdlr`,
/// `pitm`, `iinf`, `iloc`, `iref`, `iprp`, then `mdat`). The pictures come from heif-enc
/// (``encoded(_:width:height:)``); what heif-enc does not write (a grid of tiles, `irot`,
/// `imir`, auxiliary images) is put together here around its coded pictures.
public struct HEIFBuilder {
    public struct Item {
        public var id: UInt32
        public var type: String
        public var hidden = false
        public var data: [UInt8] = []
        /// Whole property boxes (``box(_:_:)``), associated in this order.
        public var properties: [[UInt8]] = []
        /// References from this item: type and the items referred to.
        public var references: [(String, [UInt32])] = []

        public init(id: UInt32, type: String, hidden: Bool = false, data: [UInt8] = [], properties: [[UInt8]] = [],
                    references: [(String, [UInt32])] = []) {
            self.id = id
            self.type = type
            self.hidden = hidden
            self.data = data
            self.properties = properties
            self.references = references
        }
    }

    public var brands: [String] = ["heic", "mif1"]
    public var primary: UInt32
    public var items: [Item]

    public init(primary: UInt32, items: [Item]) {
        self.primary = primary
        self.items = items
    }

    public static func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        be32(UInt32(8 + body.count)) + Array(type.utf8) + body
    }

    public static func fullBox(_ type: String, version: UInt8 = 0, flags: UInt32 = 0, _ body: [UInt8]) -> [UInt8] {
        box(type, be32(UInt32(version) << 24 | flags) + body)
    }

    public static func be16(_ v: Int) -> [UInt8] { [UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    public static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    /// `ispe`: a picture's size.
    public static func ispe(_ width: Int, _ height: Int) -> [UInt8] { fullBox("ispe", be32(UInt32(width)) + be32(UInt32(height))) }
    /// `irot`: turned anticlockwise by `quarterTurns` quarter turns.
    public static func irot(_ quarterTurns: Int) -> [UInt8] { box("irot", [UInt8(quarterTurns & 3)]) }
    /// `imir`: top and bottom exchanged (axis 0) or left and right (axis 1), as ISO/IEC
    /// 23008-12:2022 and libheif read it.
    public static func imir(axis: Int) -> [UInt8] { box("imir", [UInt8(axis & 1)]) }
    /// `clap`: the `width` × `height` part of a `storedWidth` × `storedHeight` picture whose
    /// top-left corner is at (`x`, `y`), written as libheif writes it (offsets of the centres in
    /// halves).
    public static func clap(width: Int, height: Int, x: Int, y: Int, storedWidth: Int, storedHeight: Int) -> [UInt8] {
        let horizontal = 2 * x + width - storedWidth, vertical = 2 * y + height - storedHeight
        return box("clap", [width, 1, height, 1, horizontal, 2, vertical, 2].flatMap { be32(UInt32(bitPattern: Int32($0))) })
    }
    /// `auxC`: an auxiliary image of `type`.
    public static func auxC(_ type: String) -> [UInt8] { fullBox("auxC", Array(type.utf8) + [0]) }
    /// A grid's description: `rows` × `columns` tiles making `width` × `height`.
    public static func gridData(rows: Int, columns: Int, width: Int, height: Int) -> [UInt8] {
        [0, 0, UInt8(rows - 1), UInt8(columns - 1)] + be16(width) + be16(height)
    }

    /// The file's bytes.
    public func bytes() -> [UInt8] {
        let ftyp = Self.box("ftyp", Array(brands[0].utf8) + Self.be32(0) + brands.flatMap { Array($0.utf8) })
        let hdlr = Self.fullBox("hdlr", Self.be32(0) + Array("pict".utf8) + [UInt8](repeating: 0, count: 12) + [0])
        let pitm = Self.fullBox("pitm", Self.be16(Int(primary)))
        let infes = items.flatMap { item in
            Self.fullBox("infe", version: 2, flags: item.hidden ? 1 : 0, Self.be16(Int(item.id)) + Self.be16(0) + Array(item.type.utf8) + [0])
        }
        let iinf = Self.fullBox("iinf", Self.be16(items.count) + infes)
        let properties = items.flatMap(\.properties)
        let ipco = Self.box("ipco", properties.flatMap { $0 })
        var next = 1
        var associations: [UInt8] = Self.be32(UInt32(items.count))
        for item in items {
            associations += Self.be16(Int(item.id)) + [UInt8(item.properties.count)]
            for _ in item.properties {
                associations.append(UInt8(next))
                next += 1
            }
        }
        let iprp = Self.box("iprp", ipco + Self.fullBox("ipma", associations))
        let references = items.flatMap { item in
            item.references.flatMap { type, to in Self.box(type, Self.be16(Int(item.id)) + Self.be16(to.count) + to.flatMap { Self.be16(Int($0)) }) }
        }
        let iref = references.isEmpty ? [] : Self.fullBox("iref", references)
        // iloc: offsets of 4 bytes, lengths of 4, no base; the mdat's place is known once the
        // meta box's size is, which the offsets' values do not change.
        func iloc(mdatBody: Int) -> [UInt8] {
            var body = [0x44, 0x00] + Self.be16(items.count)
            var offset = mdatBody
            for item in items {
                body += Self.be16(Int(item.id)) + Self.be16(0) + Self.be16(1) + Self.be32(UInt32(offset)) + Self.be32(UInt32(item.data.count))
                offset += item.data.count
            }
            return Self.fullBox("iloc", body)
        }
        func meta(mdatBody: Int) -> [UInt8] {
            Self.fullBox("meta", hdlr + pitm + iinf + iloc(mdatBody: mdatBody) + iref + iprp)
        }
        let start = ftyp.count + meta(mdatBody: 0).count + 8
        return ftyp + meta(mdatBody: start) + Self.box("mdat", items.flatMap(\.data))
    }

    /// A picture coded by heif-enc from `png` (quality 90, no thumbnail): its primary item's
    /// configuration box (`hvcC`, or `av1C` for AVIF) and its coded bytes, to build other files
    /// around.
    public static func encoded(png: URL, avif: Bool = false, in folder: URL) throws -> (configuration: [UInt8], data: [UInt8], width: Int, height: Int) {
        let out = folder.appendingPathComponent(png.deletingPathExtension().lastPathComponent + (avif ? ".avif" : ".heic"))
        _ = try TestMedia.runTool("heif-enc", ["-q", "90", "-o", out.path, png.path] + (avif ? ["-A"] : []))
        let bytes = try #require(FileBytes(path: out.path))
        let file = try HEIFFile.read(bytes)
        // heif-enc puts a small picture in a grid of one tile: the tile is the coded picture.
        var item = try #require(file.primary)
        if item.type == "grid", let tile = item.references["dimg"]?.first.flatMap(file.item) { item = tile }
        let configuration = try #require(item.codecConfiguration)
        let data = try file.data(of: item, in: bytes)
        return (box(configuration.type.description, configuration.body), data, item.width ?? 0, item.height ?? 0)
    }
}
