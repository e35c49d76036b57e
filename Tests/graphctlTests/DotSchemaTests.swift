import Foundation
import Testing
import GraphKit
import GraphKitTesting

@Suite struct DotSchemaTests {
    @Test func dotDrawsNodesAndEdges() throws {
        let r = try Graphctl.run("dot", Graphctl.graph("m4a.json"))
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("digraph \"m4a\" {\n"))
        #expect(r.stdout.contains(#""mic" [label="mic\ncapture.audio"];"#))
        #expect(r.stdout.contains(#""aac" -> "file" [label="out → audio"];"#))
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
}
