@testable import MediaContainers
import Testing

/// The Opus header (`dOps`) is put right when its fields were written little-endian, and left
/// alone when they read right (a muxer that writes them as the mapping says) or do not read.
@Suite struct OpusHeaderRepairTests {
    /// An Opus sample entry's body: 28 bytes of AudioSampleEntry, then a `dOps` box.
    static func entry(dOps fields: [UInt8]) -> [UInt8] {
        var body = [UInt8](repeating: 0, count: 28)
        body[17] = 2  // channels
        let box = [0, 0, 0, UInt8(8 + fields.count)] + Array("dOps".utf8) + fields
        return body + box
    }

    @Test func littleEndianFieldsAreTurnedAround() throws {
        // Version 0, 2 channels, pre-skip 312 (0x0138), 48,000 Hz (0x0000BB80), gain 0x0102, family 0.
        let written = Self.entry(dOps: [0, 2, 0x38, 0x01, 0x80, 0xBB, 0x00, 0x00, 0x02, 0x01, 0])
        let fixed = try #require(OpusHeaderRepair.fixed(entry: written))
        #expect(Array(fixed[36...]) == [0, 2, 0x01, 0x38, 0x00, 0x00, 0xBB, 0x80, 0x01, 0x02, 0])
        #expect(OpusHeaderRepair.fixed(entry: fixed) == nil, "a repaired header is not turned back")
    }

    @Test func rightOrUnreadableHeadersAreLeftAlone() {
        #expect(OpusHeaderRepair.fixed(entry: Self.entry(dOps: [0, 2, 0x01, 0x38, 0x00, 0x00, 0xBB, 0x80, 0, 0, 0])) == nil)
        #expect(OpusHeaderRepair.fixed(entry: Self.entry(dOps: [0, 2, 0x01])) == nil, "too short")
        #expect(OpusHeaderRepair.fixed(entry: Self.entry(dOps: [1, 2, 0x38, 0x01, 0x80, 0xBB, 0x00, 0x00, 0, 0, 0])) == nil, "unknown version")
        var damaged = Self.entry(dOps: [0, 2, 0x38, 0x01, 0x80, 0xBB, 0x00, 0x00, 0, 0, 0])
        damaged[31] = 200  // a box size past the entry
        #expect(OpusHeaderRepair.fixed(entry: damaged) == nil)
    }
}
