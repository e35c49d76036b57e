/// One box of an ISO base media file (MP4, M4A, MOV, fragmented MP4), as a tree that writes
/// back exactly what it read: a container's children are boxes, any other box's body is kept
/// as bytes (the typed values of ``MP4BoxValue`` read and write them), and each box remembers
/// how its size was written (32 or 64 bits, or "to the end"), a `uuid` box its extended type,
/// and a container the bytes before its first child (a full box's version and flags, an entry
/// count) and after its last (QuickTime's 4-byte terminator). Not a demuxer: the samples stay
/// where they are.
package struct MP4Box: Sendable, Equatable {
    package var type: FourCC
    package var sizeField: BoxHeader.SizeField
    /// A `uuid` box's 16-byte extended type.
    package var extendedType: [UInt8]?
    package var content: Content

    package enum Content: Sendable, Equatable {
        /// A box's body, as bytes.
        case data([UInt8])
        /// A container's body: bytes before its children (`leading`), the children, and bytes
        /// too few for a box after them (`trailing`).
        case boxes(leading: [UInt8], children: [MP4Box], trailing: [UInt8])
        /// A long sample table's body, partly in a temporary file (``SpilledBody``): written
        /// from there in pieces, never held whole.
        case spilled(SpilledBody)
    }

    package init(type: FourCC, body: [UInt8] = [], sizeField: BoxHeader.SizeField = .compact) {
        self.type = type
        self.sizeField = sizeField
        content = .data(body)
    }

    package init(type: FourCC, leading: [UInt8] = [], children: [MP4Box]) {
        self.type = type
        sizeField = .compact
        content = .boxes(leading: leading, children: children, trailing: [])
    }

    /// A leaf whose body is a long sample table's, partly in a temporary file.
    package init(type: FourCC, spilled: SpilledBody) {
        self.type = type
        sizeField = .compact
        content = .spilled(spilled)
    }

    package init(type: String, body: [UInt8] = []) { self.init(type: FourCC(type), body: body) }
    package init(type: String, children: [MP4Box]) { self.init(type: FourCC(type), children: children) }

    /// The body's bytes (a container's serialized). Setting it makes the box a leaf.
    package var body: [UInt8] {
        get {
            switch content {
            case .data(let bytes): return bytes
            // Read back whole for whoever reads the box (the writer itself writes it in pieces);
            // zeros of its length if the temporary file cannot be read (the writing then fails).
            case .spilled(let spilled): return spilled.bytes ?? [UInt8](repeating: 0, count: Int(clamping: spilled.count))
            case .boxes(let leading, let children, let trailing):
                var out = leading
                Self.write(children, trailingEmpty: trailing.isEmpty, to: &out)
                return out + trailing
            }
        }
        set { content = .data(newValue) }
    }

    /// A container's boxes; none for a leaf. Setting them makes the box a container.
    package var children: [MP4Box] {
        get {
            if case .boxes(_, let children, _) = content { return children }
            return []
        }
        set {
            if case .boxes(let leading, _, let trailing) = content {
                content = .boxes(leading: leading, children: newValue, trailing: trailing)
            } else {
                content = .boxes(leading: [], children: newValue, trailing: [])
            }
        }
    }

    package var isContainer: Bool { if case .boxes = content { true } else { false } }

    // MARK: Reading

    /// Which boxes hold boxes, and how. The structure of a movie (moov … stbl) is strict: a
    /// body that is not boxes is a malformed index. The others (metadata, fragments, sample
    /// descriptions) are read as boxes when they are, and kept as bytes when they are not, so
    /// that odd metadata from some writer never costs a file its index.
    enum Layout {
        case leaf
        case container(leading: Int, strict: Bool)
        /// ISO's `meta` is a full box (4 bytes of version and flags first); QuickTime's is not.
        case meta
    }

    static let strictContainers: Set<FourCC> = ["moov", "trak", "mdia", "minf", "stbl", "edts", "dinf"]
    static let containers: Set<FourCC> = ["mvex", "moof", "traf", "mfra", "udta", "ilst", "tref", "sinf", "schi"]

    static func layout(of type: FourCC, in parent: FourCC?) -> Layout {
        if strictContainers.contains(type) { return .container(leading: 0, strict: true) }
        if containers.contains(type) || parent == "ilst" { return .container(leading: 0, strict: false) }
        switch type {
        case "meta": return .meta
        case "stsd", "keys": return .container(leading: 8, strict: false)  // version, flags, entry count
        default: return .leaf
        }
    }

    /// Containers nested deeper than this are kept as bytes: no real file comes near, and a
    /// hostile one cannot recurse the stack away.
    static let maximumDepth = 12

    /// The box whose header is `header` and whose body is `body`, inside a `parent` box.
    init(header: BoxHeader, body: ArraySlice<UInt8>, parent: FourCC?, depth: Int) throws(ContainerError) {
        type = header.type
        sizeField = header.sizeField
        extendedType = header.extendedType
        let leading: Int, strict: Bool
        switch depth > Self.maximumDepth ? .leaf : Self.layout(of: type, in: parent) {
        case .leaf:
            content = .data(Array(body))
            return
        case .container(let n, let s): (leading, strict) = (n, s)
        case .meta:
            // ISO's version and flags are zero; a QuickTime `meta` starts with its first child's size.
            (leading, strict) = (body.count >= 4 && body.prefix(4).allSatisfy { $0 == 0 } ? 4 : 0, false)
        }
        do throws(ContainerError) {
            guard body.count >= leading else { throw ContainerError("its \(type) box has \(body.count) bytes, short of its \(leading)-byte header") }
            let (children, trailing) = try Self.parseSequence(body.dropFirst(leading), in: type, depth: depth + 1)
            content = .boxes(leading: Array(body.prefix(leading)), children: children, trailing: Array(trailing))
        } catch {
            // A lenient container that is not boxes is kept as it is: its bytes, written back unchanged.
            if strict { throw error }
            content = .data(Array(body))
        }
    }

    /// The boxes one after another in `bytes` (inside a `parent` box), and what is left after
    /// them: fewer than 8 bytes, too few for a box. Throws when a box runs past the end or no
    /// box starts where one should.
    static func parseSequence(_ bytes: ArraySlice<UInt8>, in parent: FourCC?, depth: Int) throws(ContainerError) -> ([MP4Box], ArraySlice<UInt8>) {
        var walker = BoxWalker(MemoryBytes(bytes))
        var boxes: [MP4Box] = []
        /// Where, for an error (made only for one: this runs for every box).
        var within: String { parent.map { "its \($0) box" } ?? "the file" }
        while let step = try walker.next() {
            switch step {
            case .box(let extent):
                guard extent.end <= UInt64(bytes.count) else {
                    throw ContainerError("its \(extent.type) box at byte \(extent.offset) of \(within) takes \(extent.size) bytes, of which \(UInt64(bytes.count) - extent.offset) are there")
                }
                let start = bytes.startIndex + Int(extent.offset)
                let body = bytes[(start + extent.header.length)..<(start + Int(extent.size))]
                boxes.append(try MP4Box(header: extent.header, body: body, parent: parent, depth: depth))
            case .cut(let offset, nil):
                return (boxes, bytes[(bytes.startIndex + Int(offset))...])
            case .cut(let offset, _), .notABox(let offset, _):
                throw ContainerError("no box starts at byte \(offset) of \(within) (\(UInt64(bytes.count) - offset) bytes are left)")
            }
        }
        return (boxes, [])
    }

    /// The boxes in `bytes`, one after another, nothing left over.
    package static func parse(_ bytes: ArraySlice<UInt8>) throws(ContainerError) -> [MP4Box] {
        let (boxes, rest) = try parseSequence(bytes, in: nil, depth: 0)
        guard rest.isEmpty else { throw ContainerError("\(rest.count) stray bytes follow its last box") }
        return boxes
    }

    /// The one box that `bytes` holds.
    package init(parsing bytes: ArraySlice<UInt8>) throws(ContainerError) {
        let boxes = try Self.parse(bytes)
        guard boxes.count == 1 else { throw ContainerError("\(boxes.count) boxes where one was expected") }
        self = boxes[0]
    }

    // MARK: Writing

    /// The box's bytes, header included; sizes follow the content, the size field's form kept.
    package var bytes: [UInt8] {
        var out: [UInt8] = []
        // Made once at its size: an index of hours grown by doubling held up to twice its bytes.
        out.reserveCapacity(Int(clamping: length()))
        write(to: &out, last: true)
        return out
    }

    /// Appends the box; `last`: nothing follows it in its sequence, so a "to the end" size
    /// stays so.
    package func write(to out: inout [UInt8], last: Bool) {
        // Whole: nothing is handed on, and a spilled table is read back by `body`, so nothing throws.
        try? writePieces(last: last, into: &out, pieceBytes: .max) { (_: [UInt8]) throws(ContainerError) in }
    }

    /// Writes the box in pieces of at least `pieceBytes` (the last may be shorter), each handed
    /// to `emit`: what is held at once is a piece and the box's largest leaf, not the whole box
    /// (a long file's index). The pieces together are ``bytes``.
    package func write(inPiecesOf pieceBytes: Int, emit: ([UInt8]) throws(ContainerError) -> Void) throws(ContainerError) {
        var buffer: [UInt8] = []
        try writePieces(last: true, into: &buffer, pieceBytes: pieceBytes, emit: emit)
        if !buffer.isEmpty { try emit(buffer) }
    }

    private func writePieces(last: Bool, into buffer: inout [UInt8], pieceBytes: Int,
                             emit: ([UInt8]) throws(ContainerError) -> Void) throws(ContainerError) {
        switch content {
        case .data(let bytes):
            header.write(bodyLength: UInt64(bytes.count), toEndAllowed: last, to: &buffer)
            buffer += bytes
        case .spilled(let spilled):
            header.write(bodyLength: spilled.count, toEndAllowed: last, to: &buffer)
            guard pieceBytes < .max else {
                buffer += body
                break
            }
            // Read back a piece at a time, each piece handed on as it fills.
            try spilled.write(inPiecesOf: pieceBytes) { (raw) throws(ContainerError) in
                buffer.append(contentsOf: raw)
                guard buffer.count >= pieceBytes else { return }
                try emit(buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        case .boxes(let leading, let children, let trailing):
            header.write(bodyLength: bodyLength, toEndAllowed: last, to: &buffer)
            buffer += leading
            for (i, child) in children.enumerated() {
                try child.writePieces(last: trailing.isEmpty && i == children.count - 1, into: &buffer, pieceBytes: pieceBytes, emit: emit)
            }
            buffer += trailing
        }
        if buffer.count >= pieceBytes {
            try emit(buffer)
            buffer.removeAll(keepingCapacity: true)
        }
    }

    static func write(_ boxes: [MP4Box], trailingEmpty: Bool, to out: inout [UInt8]) {
        for (i, box) in boxes.enumerated() { box.write(to: &out, last: trailingEmpty && i == boxes.count - 1) }
    }

    /// The header it is written with (its size set by the writing).
    private var header: BoxHeader { BoxHeader(type: type, sizeField: sizeField, extendedType: extendedType) }

    /// The body's length.
    package var bodyLength: UInt64 {
        switch content {
        case .data(let bytes): return UInt64(bytes.count)
        case .spilled(let spilled): return spilled.count
        case .boxes(let leading, let children, let trailing):
            var total = UInt64(leading.count + trailing.count)
            for (i, child) in children.enumerated() { total += child.length(last: trailing.isEmpty && i == children.count - 1) }
            return total
        }
    }

    /// The box's length, header included.
    package func length(last: Bool = true) -> UInt64 {
        let body = bodyLength
        return UInt64(header.length(bodyLength: body, toEndAllowed: last)) + body
    }

    // MARK: Finding and changing

    package func first(_ type: FourCC) -> MP4Box? { children.first { $0.type == type } }

    /// The children of one type.
    package func all(_ type: FourCC) -> [MP4Box] { children.filter { $0.type == type } }

    /// The box at a path of types below this one (`["mdia", "mdhd"]`), the first of each.
    package func find(_ path: [FourCC]) -> MP4Box? {
        var box = self
        for type in path {
            guard let next = box.first(type) else { return nil }
            box = next
        }
        return box
    }

    /// Changes the box at `path`, if there is one.
    package mutating func modify(_ path: [FourCC], _ change: (inout MP4Box) -> Void) {
        guard let head = path.first else { return change(&self) }
        guard case .boxes(let leading, var children, let trailing) = content,
              let i = children.firstIndex(where: { $0.type == head }) else { return }
        content = .data([])  // no second reference while the child changes: changed in place
        children[i].modify(Array(path.dropFirst()), change)
        content = .boxes(leading: leading, children: children, trailing: trailing)
    }

    /// Puts `child` in place of the first child of its type, or, when there is none, after the
    /// last child of the types in `after` (first when none of them is there).
    package mutating func replaceOrInsert(_ child: MP4Box, after: [FourCC] = []) {
        var list = children
        if let i = list.firstIndex(where: { $0.type == child.type }) {
            list[i] = child
        } else {
            let at = (list.lastIndex { after.contains($0.type) } ?? -1) + 1
            list.insert(child, at: at)
        }
        children = list
    }

    // MARK: Typed values

    /// The box's body read as `T`, or nil when the box is not of one of `T`'s types or its body
    /// does not read as one.
    package func read<T: MP4BoxValue>(_: T.Type) -> T? {
        guard T.types.contains(type) else { return nil }
        var reader = ByteReader(body)
        return try? T(reading: &reader, type: type)
    }

    /// A leaf box holding `value`.
    package init<T: MP4BoxValue>(_ value: T) {
        var body: [UInt8] = []
        value.write(to: &body)
        self.init(type: value.type, body: body)
    }

    /// Replaces the body (and the type, which `value` may change: `stco` to `co64`) with
    /// `value`; the size field's form stays.
    package mutating func store<T: MP4BoxValue>(_ value: T) {
        var body: [UInt8] = []
        value.write(to: &body)
        type = value.type
        content = .data(body)
    }

    /// Reads the body at `path` as `T`, changes it, and writes it back: nothing happens when
    /// there is no such box or it does not read as a `T`.
    package mutating func update<T: MP4BoxValue>(_ path: [FourCC], as _: T.Type, _ change: (inout T) -> Void) {
        modify(path) { box in
            guard var value = box.read(T.self) else { return }
            change(&value)
            box.store(value)
        }
    }
}

/// The fields of one kind of box, read from its body and written back to the same bytes (what
/// a reader does not name is kept as it came, in `extra` fields), so that a box changed only
/// where GraphKit means to change it.
package protocol MP4BoxValue: Sendable, Equatable {
    /// The box types it reads.
    static var types: Set<FourCC> { get }
    /// The type it is written as.
    var type: FourCC { get }
    init(reading body: inout ByteReader, type: FourCC) throws(ContainerError)
    func write(to body: inout [UInt8])
}
