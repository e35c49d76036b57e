import TestSupport
import Testing
import Foundation
import GraphKit
import GraphKitTesting
import Nodes

@Suite struct GraphLoaderTests {
    let loader = GraphLoader(registry: .builtIn)

    /// A valid graph with one substitution, so each broken case shows only what it breaks.
    static func graph(nodes: String? = nil, edges: String? = nil, extra: String = "") -> String {
        let n = nodes ?? """
            "mic": { "type": "capture.audio", "params": { "duration": 1 } },
            "aac": { "type": "encode.aac", "params": { "bitrate": 96000 } },
            "file": { "type": "sink.mp4", "params": { "path": "out/x.m4a" } }
            """
        let e = edges ?? #""mic.out -> aac.in", "aac.out -> file.audio""#
        return #"{ "version": 1, "nodes": { \#(n) }, "edges": [ \#(e) ]\#(extra) }"#
    }

    func problems(_ text: String, overrides: [String] = [], loader: GraphLoader? = nil) -> [String] {
        do {
            _ = try (loader ?? self.loader).load(json: text, overrides: try overrides.map { try GraphLoader.Override(parsing: $0) })
            return []
        } catch let error as GraphError {
            #expect(error.code == .invalidGraph)
            return error.problems.map(\.description)
        } catch {
            Issue.record("not a GraphError: \(error)")
            return []
        }
    }

    @Test func validGraphLoadsInTopologicalOrder() throws {
        let g = try loader.load(json: Self.graph(edges: #""aac.out -> file.audio", "mic.out -> aac.in""#))
        #expect(g.nodes.map(\.id) == ["mic", "aac", "file"])
        #expect(g.node("aac")?.parameters[AACEncoderNode.bitrate] == 96000)
        #expect(g.node("aac")?.parameters[AACEncoderNode.encoder] == .avenc_aac)  // the default
        #expect(g.edges[0].capacity == .default)
    }

    @Test(arguments: [
        (graph(extra: #", "edgs": []"#),
         [#"edgs: unknown key "edgs"; did you mean "edges"? (allowed: version, name, description, nodes, edges)"#]),
        (#"{ "version": 2, "nodes": { "a": { "type": "capture.audio" } } }"#, ["version: expected 1, got 2"]),
        (graph(nodes: #""mic": { "type": "capture.audio" }, "mic": { "type": "capture.audio" }"#, edges: ""),
         [#"nodes.mic: node id "mic" is given twice"#]),
        (graph(nodes: #""m c": { "type": "capture.audio" }"#, edges: ""),
         [#"nodes.m c: node id "m c" may use only letters, digits, _ and -"#]),
        (graph(nodes: #""a": { "type": "encode.acc" }"#, edges: ""),
         [#"nodes.a.type: unknown node type "encode.acc"; did you mean "encode.aac"? (`graphctl inspect` lists them); if a plugin provides it, load it with --plugin PATH or GRAPHKIT_PLUGIN_PATH (no plugin was searched for)"#]),
        (graph(nodes: #""a": { "type": "capture.audio", "parms": {} }"#, edges: ""),
         [#"nodes.a.parms: unknown key "parms"; did you mean "params"? (allowed: type, params)"#]),
        (graph(nodes: #""a": { "type": "capture.audio", "params": { "sampleRte": 8000 } }"#, edges: ""),
         [#"nodes.a.params.sampleRte: unknown parameter "sampleRte" for capture.audio; did you mean "sampleRate"? (it takes: device, wave, frequency, sampleRate, channels, duration, live)"#]),
        (graph(nodes: #""a": { "type": "capture.audio", "params": { "sampleRate": 1000 } }"#, edges: ""),
         ["nodes.a.params.sampleRate: 1000 is out of range (8000 to 192000)"]),
        (graph(nodes: #""a": { "type": "capture.audio", "params": { "sampleRate": "44100" } }"#, edges: ""),
         [#"nodes.a.params.sampleRate: expected integer, got a string "44100""#]),
        (graph(nodes: #""a": { "type": "capture.audio", "params": { "sampleRate": null } }"#, edges: ""),
         ["nodes.a.params.sampleRate: expected integer, got null"]),
        (graph(nodes: #""a": { "type": "capture.audio", "params": { "sampleRate": 44100.5 } }"#, edges: ""),
         ["nodes.a.params.sampleRate: expected an integer, got 44100.5"]),
        (graph(nodes: #""a": { "type": "capture.audio", "params": { "wave": "sin" } }"#, edges: ""),
         [#"nodes.a.params.wave: "sin" is not one of "sine", "square", "saw", "silence", "white-noise"; did you mean "sine"?"#]),
        (graph(nodes: #""a": { "type": "source.file" }"#, edges: ""),
         ["nodes.a.params.path: required parameter of source.file is missing (the file to read, relative to the current folder)"]),
        (graph(nodes: #""a": { "type": "capture.audio" }, "g": { "type": "effect.gain", "params": { "gain": 2, "db": 6 } }"#, edges: #""a.out -> g.in""#),
         ["nodes.g.params.db: give gain or db, not both"]),
        (graph(edges: #""mic.out -> aac.in", "aac.out -> file.audio", "mic.out -> aac.in""#),
         [#"edges[2]: duplicate of edges[0] ("mic.out -> aac.in")"#]),
        (graph(nodes: #""mic": { "type": "capture.audio" }, "m2": { "type": "capture.audio" }, "aac": { "type": "encode.aac" }, "file": { "type": "sink.mp4", "params": { "path": "x.m4a" } }"#,
               edges: #""mic.out -> aac.in", "m2.out -> aac.in", "aac.out -> file.audio""#),
         [#"edges[1]: input "aac.in" is already connected by edges[0]; an input takes one connection (an output may feed several)"#]),
        (graph(edges: #""mic.out -> aac.in", "aac.out -> file.video""#),
         [#"edges[1]: cannot connect "aac.out" (audio/aac) to "file.video" (video/h264 or video/hevc or video/vp9 or video/av1)"#]),
        (graph(edges: #""mic.out -> aac.in", "aac.output -> file.audio""#),
         [#"edges[1]: encode.aac node "aac" has no output "output" (its outputs: out); did you mean "out"?"#]),
        (graph(edges: #""mic.out -> aac.in", "aac.out -> fil.audio""#),
         [#"edges[1]: no node "fil" in the graph; did you mean "file"?"#,
          "nodes.file: sink.mp4 needs at least one of its inputs connected (audio, video)"]),
        (graph(edges: #""mic.out => aac.in", "aac.out -> file.audio""#),
         [#"edges[0]: expected "node.port -> node.port", got "mic.out => aac.in""#,
          #"nodes.aac: input "in" of encode.aac is not connected"#]),
        (graph(edges: #"{ "from": "mic.out", "to": "aac.in", "capacity": { "buffers": 0 } }, "aac.out -> file.audio""#),
         ["edges[0].capacity.buffers: expected a whole number of at least 1, got 0"]),
        (graph(nodes: #""src": { "type": "source.file", "params": { "path": "a.wav" } }, "dec": { "type": "decode" }, "w": { "type": "analysis.waveform", "params": { "json": "w.json" } }"#,
               edges: #"{ "from": "src.out", "to": "dec.in", "capacity": { "buffers": 8 } }, "dec.audio -> w.in""#),
         [#"edges[0].capacity: "src.out" carries a file's bytes, which its demuxer reads directly; a capacity bounds only media streams"#]),
        (graph(edges: #"{ "from": "mic", "to": "aac.in" }, "aac.out -> file.audio""#),
         [#"edges[0].from: expected "node.port", got "mic""#]),
        (graph(edges: #""mic.out -> aac.in""#),
         ["nodes.file: sink.mp4 needs at least one of its inputs connected (audio, video)"]),
        (graph(nodes: #""g1": { "type": "effect.gain" }, "g2": { "type": "effect.gain" }"#, edges: #""g1.out -> g2.in", "g2.out -> g1.in""#),
         [#"edges: the graph has a cycle through "g1", "g2"; data must flow one way"#]),
    ])
    func brokenGraphsNameEveryProblem(_ text: String, _ expected: [String]) {
        #expect(problems(text) == expected)
    }

    @Test func reportsEveryProblemAtOnce() {
        let text = Self.graph(nodes: """
            "mic": { "type": "capture.audio", "params": { "channels": 9 } },
            "aac": { "type": "encode.aac", "params": { "bitrate": "high" } },
            "file": { "type": "sink.mp4" }
            """)
        #expect(problems(text) == [
            "nodes.mic.params.channels: 9 is out of range (1 to 2)",
            #"nodes.aac.params.bitrate: expected integer, got a string "high""#,
            "nodes.file.params.path: required parameter of sink.mp4 is missing (the file to write; missing folders are created)",
        ])
    }

    @Test func overridesAreTypedByTheParameter() throws {
        let g = try loader.load(json: Self.graph(), overrides: [
            .init(parsing: "aac.bitrate=128000"), .init(parsing: "mic.live=false"),
            .init(parsing: "mic.frequency=1000.5"), .init(parsing: "aac.bitrate=64000"),
            .init(parsing: "file.path=a=b.m4a"),
        ])
        #expect(g.node("aac")?.parameters[AACEncoderNode.bitrate] == 64000)  // the last --set wins
        #expect(g.node("mic")?.parameters[CaptureAudioNode.live] == false)
        #expect(g.node("mic")?.parameters[CaptureAudioNode.frequency] == 1000.5)
        #expect(try g.node("file")?.parameters.value(MP4SinkNode.path) == "a=b.m4a")
    }

    @Test func emptyOverrideRestoresTheDefault() throws {
        let text = Self.graph(nodes: """
            "mic": { "type": "capture.audio", "params": { "sampleRate": 8000 } },
            "aac": { "type": "encode.aac" }, "file": { "type": "sink.mp4", "params": { "path": "x.m4a" } }
            """)
        let g = try loader.load(json: text, overrides: [.init(parsing: "mic.sampleRate=")])
        #expect(g.node("mic")?.parameters[CaptureAudioNode.sampleRate] == 44100)
    }

    @Test func badOverridesAreInvalidGraphs() {
        #expect(problems(Self.graph(), overrides: ["aac.bitrate=fast", "mic.live=yes", "mix.live=true", "aac.bitrat=1"]) == [
            #"--set mic.live: expected true or false, got "yes""#,
            #"--set aac.bitrate: expected an integer, got "fast""#,
            #"--set aac.bitrat: unknown parameter "bitrat" for encode.aac; did you mean "bitrate"? (it takes: bitrate, encoder, sampleRate, channels)"#,
            #"--set mix.live: no node "mix" in the graph; did you mean "mic"?"#,
        ])
        #expect(throws: GraphError(.invalidGraph, at: "--set aac", "expected node.param=value")) {
            try GraphLoader.Override(parsing: "aac")
        }
    }

    @Test func malformedJSONGivesLineAndColumn() {
        #expect(throws: GraphError(.invalidGraph, at: "line 2, column 1", "malformed JSON: expected a value, found end of input")) {
            try loader.load(json: "{ \"version\":\n")
        }
    }

    @Test func unreadableGraphFileIsAnInputError() {
        #expect(throws: GraphError(.inputUnreadable, at: "/nonexistent/g.json", "cannot read graph file: no such file")) {
            try loader.load(contentsOf: "/nonexistent/g.json")
        }
    }

    /// Edges are split at `->` and ports at the last `.` by characters, so ids and text beyond
    /// ASCII behave as they always did (a `>` that a combining mark follows is no arrow).
    @Test func edgeTextIsReadByCharacters() throws {
        #expect(problems(Self.graph(edges: #""mic.out ->\u0301 aac.in", "aac.out -> file.audio""#)) == [
            "edges[0]: expected \"node.port -> node.port\", got \"mic.out ->\u{301} aac.in\"",
            #"nodes.aac: input "in" of encode.aac is not connected"#,
        ])
        let g = try loader.load(json: Self.graph(
            nodes: #""mïc": { "type": "capture.audio", "params": { "duration": 1 } }, "aac": { "type": "encode.aac" }, "file": { "type": "sink.mp4", "params": { "path": "x.m4a" } }"#,
            edges: #"" \tmïc.out->aac.in\t", { "from": "aac.out ", "to": " file.audio" }"#))
        #expect(g.edges.map { "\($0.from) -> \($0.to)" } == ["mïc.out -> aac.in", "aac.out -> file.audio"])
        #expect(PortRef(" \tmic.out ")?.description == "mic.out")
        #expect(PortRef("a.b.c") == PortRef(node: "a.b", port: "c"))
        #expect(PortRef(" é.out\t") == PortRef(node: "é", port: "out"))
        for bad in ["mic.", ".out", "mic", "", " . ", "é.", ".\u{301}"] { #expect(PortRef(Substring(bad)) == nil, "\(bad)") }
    }

    /// A type registered again replaces the earlier one for the loader too.
    @Test func aTypeRegisteredAgainReplacesTheEarlierOne() throws {
        var registry = NodeRegistry.builtIn
        registry.register(AppSinkNode.self)   // same type name as itself: still one entry, found
        #expect(registry.types.filter { $0.descriptor.type == "sink.app" }.count == 1)
        #expect(registry.lookup("sink.app").map(ObjectIdentifier.init) == ObjectIdentifier(AppSinkNode.self))
        #expect(registry.lookup("effect.gain").map(ObjectIdentifier.init) == ObjectIdentifier(GainNode.self))
        #expect(registry.lookup("effect.gian") == nil)
    }

    /// Found by fuzz-graph: an empty key at the top was reported at an empty place (graphctl
    /// printed `error: FILE: : unknown key ""`). An empty key is written `""` in the path.
    @Test func anEmptyKeyHasAPlace() {
        let text = #"{ "version": 1, "nodes": { "a": { "type": "capture.audio", "params": { "": 1, "": 2 }, "": 0 } }, "": 3 }"#
        #expect(problems(text) == [
            #""": unknown key "" (allowed: version, name, description, nodes, edges)"#,
            #"nodes.a."": unknown key "" (allowed: type, params)"#,
            #"nodes.a.params."": parameter "" is given twice"#,
            #"nodes.a.params."": unknown parameter "" for capture.audio (it takes: device, wave, frequency, sampleRate, channels, duration, live)"#,
            #"nodes.a.params."": unknown parameter "" for capture.audio (it takes: device, wave, frequency, sampleRate, channels, duration, live)"#,
        ])
    }

    /// Two outputs of one graph naming one file would write one temporary file at once: the
    /// graph is refused before it runs, at the second writer, whichever way the path is spelt.
    @Test func twoOutputsOfOneFileAreRefused() {
        let cwd = FileManager.default.currentDirectoryPath
        let twoSinks = Self.graph(nodes: """
            "mic": { "type": "capture.audio", "params": { "duration": 1 } },
            "aac": { "type": "encode.aac" },
            "file": { "type": "sink.mp4", "params": { "path": "out/x.m4a" } },
            "copy": { "type": "sink.mp4", "params": { "path": "\(cwd)/out/../out/./x.m4a" } }
            """, edges: #""mic.out -> aac.in", "aac.out -> file.audio", "aac.out -> copy.audio""#)
        #expect(problems(twoSinks) == [
            #"nodes.copy.params.path: "\#(cwd)/out/../out/./x.m4a" is also written by nodes.file.params.path: each output needs a file of its own"#,
        ])
        // A --set that makes them one file is named as the place; one that parts them mends it.
        let waveform = Self.graph(nodes: """
            "mic": { "type": "capture.audio", "params": { "duration": 1 } },
            "wave": { "type": "analysis.waveform", "params": { "json": "out/w.json" } }
            """, edges: #""mic.out -> wave.in""#)
        #expect(problems(waveform, overrides: ["wave.png=./out/w.json"]) == [
            #"--set wave.png: "./out/w.json" is also written by nodes.wave.params.json: each output needs a file of its own"#,
        ])
        #expect(problems(twoSinks, overrides: ["copy.path=out/y.m4a"]).isEmpty)
        #expect(problems(waveform, overrides: ["wave.png=out/w.png"]).isEmpty)
    }

    /// One file, whatever path leads to it: a folder reached through a symbolic link is that
    /// folder, as the run compares files (``FileRoles``). Compared as text, these two loaded, and
    /// the run found them one file only when it checked every reader and writer.
    @Test func twoOutputsThroughALinkedFolderAreOneFile() throws {
        let folder = try TestMedia.temporaryFolder().path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder + "/out", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder + "/here", withDestinationPath: "out")
        let twoSinks = Self.graph(nodes: """
            "mic": { "type": "capture.audio", "params": { "duration": 1 } },
            "aac": { "type": "encode.aac" },
            "file": { "type": "sink.mp4", "params": { "path": "\(folder)/out/x.m4a" } },
            "copy": { "type": "sink.mp4", "params": { "path": "\(folder)/here/x.m4a" } }
            """, edges: #""mic.out -> aac.in", "aac.out -> file.audio", "aac.out -> copy.audio""#)
        #expect(problems(twoSinks) == [
            #"nodes.copy.params.path: "\#(folder)/here/x.m4a" is also written by nodes.file.params.path: each output needs a file of its own"#,
        ])
        #expect(problems(twoSinks, overrides: ["copy.path=\(folder)/here/y.m4a"]).isEmpty)
        // Said among the nodes' problems, before the edges', as before the loader had passes.
        let alsoABadEdge = Self.graph(nodes: """
            "mic": { "type": "capture.audio", "params": { "duration": 1 } },
            "aac": { "type": "encode.aac" },
            "file": { "type": "sink.mp4", "params": { "path": "\(folder)/out/x.m4a" } },
            "copy": { "type": "sink.mp4", "params": { "path": "\(folder)/here/x.m4a" } }
            """, edges: #""mic.out -> aac.in", "aac.out -> file.audio", "aac.out -> copy.audio", "aac.out -> nowhere.in""#)
        #expect(problems(alsoABadEdge).map { $0.prefix { $0 != ":" } } == ["nodes.copy.params.path", "edges[3]"])
    }

    /// Declared formats are a contract at load time: a format an output carries in this graph
    /// (decode's, as its parameters make it; an effect's, as its input gives it) must reach the
    /// inputs it feeds, or the graph is refused (65) at the parameter that decides the format,
    /// else at the edge. Before, `sampleFormat: "f32le"` into a node declaring 16-bit PCM loaded.
    @Test func aFormatThatCannotReachAnInputIsRefusedWhereItIsDecided() throws {
        let takes = GraphLoader(registry: Takes<TakesS16>.registry)
        func problems(_ nodes: String, _ edges: String, _ overrides: [String] = []) -> [String] {
            self.problems(Self.graph(nodes: nodes, edges: edges), overrides: overrides, loader: takes)
        }
        let decode = #""src": { "type": "source.file", "params": { "path": "in.m4a" } }, "dec": { "type": "decode", "params": { "sampleFormat": "f32le" } }"#
        let s16 = "audio/pcm S16LE 1-768000 Hz 1-64 ch", f32 = "audio/pcm F32LE 1-768000 Hz 1-64 ch"
        #expect(problems(decode + #", "take": { "type": "test.takes-s16le" }"#, #""src.out -> dec.in", "dec.audio -> take.in""#) == [
            #"nodes.dec.params.sampleFormat: "dec.audio" carries \#(f32) as sampleFormat is "f32le", which "take.in" (test.takes-s16le) does not take: it takes \#(s16) (edges[1]: "dec.audio -> take.in")"#,
        ])
        // Set on the command line: the --set is the place. Through an effect: said so.
        let plain = #""src": { "type": "source.file", "params": { "path": "in.m4a" } }, "dec": { "type": "decode" }"#
        #expect(problems(plain + #", "gain": { "type": "effect.gain" }, "take": { "type": "test.takes-s16le" }"#,
                         #""src.out -> dec.in", "dec.audio -> gain.in", "gain.out -> take.in""#, ["dec.sampleFormat=f32le"]) == [
            #"--set dec.sampleFormat: "dec.audio" carries \#(f32) as sampleFormat is "f32le", through "gain.out", which "take.in" (test.takes-s16le) does not take: it takes \#(s16) (edges[2]: "gain.out -> take.in")"#,
        ])
        // auto can give 16-bit (decode converts to it), so it is accepted; so is 16-bit.
        #expect(problems(plain + #", "take": { "type": "test.takes-s16le" }"#, #""src.out -> dec.in", "dec.audio -> take.in""#, ["dec.sampleFormat=auto"]).isEmpty)
        #expect(problems(plain + #", "take": { "type": "test.takes-s16le" }"#, #""src.out -> dec.in", "dec.audio -> take.in""#).isEmpty)
        // One output feeds both: it carries one format to both, and no one format suits them.
        #expect(problems(plain + #", "a": { "type": "test.takes-s16le" }, "b": { "type": "test.takes-f32le" }"#,
                         #""src.out -> dec.in", "dec.audio -> a.in", "dec.audio -> b.in""#, ["dec.sampleFormat=auto"]) == [
            #"--set dec.sampleFormat: "dec.audio" carries audio/pcm S16LE|F32LE 1-768000 Hz 1-64 ch as sampleFormat is "auto", which "a.in" and "b.in" take in no one format in common (an output gives everything it feeds one format) (edges[2]: "dec.audio -> b.in")"#,
        ])
        // The channel count decode mixes to, at its parameter.
        #expect(problems(plain + #", "take": { "type": "test.takes-mono" }"#, #""src.out -> dec.in", "dec.audio -> take.in""#, ["dec.channels=2"]) == [
            #"--set dec.channels: "dec.audio" carries audio/pcm S16LE 1-768000 Hz 2 ch as channels is 2, which "take.in" (test.takes-mono) does not take: it takes audio/pcm S16LE|F32LE 1-768000 Hz 1 ch (edges[1]: "dec.audio -> take.in")"#,
        ])
        // Decided by no parameter: at the edge (capture.audio gives 16-bit only, at the rate and
        // channel count its parameters say).
        #expect(problems(#""mic": { "type": "capture.audio", "params": { "duration": 1 } }, "gain": { "type": "effect.gain" }, "take": { "type": "test.takes-f32le" }"#,
                         #""mic.out -> gain.in", "gain.out -> take.in""#) == [
            #"edges[1]: "mic.out" carries audio/pcm S16LE 44100 Hz 1 ch, through "gain.out", which "take.in" (test.takes-f32le) does not take: it takes \#(f32)"#,
        ])
        // Built-in nodes alike: decode's pixel format into the colour effects (BGRA, RGBA).
        #expect(problems(plain + #", "gray": { "type": "effect.grayscale" }"#, #""src.out -> dec.in", "dec.video -> gray.in""#, ["dec.pixelFormat=i420"]) == [
            #"--set dec.pixelFormat: "dec.video" carries video/raw I420 as pixelFormat is "i420", which "gray.in" (effect.grayscale) does not take: it takes video/raw BGRA|RGBA (edges[1]: "dec.video -> gray.in")"#,
        ])
    }
}
