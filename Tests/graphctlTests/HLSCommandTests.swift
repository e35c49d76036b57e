import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphctl hls SOURCE FOLDER`: an MP4 packaged for HLS, what it says, and its exit statuses
/// for what it cannot package (66), cannot write (73) and options that make no sense (64).
@Suite(.media, .timeLimit(.minutes(10))) struct HLSCommandTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func movie() throws -> String {
        let p = path("in.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=5", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=5", "-c:v", "libx264", "-g", "25", "-sc_threshold", "0", "-c:a", "aac", p])
        return p
    }

    @Test func packagesAndSaysWhatItWrote() throws {
        let source = try movie()
        let r = try Graphctl.run("hls", source, path("out"), "--segment-duration", "2", "--playlist", "index.m3u8")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "\(path("out"))/index.m3u8: 3 segments, 5.0 s, target duration 2 s\n")
        #expect(r.stderr == "")
        let check = try HLSPlaylistCheck(path: path("out/index.m3u8"))
        #expect(check.problems == [])
        #expect(check.segments.map { HLSPackageFiles.withoutGeneration($0.uri) } == ["segment0.m4s", "segment1.m4s", "segment2.m4s"])
        // ffmpeg plays it through: every frame.
        let frames = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-count_frames", "-show_entries",
                                                       "stream=nb_read_frames", "-of", "csv=p=0", path("out/index.m3u8")])
        #expect(frames.split(whereSeparator: \.isNewline).first == "125")  // a program's stream, then the stream
        #expect(try Graphctl.run("hls", "--quiet", source, path("quiet")).stdout == "")
    }

    @Test func whatCannotBePackagedExits66() throws {
        let wav = path("tone.wav")
        try TestMedia.writeWAV(wav, seconds: 1)
        let fifo = path("pipe")
        #expect(mkfifo(fifo, 0o600) == 0)
        for (source, why) in [(wav, "it is not an MP4 file (it is a WAV file)"), (fifo, "it is not a regular file")] {
            let r = try Graphctl.run("hls", source, path("out"))
            #expect(r.status == 66)
            #expect(r.stderr == "error: cannot package \"\(source)\" for HLS: \(why)\n")
        }
        #expect(!FileManager.default.fileExists(atPath: path("out")))
    }

    @Test func aFolderThatCannotBeWrittenExits73AndAnUnusableDurationExits64() throws {
        let source = try movie()
        try Data().write(to: URL(fileURLWithPath: path("file")))
        let r = try Graphctl.run("hls", source, path("file"))
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("error: "), "\(r.stderr)")
        let zero = try Graphctl.run("hls", source, path("out"), "--segment-duration", "0")
        #expect(zero.status == 64)
        #expect(zero.stderr.hasPrefix("Error: The value '0' is invalid for '--segment-duration <segment-duration>': --segment-duration takes a number from 0.5 to 60 seconds\n"),
                "\(zero.stderr)")
    }

    /// Segments shorter than the source's key frames are apart (every second, segments of half
    /// a second): 64, saying where and what would do, and nothing written.
    @Test func segmentsShorterThanTheKeyFramesApartExit64() throws {
        let source = try movie()
        let r = try Graphctl.run("hls", source, path("out"), "--segment-duration", "0.5")
        #expect(r.status == 64)
        #expect(r.stderr.hasPrefix("error: segmentDuration: cannot package \"\(source)\" in segments of 0.5 s: its video's key frames are 1 s apart"), "\(r.stderr)")
        #expect(r.stderr.contains("set the segment duration to 1 s or more"))
        #expect(!FileManager.default.fileExists(atPath: path("out")))
    }
}
