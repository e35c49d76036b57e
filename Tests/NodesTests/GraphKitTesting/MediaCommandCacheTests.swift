import Foundation
import Testing
@testable import GraphKitTesting
import TestSupport

/// `TestMedia.runTool`'s cache of ffmpeg's files (`MediaCommandCache`): the same command into
/// another folder gives the same bytes without running ffmpeg again; other input bytes, a
/// second output, a random source or an output already there run it again.
@Suite(.media) struct MediaCommandCacheTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A fresh folder's path for `name`, as another test would make its own.
    func elsewhere(_ name: String) throws -> String { try TestMedia.temporaryFolder().appendingPathComponent(name).path }

    static let clip = ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=10:duration=1", "-c:v", "libx264", "-g", "5"]

    @Test func theSameCommandElsewhereCopiesTheFirstFile() throws {
        // A duration no other test asks for: this command is new to the process.
        let command = Self.clip + ["-t", "0.7"]
        let first = path("a.mp4"), second = try elsewhere("b.mp4")
        #expect(MediaCommandCache.key("ffmpeg", command + [first]) != nil)
        let reused = MediaCommandCache.reused.load(ordering: .relaxed)
        try TestMedia.runTool("ffmpeg", command + [first])
        try TestMedia.runTool("ffmpeg", command + [second])
        #expect(MediaCommandCache.reused.load(ordering: .relaxed) > reused)
        let a = try Data(contentsOf: URL(fileURLWithPath: first)), b = try Data(contentsOf: URL(fileURLWithPath: second))
        #expect(a.count > 1000 && a == b)
        // Another suffix is another command: ffmpeg picks the format by it.
        #expect(MediaCommandCache.key("ffmpeg", command + [path("c.mkv")]) != MediaCommandCache.key("ffmpeg", command + [path("c.mp4")]))
    }

    @Test func anInputFileIsKeyedByItsBytes() throws {
        let list = path("chapters.txt"), out = path("out.mp4")
        try ";FFMETADATA1\ntitle=One\n".write(toFile: list, atomically: true, encoding: .utf8)
        let command = Self.clip + ["-i", list, "-map_metadata", "1"]
        let one = try #require(MediaCommandCache.key("ffmpeg", command + [out]))
        let moved = try elsewhere("chapters.txt")
        try ";FFMETADATA1\ntitle=One\n".write(toFile: moved, atomically: true, encoding: .utf8)
        #expect(MediaCommandCache.key("ffmpeg", Self.clip + ["-i", moved, "-map_metadata", "1", out]) == one)
        try ";FFMETADATA1\ntitle=Two\n".write(toFile: list, atomically: true, encoding: .utf8)
        #expect(MediaCommandCache.key("ffmpeg", command + [out]) != one)
        // A link, or a path inside another argument, is not read: not kept.
        try FileManager.default.createSymbolicLink(atPath: path("link.txt"), withDestinationPath: list)
        #expect(MediaCommandCache.key("ffmpeg", Self.clip + ["-i", path("link.txt"), out]) == nil)
        #expect(MediaCommandCache.key("ffmpeg", Self.clip + ["-vf", "subtitles=\(path("s.srt"))", out]) == nil)
    }

    @Test func whatCanDifferIsNotKept() throws {
        let out = path("x.mp4")
        #expect(MediaCommandCache.key("ffmpeg", ["-f", "lavfi", "-i", "anoisesrc=d=1", out]) == nil)
        #expect(MediaCommandCache.key("ffmpeg", Self.clip + ["-f", "segment", path("s%d.mp4")]) == nil)
        #expect(MediaCommandCache.key("ffprobe", [out]) == nil)
        FileManager.default.createFile(atPath: out, contents: Data([1]))
        #expect(MediaCommandCache.key("ffmpeg", Self.clip + [out]) == nil)
        // Two outputs: the folder has a second new file, so the run is not kept, and the same
        // command elsewhere writes both again.
        let command = Self.clip + ["-t", "0.6"]
        try TestMedia.runTool("ffmpeg", command + [path("first.mp4"), path("last.mp4")])
        let other = try TestMedia.temporaryFolder()
        try TestMedia.runTool("ffmpeg", command + [other.appendingPathComponent("first.mp4").path, other.appendingPathComponent("last.mp4").path])
        #expect(FileManager.default.fileExists(atPath: other.appendingPathComponent("first.mp4").path))
    }
}
