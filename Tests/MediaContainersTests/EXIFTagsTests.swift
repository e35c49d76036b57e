import MediaContainers
import Testing
import TestSupport

/// EXIFTags: EXIF's directories read in both byte orders, Apple's maker note, and damage that
/// cannot loop or read out of bounds.
@Suite struct EXIFTagsTests {
    static func phone(little: Bool) -> EXIFBuilder {
        var b = EXIFBuilder(little: little)
        b.primary = [(0x010F, .ascii("Apple")), (0x0110, .ascii("iPhone 15 Pro")), (0x0112, .shorts([6]))]
        b.exif = [(0x9003, .ascii("2024:05:01 12:34:56")), (0x9011, .ascii("+02:00")), (0x829A, .rationals([(1, 125)])),
                  (0x8827, .shorts([64])), (0x9204, .signedRationals([(-1, 3)])), (0x9000, .undefined(Array("0232".utf8)))]
        b.gps = [(0x01, .ascii("N")), (0x02, .rationals([(48, 1), (51, 1), (3024, 100)])), (0x06, .rationals([(352, 10)]))]
        b.makerApple = [(17, .ascii("7C1B2A4E-1111-4C4C-9D9D-0123456789AB")), (33, .rationals([(101, 100)]))]
        return b
    }

    @Test(arguments: [true, false])
    func aPhonesTagsAreReadInEitherByteOrder(little: Bool) throws {
        let tags = try #require(EXIFTags(tiff: Self.phone(little: little).bytes()))
        #expect(tags.primary[0x010F] == .text("Apple") && tags.primary[0x0110] == .text("iPhone 15 Pro"))
        #expect(tags.primary[0x0112] == .integers([6]))
        #expect(tags.exif[0x9003] == .text("2024:05:01 12:34:56") && tags.exif[0x9011] == .text("+02:00"))
        #expect(tags.exif[0x829A] == .numbers([0.008]) && tags.exif[0x8827] == .integers([64]))
        #expect(tags.exif[0x9204] == .numbers([-1.0 / 3]))
        #expect(tags.gps[0x01] == .text("N") && tags.gps[0x02] == .numbers([48, 51, 30.24]))
        #expect(tags.makerApple[17] == .text("7C1B2A4E-1111-4C4C-9D9D-0123456789AB"))
        #expect(tags.makerApple[33] == .numbers([1.01]))
        // A HEIF Exif item: a 4-byte offset, then the structure (here after 6 bytes of "Exif\0\0").
        let item = [0, 0, 0, 6] + Array("Exif".utf8) + [0, 0] + Self.phone(little: little).bytes()
        #expect(EXIFTags(heifExifItem: item) == tags)
    }

    @Test func damageCannotLoopOrReadPastTheBytes() throws {
        // The Exif pointer aimed back at IFD0: read once, not again.
        var b = EXIFBuilder(little: false)
        b.primary = [(0x010F, .ascii("Apple")), (0x8769, .longs([8]))]
        let looped = try #require(EXIFTags(tiff: b.bytes()))
        #expect(looped.primary[0x010F] == .text("Apple") && looped.exif.isEmpty)
        // A value claiming 2^31 items, and one whose offset lies past the end: left out, the rest read.
        var tiff = b.bytes()
        tiff[8 + 2 + 4] = 0x7F  // the first entry's count, big-endian: 0x7F……
        #expect(EXIFTags(tiff: tiff)?.primary[0x010F] == nil)
        #expect(EXIFTags(tiff: Array("MM".utf8) + [0, 42, 0xFF, 0xFF, 0xFF, 0xF0])?.primary.isEmpty == true)
        #expect(EXIFTags(tiff: Array("XX".utf8) + [0, 42, 0, 0, 0, 8]) == nil)
        // Every byte changed in turn, then random damage: never a trap.
        let phone = Self.phone(little: true).bytes()
        var random = SplitMix(seed: 0xE1F)
        for round in 0..<(phone.count + 2_000) {
            var damaged = phone
            if round < phone.count { damaged[round] ^= 0xA5 } else {
                for _ in 0..<4 { damaged[random.below(damaged.count)] = UInt8(truncatingIfNeeded: random.next()) }
            }
            _ = EXIFTags(tiff: damaged)
        }
    }
}
