import MediaContainers
import Testing

/// AudioSpecificConfig, the one reader of an AAC configuration's head, and BitReader under it:
/// configurations as encoders write them (ffmpeg's, Apple's, HE-AAC's escape forms) and ones cut
/// short or naming reserved values.
@Suite struct AudioSpecificConfigTests {
    /// Two bytes: 5 bits of object type, 4 of rate index, 4 of channel configuration.
    func head(_ config: [UInt8]) -> [Int]? {
        AudioSpecificConfig(config).map { [$0.objectType, $0.rateIndex, $0.sampleRate, $0.channelConfiguration, $0.channels ?? -1] }
    }

    @Test func theFormsEncodersWrite() {
        #expect(head([0x12, 0x10]) == [2, 4, 44_100, 2, 2])  // AAC LC, 44.1 kHz, stereo
        #expect(head([0x11, 0x88]) == [2, 3, 48_000, 1, 1])  // mono at 48 kHz
        #expect(head([0x11, 0xB8]) == [2, 3, 48_000, 7, 8])  // 7.1
        #expect(head([0x13, 0x00]) == [2, 6, 24_000, 0, -1])  // channels set by a program config element
        // HE-AAC as ffmpeg signals it explicitly: SBR (5), the core's rate index, then more.
        #expect(head([0x2B, 0x92, 0x08, 0x00]) == [5, 7, 22_050, 2, 2])
        // A rate stated in 24 bits (index 15): 2 (5 bits), 15 (4), 50,000 (24), 1 (4); the
        // reader is left after the 37 bits, where the GASpecificConfig begins.
        var reader = BitReader([0x17, 0x80, 0x61, 0xA8, 0x08])
        let stated = AudioSpecificConfig(reading: &reader)
        #expect(stated?.rateIndex == 15 && stated?.sampleRate == 50_000 && stated?.channels == 1, "\(String(describing: stated))")
        #expect(reader.bitsLeft == 40 - 37)
        // An escaped object type (31): 32 + the next 6 bits (10: 42, USAC), then index 3 and 2 channels.
        #expect(head([0xF9, 0x46, 0x40]) == [42, 3, 48_000, 2, 2])
    }

    @Test func shortOrReservedIsNil() {
        #expect(AudioSpecificConfig([]) == nil)
        #expect(AudioSpecificConfig([0x12]) == nil)  // ends inside the rate index
        #expect(AudioSpecificConfig([0x16, 0x90]) == nil)  // rate index 13: reserved
        #expect(AudioSpecificConfig([0x17, 0x80, 0x61]) == nil)  // a stated rate cut short
        #expect(AudioSpecificConfig.aacLC(sampleRate: 48_000, channels: 2) == [0x11, 0x90])
        #expect(AudioSpecificConfig.aacLC(sampleRate: 50_000, channels: 2) == nil)
        #expect(AudioSpecificConfig.aacLC(sampleRate: 48_000, channels: 9) == nil)
    }

    @Test func bitsAndExpGolombCodes() {
        var r = BitReader([0b1010_0110, 0b0100_0000])
        #expect(r.peek(3) == 0b101 && r.bitsLeft == 16)
        #expect(r.read(3) == 0b101)
        #expect(r.ue() == 5)  // 00110: two zeros, then 1 and "10"
        #expect(r.bytesUsed == 1)
        #expect(r.read(40) == nil && r.read(-1) == nil && r.bitsLeft == 8)
        var golomb = BitReader([0b1_010_011_0, 0b0100_0000])  // ue: 0, 1, 2, then 00100 = 3
        #expect(golomb.ue() == 0 && golomb.ue() == 1 && golomb.ue() == 2 && golomb.ue() == 3)
        var signed = BitReader([0b010_011_00, 0b100_00101])  // se: 1, -1, 2 (ue 3), then a cut code
        #expect(signed.se() == 1 && signed.se() == -1 && signed.se() == 2)
        var zeros = BitReader([UInt8](repeating: 0, count: 5) + [0xFF])  // 40 leading zeros: damage
        #expect(zeros.ue() == nil)
    }
}
