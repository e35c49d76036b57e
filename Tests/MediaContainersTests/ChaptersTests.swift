import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import MediaContainers
import TestSupport

/// Chapters in every form files carry them, written by ffmpeg and read back by ``MediaMetadata``
/// as ffprobe's `-show_chapters` reads them: an MP4's and a MOV's QuickTime chapter track (with
/// and without Nero's `chpl` beside it), an MP3's ID3 `CHAP` frames and `CTOC` (versions 2.3 and
/// 2.4), FLAC's and Ogg Vorbis's `CHAPTERxxx` comments.
@Suite struct ChaptersTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static let titles = ["Opening", "Deuxième partie – 東京", "End"]

    /// ffmpeg's chapter list: 0-0.5 s, 0.5-1.5 s, 1.5-2 s.
    func chapterList() throws -> String {
        let list = path("chapters.txt")
        var text = ";FFMETADATA1\n"
        for (i, (start, end)) in [(0, 500), (500, 1500), (1500, 2000)].enumerated() {
            text += "[CHAPTER]\nTIMEBASE=1/1000\nSTART=\(start)\nEND=\(end)\ntitle=\(Self.titles[i])\n"
        }
        try text.write(toFile: list, atomically: true, encoding: .utf8)
        return list
    }

    /// Two seconds of `inputs` with the chapter list, encoded with `codec`.
    func make(_ name: String, video: Bool, codec: [String]) throws -> String {
        var arguments = ["-v", "error", "-y"]
        if video { arguments += ["-f", "lavfi", "-i", "testsrc=duration=2:size=160x120:rate=25"] }
        arguments += ["-f", "lavfi", "-i", "sine=duration=2", "-i", try chapterList()]
        arguments += video ? ["-map", "0", "-map", "1", "-map_chapters", "2"] : ["-map", "0", "-map_chapters", "1"]
        try TestMedia.runTool("ffmpeg", arguments + codec + [path(name)])
        return path(name)
    }

    static func read(_ path: String) throws -> MediaMetadata { try MediaMetadata.read(from: #require(FileBytes(path: path))) }

    static let made: [(name: String, video: Bool, codec: [String], chapterTrack: Bool)] = [
        ("both.mp4", true, ["-c:v", "libx264", "-c:a", "aac"], true),
        ("track-only.mp4", true, ["-c:v", "libx264", "-c:a", "aac", "-movflags", "disable_chpl"], true),
        ("both.mov", true, ["-c:v", "libx264", "-c:a", "aac"], true),
        ("sound.m4a", false, ["-c:a", "aac"], true),
        ("id3v23.mp3", false, ["-c:a", "libmp3lame", "-id3v2_version", "3"], false),
        ("id3v24.mp3", false, ["-c:a", "libmp3lame", "-id3v2_version", "4"], false),
    ]

    /// Each file's chapters: the titles as written, starts and ends as ffprobe reads them (to
    /// the millisecond), and from the chapter track where the file has one.
    @Test(.media, arguments: made.indices) func chaptersReadAsFfprobeReadsThem(_ i: Int) throws {
        let (name, video, codec, chapterTrack) = Self.made[i]
        let file = try make(name, video: video, codec: codec)
        let m = try Self.read(file)
        let probe = try MediaProbe(file)
        #expect(m.chapters.map(\.title) == Self.titles, "\(name): \(m.chapters)")
        #expect(probe.chapters.map(\.title) == Self.titles, "\(name): ffprobe \(probe.chapters)")
        let spans = m.chapterSpans(until: probe.duration)
        #expect(spans.count == probe.chapters.count)
        for (span, theirs) in zip(spans, probe.chapters) {
            #expect(abs(span.start - theirs.start) < 0.001 && abs(span.end - theirs.end) < 0.001, "\(name): \(span) against \(theirs)")
        }
        #expect(m.chapters.map(\.start) == [0, 0.5, 1.5], "\(name)")
        if file.hasSuffix(".mp4") || file.hasSuffix(".mov") || file.hasSuffix(".m4a") {
            let bytes = try #require(FileBytes(path: file))
            let movie = try #require(try MP4File(bytes).movie())
            #expect((movie.chapterTrack != nil) == chapterTrack)
            // The chapter track's chapters end where its samples do.
            #expect(movie.quickTimeChapters(in: bytes).map(\.end) == [0.5, 1.5, 2.0], "\(name)")
            #expect(movie.neroChapters.isEmpty == name.hasPrefix("track-only"))
        }
    }

    /// FLAC and Ogg Vorbis carry chapters as comments (`CHAPTER001=00:00:00.500`,
    /// `CHAPTER001NAME=…`), as ffprobe reads them. Then the same, in another order and with a
    /// fraction of one digit (which ffprobe reads as milliseconds: `.5` as 5 ms): by their
    /// numbers, `.5` half a second; a time that is not one is left out.
    @Test(.media, arguments: ["flac", "ogg"]) func vorbisCommentChapters(_ ext: String) throws {
        func make(_ name: String, _ comments: [(String, String)]) throws -> String {
            var arguments = ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=2"] + (ext == "ogg" ? ["-c:a", "libvorbis"] : [])
            for (key, value) in comments { arguments += ["-metadata", "\(key)=\(value)"] }
            try TestMedia.runTool("ffmpeg", arguments + [path(name)])
            return path(name)
        }
        let expected: [MediaMetadata.Chapter] = [.init(start: 0, title: Self.titles[0]), .init(start: 0.5, title: Self.titles[1]), .init(start: 1.5, title: Self.titles[2])]
        let ordered = try make("ordered.\(ext)", [("CHAPTER000", "00:00:00.000"), ("CHAPTER000NAME", Self.titles[0]),
                                                  ("CHAPTER001", "00:00:00.500"), ("CHAPTER001NAME", Self.titles[1]),
                                                  ("CHAPTER002", "00:00:01.500"), ("CHAPTER002NAME", Self.titles[2])])
        #expect(try Self.read(ordered).chapters == expected)
        let probe = try MediaProbe(ordered)
        #expect(probe.chapters.map(\.start) == [0, 0.5, 1.5], "ffprobe: \(probe.chapters)")
        #expect(probe.chapters.map(\.title) == Self.titles)
        let shuffled = try make("shuffled.\(ext)", [("CHAPTER002", "00:00:01.5"), ("CHAPTER002NAME", Self.titles[2]),
                                                    ("CHAPTER000", "00:00:00"), ("CHAPTER000NAME", Self.titles[0]),
                                                    ("CHAPTER001", "00:00:00.5"), ("CHAPTER001NAME", Self.titles[1]),
                                                    ("CHAPTER003", "soon"), ("CHAPTER003NAME", "not a time")])
        #expect(try Self.read(shuffled).chapters == expected)
    }

    /// An ID3 table of contents decides the order (its entries that are tables expanded in
    /// place); a `CHAP` it does not list is not one of the file's chapters. Without a table, the
    /// chapters are in the order of their starts. The MP3 is ffmpeg's, its tag written here.
    @Test(.media, arguments: [UInt8(3), 4]) func id3TableOfContentsGivesTheOrder(_ version: UInt8) throws {
        let sound = path("plain.mp3")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=2", "-c:a", "libmp3lame", "-write_id3v2", "0", sound])
        let audio = try Data(contentsOf: URL(fileURLWithPath: sound))
        func size(_ n: Int) -> [UInt8] {
            version == 4 ? [UInt8(n >> 21 & 0x7F), UInt8(n >> 14 & 0x7F), UInt8(n >> 7 & 0x7F), UInt8(n & 0x7F)]
                : [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
        }
        func frame(_ id: String, _ body: [UInt8]) -> [UInt8] { Array(id.utf8) + size(body.count) + [0, 0] + body }
        func u32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func chap(_ id: String, _ start: UInt32, _ end: UInt32, _ title: String) -> [UInt8] {
            frame("CHAP", Array(id.utf8) + [0] + u32(start) + u32(end) + u32(.max) + u32(.max) + frame("TIT2", [3] + Array(title.utf8)))
        }
        func ctoc(_ id: String, top: Bool, _ entries: [String]) -> [UInt8] {
            frame("CTOC", Array(id.utf8) + [0, top ? 3 : 1, UInt8(entries.count)] + entries.flatMap { Array($0.utf8) + [0] })
        }
        func tagged(_ frames: [UInt8]) throws -> String {
            let file = path("toc-\(version)-\(UUID().uuidString).mp3")
            let header: [UInt8] = Array("ID3".utf8) + [version, 0, 0] + [UInt8(frames.count >> 21 & 0x7F), UInt8(frames.count >> 14 & 0x7F), UInt8(frames.count >> 7 & 0x7F), UInt8(frames.count & 0x7F)]
            try (Data(header + frames) + audio).write(to: URL(fileURLWithPath: file))
            return file
        }
        let chapters = chap("a", 0, 500, "First") + chap("b", 500, 1000, "Second") + chap("c", 1000, 2000, "Third") + chap("x", 1500, 1600, "Unlisted")
        // The top-level table lists c, then a nested table of b and a.
        let ordered = try tagged(ctoc("toc", top: true, ["c", "sub"]) + ctoc("sub", top: false, ["b", "a"]) + chapters)
        #expect(try Self.read(ordered).chapters == [.init(start: 1, end: 2, title: "Third"), .init(start: 0.5, end: 1, title: "Second"),
                                                     .init(start: 0, end: 0.5, title: "First")])
        let bare = try tagged(chapters)
        #expect(try Self.read(bare).chapters.map(\.title) == ["First", "Second", "Third", "Unlisted"])
        // The text tags beside them are read as ever.
        let titled = try tagged(frame("TIT2", [3] + Array("The title".utf8)) + chapters)
        #expect(try Self.read(titled).title == "The title")
    }

    /// Files cut at every length and garbled read no chapter that the whole file does not hold,
    /// and never crash: the chapter track's samples past the end, a `CHAP` frame cut short.
    @Test(.media, arguments: ["both.mov", "id3v24.mp3"]) func cutAndGarbledFilesReadNoOtherChapters(_ name: String) throws {
        let entry = try #require(Self.made.first { $0.name == name })
        let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: try make(name, video: entry.video, codec: entry.codec))))
        let titles = Set(try Self.read(path(name)).chapters.map(\.title))
        var generator = SystemRandomNumberGenerator()
        for length in stride(from: 0, to: whole.count, by: max(1, whole.count / 200)) {
            let m = try MediaMetadata.read(from: MemoryBytes(Array(whole.prefix(length))))
            #expect(m.chapters.allSatisfy { titles.contains($0.title) }, "cut at \(length): \(m.chapters)")
        }
        for _ in 0..<200 {
            var bytes = whole
            for _ in 0..<8 { bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator) }
            _ = try? MediaMetadata.read(from: MemoryBytes(bytes))  // garbled: anything but a crash
        }
    }
}
