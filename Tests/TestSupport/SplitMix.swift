/// A small fixed-seed generator (SplitMix64): the same numbers on every run, for tests that make
/// random-looking input (damaged bytes, sample tables, misspelt names) and must see the same each
/// time. A `RandomNumberGenerator`, so `Int.random(in:using:)` takes it too.
public struct SplitMix: RandomNumberGenerator, Sendable {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in 0..<n (0 when n is 1 or less).
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(1, n))) }
}
