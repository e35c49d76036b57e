import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport
import Testing

/// An HDR file's frames decoded without tone mapping are refused before the run where they would
/// reach a node that takes SDR (`NodeDescriptor.takesHDR`), directly or through nodes that pass
/// frames on as they came; the same graph runs with `toneMap`, and with an SDR file.
@Suite(.media, .timeLimit(.minutes(2))) struct SDRInputsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func graph(_ file: String, toneMap: Bool, through middle: String?, into last: String,
               out: String = "out-\(UUID().uuidString).mp4") throws -> Graph {
        let out = folder.appendingPathComponent(out).path
        let middleNode = middle.map { #", "mid": { "type": "\#($0)", "params": { "width": 160, "height": 120 } }"# } ?? ""
        let chain = middle == nil ? #""dec.video -> fx.in""# : #""dec.video -> mid.in", "mid.out -> fx.in""#
        return try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
              "dec": { "type": "decode", "params": { "pixelFormat": "bgra", "toneMap": \(toneMap) } }\(middleNode),
              "fx": { "type": "\(last)" }, "enc": { "type": "encode.h264" },
              "file": { "type": "sink.mp4", "params": { "path": "\(out)" } } },
              "edges": [ "src.out -> dec.in", \(chain), "fx.out -> enc.in", "enc.out -> file.video" ] }
            """)
    }

    @Test(arguments: [("hlg", nil as String?), ("pq", "effect.scale")])
    func hdrIntoAnSDRNodeIsRefusedBeforeTheRun(_ kind: String, _ middle: String?) throws {
        let chart = try HDRTestMedia.makeChart(in: folder)
        let hdr = kind == "hlg" ? try HDRTestMedia.makeHLG(from: chart, in: folder) : try HDRTestMedia.makePQ(from: chart, in: folder)
        let run = try GraphRun(try graph(hdr, toneMap: false, through: middle, into: "effect.grayscale", out: "refused.mp4"))
        let error = #expect(throws: GraphError.self) { try run.start() }
        #expect(error?.code == .invalidGraph, "\(String(describing: error))")
        let edge = middle == nil ? "\"dec.video\" to \"fx.in\"" : "\"mid.out\" to \"fx.in\""
        #expect(error?.description.contains("cannot connect \(edge) for \"\(hdr)\": its video is HDR (\(kind.uppercased()))") == true,
                "\(String(describing: error))")
        #expect(error?.description.contains("effect.grayscale takes SDR frames") == true && error?.description.contains("\"toneMap\": true") == true)
        #expect(run.wait().status == .failed)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains("refused") }.isEmpty, "nothing written")
        // Mapped, or an SDR file, the same graph runs.
        #expect(try GraphRun(try graph(hdr, toneMap: true, through: middle, into: "effect.grayscale")).run().status == .completed)
        #expect(try GraphRun(try graph(chart, toneMap: false, through: middle, into: "effect.grayscale")).run().status == .completed)
    }

    /// Nodes that take HDR (one that moves pixels, an encoder) are not in the way.
    @Test func hdrIntoANodeThatTakesItRuns() throws {
        let hdr = try HDRTestMedia.makeHLG(from: try HDRTestMedia.makeChart(in: folder), in: folder)
        #expect(try GraphRun(try graph(hdr, toneMap: false, through: nil, into: "effect.mirror", out: "mirrored.mp4")).run().status == .completed)
    }
}
