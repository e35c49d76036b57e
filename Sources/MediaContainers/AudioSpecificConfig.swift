/// The head of an MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3, 1.6.2.1), what an `esds`
/// carries after its object type byte and an AAC encoder gives as its configuration: the audio
/// object type, the sample rate (by index in table 1.18, or stated), and the channel
/// configuration (table 1.19). The one reader of it: the MP4 index, the stored tracks, the
/// silence for joins and CoreMedia's magic cookies all read it here.
package struct AudioSpecificConfig: Sendable, Equatable {
    /// The sample rates named by index (table 1.18); index 15 says the rate follows in 24 bits.
    package static let sampleRates = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350]

    /// The audio object type: 2 for AAC LC, 5 for SBR; an escaped type (31) read as 32 + 6 bits.
    package var objectType: Int
    /// The rate's index in ``sampleRates``, or 15 when the rate is stated.
    package var rateIndex: Int
    package var sampleRate: Int
    /// 1 to 7 name a layout (7 is 7.1: 8 channels); 0 leaves it to a program config element.
    package var channelConfiguration: Int

    /// The channels a configuration of 1 to 7 names; nil for 0 (set in the stream) or a
    /// reserved value.
    package var channels: Int? {
        switch channelConfiguration {
        case 1...6: channelConfiguration
        case 7: 8
        default: nil
        }
    }

    /// The head of `bytes`; nil when they end before it or name a rate index that is not in the
    /// table (13 and 14 are reserved).
    package init?(_ bytes: [UInt8]) {
        var reader = BitReader(bytes)
        self.init(reading: &reader)
    }

    /// The head, read from `reader`, which is left after it (at the GASpecificConfig, for AAC).
    package init?(reading reader: inout BitReader) {
        guard var objectType = reader.read(5) else { return nil }
        if objectType == 31 {
            guard let extra = reader.read(6) else { return nil }
            objectType = 32 + extra
        }
        guard let index = reader.read(4) else { return nil }
        if index == 15 {
            guard let stated = reader.read(24) else { return nil }
            sampleRate = stated
        } else {
            guard index < Self.sampleRates.count else { return nil }
            sampleRate = Self.sampleRates[index]
        }
        guard let layout = reader.read(4) else { return nil }
        self.objectType = objectType
        rateIndex = index
        channelConfiguration = layout
    }

    /// AAC LC's two-byte configuration for a rate in the table and 1 to 7 channels; nil otherwise.
    package static func aacLC(sampleRate: Int, channels: Int) -> [UInt8]? {
        guard let index = sampleRates.firstIndex(of: sampleRate), (1...7).contains(channels) else { return nil }
        let bits = UInt16(2) << 11 | UInt16(index) << 7 | UInt16(channels) << 3
        return [UInt8(bits >> 8), UInt8(bits & 0xFF)]
    }
}
