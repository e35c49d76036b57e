import Foundation
import GraphKitTesting
@testable import MediaContainers
import Testing
import TestSupport

/// FLAC's sample entry in an MP4 (`fLaC` with `dfLa`), as xiph's mapping defines it: the same
/// bytes ffmpeg writes for the same stream, the rate field of a high-rate stream, and the blocks
/// a `dfLa` keeps.
@Suite struct MP4FLACTests {
    /// A native FLAC stream's header: "fLaC" and `blocks`, the last marked last.
    static func native(_ blocks: [(UInt8, [UInt8])]) -> [UInt8] {
        var out = Array("fLaC".utf8)
        for (i, (type, data)) in blocks.enumerated() {
            out.append(type | (i == blocks.count - 1 ? 0x80 : 0))
            out.appendU24(UInt32(data.count))
            out += data
        }
        return out
    }

    /// STREAMINFO of `rate`, `channels` and `bits`, 4096-sample blocks, `samples` long.
    static func streamInfo(rate: Int, channels: Int, bits: Int, samples: UInt64 = 0) -> [UInt8] {
        var b: [UInt8] = [0x10, 0x00, 0x10, 0x00, 0, 0, 0, 0, 0, 0]
        b.append(UInt8(rate >> 12)); b.append(UInt8((rate >> 4) & 0xFF))
        b.append(UInt8((rate & 0x0F) << 4 | (channels - 1) << 1 | (bits - 1) >> 4))
        b.append(UInt8(((bits - 1) & 0x0F) << 4) | UInt8(samples >> 32))
        b.appendU32(UInt32(samples & 0xFFFF_FFFF))
        return b + [UInt8](repeating: 0, count: 16)
    }

    /// ffmpeg's own FLAC in MP4 (`-strict -2`) and the header of the same stream in a .flac file:
    /// the entry written from that header is ffmpeg's, byte for byte (ffmpeg keeps STREAMINFO
    /// alone; so does a header of STREAMINFO alone).
    @Test(.media, .timeLimit(.minutes(10))) func theEntryIsFFmpegsForTheSameStream() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let flac = folder.appendingPathComponent("tone.flac").path, mp4 = folder.appendingPathComponent("tone.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1", "-ac", "2",
                                         "-c:a", "flac", flac])
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", flac, "-c:a", "copy", "-strict", "-2", mp4])
        let file = [UInt8](try Data(contentsOf: URL(fileURLWithPath: flac)))
        let native = try FLACStreamHeader(native: file)
        #expect(native.sampleRate == 48_000 && native.channels == 2 && native.bitsPerSample == 16 && native.totalSamples == 48_000)
        let header = try FLACStreamHeader(blocks: [native.blocks[0]])
        let bytes = try #require(FileBytes(path: mp4))
        let movie = try #require(try MP4File(bytes).movie())
        let written = try #require(movie.tracks(handler: "soun").first?.track.box.find(["mdia", "minf", "stbl", "stsd"])?.children.first)
        // ffmpeg adds a bit rate box (btrt) after dfLa: the entry up to it is the same.
        let ours = header.sampleEntry().body
        #expect(Array(written.body.prefix(ours.count)) == ours)
        #expect(try MP4Box.parse(written.body[ours.count...]).map(\.type) == ["btrt"])
    }

    /// A frame's block size from its header: the codes that state it, and the 8 or 16 bits
    /// after the coded frame number (1 to 7 bytes) that codes 6 and 7 take.
    @Test func aFramesBlockSizeIsReadFromItsHeader() {
        #expect(MP4FLAC.blockSize(frame: [0xFF, 0xF8, 0xC9, 0x08, 0x00]) == 4096)  // code 12
        #expect(MP4FLAC.blockSize(frame: [0xFF, 0xF8, 0x19, 0x08, 0x00]) == 192)
        #expect(MP4FLAC.blockSize(frame: [0xFF, 0xF8, 0x59, 0x08, 0x00]) == 4608)  // code 5: 576 << 3
        #expect(MP4FLAC.blockSize(frame: [0xFF, 0xF8, 0x69, 0x08, 0x13, 0x87]) == 0x88)  // 1-byte number, 8 bits
        #expect(MP4FLAC.blockSize(frame: [0xFF, 0xF9, 0x79, 0x08, 0xE1, 0x80, 0x80, 0x02, 0x87]) == 0x288)  // 3-byte number, 16 bits
        #expect(MP4FLAC.blockSize(frame: [0xFF, 0xF8, 0x09, 0x08, 0x00]) == nil, "code 0 is reserved")
        #expect(MP4FLAC.blockSize(frame: Array("fLaC\0".utf8)) == nil)
        #expect(MP4FLAC.blockSize(frame: [0xFF, 0xF8, 0x79, 0x08, 0x13]) == nil, "the 16 bits are missing")
        #expect(MP4FLAC.blockSize(frame: [0xFF, 0xF8, 0x69, 0x08, 0x93, 0x87]) == nil, "a number cannot start 10xxxxxx")
    }

    /// Past 65,535 Hz the 16.16 field holds the greatest whole division that fits (48 kHz for 96
    /// and 192 kHz, 44.1 kHz for 176.4 kHz); STREAMINFO keeps the real rate.
    @Test func aHighRateIsDividedInTheEntry() throws {
        for (rate, field) in [(96_000, 48_000), (192_000, 48_000), (176_400, 44_100), (44_100, 44_100), (655_350, 65_535)] {
            let header = try FLACStreamHeader(native: Self.native([(0, Self.streamInfo(rate: rate, channels: 2, bits: 24))]))
            #expect(header.sampleRate == rate && header.bitsPerSample == 24)
            let body = header.sampleEntry().body
            #expect(Int(body[24]) << 8 | Int(body[25]) == field, "\(rate) Hz")
            #expect(Int(body[18]) << 8 | Int(body[19]) == 24, "samplesize is the stream's bits")
        }
    }

    /// `dfLa` keeps STREAMINFO first and every block but PADDING and SEEKTABLE, the last marked
    /// last; a header whose first block is not STREAMINFO, or that runs short, is refused.
    @Test func theSpecificBoxKeepsTheBlocksThatMeanSomethingInAnMP4() throws {
        let info = Self.streamInfo(rate: 44_100, channels: 6, bits: 16, samples: 1_000)
        let comment: [UInt8] = Array("\u{4}\0\0\0gkgk\0\0\0\0".utf8)
        let header = try FLACStreamHeader(native: Self.native([(0, info), (3, [UInt8](repeating: 0, count: 18)), (4, comment), (1, [0, 0, 0, 0])]))
        #expect(header.channels == 6 && header.totalSamples == 1_000)
        let box = header.specificBox
        let expected: [UInt8] = [0, 0, 0, 0, 0x00, 0, 0, 34] + info + [0x84, 0, 0, UInt8(comment.count)] + comment
        #expect(box.type == "dfLa" && box.body == expected)
        #expect(throws: ContainerError.self) { try FLACStreamHeader(native: Self.native([(4, comment)])) }
        #expect(throws: ContainerError.self) { try FLACStreamHeader(native: Array(Self.native([(0, info)]).dropLast(3))) }
        #expect(throws: ContainerError.self) { try FLACStreamHeader(native: Array("OggS".utf8) + info) }
    }
}
