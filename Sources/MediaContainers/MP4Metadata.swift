/// One item of iTunes-style metadata (`moov/udta/meta/ilst`): a key and its `data` values.
/// Read only here; issue 31 grows this file (QuickTime's `mdta` keys in `meta/keys`, writing
/// items, chapters) on the same tree, so that metadata is read and written by this one reader.
package struct MetadataItem: Sendable, Equatable {
    /// The item's box type: `©nam`, `trkn`, `----` (a freeform item, named by ``mean`` and
    /// ``name``), or, under an `mdta` handler, a 1-based index into the `keys` box.
    package var key: FourCC
    /// A freeform item's domain (`com.apple.iTunes`).
    package var mean: String?
    /// A freeform item's name (`iTunSMPB`).
    package var name: String?
    package var values: [Value]

    /// A `data` box: a type (1 is UTF-8 text, 21 a signed integer, 13 JPEG…), a locale, the bytes.
    package struct Value: Sendable, Equatable {
        package var dataType: UInt32
        package var locale: UInt32
        package var payload: [UInt8]

        /// The payload as text, when the type says UTF-8 (1) or is unset (0, as some writers
        /// leave freeform items).
        package var text: String? { dataType == 1 || dataType == 0 ? String(decoding: payload, as: UTF8.self) : nil }
    }

    /// The item an `ilst` child box holds; nil when it is not one (its body is not boxes).
    package init?(_ box: MP4Box) {
        guard box.isContainer else { return nil }
        key = box.type
        values = []
        for child in box.children {
            var r = ByteReader(child.body)
            switch child.type {
            case "mean", "name":
                guard (try? r.versionAndFlags()) != nil else { continue }
                let text = String(decoding: r.rest(), as: UTF8.self)
                if child.type == "mean" { mean = text } else { name = text }
            case "data":
                guard let type = try? r.u32(), let locale = try? r.u32() else { continue }
                values.append(Value(dataType: type & 0xFF_FFFF, locale: locale, payload: Array(r.rest())))
            default:
                continue
            }
        }
    }
}

extension MP4Box {
    /// The metadata items of this `ilst` box.
    package var metadataItems: [MetadataItem] { type == "ilst" ? children.compactMap(MetadataItem.init) : [] }
}
