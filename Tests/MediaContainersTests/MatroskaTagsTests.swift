import Foundation
import Glibc
import Testing
import GraphKitTesting
@testable import MediaContainers

/// The Matroska muxer's serialized tag values, mended in place: each written as
/// `gst_value_serialize` wraps it reads back as its own UTF-8, nothing else in the file moves,
/// and a value that was not so wrapped is left as it is.
@Suite struct MatroskaTagsTests {
    @Test func serializedValuesReadBackAsTheirOwnText() {
        func plain(_ s: String) -> String? { MatroskaTags.unescape(Array(s.utf8)[...]).map { String(decoding: $0, as: UTF8.self) } }
        #expect(plain(#""Caf\303\251\ \342\200\223\ \346\235\261\344\272\254""#) == "Café – 東京")
        #expect(plain(#""say\ \"hi\"\,\ ok""#) == #"say "hi", ok"#)
        #expect(plain(#""back\\slash""#) == #"back\slash"#)
        // Not what the muxer wraps: a safe word alone, quotes with nothing escaped, a raw
        // character that would have been escaped, a lone backslash at the end.
        #expect(plain("Someone") == nil)
        #expect(plain(#""Heroes""#) == nil)
        #expect(plain("\"Café\\ x\"") == nil)
        #expect(plain(#""a\ b\""#) == nil)
        #expect(plain(#"""#) == nil)
    }

    /// An element: its ID's bytes, a size of `sizeWidth` bytes (the muxer writes 8), the body.
    static func element(_ id: [UInt8], _ body: [UInt8], sizeWidth: Int = 8) -> [UInt8] {
        var size = [UInt8](repeating: 0, count: sizeWidth)
        var v = UInt64(body.count)
        for i in stride(from: sizeWidth - 1, through: 0, by: -1) { size[i] = UInt8(truncatingIfNeeded: v); v >>= 8 }
        size[0] |= 0x80 >> (sizeWidth - 1)
        return id + size + body
    }

    static func simpleTag(_ name: String, _ value: String) -> [UInt8] {
        // NUL-ended, as GStreamer's muxer writes them.
        element([0x67, 0xC8], element([0x45, 0xA3], Array(name.utf8) + [0]) + element([0x44, 0x87], Array(value.utf8) + [0]))
    }

    /// `file` written to disk and mended: how many values changed, the bytes after, and the
    /// file (for reading elements back).
    static func mended(_ file: [UInt8]) throws -> (changed: Int, bytes: [UInt8], read: FileBytes) {
        let path = try TestMedia.temporaryFolder().appendingPathComponent("t.mkv").path
        FileManager.default.createFile(atPath: path, contents: Data(file))
        let fd = open(path, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        let changed = try MatroskaTags.mendMuxersWriting(descriptor: fd)
        return (changed, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), FileBytes(owning: fd))
    }

    @Test func aFilesTagsAreMendedInPlaceAndNothingElseMoves() throws {
        let header = Self.element([0x1A, 0x45, 0xDF, 0xA3], Self.element([0x42, 0x82], Array("matroska".utf8)))
        let info = Self.element([0x15, 0x49, 0xA9, 0x66], Self.element([0x44, 0x89], [0x40, 0x8F, 0x40, 0]))
        let tags = Self.element([0x12, 0x54, 0xC3, 0x67], Self.element([0x73, 0x73], Self.element([0x63, 0xC0], []) +
            Self.simpleTag("TITLE", #""Caf\303\251\ \342\200\223\ \346\235\261\344\272\254""#) + Self.simpleTag("ARTIST", "Someone")))
        let cues = Self.element([0x1C, 0x53, 0xBB, 0x6B], [1, 2, 3, 4])
        let file = header + Self.element([0x18, 0x53, 0x80, 0x67], info + tags + cues)
        let (changed, mended, read) = try Self.mended(file)
        #expect(changed == 1)
        #expect(mended.count == file.count)
        // Everything outside the Tags element is as it was; the cues are where they were.
        let tagsAt = header.count + 12 + info.count
        #expect(mended[..<tagsAt] == file[..<tagsAt])
        #expect(mended[(tagsAt + tags.count)...] == file[(tagsAt + tags.count)...])
        let body = try #require(try MatroskaTags.element(in: read, at: UInt64(tagsAt)))
        #expect(body.id == MatroskaTags.tags)
        let text = String(decoding: mended[Int(body.bodyStart)..<Int(body.end)], as: UTF8.self)
        #expect(text.contains("Café – 東京\0") && text.contains("Someone\0") && !text.contains("\\"))
        // What the Tags gave up is a Void right after them.
        let void = try #require(try MatroskaTags.element(in: read, at: body.end))
        #expect(void.id == MatroskaTags.void && void.end == UInt64(tagsAt + tags.count))
        // Mended once: a second pass finds nothing to change.
        #expect(try MatroskaTags.mendMuxersWriting(descriptor: read.descriptor) == 0)
    }

    /// A chapter end GStreamer's muxer wrote as "none" (all ones) becomes a Void of its length;
    /// a stated end stays.
    @Test func anUnstatedChapterEndBecomesAVoid() throws {
        func atom(_ start: UInt8, _ end: [UInt8]) -> [UInt8] {
            Self.element([0xB6], Self.element([0x91], [start], sizeWidth: 1) + Self.element([0x92], end, sizeWidth: 1))
        }
        let stated = atom(0, [0, 0, 0, 0, 0x3B, 0x9A, 0xCA, 0]), unstated = atom(1, [UInt8](repeating: 0xFF, count: 8))
        let chapters = Self.element([0x10, 0x43, 0xA7, 0x70], Self.element([0x45, 0xB9], stated + unstated))
        let header = Self.element([0x1A, 0x45, 0xDF, 0xA3], Self.element([0x42, 0x82], Array("matroska".utf8)))
        let file = header + Self.element([0x18, 0x53, 0x80, 0x67], chapters)
        let (changed, mended, _) = try Self.mended(file)
        #expect(changed == 1)
        #expect(mended.count == file.count)
        // The unstated end (its last 10 bytes) is a Void of 8 zeros; all else as it was.
        #expect(mended[..<(file.count - 10)] == file[..<(file.count - 10)])
        #expect(Array(mended[(file.count - 10)...]) == [0xEC, 0x88] + [UInt8](repeating: 0, count: 8))
    }

    /// Damaged Matroska (a Tags element whose size runs past the file, a child whose size runs
    /// past its parent, a segment of unknown size, SimpleTags nested past the bound, a value
    /// quoted with nothing escaped or a raw character inside): nothing is changed, nothing traps.
    @Test func damagedElementsAreLeftAsTheyAre() throws {
        let header = Self.element([0x1A, 0x45, 0xDF, 0xA3], Self.element([0x42, 0x82], Array("matroska".utf8)))
        let escaped = Self.simpleTag("TITLE", #""a\ b""#)
        var nested = escaped
        for _ in 0..<40 { nested = Self.element([0x67, 0xC8], nested) }
        let tagsID: [UInt8] = [0x12, 0x54, 0xC3, 0x67]
        let cases: [[UInt8]] = [
            header + Self.element([0x18, 0x53, 0x80, 0x67], Array(Self.element(tagsID, Self.element([0x73, 0x73], escaped)).dropLast(3))),
            header + Self.element([0x18, 0x53, 0x80, 0x67], tagsID + [0x81] + Self.element([0x73, 0x73], escaped)),
            header + [0x18, 0x53, 0x80, 0x67, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + Self.element(tagsID, Self.element([0x73, 0x73], escaped)),
            header + Self.element([0x18, 0x53, 0x80, 0x67], Self.element(tagsID, Self.element([0x73, 0x73], nested))),
            header + Self.element([0x18, 0x53, 0x80, 0x67], Self.element(tagsID, Self.element([0x73, 0x73], Self.simpleTag("A", #""Heroes""#)))),
            header + Self.element([0x18, 0x53, 0x80, 0x67], Self.element(tagsID, Self.element([0x73, 0x73], Self.simpleTag("A", "\"Caf\u{e9}\\ x\"")))),
            Array(header.prefix(7)),
        ]
        for (i, file) in cases.enumerated() {
            let (changed, bytes, _) = try Self.mended(file)
            #expect(changed == 0, "case \(i)")
            #expect(bytes == file, "case \(i)")
        }
    }

    @Test func whatIsNotMatroskaIsLeftAlone() throws {
        let path = try TestMedia.temporaryFolder().appendingPathComponent("t.bin").path
        let bytes: [UInt8] = Array("\"Caf\\303\\251\" not an EBML file".utf8)
        FileManager.default.createFile(atPath: path, contents: Data(bytes))
        let fd = open(path, O_RDWR | O_CLOEXEC)
        try #require(fd >= 0)
        defer { close(fd) }
        #expect(try MatroskaTags.mendMuxersWriting(descriptor: fd) == 0)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == bytes)
    }
}
