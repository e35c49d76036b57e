import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

@Suite(.media) struct DotSchemaTests {
    @Test func dotDrawsNodesAndEdges() throws {
        let r = try Graphctl.run("dot", Graphctl.graph("m4a.json"))
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("digraph \"m4a\" {\n"))
        #expect(r.stdout.contains(#""mic" [label="mic\ncapture.audio"];"#))
        #expect(r.stdout.contains(#""aac" -> "file" [label="out → audio"];"#))
        #expect(r.stdout.contains(#"label="plan: GStreamer pipeline";"#))
    }

    /// The plan shown is the one the run gets, decided as the graph is compiled: a join as
    /// stored needs no pipeline; a remux needs none for an MP4 (its index read), and GStreamer's
    /// demuxer for a file the container library does not copy (here: one that is not there).
    @Test func dotShowsThePlan() throws {
        let concat = try Graphctl.run("dot", Graphctl.graph("concat.json"))
        #expect(concat.status == 0)
        #expect(concat.stdout.contains(#"label="plan: container path (no GStreamer pipeline"#), "\(concat.stdout)")
        let remux = try Graphctl.run("dot", Graphctl.graph("remux.json"), "--set", "src.path=/nonexistent.mp4")
        #expect(remux.stdout.contains(#"label="plan: GStreamer pipeline (not the container path: node \"src\" reading \"/nonexistent.mp4\": no such file)";"#),
                "\(remux.stdout)")
        let folder = try TestMedia.temporaryFolder()
        let mp4 = folder.appendingPathComponent("in.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine", "-t", "1",
                                         "-c:v", "libx264", "-c:a", "aac", "-y", mp4])
        let copy = try Graphctl.run("dot", Graphctl.graph("remux.json"), "--set", "src.path=\(mp4)")
        #expect(copy.stdout.contains(#"label="plan: container path (no GStreamer pipeline"#), "\(copy.stdout)")
        // Why not, when every node could run without a pipeline: the file, or what a sink takes.
        let mkv = folder.appendingPathComponent("in.mkv").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", mp4, "-c", "copy", "-y", mkv])
        let matroska = try Graphctl.run("dot", Graphctl.graph("remux.json"), "--set", "src.path=\(mkv)")
        #expect(matroska.stdout.contains(#"(not the container path: node \"demux\" (demux) reading \"\#(mkv)\": not a whole MP4 or MOV"#), "\(matroska.stdout)")
        let hevc = folder.appendingPathComponent("hevc.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25", "-f", "lavfi", "-i", "sine", "-t", "1",
                                         "-c:v", "libx265", "-x265-params", "log-level=none", "-tag:v", "hvc1", "-c:a", "aac", "-y", hevc])
        let package = try Graphctl.run("dot", Graphctl.graph("package-hls.json"), "--set", "src.path=\(hevc)", "--set", "hls.folder=\(folder.path)/hls")
        #expect(package.stdout.contains(#"(not the container path: node \"hls\" (sink.hls): it does not take audio AAC, video HEVC as stored)"#),
                "\(package.stdout)")
    }

    @Test func dotLabelsEdgesWithWhatARunMeasured() throws {
        let folder = try TestMedia.temporaryFolder()
        let stats = folder.appendingPathComponent("s.json").path
        try #require(try Graphctl.run("run", Graphctl.graph("m4a.json"), "--quiet", "--set", "mic.live=false", "--set", "mic.duration=1",
                                      "--set", "file.path=\(folder.path)/x.m4a", "--stats", stats).status == 0)
        let r = try Graphctl.run("dot", Graphctl.graph("m4a.json"), "--stats", stats)
        #expect(r.status == 0)
        #expect(r.stdout.contains(#""mic" -> "aac" [label="out → in\n"#))
        #expect(r.stdout.contains("buffers\\nmax "))  // the queued edge shows its depth against its capacity
        let bad = try Graphctl.run("dot", Graphctl.graph("m4a.json"), "--stats", "/nonexistent.json")
        #expect(bad.status == 66)
    }

    /// The schema is what the loader accepts: every shipped graph validates, typos do not.
    @Test func schemaDescribesTheFormat() throws {
        let folder = try TestMedia.temporaryFolder()
        let schema = folder.appendingPathComponent("schema.json").path
        let r = try Graphctl.run("schema")
        #expect(r.status == 0)
        try r.stdout.write(toFile: schema, atomically: true, encoding: .utf8)
        let check = """
            import json, glob, sys, jsonschema
            s = json.load(open(sys.argv[1]))
            jsonschema.Draft202012Validator.check_schema(s)
            for g in sorted(glob.glob(sys.argv[2] + '/*.json')):
                jsonschema.validate(json.load(open(g)), s)
            bad = [{'version': 1, 'nodes': {'a': {'type': 'encode.acc'}}},
                   {'version': 1, 'nodes': {'a': {'type': 'encode.aac', 'params': {'bitrate': 1}}}},
                   {'version': 1, 'nodes': {'a': {'type': 'encode.h264', 'params': {'width': 7}}}},
                   {'version': 1, 'nodes': {'a': {'type': 'encode.aac'}}, 'edgs': []}]
            for b in bad:
                try:
                    jsonschema.validate(b, s); sys.exit('accepted: %r' % b)
                except jsonschema.ValidationError:
                    pass
            print('ok')
            """
        let out = try TestMedia.runTool("python3", ["-c", check, schema, Graphctl.root.appendingPathComponent("graphs").path])
        #expect(out == "ok\n")
    }
    /// Rules across parameters are data, so the schema states them: for each of these parameter
    /// sets, JSON Schema (Python's jsonschema) and the loader agree on whether it is valid.
    @Test func theSchemaAndTheLoaderAgreeOnRulesAcrossParameters() throws {
        let cases: [(type: String, params: String)] = [
            ("effect.crop", #"{"aspect": "3:4"}"#), ("effect.crop", #"{"x": 1}"#), ("effect.crop", "{}"),
            ("effect.crop", #"{"aspect": "1:1", "x": 0, "y": 0, "width": 4, "height": 4}"#),
            ("effect.crop", #"{"x": 0, "y": 0, "width": 4, "height": 4}"#), ("effect.crop", #"{"aspect": "3x4"}"#),
            ("encode.h264", #"{"profile": "baseline", "bframes": 2}"#), ("encode.h264", #"{"profile": "baseline"}"#),
            ("encode.h264", #"{"bframes": 2}"#), ("encode.h264", #"{"profile": "main", "bframes": 2}"#),
            ("effect.overlay", "{}"), ("effect.overlay", #"{"show": "timestamp"}"#), ("effect.overlay", #"{"show": "image"}"#),
            ("effect.overlay", #"{"show": "image", "image": "a.png"}"#), ("effect.overlay", #"{"text": "hi"}"#),
            ("effect.gain", #"{"gain": 2, "db": 3}"#), ("effect.gain", #"{"db": 3}"#), ("effect.gain", "{}"),
            ("analysis.waveform", #"{"bits": 12}"#), ("analysis.waveform", #"{"bits": 8}"#),
            ("analysis.waveform", #"{"waveColor": "red"}"#), ("analysis.waveform", ##"{"waveColor": "#aabbcc80"}"##),
            ("analysis.waveform", #"{"json": ""}"#), ("analysis.waveform", #"{"width": 10, "samplesPerPixel": 5}"#),
            ("analysis.waveform", #"{"width": 10, "pixelsPerSecond": 5, "samplesPerPixel": 5}"#),
        ]
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let schema = folder.appendingPathComponent("schema.json").path, list = folder.appendingPathComponent("cases.json").path
        try Graphctl.run("schema").stdout.write(toFile: schema, atomically: true, encoding: .utf8)
        let documents = cases.map { #"{ "version": 1, "nodes": { "a": { "type": "\#($0.type)", "params": \#($0.params) } } }"# }
        try ("[" + documents.joined(separator: ",\n") + "]").write(toFile: list, atomically: true, encoding: .utf8)
        let check = """
            import json, sys, jsonschema
            s = json.load(open(sys.argv[1]))
            for d in json.load(open(sys.argv[2])):
                print('ok' if jsonschema.Draft202012Validator(s).is_valid(d) else 'bad')
            """
        let schemaVerdicts = try TestMedia.runTool("python3", ["-c", check, schema, list]).split(separator: "\n").map(String.init)
        let loader = GraphLoader(registry: .builtIn)
        for (i, document) in documents.enumerated() {
            var problems: [String] = []
            do { _ = try loader.load(json: document) } catch {
                problems = error.problems.map(\.description).filter { $0.hasPrefix("nodes.a.params") }
            }
            let loaderVerdict = problems.isEmpty ? "ok" : "bad"
            #expect(schemaVerdicts.count > i && schemaVerdicts[i] == loaderVerdict,
                    "\(cases[i].type) \(cases[i].params): schema \(schemaVerdicts.count > i ? schemaVerdicts[i] : "?"), loader \(loaderVerdict) \(problems)")
        }
    }
}
