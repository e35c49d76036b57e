import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import Testing
import TestSupport

/// Graphs built in code are the graphs the JSON loader makes: one validation path, the same
/// errors, and a document that reads back equal.
@Suite struct GraphBuilderTests {
    static let graphsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../graphs").standardized

    /// graphs/frames.json, written in Swift with typed parameters.
    func framesInCode(path: String = "out/frames.mov") -> GraphBuilder {
        var b = GraphBuilder(name: "frames")
        let frames = b.add("frames", FrameGeneratorNode.self) {
            $0[\.width] = 1280
            $0[\.height] = 720
            $0[\.fps] = 30
            $0[\.duration] = 5
            $0[\.pattern] = .counter
        }
        let h264 = b.add("h264", H264EncoderNode.self)
        let file = b.add("file", MP4SinkNode.self) {
            $0[\.path] = path
            $0[MP4SinkNode.container] = .mov  // a declaration works as well as a key path
        }
        b.connect(frames.output(), to: h264.input())
        b.connect(h264.output(), to: file.input("video"))
        return b
    }

    @Test func aGraphBuiltInCodeEqualsItsGraphFile() throws {
        let loader = GraphLoader(registry: .builtIn)
        var fromFile = try loader.load(contentsOf: Self.graphsFolder.appendingPathComponent("frames.json").path)
        var b = framesInCode()
        b.description = fromFile.description
        let inCode = try b.build(registry: .builtIn)
        #expect(inCode == fromFile)
        fromFile = try loader.load(contentsOf: Self.graphsFolder.appendingPathComponent("m4a.json").path)
        #expect(inCode != fromFile)
    }

    /// Every shipped graph writes out as JSON and reads back equal, and so does one built in code.
    @Test func everyGraphWritesOutAndReadsBackEqual() throws {
        let loader = GraphLoader(registry: .builtIn)
        let files = try FileManager.default.contentsOfDirectory(atPath: Self.graphsFolder.path).filter { $0.hasSuffix(".json") }
        #expect(files.count >= 8)
        for name in files {
            let graph = try loader.load(contentsOf: Self.graphsFolder.appendingPathComponent(name).path)
            let again = try loader.load(json: graph.jsonText)
            #expect(again == graph, "\(name)")
            #expect(again.jsonText == graph.jsonText, "\(name)")
        }
        let built = try framesInCode().build(registry: .builtIn)
        #expect(try loader.load(json: built.jsonText) == built)
    }

    /// A bad value or a wrong port gets the loader's error, at the document path.
    @Test func mistakesGetTheLoadersErrors() throws {
        var b = framesInCode()
        b.add("extra", GainNode.self) { $0[\.gain] = -3 }
        b.connect(PortRef(node: "frames", port: "video"), to: PortRef(node: "extra", port: "in"))
        #expect {
            try b.build(registry: .builtIn)
        } throws: { error in
            let e = error as? GraphError
            let locations = e?.problems.compactMap(\.location) ?? []
            return e?.code == .invalidGraph && locations.contains("nodes.extra.params.gain") && locations.contains { $0.hasPrefix("edges[2]") }
        }
    }

    /// A graph built in code runs: 10 frames drawn, encoded and written.
    @Test(.media, .timeLimit(.minutes(10))) func aBuiltGraphRuns() async throws {
        let path = try TestMedia.temporaryFolder().appendingPathComponent("ten.mp4").path
        var b = GraphBuilder()
        let frames = b.add("frames", FrameGeneratorNode.self) {
            $0[\.width] = 320
            $0[\.height] = 240
            $0[\.frames] = 10
        }
        let h264 = b.add("h264", H264EncoderNode.self) { $0[\.bitrate] = .value(500_000) }
        let file = b.add("file", MP4SinkNode.self) { $0[\.path] = path }
        b.connect(frames.output(), to: h264.input())
        b.connect(h264.output(), to: file.input("video"), capacity: EdgeCapacity(buffers: 4))
        let graph = try b.build(registry: .builtIn)
        #expect(graph.edges.last?.capacity == EdgeCapacity(buffers: 4))
        let run = try GraphRun(graph)
        try run.start()
        #expect(await run.report().status == .completed)
        #expect(try MediaProbe(path, countFrames: true).stream("video")?.frameCount == 10)
    }
}
