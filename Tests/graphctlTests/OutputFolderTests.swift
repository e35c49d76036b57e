import Foundation
import Glibc
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// Outputs that are folders are writers like any file output (issue 47): `graphctl hls`'s
/// playlist, sink.hls's playlists and the thumbnails' pictures go through the "never write what
/// you read" check (65, before anything is written), two outputs of one graph that meet are found
/// when it is loaded (65, not 73 while it runs), and a batch refuses inputs that share an HLS
/// folder. A package is replaced as a whole: a cancelled re-package leaves the earlier one
/// complete, and ten packagings at once never leave a playlist naming a missing file.
@Suite(.media, .timeLimit(.minutes(10))) struct OutputFolderTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
    func files(_ dir: String) -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted() }
    func bytes(_ p: String) -> [UInt8]? { (try? Data(contentsOf: URL(fileURLWithPath: p))).map { [UInt8]($0) } }

    /// `seconds` of 160x120 H.264 (a key frame every `gop` frames at 25 fps) and AAC.
    func movie(_ name: String, seconds: Int = 4, gop: Int = 25) throws -> String {
        let p = path(name)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=\(seconds)", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=\(seconds)", "-c:v", "libx264", "-g", "\(gop)", "-sc_threshold", "0",
                                         "-c:a", "aac", "-f", "mp4", p])
        return p
    }

    /// The files a playlist names that are not there.
    func missing(_ playlist: String) throws -> [String] {
        let check = try HLSPlaylistCheck(path: playlist)
        let dir = URL(fileURLWithPath: playlist).deletingLastPathComponent().path
        return (check.segments.map(\.uri) + [check.map].compactMap { $0 }).filter { !FileManager.default.fileExists(atPath: dir + "/" + $0) }
    }

    // MARK: graphctl hls

    /// The attacker's case: `graphctl hls talk.mp4 . --playlist talk.mp4` used to replace the
    /// source with playlist text and exit 0. Refused (65) naming both, nothing written.
    @Test func aPlaylistNamedLikeTheSourceIsRefused() throws {
        let source = try movie("talk.mp4")
        let before = bytes(source)
        let r = try Graphctl.start(["hls", "talk.mp4", ".", "--playlist", "talk.mp4"], in: folder).wait(limit: .seconds(60))
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("\"./talk.mp4\"") && r.stderr.contains("read by the source"), "\(r.stderr)")
        #expect(bytes(source) == before)
        #expect(files(folder.path) == ["talk.mp4"])
    }

    /// A package in a folder, packaged again: the new package's files are in a generation of
    /// their own, the playlist switched in last, the earlier generation gone after. A re-package
    /// cancelled by SIGINT half-way (130) leaves the earlier playlist as it was, every file it
    /// names there and playable.
    @Test func aRepackageReplacesThePackageWholeAndACancelledOneLeavesTheOldOne() throws {
        let small = try movie("small.mp4", seconds: 4)
        let out = path("out")
        var r = try Graphctl.start(["hls", small, out, "--segment-duration", "1"]).wait(limit: .seconds(60))
        #expect(r.status == 0, "\(r.stderr)")
        let first = try #require(bytes(out + "/playlist.m3u8"))
        #expect(try missing(out + "/playlist.m3u8") == [])
        let firstGeneration = files(out).filter { $0 != "playlist.m3u8" }
        #expect(firstGeneration.count == 1 && firstGeneration[0].hasPrefix("playlist."), "\(files(out))")

        // Again, whole: one generation, the new one.
        r = try Graphctl.start(["hls", small, out, "--segment-duration", "1"]).wait(limit: .seconds(60))
        #expect(r.status == 0, "\(r.stderr)")
        let second = files(out).filter { $0 != "playlist.m3u8" }
        #expect(second.count == 1 && second != firstGeneration, "\(files(out))")
        #expect(try missing(out + "/playlist.m3u8") == [])
        let kept = try #require(bytes(out + "/playlist.m3u8"))

        // A long rerun, cancelled once its generation holds a segment.
        let long = try movie("long.mp4", seconds: 60, gop: 12)
        let run = try Graphctl.start(["hls", long, out, "--segment-duration", "0.5"])
        let deadline = ContinuousClock.now + .seconds(30)
        var sawSegment = false
        while ContinuousClock.now < deadline, !sawSegment {
            for g in files(out) where g != "playlist.m3u8" && !second.contains(g) {
                if files(out + "/" + g).contains(where: { $0.hasPrefix("segment") }) { sawSegment = true }
            }
            if !sawSegment { usleep(500) }
        }
        run.send(SIGINT)
        r = run.wait(limit: .seconds(60))
        #expect(sawSegment)
        #expect(r.status == 130 || r.status == 0, "\(r.stderr)")
        #expect(try missing(out + "/playlist.m3u8") == [])
        if r.status == 130 {
            #expect(bytes(out + "/playlist.m3u8") == kept)
            #expect(files(out).filter { $0 != "playlist.m3u8" } == second, "the cancelled generation is removed")
        }
        #expect(first != kept)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", out + "/playlist.m3u8", "-f", "null", "-"])
    }

    /// Ten packagings into one folder at once: each either packages (0) or is refused because
    /// another holds the playlist (73); the playlist left names only files that are there, and
    /// one generation is left.
    @Test func tenPackagingsAtOnceNeverLeaveAPlaylistNamingMissingFiles() throws {
        let source = try movie("in.mp4", seconds: 6)
        let out = path("out")
        let runs = try (0..<10).map { _ in try Graphctl.start(["hls", "--quiet", source, out, "--segment-duration", "1"]) }
        let results = runs.map { $0.wait(limit: .seconds(120)) }
        #expect(results.allSatisfy { $0.status == 0 || $0.status == 73 }, "\(results.map { "\($0.status): \($0.stderr)" })")
        #expect(results.contains { $0.status == 0 })
        #expect(try missing(out + "/playlist.m3u8") == [])
        #expect(files(out).filter { $0 != "playlist.m3u8" }.count == 1, "\(files(out))")
        #expect(try HLSPlaylistCheck(path: out + "/playlist.m3u8").problems == [])
    }

    // MARK: Graphs

    /// graphs/transcode-hls.json copied beside its input, its playlist pointed at the graph file
    /// or at the input through the HLS folder: refused (65) before anything runs, both files as
    /// they were.
    @Test func aGraphNeverWritesItsGraphFileOrItsInputThroughAnHLSFolder() throws {
        let source = try movie("in.mp4", seconds: 2)
        let graph = path("g.json")
        try FileManager.default.copyItem(atPath: Graphctl.graph("transcode-hls.json"), toPath: graph)
        let (graphBytes, sourceBytes) = (bytes(graph), bytes(source))
        for playlist in ["g.json", "in.mp4"] {
            let r = try Graphctl.start(["run", graph, "--quiet", "--set", "src.path=\(source)", "--set", "hls.folder=\(folder.path)",
                                        "--set", "hls.playlist=\(playlist)"]).wait(limit: .seconds(60))
            #expect(r.status == 65, "\(r.stderr)")
            #expect(r.stderr.contains("hls.folder") || r.stderr.contains("nodes.hls.params.folder"), "\(r.stderr)")
        }
        #expect(bytes(graph) == graphBytes && bytes(source) == sourceBytes)
        #expect(files(folder.path) == ["g.json", "in.mp4"])
    }

    /// A ladder's multivariant playlist (master.m3u8 by default, named by no parameter) is an
    /// output like the others: an input by that name in the HLS folder is refused (65) when the
    /// graph is loaded, by `validate` as by `run`, and left as it was.
    @Test func aLaddersMultivariantPlaylistIsCheckedWhenTheGraphIsLoaded() throws {
        let source = try movie("master.m3u8", seconds: 1)
        let before = bytes(source)
        for command in ["validate", "run"] {
            let r = try Graphctl.start([command, Graphctl.graph("hls-ladder.json"), "--set", "src.path=\(source)",
                                        "--set", "hls.folder=\(folder.path)"]).wait(limit: .seconds(60))
            #expect(r.status == 65, "\(command): \(r.stderr)")
            #expect(r.stderr.contains("master.m3u8") && r.stderr.contains("hls"), "\(command): \(r.stderr)")
        }
        #expect(bytes(source) == before)
        #expect(files(folder.path) == ["master.m3u8"])
    }

    /// A repackaging whose input lies in the generation it replaces removes that generation's
    /// segments but not the input it reads (nor so its folder).
    @Test func aRepackagingSparesItsInputInTheGenerationItReplaces() throws {
        let source = try movie("in.mp4", seconds: 2)
        let out = path("out")
        func run(_ input: String) throws -> Graphctl.Result {
            try Graphctl.start(["run", Graphctl.graph("transcode-hls.json"), "--quiet", "--set", "src.path=\(input)",
                                "--set", "hls.folder=\(out)"]).wait(limit: .seconds(120))
        }
        let first = try run(source)
        #expect(first.status == 0, "\(first.stderr)")
        let old = try #require(HLSPackageFiles.generations(out).first)
        let inside = "\(out)/\(old)/in.mp4"
        try FileManager.default.copyItem(atPath: source, toPath: inside)
        let second = try run(inside)
        #expect(second.status == 0, "\(second.stderr)")
        #expect(bytes(inside) == bytes(source))
        #expect(files(out + "/" + old) == ["in.mp4"])
        #expect(HLSPackageFiles.generations(out).count == 2)
        #expect(try missing(out + "/playlist.m3u8") == [])
    }

    /// Two sink.hls nodes writing one playlist, and a sink.hls whose playlist is a sink.mp4's
    /// file: `graphctl validate` finds them (65), as a run would before it starts.
    @Test func twoOutputsMeetingInAnHLSFolderAreFoundWhenTheGraphIsLoaded() throws {
        let graph = path("two.json")
        let out = path("out")
        let text = """
            { "version": 1, "nodes": {
              "src": { "type": "capture.video", "params": { "width": 64, "height": 48, "duration": 1, "live": false } },
              "h264": { "type": "encode.h264" },
              "a": { "type": "sink.hls", "params": { "folder": "\(out)" } },
              "b": { "type": "sink.hls", "params": { "folder": "\(out)/" } },
              "c": { "type": "sink.hls", "params": { "folder": "\(folder.path)", "playlist": "x.mp4" } },
              "mp4": { "type": "sink.mp4", "params": { "path": "\(folder.path)/x.mp4" } } },
              "edges": ["src.out -> h264.in", "h264.out -> a.video", "h264.out -> b.video", "h264.out -> c.video", "h264.out -> mp4.video"] }
            """
        try text.write(toFile: graph, atomically: true, encoding: .utf8)
        for command in ["validate", "run"] {
            let r = try Graphctl.start([command, graph]).wait(limit: .seconds(60))
            #expect(r.status == 65, "\(command): \(r.stderr)")
            #expect(r.stderr.contains("nodes.b.params.folder") && r.stderr.contains("written by nodes.a.params.folder"), "\(command): \(r.stderr)")
            #expect(r.stderr.contains("x.mp4"), "\(command): \(r.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// Two batch inputs writing one HLS folder would write one playlist: refused (65) before any
    /// runs.
    @Test func batchInputsSharingAnHLSFolderAreRefused() throws {
        let inputs = path("inputs")
        try FileManager.default.createDirectory(atPath: inputs, withIntermediateDirectories: true)
        for name in ["a.mp4", "b.mp4"] {
            let made = try movie(name, seconds: 1)
            try FileManager.default.moveItem(atPath: made, toPath: inputs + "/" + name)
        }
        let out = path("hls")
        let r = try Graphctl.start(["batch", Graphctl.graph("transcode-hls.json"), "--inputs", inputs, "--map", "src.path={input}",
                                    "--map", "hls.folder=\(out)"]).wait(limit: .seconds(60))
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("playlist.m3u8"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    // MARK: Thumbnails

    /// A video named like one of the pictures its thumbnails write into its own folder: refused
    /// (65) before anything is written, with count (at load) and with interval (at the start),
    /// the video as it was.
    @Test func aThumbnailsInputNamedLikeAPictureIsRefused() throws {
        let made = try movie("m.mp4", seconds: 2)
        let source = path("thumb-0001.jpg")
        try FileManager.default.moveItem(atPath: made, toPath: source)
        let before = bytes(source)
        for how in ["count=2", "interval=0.5"] {
            let graph = path("t.json")
            let (key, value) = (how.split(separator: "=")[0], how.split(separator: "=")[1])
            try """
                { "version": 1, "nodes": { "thumbs": { "type": "analysis.thumbnails", "params": {
                  "path": "\(source)", "\(key)": \(value), "width": 32, "folder": "\(folder.path)" } } }, "edges": [] }
                """.write(toFile: graph, atomically: true, encoding: .utf8)
            let r = try Graphctl.start(["run", "--quiet", graph]).wait(limit: .seconds(60))
            #expect(r.status == 65, "\(how): \(r.stderr)")
            #expect(r.stderr.contains("thumb-0001.jpg") && r.stderr.contains("nodes.thumbs.params.folder"), "\(how): \(r.stderr)")
            #expect(bytes(source) == before)
            #expect(files(folder.path) == ["t.json", "thumb-0001.jpg"], "\(how)")
        }
    }

    /// A disk that fills while the pictures are written (a small tmpfs, root only): 73, and the
    /// earlier run's complete set of pictures stays as it was: no picture of the failed run, no
    /// staging folder left.
    @Test(.enabled(if: geteuid() == 0, "mounting a file system needs root"))
    func aThumbnailsRunThatFailsLeavesNoneOfItsPictures() throws {
        let source = try movie("in.mp4", seconds: 4, gop: 5)
        let disk = path("disk")
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: false)
        try TestMedia.runTool("mount", ["-t", "tmpfs", "-o", "size=256k", "tmpfs", disk])
        defer { _ = try? TestMedia.runTool("umount", [disk]) }
        func run(count: Int, width: Int) throws -> Graphctl.Result {
            try Graphctl.start(["run", "--quiet", Graphctl.graph("thumbnails.json"), "--set", "thumbs.path=\(source)", "--set", "thumbs.folder=\(disk)/t",
                                "--set", "thumbs.count=\(count)", "--set", "thumbs.width=\(width)", "--set", "thumbs.format=png",
                                "--set", "thumbs.sprite=\(path("sprite.png"))", "--set", "thumbs.vtt=\(path("sprite.vtt"))"]).wait(limit: .seconds(120))
        }
        var r = try run(count: 3, width: 16)
        #expect(r.status == 0, "\(r.stderr)")
        let earlier = files(disk + "/t")
        #expect(earlier == ["thumb-0001.png", "thumb-0002.png", "thumb-0003.png"])
        let earlierBytes = earlier.map { bytes(disk + "/t/" + $0) }
        r = try run(count: 40, width: 160)
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr.contains("No space left on device"), "\(r.stderr)")
        #expect(files(disk + "/t") == earlier, "\(files(disk + "/t"))")
        #expect(earlier.map { bytes(disk + "/t/" + $0) } == earlierBytes)
    }
}
