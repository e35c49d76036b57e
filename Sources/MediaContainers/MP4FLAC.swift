// FLAC in an MP4 file, as xiph's "Encapsulation of FLAC in ISO Base Media File Format" (flac's
// doc/isoflac.txt) defines it and ffmpeg writes it: one FLAC frame a sample, every sample a sync
// sample, the media clock at the stream's rate, and a `fLaC` sample entry (an AudioSampleEntry:
// channel count and bits a sample from STREAMINFO, the rate in 16.16) whose `dfLa` box (a full
// box, version 0) holds the stream's native metadata blocks, STREAMINFO first.
//
// GStreamer's MP4 muxer writes no FLAC (1.22 to 1.26): GraphKit's own writer (MP4Writer) does,
// each sample's duration its frame's block size, the entry from the header gkmp4flac keeps.

/// A FLAC stream's header: its metadata blocks (STREAMINFO first), as a `.flac` file starts.
package struct FLACStreamHeader: Sendable, Equatable {
    package struct Block: Sendable, Equatable {
        package var type: UInt8
        package var data: [UInt8]
        package init(type: UInt8, data: [UInt8]) {
            self.type = type
            self.data = data
        }
    }

    /// Block types (FLAC format, METADATA_BLOCK_HEADER).
    package static let streamInfo: UInt8 = 0, padding: UInt8 = 1, seekTable: UInt8 = 3
    /// STREAMINFO's length: 34 bytes.
    static let streamInfoLength = 34

    package var blocks: [Block]

    /// Reads "fLaC" and the metadata blocks after it, up to the one marked last (or the end of
    /// `bytes`). Throws when the marker is missing, a block runs past the end, or the first is no
    /// STREAMINFO of 34 bytes.
    package init(native bytes: [UInt8]) throws(ContainerError) {
        guard bytes.count >= 4, bytes[0..<4].elementsEqual(FLAC.marker) else {
            throw ContainerError("a FLAC stream's header starts with \"fLaC\", and this one does not")
        }
        var blocks: [Block] = []
        var at = 4
        while at + 4 <= bytes.count {
            guard let header = FLAC.BlockHeader(Array(bytes[at..<at + 4])) else { break }
            let end = at + 4 + Int(header.length)
            guard end <= bytes.count else {
                throw ContainerError("its FLAC metadata block \(blocks.count + 1) (type \(header.type)) runs past the header's \(bytes.count) bytes")
            }
            blocks.append(Block(type: header.type, data: Array(bytes[at + 4..<end])))
            at = end
            if header.isLast { break }
        }
        try self.init(blocks: blocks)
    }

    package init(blocks: [Block]) throws(ContainerError) {
        guard let first = blocks.first, first.type == Self.streamInfo, first.data.count == Self.streamInfoLength else {
            throw ContainerError("a FLAC stream's first metadata block is its STREAMINFO (34 bytes), and this header's is not")
        }
        self.blocks = blocks
    }

    private var info: [UInt8] { blocks[0].data }

    /// STREAMINFO's fields (FLAC format, METADATA_BLOCK_STREAMINFO).
    package var sampleRate: Int { Int(info[10]) << 12 | Int(info[11]) << 4 | Int(info[12]) >> 4 }
    package var channels: Int { Int((info[12] >> 1) & 0x07) + 1 }
    package var bitsPerSample: Int { (Int(info[12] & 0x01) << 4 | Int(info[13]) >> 4) + 1 }
    /// The stream's samples (a channel's), 0 when the encoder did not know them.
    package var totalSamples: UInt64 {
        get { (UInt64(info[13] & 0x0F) << 32) | UInt64(info[14]) << 24 | UInt64(info[15]) << 16 | UInt64(info[16]) << 8 | UInt64(info[17]) }
        set {
            let n = min(newValue, (1 << 36) - 1)
            blocks[0].data[13] = blocks[0].data[13] & 0xF0 | UInt8(n >> 32)
            for (i, shift) in [(14, 24), (15, 16), (16, 8), (17, 0)] { blocks[0].data[i] = UInt8((n >> UInt64(shift)) & 0xFF) }
        }
    }
    /// The MD5 of the unencoded samples, all zero when unknown.
    package var md5: [UInt8] {
        get { Array(info[18..<34]) }
        set { if newValue.count == 16 { blocks[0].data.replaceSubrange(18..<34, with: newValue) } }
    }
    /// The smallest and largest frame in bytes, 0 when unknown.
    package var frameSizes: (smallest: Int, largest: Int) {
        get { (Int(info[4]) << 16 | Int(info[5]) << 8 | Int(info[6]), Int(info[7]) << 16 | Int(info[8]) << 8 | Int(info[9])) }
        set {
            for (i, v) in [(4, newValue.smallest), (7, newValue.largest)] {
                let n = min(max(0, v), (1 << 24) - 1)
                blocks[0].data[i] = UInt8(n >> 16); blocks[0].data[i + 1] = UInt8((n >> 8) & 0xFF); blocks[0].data[i + 2] = UInt8(n & 0xFF)
            }
        }
    }

    /// The `dfLa` box: every block but PADDING and SEEKTABLE (a native file's room and its byte
    /// offsets, which mean nothing in an MP4), the last one marked last.
    package var specificBox: MP4Box {
        var body: [UInt8] = []
        body.appendVersionAndFlags(0, 0)
        let kept = blocks.filter { $0.type != Self.padding && $0.type != Self.seekTable }
        for (i, block) in kept.enumerated() {
            body.append(block.type | (i == kept.count - 1 ? 0x80 : 0))
            body.appendU24(UInt32(block.data.count))
            body += block.data
        }
        return MP4Box(type: "dfLa", body: body)
    }

    /// The `fLaC` sample entry: its rate as the 16.16 field holds it (a rate past 65,535 Hz as
    /// its greatest whole division that fits, 48,000 for 96 and 192 kHz, else 65,535), and the
    /// `dfLa` box, whose STREAMINFO has the real rate.
    package func sampleEntry(dataReferenceIndex: UInt16 = 1) -> MP4Box {
        var rate = sampleRate
        while rate > 0xFFFF, rate % 2 == 0 { rate /= 2 }
        if rate > 0xFFFF { rate = 0xFFFF }
        var b: [UInt8] = [0, 0, 0, 0, 0, 0]
        b.appendU16(dataReferenceIndex)
        b.appendU64(0)  // version 0: reserved
        b.appendU16(UInt16(channels)); b.appendU16(UInt16(bitsPerSample))
        b.appendU32(0)  // pre_defined, reserved
        b.appendU32(UInt32(rate) << 16)
        b += specificBox.bytes
        return MP4Box(type: "fLaC", body: b)
    }
}

/// FLAC frames as an MP4 track holds them.
package enum MP4FLAC {
    /// The samples (a channel's) of the FLAC frame whose header `bytes` start with (FLAC format,
    /// FRAME_HEADER: the block size code, and the 8 or 16 bits after the coded frame number that
    /// codes 6 and 7 take); nil when they start no frame.
    package static func blockSize(frame bytes: [UInt8]) -> Int? {
        guard bytes.count >= 5, bytes[0] == 0xFF, bytes[1] & 0xFE == 0xF8 else { return nil }
        let code = Int(bytes[2] >> 4)
        switch code {
        case 1: return 192
        case 2...5: return 576 << (code - 2)
        case 8...15: return 256 << (code - 8)
        case 6, 7:
            // The frame or sample number, coded as UTF-8 is (1 to 7 bytes), starts at byte 4.
            let lead = bytes[4]
            var length = 1
            if lead >= 0x80 {
                // As many bytes as the lead's 1 bits before its first 0: 110xxxxx is 2.
                length = 0
                while length < 8, lead & (0x80 >> UInt8(length)) != 0 { length += 1 }
            }
            let at = 4 + length
            guard (1...7).contains(length), lead < 0x80 || length >= 2 else { return nil }  // 10xxxxxx continues, starts nothing
            if code == 6 { return at < bytes.count ? Int(bytes[at]) + 1 : nil }
            return at + 1 < bytes.count ? (Int(bytes[at]) << 8 | Int(bytes[at + 1])) + 1 : nil
        default: return nil
        }
    }
}
