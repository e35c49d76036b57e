/// A silent AAC access unit for a stream's AudioSpecificConfig: what a join of stored streams
/// puts where a piece has no sound, so that the sound after it stays with the pictures
/// (`source.concat`), as ffmpeg's and Apple's segmenters fill a gap with silent frames.
///
/// The frame is a raw_data_block (ISO/IEC 14496-3, 4.4.2.1) with one element per channel
/// element of the channel configuration (Table 1.19: SCE, CPE and LFE in that order), each
/// channel a long window with no scale factor bands (`max_sfb` 0: no spectral data, so every
/// coefficient is zero), then END: 4 bytes for mono, 7 for stereo. Every AAC decoder of the
/// Low Complexity profile decodes it to silence, whatever the rate.
package enum AACSilence {
    /// One silent frame for `config` (an AudioSpecificConfig, as an `esds` holds it after its
    /// object type byte), and how many samples it lasts at the config's rate. Nil unless the
    /// config is plain AAC LC (object type 2) with a channel configuration of 1 to 7 and no
    /// extension but one saying there is no SBR (an HE-AAC stream's SBR or PS data could not be
    /// left out unheard).
    package static func frame(for config: [UInt8]) -> (bytes: [UInt8], samples: Int, rate: Int)? {
        var reader = BitReader(config)
        guard let head = AudioSpecificConfig(reading: &reader), head.objectType == 2, head.sampleRate > 0 else { return nil }
        let rate = head.sampleRate, layout = head.channelConfiguration
        // GASpecificConfig: frameLengthFlag, dependsOnCoreCoder, extensionFlag (0 for LC).
        guard (1...7).contains(layout), let shortFrames = reader.read(1),
              reader.read(1) == 0, reader.read(1) == 0 else { return nil }
        // An extension after it (14496-3, 1.6.5.1) may say that there is no SBR, as ffmpeg's
        // encoder writes (0x2B7, object type 5, sbrPresentFlag 0); any other, or more, has no frame.
        if reader.bitsLeft >= 16, reader.peek(11) == 0x2B7 {
            _ = reader.read(11)
            guard reader.read(5) == 5, reader.read(1) == 0 else { return nil }
        }
        guard reader.bytesUsed == config.count else { return nil }
        return (block(layout: layout), shortFrames == 1 ? 960 : 1024, rate)
    }

    /// The raw_data_block of silence for channel configuration `layout` (1...7).
    static func block(layout: Int) -> [UInt8] {
        enum Element: Int { case single = 0, pair = 1, lowFrequency = 3 }
        let elements: [Element] = switch layout {
        case 1: [.single]
        case 2: [.pair]
        case 3: [.single, .pair]
        case 4: [.single, .pair, .single]
        case 5: [.single, .pair, .pair]
        case 6: [.single, .pair, .pair, .lowFrequency]
        default: [.single, .pair, .pair, .pair, .lowFrequency]
        }
        var w = Writer()
        var tags: [Element: Int] = [:]
        func channel() {
            w.write(0, 8)   // global_gain (no bands: unused)
            w.write(0, 1)   // ics_reserved_bit
            w.write(0, 2)   // window_sequence ONLY_LONG_SEQUENCE
            w.write(0, 1)   // window_shape
            w.write(0, 6)   // max_sfb: no bands, no spectral data
            w.write(0, 1)   // predictor_data_present
            w.write(0, 3)   // pulse, tns and gain control data present: none
        }
        for element in elements {
            let tag = tags[element, default: 0]
            tags[element] = tag + 1
            w.write(element.rawValue, 3)  // id_syn_ele
            w.write(tag, 4)               // element_instance_tag
            if element == .pair {
                w.write(0, 1)  // common_window: each channel has its own ics_info
                channel()
            }
            channel()
        }
        w.write(7, 3)  // ID_END
        return w.bytes
    }

    private struct Writer {
        var bytes: [UInt8] = []
        var bit = 0
        mutating func write(_ value: Int, _ count: Int) {
            for i in stride(from: count - 1, through: 0, by: -1) {
                if bit % 8 == 0 { bytes.append(0) }
                if value >> i & 1 == 1 { bytes[bytes.count - 1] |= 1 << (7 - bit % 8) }
                bit += 1
            }
        }
    }
}
