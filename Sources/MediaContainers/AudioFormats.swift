// What the headers of Ogg, FLAC, MP3 and WAV files say, as far as GraphKit reads them: the
// diagnosis of a damaged file (ContainerDiagnosis) and the length a WAV file states
// (source.file). Facts only; what they mean for a user is said where they are used.

/// An Ogg page (RFC 3533): "OggS", version 0, a 27-byte header, a segment table, the segments;
/// a CRC-32 of the whole page at bytes 22-25.
package enum Ogg {
    package static let capture: [UInt8] = Array("OggS".utf8)
    package static let headerLength = 27

    /// Whether `header` (27 bytes) starts a page.
    package static func isPageHeader(_ header: [UInt8]) -> Bool {
        header.count >= headerLength && header[0..<4].elementsEqual(capture) && header[4] == 0
    }

    /// The page's length from its segment table: header, table and segments.
    package static func pageLength(segmentTable table: [UInt8]) -> UInt64 {
        UInt64(headerLength + table.count + table.reduce(0) { $0 + Int($1) })
    }

    /// Whether a whole page's bytes match the checksum they carry.
    package static func checksumMatches(page bytes: [UInt8]) -> Bool {
        guard bytes.count >= headerLength else { return false }
        let stored = UInt32(bytes[22]) | UInt32(bytes[23]) << 8 | UInt32(bytes[24]) << 16 | UInt32(bytes[25]) << 24
        var zeroed = bytes
        zeroed.replaceSubrange(22..<26, with: [0, 0, 0, 0])
        return crc(zeroed) == stored
    }

    /// Ogg's CRC-32: polynomial 0x04C11DB7, not reflected, starting from 0.
    private static let table: [UInt32] = (0..<256).map { i -> UInt32 in
        var r = UInt32(i) << 24
        for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? (r << 1) ^ 0x04C1_1DB7 : r << 1 }
        return r
    }

    package static func crc(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0
        for b in bytes { crc = (crc << 8) ^ table[Int((crc >> 24) ^ UInt32(b))] }
        return crc
    }
}

/// FLAC: "fLaC", metadata blocks (each a 4-byte header: last-block bit, type, 24-bit length; the
/// first is STREAMINFO), then frames, which carry no length of their own.
package enum FLAC {
    package static let marker: [UInt8] = Array("fLaC".utf8)

    package struct BlockHeader {
        package var isLast: Bool
        package var type: UInt8
        package var length: UInt64

        package init?(_ bytes: [UInt8]) {
            guard bytes.count >= 4 else { return nil }
            isLast = bytes[0] & 0x80 != 0
            type = bytes[0] & 0x7F
            length = UInt64(bytes[1]) << 16 | UInt64(bytes[2]) << 8 | UInt64(bytes[3])
        }
    }

    /// STREAMINFO's smallest frame size, from the first 10 bytes of its body (0: unknown).
    package static func smallestFrame(streamInfo body: [UInt8]) -> UInt64 {
        guard body.count >= 10 else { return 0 }
        return UInt64(body[4]) << 16 | UInt64(body[5]) << 8 | UInt64(body[6])
    }
}

/// MPEG audio (MPEG-1, 2 and 2.5, layers I to III: MP3, MP2): frames, each with a 4-byte header
/// that gives its length; often after an ID3v2 tag.
package enum MPEGAudio {
    /// The length of an ID3v2 tag at the start of `source` (10-byte header, syncsafe size,
    /// optional footer), or nil when there is none.
    package static func id3v2Length(_ source: some ByteSource) -> UInt64? {
        guard let h = try? source.read(at: 0, count: 10), h.count == 10, h[0..<3].elementsEqual("ID3".utf8) else { return nil }
        let size = UInt64(h[6] & 0x7F) << 21 | UInt64(h[7] & 0x7F) << 14 | UInt64(h[8] & 0x7F) << 7 | UInt64(h[9] & 0x7F)
        return 10 + size + (h[5] & 0x10 != 0 ? 10 : 0)
    }

    /// The byte length of the frame this 4-byte header starts, or nil when it is not one.
    package static func frameLength(_ h: [UInt8]) -> UInt64? {
        guard h.count >= 4, h[0] == 0xFF, h[1] & 0xE0 == 0xE0 else { return nil }
        let version = (h[1] >> 3) & 3   // 0: MPEG-2.5, 2: MPEG-2, 3: MPEG-1
        let layer = (h[1] >> 1) & 3     // 1: III, 2: II, 3: I
        let bitrateIndex = Int(h[2] >> 4), rateIndex = Int((h[2] >> 2) & 3), padding = UInt64((h[2] >> 1) & 1)
        guard version != 1, layer != 0, bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
        let mpeg1 = version == 3
        let bitrates: [UInt64] = switch (mpeg1, layer) {
        case (true, 3): [0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448]
        case (true, 2): [0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384]
        case (true, _): [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
        case (false, 3): [0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256]
        case (false, _): [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        }
        let base: [UInt64] = [44_100, 48_000, 32_000]
        let rate = base[rateIndex] >> (version == 3 ? 0 : version == 2 ? 1 : 2)
        let bitrate = bitrates[bitrateIndex] * 1000
        if layer == 3 { return (12 * bitrate / rate + padding) * 4 }
        let perFrame: UInt64 = layer == 1 && !mpeg1 ? 72 : 144
        return perFrame * bitrate / rate + padding
    }
}

/// A WAV file: RIFF (or RF64, BW64 for one past 4 GiB) chunks, each an ID and a 32-bit
/// little-endian size, padded to an even length: `fmt ` (the format), `ds64` (RF64's 64-bit
/// sizes), `data` (the samples). Also tells Sony's Wave64 and AIFF apart by their first bytes.
package struct WAVEHeader: Sendable, Equatable {
    /// The format's bytes a second, samples a second and channels (`fmt `), when the header
    /// gets that far.
    package var bytesPerSecond: UInt32?
    package var sampleRate: UInt32?
    package var channels: UInt16?
    /// The data chunk's size, when the header states it (a stream written as it came leaves
    /// 0, or 0xFFFFFFFF with no `ds64`).
    package var dataSize: UInt64?
    /// Whether the file ends, chunk after whole chunk, before any data chunk: a header with no
    /// samples at all (GStreamer 1.22's wavparse then ends the stream empty, 1.26's fails).
    package var endsBeforeData = false
    /// A chunk: where it starts (its ID) and its body's stated size.
    package struct Chunk: Sendable, Equatable {
        package var offset: UInt64
        package var size: UInt64
    }
    /// The `fmt ` chunk.
    package var formatChunk: Chunk?
    /// Where the `data` chunk starts (its ID); its samples follow its 8-byte header.
    package var dataChunkOffset: UInt64?

    /// The samples' bytes in a file of `count` bytes: the data chunk's body, as far as the file
    /// and the stated size go (to the file's end when no size is stated).
    package func dataRange(inFileOf count: UInt64) -> Range<UInt64>? {
        guard let dataChunkOffset, dataChunkOffset + 8 <= count else { return nil }
        let start = dataChunkOffset + 8
        return start..<min(count, dataSize.map { start + $0 } ?? count)
    }

    /// The header of the WAV file `source` holds; nil for another file.
    package init?(_ source: some ByteSource) {
        guard Self.isWAVE(source) else { return nil }
        var offset: UInt64 = 12
        var largeDataSize: UInt64?
        // A header holds few chunks before its data: a file that does not get there in 64
        // states no length.
        for _ in 0..<64 {
            guard let chunk = try? source.read(at: offset, count: 8), chunk.count == 8 else {
                endsBeforeData = offset == source.count
                return
            }
            let size = Self.littleEndian(chunk[4..<8])
            switch String(decoding: chunk[0..<4], as: UTF8.self) {
            case "fmt ":
                formatChunk = Chunk(offset: offset, size: size)
                guard let body = try? source.read(at: offset + 8, count: 12), body.count == 12 else { return }
                bytesPerSecond = UInt32(Self.littleEndian(body[8..<12]))
                sampleRate = UInt32(Self.littleEndian(body[4..<8]))
                channels = UInt16(Self.littleEndian(body[2..<4]))
            case "ds64":
                guard let body = try? source.read(at: offset + 8, count: 16), body.count == 16 else { return }
                largeDataSize = Self.littleEndian(body[8..<16])
            case "data":
                dataChunkOffset = offset
                dataSize = size == 0xFFFF_FFFF ? largeDataSize : size == 0 ? nil : size
                return
            default: break
            }
            offset += 8 + size + (size & 1)
        }
    }

    /// Why the format chunk cannot be decoded, as a phrase completing "the file …": a rate of
    /// 0 or past what GStreamer's caps hold (2³¹−1: a header's 0xFFFFFFFF was shown as "-1
    /// samples a second"), or no channels. Nil when the chunk says neither, or is not read.
    package var formatProblem: String? {
        guard let formatChunk else { return nil }
        let at = "its fmt chunk at byte \(formatChunk.offset)"
        if let sampleRate, sampleRate == 0 || sampleRate > UInt32(Int32.max) {
            return "\(at) says its audio has \(sampleRate) samples a second, which no sound has: the header is damaged"
        }
        if channels == 0 { return "\(at) says its audio has 0 channels: the header is damaged" }
        return nil
    }

    /// The length the header states, in microseconds: its data over its bytes a second. Nil
    /// when it states none.
    package var statedMicroseconds: Int64? {
        guard let dataSize, let rate = bytesPerSecond, rate > 0, dataSize < UInt64(Int64.max / 1_000_000) else { return nil }
        return Int64(dataSize) * 1_000_000 / Int64(rate)
    }

    /// Whether `source` starts as a WAV file does (RIFF, RF64 or BW64, then WAVE).
    package static func isWAVE(_ source: some ByteSource) -> Bool {
        guard let header = try? source.read(at: 0, count: 12), header.count == 12 else { return false }
        return ["RIFF", "RF64", "BW64"].contains { header[0..<4].elementsEqual($0.utf8) } && header[8..<12].elementsEqual("WAVE".utf8)
    }

    /// Whether `source` starts as a Sony Wave64 file does: the `riff` GUID at 0 and the `wave`
    /// one at 24 (their first bytes).
    package static func isWave64(_ source: some ByteSource) -> Bool {
        guard let head = try? source.read(at: 0, count: 28), head.count == 28 else { return false }
        return head[0..<8].elementsEqual(Array("riff".utf8) + [0x2E, 0x91, 0xCF, 0x11]) && head[24..<28].elementsEqual("wave".utf8)
    }

    /// Whether `source` starts as an AIFF or AIFF-C file does (FORM, then AIFF or AIFC).
    package static func isAIFF(_ source: some ByteSource) -> Bool {
        guard let head = try? source.read(at: 0, count: 12), head.count == 12 else { return false }
        return head[0..<4].elementsEqual("FORM".utf8) && (head[8..<12].elementsEqual("AIFF".utf8) || head[8..<12].elementsEqual("AIFC".utf8))
    }

    private static func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }
}
