/// A four-character code: a box's type (`moov`), a brand (`M4A `), a handler (`soun`), a
/// sample format (`mp4a`). Four bytes, shown as Latin-1 (iTunes' `©nam` has 0xA9 first).
public struct FourCC: Hashable, Sendable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: UInt32

    public init(_ rawValue: UInt32) { self.rawValue = rawValue }

    /// The first four characters of `text`, each one byte (Latin-1; a character beyond it is
    /// `?`), padded with spaces.
    public init(_ text: some StringProtocol) {
        var value: UInt32 = 0
        var n = 0
        // Four ASCII characters, as nearly every code is: their UTF-8 bytes are the code.
        if text.utf8.count == 4, text.utf8.allSatisfy({ $0 < 0x80 }) {
            for byte in text.utf8 { value = value << 8 | UInt32(byte) }
            rawValue = value
            return
        }
        for scalar in text.unicodeScalars.prefix(4) {
            value = value << 8 | (scalar.value <= 0xFF ? scalar.value : 0x3F)
            n += 1
        }
        for _ in n..<4 { value = value << 8 | 0x20 }
        rawValue = value
    }

    /// The code spelled exactly by `text`: four characters of one byte each, else nil.
    public init?(exactly text: some StringProtocol) {
        guard text.unicodeScalars.count == 4, text.unicodeScalars.allSatisfy({ $0.value <= 0xFF }) else { return nil }
        self.init(text)
    }

    /// A literal (`"moov"`): its UTF-8 bytes when they are four ASCII characters, read where
    /// the compiler put them, without making a String (every comparison with a literal makes
    /// one of these).
    public init(stringLiteral text: StaticString) {
        if text.hasPointerRepresentation, text.utf8CodeUnitCount == 4 {
            let p = text.utf8Start
            if p[0] < 0x80, p[1] < 0x80, p[2] < 0x80, p[3] < 0x80 {
                self.init(UInt32(p[0]) << 24 | UInt32(p[1]) << 16 | UInt32(p[2]) << 8 | UInt32(p[3]))
                return
            }
        }
        self.init(text.description)
    }

    public var bytes: [UInt8] { [UInt8(rawValue >> 24), UInt8((rawValue >> 16) & 0xFF), UInt8((rawValue >> 8) & 0xFF), UInt8(rawValue & 0xFF)] }
    /// The code as text: Latin-1, a control byte (0x00–0x1F, 0x7F–0x9F) written `\xNN`, so that a
    /// crafted type cannot cut or forge the message or log line it is printed in.
    public var description: String {
        var text = ""
        for byte in bytes {
            if byte < 0x20 || (0x7F...0x9F).contains(byte) {
                text += "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            } else {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return text
    }
    /// Four printable ASCII characters, as every box type that opens a file is.
    public var isPrintable: Bool { bytes.allSatisfy { (0x20...0x7E).contains($0) } }
    public static func < (a: FourCC, b: FourCC) -> Bool { a.rawValue < b.rawValue }
}

/// A box's header (ISO/IEC 14496-12, 4.2): a 32-bit size and a type; size 1 puts a 64-bit size
/// after the type (`largesize`), size 0 means "to the end of what holds it" (the file, for a
/// top-level box); a `uuid` box's type goes on for 16 bytes (`usertype`). The one place this
/// library reads a box header.
public struct BoxHeader: Sendable, Equatable {
    /// How the size is written: kept, so a box written back comes out as it came in.
    public enum SizeField: Sendable, Equatable {
        /// 32 bits.
        case compact
        /// 1, then 64 bits.
        case large
        /// 0: to the end of what holds it.
        case toEnd
    }

    public var type: FourCC
    public var sizeField: SizeField
    /// The size written (header included), or 0 for ``SizeField/toEnd``.
    public var declaredSize: UInt64
    /// A `uuid` box's 16-byte extended type.
    public var extendedType: [UInt8]?

    public init(type: FourCC, sizeField: SizeField = .compact, declaredSize: UInt64 = 0, extendedType: [UInt8]? = nil) {
        self.type = type
        self.sizeField = sizeField
        self.declaredSize = declaredSize
        self.extendedType = extendedType
    }

    /// 8, 16 with a 64-bit size, and 16 more for a `uuid` box's extended type.
    public var length: Int { (sizeField == .large ? 16 : 8) + (extendedType == nil ? 0 : 16) }

    /// The longest a header can be: a 64-bit size and an extended type.
    public static let maximumLength = 32

    /// What the first bytes of a box say.
    public enum Parsed: Sendable, Equatable {
        case header(BoxHeader)
        /// The bytes end inside the header: its type, when the first 8 bytes are there.
        case cut(type: FourCC?)
    }

    /// The header at the start of `bytes` (of which up to ``maximumLength`` are looked at).
    public static func parse(_ bytes: some Collection<UInt8>) -> Parsed {
        var reader = ByteReader(Array(bytes.prefix(maximumLength)))
        guard let size = try? reader.u32(), let type = try? reader.fourCC() else { return .cut(type: nil) }
        var header = BoxHeader(type: type, declaredSize: UInt64(size))
        if size == 1 {
            guard let large = try? reader.u64() else { return .cut(type: type) }
            header.sizeField = .large
            header.declaredSize = large
        } else if size == 0 {
            header.sizeField = .toEnd
        }
        if type == "uuid" {
            guard let extended = try? reader.bytes(16) else { return .cut(type: type) }
            header.extendedType = Array(extended)
        }
        return .header(header)
    }

    /// The header's bytes for a box whose body is `bodyLength` bytes: its size field as it
    /// came in, made 64-bit when the size no longer fits 32 bits; 0 only when `toEndAllowed`
    /// (the box is the last of its sequence, so "to the end" still ends where it does).
    public func bytes(bodyLength: UInt64, toEndAllowed: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(Self.maximumLength)
        write(bodyLength: bodyLength, toEndAllowed: toEndAllowed, to: &out)
        return out
    }

    /// Appends ``bytes(bodyLength:toEndAllowed:)`` to `out`.
    public func write(bodyLength: UInt64, toEndAllowed: Bool, to out: inout [UInt8]) {
        let extended = UInt64(extendedType == nil ? 0 : 16)
        switch form(bodyLength: bodyLength, toEndAllowed: toEndAllowed) {
        case .toEnd:
            out.appendU32(0)
            out.appendU32(type.rawValue)
        case .large:
            out.appendU32(1)
            out.appendU32(type.rawValue)
            out.appendU64(16 + extended + bodyLength)
        case .compact:
            out.appendU32(UInt32(8 + extended + bodyLength))
            out.appendU32(type.rawValue)
        }
        if let extendedType { out += extendedType }
    }

    /// The length of ``bytes(bodyLength:toEndAllowed:)``, without making them.
    public func length(bodyLength: UInt64, toEndAllowed: Bool) -> Int {
        (form(bodyLength: bodyLength, toEndAllowed: toEndAllowed) == .large ? 16 : 8) + (extendedType == nil ? 0 : 16)
    }

    /// How the size is written for a body of `bodyLength` bytes.
    private func form(bodyLength: UInt64, toEndAllowed: Bool) -> SizeField {
        if sizeField == .toEnd, toEndAllowed { return .toEnd }
        let extended = UInt64(extendedType == nil ? 0 : 16)
        return sizeField == .large || 8 + extended + bodyLength > UInt64(UInt32.max) ? .large : .compact
    }
}

/// A box found by a walk: where it starts, its header, and how far it runs.
public struct BoxExtent: Sendable, Equatable {
    public var offset: UInt64
    public var header: BoxHeader
    /// Header included; for a box whose size is "to the end", what is left from its offset.
    public var size: UInt64

    public var type: FourCC { header.type }
    /// Where its body starts.
    public var bodyOffset: UInt64 { offset + UInt64(header.length) }
    /// Where it ends, as its header says (saturated: a damaged size may claim any number).
    public var end: UInt64 { offset.addingReportingOverflow(size).overflow ? .max : offset + size }
}

/// Walks boxes one after another through a range of a ``ByteSource``: the top level of a file,
/// or a container's body. The one walk of this library; diagnosis, the tree, the editor and the
/// tests all use it, so sizes 0 and 1, `uuid` and a header cut short are read one way.
public struct BoxWalker<Source: ByteSource> {
    public let source: Source
    /// Where the next box starts.
    public private(set) var offset: UInt64
    public let end: UInt64
    private var finished = false

    /// The boxes of `source` from `start` to `end` (its end when nil).
    public init(_ source: Source, from start: UInt64 = 0, to end: UInt64? = nil) {
        self.source = source
        offset = start
        self.end = min(end ?? source.count, source.count)
    }

    /// The next step; nil after the last, or when the boxes end exactly at ``end``. Throws
    /// only when the source cannot be read.
    public mutating func next() throws(ContainerError) -> BoxStep? {
        guard !finished, offset < end else { return nil }
        let remaining = end - offset
        let prefix = try source.read(at: offset, count: Int(min(remaining, UInt64(BoxHeader.maximumLength))))
        switch BoxHeader.parse(prefix) {
        case .cut(let type):
            finished = true
            return .cut(offset: offset, type: type)
        case .header(let header):
            let size = header.sizeField == .toEnd ? remaining : header.declaredSize
            guard size >= UInt64(header.length) else {
                finished = true
                return .notABox(offset: offset, type: header.type)
            }
            let extent = BoxExtent(offset: offset, header: header, size: size)
            if size > remaining { finished = true } else { offset += size }
            return .box(extent)
        }
    }
}

/// What a ``BoxWalker`` finds next.
public enum BoxStep: Sendable, Equatable {
    /// A box. Its ``BoxExtent/end`` may lie past the walk's end (a file cut short, a
    /// damaged size): then it is the last step.
    case box(BoxExtent)
    /// The bytes end inside a header at `offset` (the last step): fewer than 8 left, or too
    /// few for its 64-bit size or extended type. `type` when the first 8 are there.
    case cut(offset: UInt64, type: FourCC?)
    /// A header whose size is smaller than the header itself: no box starts there (the
    /// last step).
    case notABox(offset: UInt64, type: FourCC)
}
