import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import MediaContainers
import TestSupport

/// Tags written by ffmpeg into each format read back equal by ``MediaMetadata``: iTunes items
/// (M4A), QuickTime `mdta` keys and user-data strings (MOV), ID3v2.3 and 2.4 (MP3), Vorbis
/// comments and pictures (FLAC, Ogg Vorbis, Opus); non-ASCII text and cover art included. Then
/// the same files cut at every length and garbled: no crash, and nothing read that the whole
/// file does not hold.
@Suite struct MediaMetadataTests {
    static let title = "Café – 東京"
    static let tags: [(String, String)] = [
        ("title", title), ("artist", "Zoë Artist"), ("album", "Ålbum ½"), ("album_artist", "Various Ärtists"),
        ("genre", "Électro"), ("comment", "a comment – ü"), ("date", "2024"), ("track", "3/10"), ("disc", "1/2"),
    ]

    /// A tiny PNG, made by ffmpeg: the cover art (copied into the files as it is).
    static func cover(in folder: URL) throws -> (path: String, bytes: [UInt8]) {
        let path = folder.appendingPathComponent("cover.png").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=8x8", "-frames:v", "1", path])
        return (path, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// A second of tone with `tags` (and the cover, when given) in `name`, by ffmpeg.
    static func make(_ name: String, in folder: URL, codec: [String], cover: String? = nil,
                     tags: [(String, String)] = tags, extra: [String] = []) throws -> String {
        let path = folder.appendingPathComponent(name).path
        var arguments = ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=1"]
        if let cover { arguments += ["-i", cover, "-map", "0", "-map", "1", "-c:v", "copy", "-disposition:v", "attached_pic"] }
        arguments += codec + extra
        for (key, value) in tags { arguments += ["-metadata", "\(key)=\(value)"] }
        try TestMedia.runTool("ffmpeg", arguments + [path])
        return path
    }

    static func read(_ path: String) throws -> MediaMetadata {
        let bytes = try #require(FileBytes(path: path))
        return try MediaMetadata.read(from: bytes)
    }

    /// The files of each format, with the key its title is under and whether it holds a cover
    /// (ffmpeg 5.1's Ogg muxer writes none).
    static let formats: [(name: String, codec: [String], format: MediaContainerFormat, titleKey: String, cover: Bool)] = [
        ("tags.m4a", ["-c:a", "aac"], .mp4, "©nam", true),
        ("id3v23.mp3", ["-c:a", "libmp3lame", "-id3v2_version", "3"], .mp3, "TIT2", true),
        ("id3v24.mp3", ["-c:a", "libmp3lame", "-id3v2_version", "4"], .mp3, "TIT2", true),
        ("tags.flac", ["-c:a", "flac"], .flac, "TITLE", true),
        ("tags.ogg", ["-c:a", "libvorbis"], .ogg, "TITLE", false),
        ("tags.opus", ["-c:a", "libopus"], .ogg, "TITLE", false),
    ]

    /// iTunes items (M4A), ID3v2.3 and 2.4 (MP3), Vorbis comments and a FLAC picture (FLAC),
    /// Vorbis comments in Ogg Vorbis and Opus: every common field read as written.
    @Test(.media, arguments: formats.indices) func tagsAndCoverReadAsWritten(_ i: Int) throws {
        let (name, codec, format, titleKey, hasCover) = Self.formats[i]
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cover = try Self.cover(in: folder)
        let path = try Self.make(name, in: folder, codec: codec, cover: hasCover ? cover.path : nil)
        #expect(try MediaContainerFormat.detect(#require(FileBytes(path: path))) == format)
        let m = try Self.read(path)
        #expect(m.title == Self.title, "\(name)")
        #expect(m.artist == "Zoë Artist", "\(name)")
        #expect(m.album == "Ålbum ½", "\(name)")
        #expect(m.albumArtist == "Various Ärtists", "\(name)")
        #expect(m.genre == "Électro", "\(name)")
        #expect(m.comment == "a comment – ü", "\(name)")
        #expect(m.date?.hasPrefix("2024") == true, "\(name): \(m.date ?? "nil")")
        #expect(m.trackNumber == 3 && m.trackCount == 10, "\(name): \(m.items)")
        #expect(m.discNumber == 1 && m.discCount == 2, "\(name): \(m.items)")
        #expect(m.encoder?.hasPrefix("Lav") == true, "\(name): \(m.encoder ?? "nil")")
        #expect(m.items.contains { $0.key == titleKey && $0.value == Self.title }, "\(name): \(m.items)")
        if name == "id3v24.mp3" { #expect(m.items.contains { $0.key == "TDRC" }) }
        if name == "id3v23.mp3" { #expect(m.items.contains { $0.key == "TYER" }) }
        #expect(m.artwork == (hasCover ? MediaMetadata.Artwork(mimeType: "image/png", data: cover.bytes) : nil), "\(name)")
    }

    /// QuickTime's keys (`meta/hdlr` mdta, `keys`, items by index), as iPhones write them.
    @Test(.media) func quickTimeKeysOfAMOV() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tags = [("com.apple.quicktime.title", Self.title), ("com.apple.quicktime.location.ISO6709", "+48.8577+002.2950+035.000/"),
                    ("com.apple.quicktime.creationdate", "2024-05-01T10:00:00+0200"), ("com.apple.quicktime.software", "Probe 1.0")]
        let path = try Self.make("keys.mov", in: folder, codec: ["-c:a", "pcm_s16le"], tags: tags, extra: ["-movflags", "use_metadata_tags"])
        #expect(try MediaContainerFormat.detect(#require(FileBytes(path: path))) == .mov)
        let m = try Self.read(path)
        #expect(m.title == Self.title, "\(m.items)")
        #expect(m.location == "+48.8577+002.2950+035.000/", "\(m.items)")
        #expect(m.date == "2024-05-01T10:00:00+0200", "\(m.items)")
        #expect(m.encoder == "Probe 1.0", "\(m.items)")
        #expect(m.items.contains { $0.key == "com.apple.quicktime.title" && $0.value == Self.title })
    }

    /// QuickTime user-data strings (`udta/©nam`, `udta/©xyz`), as ffmpeg writes a MOV's tags.
    @Test(.media) func userDataStringsOfAMOV() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.make("udta.mov", in: folder, codec: ["-c:a", "pcm_s16le"],
                                 tags: [("title", Self.title), ("location", "+35.6762+139.6503/")])
        let m = try Self.read(path)
        #expect(m.title == Self.title, "\(m.items)")
        #expect(m.location == "+35.6762+139.6503/", "\(m.items)")
        #expect(m.items.contains { $0.key == "©xyz" }, "\(m.items)")
    }

    /// 3GPP's `loci` box, as ffmpeg's MP4 muxer writes the place: read as the ISO 6709 text
    /// ffprobe prints, south and west negative, the altitude when there is one.
    @Test(.media, arguments: ["+48.8577+002.2950/", "-33.8688-070.6693+058.000/"]) func locationOfAnMP4(_ place: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = try Self.make("loci.mp4", in: folder, codec: ["-c:a", "aac"], tags: [("location", place)])
        let probed = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=location", "-of", "csv=p=0", path])
        let m = try Self.read(path)
        #expect(m.location == place, "\(m.items); ffprobe \(probed)")
        #expect(m.items.contains { $0.key == "loci" }, "\(m.items)")
    }

    /// Every format cut at every length of its first 8 KiB, and with its sizes garbled: no
    /// crash, and every item read is one the whole file holds (nothing from beyond the end).
    @Test(.media) func cutAndGarbledTagsReadNothingFromBeyondTheirBytes() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cover = try Self.cover(in: folder)
        let files = [
            try Self.make("t.m4a", in: folder, codec: ["-c:a", "aac", "-movflags", "+faststart"], cover: cover.path),
            try Self.make("t3.mp3", in: folder, codec: ["-c:a", "libmp3lame", "-id3v2_version", "3"], cover: cover.path),
            try Self.make("t4.mp3", in: folder, codec: ["-c:a", "libmp3lame", "-id3v2_version", "4"], cover: cover.path),
            try Self.make("t.flac", in: folder, codec: ["-c:a", "flac"], cover: cover.path),
            try Self.make("t.opus", in: folder, codec: ["-c:a", "libopus"]),
            try Self.make("t.mov", in: folder, codec: ["-c:a", "pcm_s16le", "-movflags", "+faststart+use_metadata_tags"]),
        ]
        var generator = SplitMix(seed: 31)  // the same damage every run
        for path in files {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let whole = try MediaMetadata.read(from: MemoryBytes(bytes))
            #expect(whole.title == Self.title, "\(path)")
            let items = Set(whole.items.map { "\($0.key)=\($0.value)" })
            for length in 0..<min(bytes.count, 8192) {
                let m = try MediaMetadata.read(from: MemoryBytes(bytes.prefix(length)))
                let extra = m.items.filter { !items.contains("\($0.key)=\($0.value)") }
                #expect(extra.isEmpty, "\(path) cut at \(length): \(extra)")
                if let art = m.artwork { #expect(art == whole.artwork, "\(path) cut at \(length)") }
            }
            // Garbled: bytes of the first 4 KiB set to 0xFF or to random values, a thousand times.
            for _ in 0..<1000 {
                var damaged = bytes
                for _ in 0..<4 {
                    let at = Int.random(in: 0..<min(bytes.count, 4096), using: &generator)
                    damaged[at] = Bool.random(using: &generator) ? 0xFF : UInt8.random(in: 0...255, using: &generator)
                }
                let m = try MediaMetadata.read(from: MemoryBytes(damaged))
                #expect(m.artwork.map { $0.data.count < bytes.count } ?? true)
            }
        }
    }

    /// ID3's own rules: a 2.3 tag unsynchronised as a whole, a 2.4 frame unsynchronised and
    /// with a data-length indicator, UTF-16 with either byte order, and a frame whose size runs
    /// past the tag (read up to it, not past).
    @Test func id3UnsynchronisationEncodingsAndOversizedFrames() throws {
        func frame(_ id: String, _ body: [UInt8], version: UInt8, flags: UInt16 = 0) -> [UInt8] {
            var out = Array(id.utf8)
            let n = UInt32(body.count)
            out.appendU32(version == 4 ? (n & 0x7F) | (n >> 7 & 0x7F) << 8 | (n >> 14 & 0x7F) << 16 | (n >> 21 & 0x7F) << 24 : n)
            out.appendU16(flags)
            return out + body
        }
        func tag(_ version: UInt8, flags: UInt8 = 0, _ frames: [UInt8]) -> [UInt8] {
            let n = UInt32(frames.count)
            return Array("ID3".utf8) + [version, 0, flags, UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)] + frames
        }
        let utf16LE: [UInt8] = [0xFF, 0xFE] + Array(Self.title.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        let utf16BE: [UInt8] = Array(Self.title.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })

        // 2.3, UTF-16 with a little-endian mark, the whole tag unsynchronised (a 0xFF 0xFE
        // becomes 0xFF 0x00 0xFE).
        let plain = frame("TIT2", [1] + utf16LE, version: 3) + frame("TPE1", [0] + Array("Zo".utf8) + [0xEB], version: 3)
        let unsynchronised = ID3Test.unsynchronise(plain)
        #expect(unsynchronised.count > plain.count)
        var m = MediaMetadata()
        ID3v2.read(version: 3, flags: 0x80, body: unsynchronised[...], into: &m)
        #expect(m.title == Self.title && m.artist == "Zoë", "\(m.items)")

        // 2.4: UTF-16BE, one frame unsynchronised with a data-length indicator; then a frame
        // whose size says more than the tag holds.
        let body = [2] + utf16BE
        let v4 = frame("TIT2", [0, 0, 0, UInt8(body.count)] + ID3Test.unsynchronise(body), version: 4, flags: 0x03)
            + frame("TALB", [3] + Array("Ålbum".utf8), version: 4)
        m = MediaMetadata()
        ID3v2.read(version: 4, flags: 0, body: v4[...], into: &m)
        #expect(m.title == Self.title && m.album == "Ålbum", "\(m.items)")
        var oversized = tag(4, v4 + frame("TPE1", [3] + Array("Zoë".utf8), version: 4))
        oversized[oversized.count - 5 - 2 - 4] = 0x7F  // TPE1's size: 127 × 2^21 bytes
        m = try MediaMetadata.read(from: MemoryBytes(oversized))
        #expect(m.title == Self.title && m.album == "Ålbum" && m.artist == nil, "\(m.items)")
        // The tag's own size past the end of the file: what is there is read.
        var long = tag(4, v4)
        long[6] = 0x7F
        #expect(try MediaMetadata.read(from: MemoryBytes(long)).title == Self.title)
    }
}

enum ID3Test {
    /// ID3's unsynchronisation: a zero after each 0xFF that a 0x00 or a byte ≥ 0xE0 follows
    /// (and after a final 0xFF).
    static func unsynchronise(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for (i, b) in bytes.enumerated() {
            out.append(b)
            if b == 0xFF, i + 1 == bytes.count || bytes[i + 1] == 0 || bytes[i + 1] >= 0xE0 { out.append(0) }
        }
        return out
    }
}
