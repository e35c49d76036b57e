import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// Every kind of bad input gets its exit status from GRAPH-FORMAT.md and a message naming the
/// thing at fault; nothing is left under an output's name.
@Suite(.media) struct ExitStatusTests {
    @Test func usageErrorIs64() throws {
        let r = try Graphctl.run("run", Graphctl.graph("m4a.json"), "--progress", "sometimes")
        #expect(r.status == 64)
        #expect(r.stderr.contains("Error:"))
        let none = try Graphctl.run("frobnicate")
        #expect(none.status == 64)
    }

    @Test func invalidGraphIs65WithEveryProblem() throws {
        let folder = try TestMedia.temporaryFolder()
        let path = folder.appendingPathComponent("bad.json").path
        try """
        { "version": 1, "nodes": { "mic": { "type": "capture.audio" }, "enc": { "type": "encode.acc" },
          "file": { "type": "sink.mp4", "params": { "path": "x.m4a", "fast": true } } },
          "edges": [ "mic.out -> file.audio" ] }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Graphctl.run("validate", path)
        #expect(r.status == 65)
        #expect(r.stderr == """
            error: \(path): nodes.enc.type: unknown node type "encode.acc"; did you mean "encode.aac"? (`graphctl inspect` lists them); if a plugin provides it, load it with --plugin PATH or GRAPHKIT_PLUGIN_PATH (no plugin was searched for)
            error: \(path): nodes.file.params.fast: unknown parameter "fast" for sink.mp4 (it takes: path, container, faststart, fragmentInterval, videoTransform, fileLengthLimit, title, artist, album, albumArtist, genre, comment, date, encoder, cover, location, chapters, sourceTags)
            error: \(path): edges[0]: cannot connect "mic.out" (audio/pcm S16LE 1-768000 Hz 1-64 ch) to "file.audio" (audio/aac or audio/opus or audio/alac or audio/flac)

            """)
        let set = try Graphctl.run("run", Graphctl.graph("m4a.json"), "--set", "aac.bitrate=lots")
        #expect(set.status == 65)
        #expect(set.stderr == "error: --set aac.bitrate: expected an integer, got \"lots\"\n")
    }

    @Test func malformedJSONIs65WithLineAndColumn() throws {
        let folder = try TestMedia.temporaryFolder()
        let path = folder.appendingPathComponent("broken.json").path
        try "{\n  \"version\": 1,\n  \"nodes\": { \"a\" }\n}".write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Graphctl.run("run", path)
        #expect(r.status == 65)
        #expect(r.stderr == "error: \(path): line 3, column 18: malformed JSON: expected ':' after key \"a\", found '}'\n")
    }

    @Test func unreadableGraphOrInputIs66() throws {
        let r = try Graphctl.run("run", "/nonexistent/graph.json")
        #expect(r.status == 66)
        #expect(r.stderr == "error: /nonexistent/graph.json: cannot read graph file: no such file\n")
        let input = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=/nonexistent.wav")
        #expect(input.status == 66)
        #expect(input.stderr == "error: nodes.src.params.path: cannot read \"/nonexistent.wav\": no such file\n")
    }

    @Test func notMediaIs70NamingTheFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let text = folder.appendingPathComponent("notes.txt").path
        try "just words\n".write(toFile: text, atomically: true, encoding: .utf8)
        let out = folder.appendingPathComponent("x.m4a").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(text)", "--set", "file.path=\(out)")
        #expect(r.status == 70)
        #expect(r.stderr.hasPrefix("error: node \"dec\" (decode, reading \"\(text)\"): "))
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.txt"])
    }

    @Test func truncatedMediaIs70AndKeepsTheOldOutput() throws {
        let folder = try TestMedia.temporaryFolder()
        let good = folder.appendingPathComponent("good.m4a").path
        try #require(try Graphctl.run("run", Graphctl.graph("m4a.json"), "--set", "mic.live=false", "--set", "mic.duration=2",
                                      "--set", "file.faststart=false", "--set", "file.path=\(good)").status == 0)
        // An MP4 whose index comes last, cut in half, has no index: a corrupt input.
        let data = try Data(contentsOf: URL(fileURLWithPath: good))
        let cut = folder.appendingPathComponent("cut.m4a").path
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: cut))
        let out = folder.appendingPathComponent("existing.m4a").path
        try Data("keep me".utf8).write(to: URL(fileURLWithPath: out))
        // Ten times: when decodebin pulled from the file, its demuxer's error was lost about once
        // in 200 runs under load and the run never ended (the guard limit would fail the test).
        for _ in 0..<10 {
            let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(cut)", "--set", "file.path=\(out)")
            #expect(r.status == 70, "\(r.stderr)")
            #expect(r.stderr.contains("reading \"\(cut)\""))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Data("keep me".utf8))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(".existing.m4a.partial").path))
    }

    @Test func unwritableOutputIs73() throws {
        let folder = try TestMedia.temporaryFolder()
        let file = folder.appendingPathComponent("plain").path
        FileManager.default.createFile(atPath: file, contents: Data())
        let r = try Graphctl.run("run", Graphctl.graph("m4a.json"), "--set", "file.path=\(file)/x.m4a")
        #expect(r.status == 73)
        #expect(r.stderr == "error: nodes.file.params.path: cannot write \"\(file)/x.m4a\": \"\(file)\" is a file, not a folder\n")
    }

    @Test func appNodesCannotRunFromTheCommandLine() throws {
        let folder = try TestMedia.temporaryFolder()
        let path = folder.appendingPathComponent("app.json").path
        try #"{ "version": 1, "nodes": { "a": { "type": "source.app" }, "b": { "type": "sink.app" } }, "edges": ["a.out -> b.in"] }"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        let r = try Graphctl.run("run", path)
        #expect(r.status == 65)
        #expect(r.stderr.contains("nodes.a.type: source.app is fed or drained by code"))
    }
}
