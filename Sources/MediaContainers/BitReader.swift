/// Bits of a byte array, most significant first, as MPEG's syntax reads them (an
/// AudioSpecificConfig, a NAL unit's payload); nil past the end.
package struct BitReader: Sendable {
    package let bytes: [UInt8]
    package private(set) var bit = 0
    package init(_ bytes: [UInt8]) { self.bytes = bytes }
    /// The bytes read into, a partly read one counted.
    package var bytesUsed: Int { (bit + 7) / 8 }
    package var bitsLeft: Int { bytes.count * 8 - bit }

    /// The next `count` bits (at most 32) as a number; nil, and nothing read, past the end.
    package mutating func read(_ count: Int) -> Int? {
        guard count >= 0, count <= 32, count <= bitsLeft else { return nil }
        var value = 0
        for _ in 0..<count {
            value = value << 1 | Int(bytes[bit / 8] >> (7 - bit % 8) & 1)
            bit += 1
        }
        return value
    }

    /// The next `count` bits, left unread.
    package func peek(_ count: Int) -> Int? {
        var copy = self
        return copy.read(count)
    }

    /// ue(v), an Exp-Golomb code (H.264 9.1): at most 31 leading zeros (a longer run is damage).
    package mutating func ue() -> Int? {
        var zeros = 0
        while true {
            guard let b = read(1) else { return nil }
            if b == 1 { break }
            zeros += 1
            guard zeros <= 31 else { return nil }
        }
        guard let rest = read(zeros) else { return nil }
        return (1 << zeros) - 1 + rest
    }

    /// se(v), a signed Exp-Golomb code.
    package mutating func se() -> Int? {
        guard let k = ue() else { return nil }
        return k & 1 == 1 ? (k + 1) / 2 : -(k / 2)
    }
}
