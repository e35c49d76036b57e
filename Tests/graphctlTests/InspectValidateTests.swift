import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct InspectValidateTests {
    @Test func validateAcceptsTheShippedGraphs() throws {
        let graphs = try FileManager.default.contentsOfDirectory(atPath: Graphctl.root.appendingPathComponent("graphs").path)
            .filter { $0.hasSuffix(".json") }.sorted()
        #expect(!graphs.isEmpty)
        let r = try Graphctl.run("validate")  // no graphs: a usage error
        #expect(r.status == 64)
        let all = try Graphctl.wait(Graphctl.start(["validate"] + graphs.map(Graphctl.graph)))
        #expect(all.status == 0, "\(all.stderr)")
        #expect(all.stdout.split(separator: "\n").count == graphs.count)
    }

    /// What only a node can check (a duration under half a frame at its rate, a format it
    /// cannot read) validate refuses as run does, and an empty output path is one problem.
    @Test func validateRefusesWhatRunWouldRefuse() throws {
        let folder = try TestMedia.temporaryFolder()
        let graph = folder.appendingPathComponent("g.json")
        try Data("""
            { "version": 1, "nodes": {
              "gen": { "type": "generate.frames", "params": { "duration": 0.01, "fps": 30 } },
              "h264": { "type": "encode.h264" }, "file": { "type": "sink.mp4", "params": { "path": "out/x.mp4" } } },
              "edges": [ "gen.out -> h264.in", "h264.out -> file.video" ] }
            """.utf8).write(to: graph)
        let r = try Graphctl.run("validate", graph.path)
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.contains("nodes.gen.params.duration: duration 0.01 s is less than half a frame at 30 fps"), "\(r.stderr)")
        let text = try String(contentsOf: graph, encoding: .utf8)
        try Data(text.replacingOccurrences(of: "out/x.mp4", with: "").replacingOccurrences(of: "0.01", with: "1").utf8).write(to: graph)
        let empty = try Graphctl.run("validate", graph.path)
        #expect(empty.status == 65, "\(empty.stderr)")
        #expect(empty.stderr.components(separatedBy: "nodes.file.params.path").count == 2, "one problem at the path: \(empty.stderr)")
    }

    /// A graph read from a pipe (`/dev/stdin`, a shell's `<(…)`) is read to its end, as a
    /// file is: it was refused as "permission denied" (its size said 0). What cannot be read
    /// says why: a folder, a missing file, an endless stream.
    @Test func aGraphFromAPipeIsRead() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let graphctl = Graphctl.executable.path, graph = Graphctl.graph("waveform.json")
        let piped = try Graphctl.runCommand("/bin/bash", ["-c", "cat '\(graph)' | '\(graphctl)' validate /dev/stdin"])
        #expect(piped.status == 0, "\(piped.stderr)")
        #expect(piped.stdout == "/dev/stdin: ok (3 nodes, 2 edges)\n")
        let substituted = try Graphctl.runCommand("/bin/bash", ["-c", "'\(graphctl)' validate <(cat '\(graph)')"])
        #expect(substituted.status == 0, "\(substituted.stderr)")
        // And it runs.
        let wav = folder.appendingPathComponent("in.wav").path, json = folder.appendingPathComponent("w.json").path
        try TestMedia.writeWAV(wav, seconds: 0.5, sampleRate: 8000, channels: 1)
        let run = try Graphctl.runCommand("/bin/bash", ["-c", "cat '\(graph)' | '\(graphctl)' run --quiet /dev/stdin --set src.path='\(wav)' --set wave.json='\(json)' --set wave.png="])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: json))

        let missing = try Graphctl.run("validate", folder.appendingPathComponent("none.json").path)
        #expect(missing.status == 66)
        #expect(missing.stderr.hasSuffix("none.json: cannot read graph file: no such file\n"), "\(missing.stderr)")
        let isFolder = try Graphctl.run("validate", folder.path)
        #expect(isFolder.status == 66)
        #expect(isFolder.stderr.hasSuffix(": cannot read graph file: it is a folder\n"), "\(isFolder.stderr)")
        let endless = try Graphctl.run("validate", "/dev/zero")
        #expect(endless.status == 65)
        #expect(endless.stderr == "error: /dev/zero: the graph file holds more than 64 MiB: it is no graph (a graph is JSON text)\n")
    }

    /// A graph file that starts with a UTF-8 byte-order mark is read as one without: it was
    /// "malformed JSON: … found byte 0xef".
    @Test func aGraphWithAByteOrderMarkIsAccepted() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let marked = folder.appendingPathComponent("marked.json")
        try Data([0xEF, 0xBB, 0xBF] + (try Data(contentsOf: URL(fileURLWithPath: Graphctl.graph("waveform.json"))))).write(to: marked)
        let r = try Graphctl.run("validate", marked.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "\(marked.path): ok (3 nodes, 2 edges)\n")
    }

    /// validate refuses what cannot run: a format decode is set to give that the node it feeds
    /// does not take (it accepted it, and the run read the bytes as another format), at the
    /// parameter, in the file or on the command line.
    @Test func validateRefusesAFormatThatCannotReachAnInput() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let graph = folder.appendingPathComponent("gray.json")
        try Data("""
            { "version": 1, "nodes": {
              "src": { "type": "source.file", "params": { "path": "in.mp4" } }, "dec": { "type": "decode", "params": { "pixelFormat": "nv12" } },
              "gray": { "type": "effect.grayscale" }, "h264": { "type": "encode.h264" }, "file": { "type": "sink.mp4", "params": { "path": "out/x.mp4" } } },
              "edges": [ "src.out -> dec.in", "dec.video -> gray.in", "gray.out -> h264.in", "h264.out -> file.video" ] }
            """.utf8).write(to: graph)
        let r = try Graphctl.run("validate", graph.path)
        #expect(r.status == 65)
        #expect(r.stderr == "error: \(graph.path): nodes.dec.params.pixelFormat: \"dec.video\" carries video/raw NV12 as pixelFormat is \"nv12\", which \"gray.in\" (effect.grayscale) does not take: it takes video/raw BGRA|RGBA (edges[1]: \"dec.video -> gray.in\")\n")
        let mended = try Graphctl.run("validate", graph.path, "--set", "dec.pixelFormat=rgba")
        #expect(mended.status == 0, "\(mended.stderr)")
        let set = try Graphctl.run("validate", graph.path, "--set", "dec.pixelFormat=i420")
        #expect(set.status == 65)
        #expect(set.stderr.contains(": --set dec.pixelFormat: \"dec.video\" carries video/raw I420 as pixelFormat is \"i420\""), "\(set.stderr)")
    }

    @Test func inspectListsEveryTypeByCategory() throws {
        let r = try Graphctl.run("inspect")
        #expect(r.status == 0)
        for type in NodeRegistry.builtIn.typeNames { #expect(r.stdout.contains(type)) }
        #expect(r.stdout.contains("encode:\n  encode.aac"))
    }

    @Test func inspectShowsPortsParametersAndAnExample() throws {
        let r = try Graphctl.run("inspect", "encode.aac")
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("encode.aac: Encodes PCM audio to AAC-LC\n"))
        #expect(r.stdout.contains("  bitrate: integer, 8000 to 512000, default 96000\n    bits per second\n"))
        #expect(r.stdout.contains("  encoder: enumeration (avenc_aac, voaacenc), default \"avenc_aac\"\n"))
        #expect(r.stdout.contains("  out\n    formats: audio/aac\n"))
        let json = try JSONParser.parse(try Graphctl.run("inspect", "encode.aac", "--json").stdout)
        #expect(json["type"] == "encode.aac")
        #expect(json["parameters"].map { if case .array(let a) = $0 { return a.count }; return 0 } == 4)  // bitrate, encoder, sampleRate, channels
        let typo = try Graphctl.run("inspect", "encode.acc")
        #expect(typo.status == 64)
        #expect(typo.stderr.hasPrefix("error: unknown node type \"encode.acc\"; did you mean \"encode.aac\"?"))
    }

    /// Every node's documented example fragment loads as a node.
    @Test(arguments: NodeRegistry.builtIn.typeNames)
    func everyNodeExampleIsValid(_ type: String) throws {
        let d = NodeRegistry.builtIn.lookup(type)!.descriptor
        let node = try JSONParser.parse(d.example)
        #expect(node["type"] == .string(type))
        // Loaded on its own, inputs are unconnected: only node-level problems count.
        let problems = Self.problems(.object([("version", 1), ("nodes", .object([("n", node)]))]))
        #expect(problems.allSatisfy { $0.message.contains("not connected") || $0.message.contains("at least one of its inputs") },
                "\(problems)")
    }

    static func problems(_ document: JSONValue) -> [GraphError.Problem] {
        do {
            _ = try GraphLoader(registry: .builtIn).load(document)
            return []
        } catch {
            return error.problems
        }
    }

    @Test func versionNamesGraphKit() throws {
        let bare = try Graphctl.run()
        #expect(bare.status == 64 && bare.stderr.contains("USAGE: graphctl <subcommand>"), "\(bare.status) \(bare.stderr)")
        let r = try Graphctl.run("--version")
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("graphctl \(GraphKitInfo.version) (GStreamer "), "\(r.stdout)")
        #expect(GraphKitInfo.version.split(separator: ".").map { Int($0) != nil } == [true, true, true], "\(GraphKitInfo.version)")
    }
}
