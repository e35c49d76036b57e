import Foundation
@testable import MediaContainers
import Testing

/// What a WAV header states, read from its bytes: the data chunk's size, and whether the file
/// ends before any data chunk (a header with no samples at all).
@Suite struct WAVEHeaderTests {
    /// RIFF/WAVE with a 16-byte `fmt ` chunk of `rate` Hz (8 kHz), `channels` (mono), 8-bit, then `extra`.
    static func wav(_ extra: [UInt8], rate: UInt32 = 8_000, channels: UInt8 = 1) -> [UInt8] {
        func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        let fmt: [UInt8] = Array("fmt ".utf8) + le32(16) + [1, 0, channels, 0] + le32(rate) + le32(rate) + [1, 0, 8, 0]
        let body = Array("WAVE".utf8) + fmt + extra
        return Array("RIFF".utf8) + le32(UInt32(body.count)) + body
    }

    @Test func aHeaderThatEndsBeforeItsDataStatesNoSamples() throws {
        let none = try #require(WAVEHeader(MemoryBytes(Self.wav([]))))
        #expect(none.endsBeforeData && none.dataSize == nil)
        // An empty data chunk, or one written as it came (size 0), is not "no data chunk".
        let empty = try #require(WAVEHeader(MemoryBytes(Self.wav(Array("data".utf8) + [0, 0, 0, 0]))))
        #expect(!empty.endsBeforeData)
        let some = try #require(WAVEHeader(MemoryBytes(Self.wav(Array("data".utf8) + [4, 0, 0, 0] + [1, 2, 3, 4]))))
        #expect(!some.endsBeforeData && some.dataSize == 4 && some.statedMicroseconds == 500)
        // Cut inside a chunk's header: the file is damaged, not a header with no data chunk.
        let cut = try #require(WAVEHeader(MemoryBytes(Self.wav(Array("LIST".utf8) + [0xFF, 0, 0, 0]))))
        #expect(!cut.endsBeforeData)
    }

    /// A format chunk's rate of 0 or past 2³¹−1 (0xFFFFFFFF was shown as "-1 samples a second",
    /// 0 as "a general stream error"), or 0 channels: refused before GStreamer reads the file,
    /// naming the chunk and the value; a rate of 768 kHz is a rate.
    @Test func aRateOrChannelsNoSoundHasIsRefusedNamingTheValue() {
        let data = Array("data".utf8) + [2, 0, 0, 0, 0, 0]
        #expect(ContainerLimits.problem(in: MemoryBytes(Self.wav(data, rate: 0xFFFF_FFFF)))
                == "its fmt chunk at byte 12 says its audio has 4294967295 samples a second, which no sound has: the header is damaged")
        #expect(ContainerLimits.problem(in: MemoryBytes(Self.wav(data, rate: 0)))?.contains("has 0 samples a second") == true)
        #expect(ContainerLimits.problem(in: MemoryBytes(Self.wav(data, channels: 0)))?.contains("has 0 channels") == true)
        #expect(ContainerLimits.problem(in: MemoryBytes(Self.wav(data, rate: 768_000))) == nil)
        #expect(ContainerLimits.problem(in: MemoryBytes(Self.wav(data))) == nil)
    }
}
