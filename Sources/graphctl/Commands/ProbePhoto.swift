import GraphKit

/// `graphctl probe` of a HEIF photo (HEIC, AVIF): its images described from the file's `meta`
/// box by the container library (``HEIFFile``), nothing decoded: each top-level image (the
/// primary first) with its coding, size as shown (its clean aperture) and as coded, EXIF orientation from `irot`/`imir`, depth,
/// alpha, colour (`nclx`, or an ICC profile's size), grid, thumbnails and auxiliary images (depth,
/// portrait mattes, gain maps, by their `auxC` type), the metadata blocks (Exif, XMP) that
/// describe it, and what its EXIF says (when, where, which camera, a Live Photo's identifier).
extension Probe {
    static func photo(_ file: HEIFFile, bytes: some ByteSource) -> (json: JSONValue, text: String) {
        var images: [JSONValue] = []
        var text = ""
        for (n, item) in file.topLevelImages.enumerated() {
            var members: [(key: String, value: JSONValue)] = [
                ("item", .number(Double(item.id))), ("primary", .bool(item.id == file.primaryID)),
                ("codec", .string(codec(of: item, in: file))),
            ]
            var parts = [codec(of: item, in: file)]
            if let shown = item.shown, let w = item.width, let h = item.height {
                // The picture shown (its clean aperture), and the size coded when it differs.
                members += [("width", .number(Double(shown.width))), ("height", .number(Double(shown.height)))]
                parts.append("\(shown.width)x\(shown.height)")
                if shown.width != w || shown.height != h {
                    members += [("codedWidth", .number(Double(w))), ("codedHeight", .number(Double(h)))]
                    parts.append("coded \(w)x\(h)")
                }
            }
            members.append(("orientation", .number(Double(item.orientation))))
            if item.orientation != 1 { parts.append("orientation \(item.orientation)") }
            if let depth = item.bitDepth {
                members.append(("bitDepth", .number(Double(depth))))
                parts.append("\(depth)-bit")
            }
            let alpha = file.hasAlpha(item.id)
            members.append(("alpha", .bool(alpha)))
            if alpha { parts.append("alpha") }
            if let c = item.nclx {
                members.append(("color", ["primaries": .number(Double(c.primaries)), "transfer": .number(Double(c.transfer)),
                                          "matrix": .number(Double(c.matrix)), "range": .string(c.fullRange ? "pc" : "tv")]))
                parts.append("colour \(c.primaries)/\(c.transfer)/\(c.matrix) \(c.fullRange ? "pc" : "tv")")
            } else if let icc = item.iccProfile {
                members.append(("iccProfile", ["size": .number(Double(icc.count))]))
                parts.append("ICC profile (\(icc.count) bytes)")
            }
            if item.type == "grid", let tiles = item.references["dimg"] {
                var grid: [(key: String, value: JSONValue)] = [("tiles", .number(Double(tiles.count)))]
                if let data = try? file.data(of: item, in: bytes), data.count >= 4 {
                    grid += [("rows", .number(Double(Int(data[2]) + 1))), ("columns", .number(Double(Int(data[3]) + 1)))]
                    parts.append("grid of \(Int(data[2]) + 1)x\(Int(data[3]) + 1) tiles")
                }
                members.append(("grid", .object(grid)))
            }
            let thumbnails = file.items(referring: "thmb", to: item.id)
            members.append(("thumbnails", .array(thumbnails.map(sized))))
            for t in thumbnails { parts.append("thumbnail \(t.shown?.width ?? 0)x\(t.shown?.height ?? 0)") }
            let auxiliary = file.items(referring: "auxl", to: item.id)
            members.append(("auxiliary", .array(auxiliary.map { a in
                var value = sized(a)
                if case .object(var m) = value { m.append(("type", .string(a.auxiliaryType ?? ""))); value = .object(m) }
                return value
            })))
            for a in auxiliary { parts.append("auxiliary \(TerminalText.escaped(a.auxiliaryType ?? "?")) \(a.shown?.width ?? 0)x\(a.shown?.height ?? 0)") }
            let metadata = file.items(referring: "cdsc", to: item.id)
            members.append(("metadata", .array(metadata.map { m in
                var entry: [(key: String, value: JSONValue)] = [("item", .number(Double(m.id))), ("type", .string(m.type.description)),
                                                               ("size", .number(Double(m.extents.reduce(0) { $0 + $1.length })))]
                if let type = m.contentType { entry.append(("contentType", .string(type))) }
                return .object(entry)
            })))
            for m in metadata { parts.append("\(TerminalText.escaped(m.contentType ?? m.type.description)) metadata") }
            let exif = metadata.first(where: { $0.type == "Exif" }).flatMap({ try? file.data(of: $0, in: bytes) }).flatMap(EXIFTags.init(heifExifItem:))
            if let gainMap = file.gainMap(of: item.id) {
                let (json, said) = Self.gainMap(gainMap, in: file, bytes: bytes, exif: exif)
                members.append(("gainMap", json))
                parts.append(said)
            }
            if let exif {
                let (json, said) = Self.exif(exif)
                members.append(("exif", json))
                parts += said
            }
            images.append(.object(members))
            text += "  image \(n)\(item.id == file.primaryID ? " (primary)" : ""): \(parts.joined(separator: ", "))\n"
        }
        let brands = ([file.majorBrand] + file.compatibleBrands).map { $0.description }
        let json: JSONValue = ["container": .string("heif"), "brand": .string(file.majorBrand.description),
                               "compatibleBrands": .array(file.compatibleBrands.map { .string($0.description) }),
                               "images": .array(images)]
        let header = "heif (\(TerminalText.escaped(brands.first ?? ""))), \(images.count) image\(images.count == 1 ? "" : "s")\n"
        return (json, header + text)
    }

    /// An image's HDR gain map: whose, its size, and what it says of the headroom: ISO 21496-1's
    /// headrooms (log2 of the peak over SDR white) for the base image and its HDR alternative;
    /// for Apple's, the maker note's tags 33 and 48, from which Apple's published method derives it.
    static func gainMap(_ gainMap: HEIFFile.GainMap, in file: HEIFFile, bytes: some ByteSource, exif: EXIFTags?) -> (json: JSONValue, text: String) {
        switch gainMap {
        case .apple(let id):
            var members: [(key: String, value: JSONValue)] = [("kind", .string("apple"))]
            if case .object(let m)? = file.item(id).map(sized) { members += m }
            var note: [(key: String, value: JSONValue)] = []
            for tag: UInt16 in [33, 48] {
                if case .numbers(let v)? = exif?.makerApple[tag], let value = v.first { note.append((String(tag), .number(value))) }
            }
            if !note.isEmpty { members.append(("makerApple", .object(note))) }
            let size = file.item(id)?.shown.map { " \($0.width)x\($0.height)" } ?? ""
            return (.object(members), "Apple HDR gain map\(size)")
        case .iso21496(let toneMap, let id):
            var members: [(key: String, value: JSONValue)] = [("kind", .string("iso21496-1")), ("toneMapItem", .number(Double(toneMap)))]
            if case .object(let m)? = file.item(id).map(sized) { members += m }
            var text = "ISO 21496-1 gain map"
            if let item = file.item(toneMap), let data = try? file.data(of: item, in: bytes), let headrooms = HEIFFile.toneMapHeadrooms(data) {
                members += [("baseHeadroom", .number(headrooms.base)), ("alternateHeadroom", .number(headrooms.alternate))]
                text += " (headroom \(fixed(headrooms.base, 2)) to \(fixed(headrooms.alternate, 2)) stops)"
            }
            return (.object(members), text)
        }
    }

    /// What a photo's EXIF says of when, where and with what it was taken, and a Live Photo's
    /// content identifier (which pairs it with its movie).
    static func exif(_ tags: EXIFTags) -> (json: JSONValue, text: [String]) {
        var members: [(key: String, value: JSONValue)] = []
        var text: [String] = []
        let e = TerminalText.escaped
        for (key, value) in [("make", tags.primary[0x010F]), ("model", tags.primary[0x0110]), ("dateTimeOriginal", tags.exif[0x9003]),
                             ("offsetTimeOriginal", tags.exif[0x9011])] {
            if let s = EXIFTags.text(value) { members.append((key, .string(s))) }
        }
        if let date = EXIFTags.text(tags.exif[0x9003]) { text.append("taken \(e(date))\(EXIFTags.text(tags.exif[0x9011]).map { " \(e($0))" } ?? "")") }
        if let model = EXIFTags.text(tags.primary[0x0110]) { text.append("by \(e(model))") }
        if let place = tags.location {
            var gps: [(key: String, value: JSONValue)] = [("latitude", .number(place.latitude)), ("longitude", .number(place.longitude))]
            if let altitude = place.altitude { gps.append(("altitude", .number(altitude))) }
            members.append(("gps", .object(gps)))
            text.append("at \(fixed(place.latitude, 5)),\(fixed(place.longitude, 5))")
        }
        if let id = tags.contentIdentifier {
            members.append(("contentIdentifier", .string(id)))
            text.append("Live Photo \(e(id))")
        }
        return (.object(members), text)
    }

    /// What an image is coded as: `hevc`, `av1`, or for a grid, its tiles' coding.
    static func codec(of item: HEIFFile.Item, in file: HEIFFile) -> String {
        let coded = file.codedType(of: item)
        switch coded {
        case "hvc1": return "hevc"
        case "av01": return "av1"
        case "jpeg": return "jpeg"
        default: return TerminalText.escaped(coded.description)
        }
    }

    static func sized(_ item: HEIFFile.Item) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = [("item", .number(Double(item.id)))]
        if let shown = item.shown { members += [("width", .number(Double(shown.width))), ("height", .number(Double(shown.height)))] }
        return .object(members)
    }
}
