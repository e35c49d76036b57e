import Foundation
import GraphKit
import GraphKitTesting
import Testing
import TestSupport

/// The container sinks past MP4 from the command line: graphs/remux-webm.json validates and runs,
/// a write that fails part-way (a file-size limit, as a full disk would) exits 73 naming the
/// output, and a symbolic link at the output's name exits 73 before anything runs; nothing is
/// left under the target's name or beside it.
@Suite(.media, .timeLimit(.minutes(10))) struct ContainerOutputTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// A second of VP9 and Opus in a WebM.
    func webm() throws -> String {
        let input = folder.appendingPathComponent("in.webm").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine=sample_rate=48000",
                                         "-t", "1", "-pix_fmt", "yuv420p", "-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8",
                                         "-c:a", "libopus", "-y", input])
        return input
    }

    @Test func remuxWebMGraphValidatesAndRuns() throws {
        let input = try webm()
        let valid = try Graphctl.run("validate", Graphctl.graph("remux-webm.json"))
        #expect(valid.status == 0, "\(valid.stderr)")
        let out = folder.appendingPathComponent("out/remuxed.webm").path
        let r = try Graphctl.run("run", Graphctl.graph("remux-webm.json"), "--set", "src.path=\(input)", "--set", "file.path=\(out)")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(try MediaProbe(out).streams.map(\.codecName).sorted() == ["opus", "vp9"])
    }

    @Test func aFailedWriteExits73NamingTheFile() throws {
        let input = folder.appendingPathComponent("noise.flac").path
        // 20 s of stereo noise is about 3 MB of FLAC, past the 1 MiB limit below.
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "anoisesrc=duration=20:sample_rate=48000", "-ac", "2", "-c:a", "flac", "-y", input])
        let graph = folder.appendingPathComponent("remux.json").path
        let out = folder.appendingPathComponent("out.ogg").path
        try Data("""
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(input)" } }, "demux": { "type": "demux" },
              "file": { "type": "sink.ogg", "params": { "path": "\(out)" } } }, "edges": [ "src.out -> demux.in", "demux.audio -> file.audio" ] }
            """.utf8).write(to: URL(fileURLWithPath: graph))
        // SIGXFSZ ignored, so that writing past the limit fails with EFBIG instead of killing.
        let script = "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\""
        let r = try Graphctl.runCommand("/bin/bash", ["-c", script, Graphctl.executable.path, "run", graph])
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr.contains("error: node \"file\" (sink.ogg, writing \"\(out)\"): cannot write \"\(out)\": "), "\(r.stderr)")
        #expect(r.stderr.contains("file too large"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["noise.flac", "remux.json"])
    }

    @Test func aSymbolicLinkAtTheNameExits73() throws {
        let target = folder.appendingPathComponent("elsewhere.mkv").path
        FileManager.default.createFile(atPath: target, contents: Data("not yours".utf8))
        let link = folder.appendingPathComponent("out.mkv").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let r = try Graphctl.run("run", Graphctl.graph("remux-webm.json"), "--set", "src.path=\(try webm())", "--set", "file.path=\(link)")
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr.contains("cannot write \"\(link)\": it is a symbolic link"), "\(r.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data("not yours".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["elsewhere.mkv", "in.webm", "out.mkv"])
    }
}
