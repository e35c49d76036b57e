import Foundation
import GraphKitTesting
import Testing
import TestSupport

/// A file in a codec no installed GStreamer plugin decodes: the error names the file, the codec,
/// and the Debian package that would add a decoder (or says that GraphKit knows none), exits 69,
/// and writes nothing.
@Suite(.media) struct MissingCodecTests {
    /// Whether GStreamer has an element of this name here (`gst-inspect-1.0 NAME` succeeds).
    static func installed(_ element: String) -> Bool {
        (try? TestMedia.runTool("gst-inspect-1.0", ["--exists", element])) != nil
    }

    /// Lossless zlib video (ffmpeg's `zlib` encoder): no GStreamer plugin Debian ships decodes it.
    @Test(.timeLimit(.minutes(10)), .enabled(if: !MissingCodecTests.installed("avdec_zlib"), "this machine can decode zlib video"))
    func aCodecNoPackageDecodesIsNamed() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("zlib.avi").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=duration=1:size=160x120:rate=10",
                                         "-f", "lavfi", "-i", "sine=duration=1", "-c:v", "zlib", "-c:a", "pcm_s16le", input])
        let output = folder.appendingPathComponent("out.mp4").path
        // The video is wanted: the run cannot go on without it.
        let r = try Graphctl.run("run", Graphctl.graph("transcode-video.json"), "--set", "src.path=\(input)", "--set", "file.path=\(output)")
        #expect(r.status == 69, "\(r.stderr)")
        #expect(r.stderr.contains("error: node \"dec\" (decode, reading \"\(input)\"): \"\(input)\" holds Lossless zlib video, "
                                  + "which no installed GStreamer plugin decodes; GraphKit knows no Debian package that does"), "\(r.stderr)")
        #expect(!r.stderr.contains("has no video track"), "\(r.stderr)")  // decodebin hid the stream; it is there
        #expect(!r.stderr.contains("cause:"), "\(r.stderr)")
        // Only the audio is wanted: the run succeeds without the video it cannot decode.
        let audio = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(input)",
                                     "--set", "file.path=\(folder.appendingPathComponent("out.m4a").path)")
        #expect(audio.status == 0, "\(audio.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["out.m4a", "zlib.avi"])
    }

    /// Vorbis with its decoder set aside (rank NONE, so decodebin never picks it, as if
    /// gstreamer1.0-plugins-base had not installed it): the package to install is named.
    @Test(.timeLimit(.minutes(10)))
    func aMissingDecoderNamesItsDebianPackage() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("tone.ogg").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=20 ! audioconvert ! vorbisenc ! oggmux ! filesink location=\(input)")
        var environment = ProcessInfo.processInfo.environment
        environment["GST_PLUGIN_FEATURE_RANK"] = "vorbisdec:NONE"
        let output = folder.appendingPathComponent("out.m4a").path
        let r = try RunningGraphctl(["run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(input)", "--set", "file.path=\(output)"],
                                    environment: environment).wait()
        #expect(r.status == 69, "\(r.stderr)")
        #expect(r.stderr.contains("error: node \"dec\" (decode, reading \"\(input)\"): \"\(input)\" holds Vorbis audio, "
                                  + "which no installed GStreamer plugin decodes; install the Debian package gstreamer1.0-plugins-base"),
                "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["tone.ogg"])
        // The demuxer set aside instead: the file's format is named.
        environment["GST_PLUGIN_FEATURE_RANK"] = "oggdemux:NONE"
        let demux = try RunningGraphctl(["run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(input)", "--set", "file.path=\(output)"],
                                        environment: environment).wait()
        #expect(demux.status == 69, "\(demux.stderr)")
        #expect(demux.stderr.contains("\"\(input)\" is in Ogg format, which no installed GStreamer plugin reads; install the Debian package gstreamer1.0-plugins-base"),
                "\(demux.stderr)")
    }
}
