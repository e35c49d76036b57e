import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `sink.webm`: VP9, AV1 and Opus remuxed decode to the source's frames and samples, in a file
/// whose doc type is `webm`; H.264, AAC and FLAC are refused where the graph connects them.
@Suite(.media, .timeLimit(.minutes(10))) struct WebMSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    @Test(arguments: [RemuxChecks.Source.vp9Opus, .av1, .opus])
    func remuxKeepsEveryFrameAndSample(_ source: RemuxChecks.Source) throws {
        let input = try source.make(in: folder)
        let probe = try MediaProbe(input)
        let ports = ["audio", "video"].filter { probe.stream($0) != nil }
        let out = folder.appendingPathComponent("remuxed.webm").path
        let report = try RemuxChecks.run(input, into: "sink.webm", at: out, ports: ports)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(try MediaProbe(out).formatName == "matroska,webm")
        #expect(RemuxChecks.docType(out) == "webm")
        if ports.contains("video") {
            let frames = try RemuxChecks.frames(input, "v")
            #expect(frames.count == 50)
            #expect(try RemuxChecks.frames(out, "v") == frames)
        }
        if ports.contains("audio") {
            let (md5, samples) = try RemuxChecks.audio(input)
            let remuxed = try RemuxChecks.audio(out)
            #expect(samples == 96_000 && remuxed.samples == samples, "\(remuxed.samples) samples of \(samples)")
            #expect(remuxed.md5 == md5)
        }
    }

    /// An output that gives only what WebM cannot hold is refused when the graph loads, at the
    /// edge, saying what each side carries.
    @Test func aCodecWebMCannotHoldIsRefusedAtTheEdge() throws {
        for (encoder, port, carried) in [("encode.h264", "video", "video/h264"), ("encode.aac", "audio", "audio/aac")] {
            do {
                _ = try GraphLoader(registry: .builtIn).load(json: """
                    { "version": 1, "nodes": { "enc": { "type": "\(encoder)" }, "file": { "type": "sink.webm", "params": { "path": "/tmp/x.webm" } } },
                      "edges": [ "enc.out -> file.\(port)" ] }
                    """)
                Issue.record("\(encoder) into sink.webm was taken")
            } catch {
                #expect(error.code == .invalidGraph)
                #expect(error.description.contains("edges[0]: cannot connect \"enc.out\" (\(carried)) to \"file.\(port)\""), "\(error)")
            }
        }
    }

    /// graphs/remux-webm.json as shipped, its paths overridden: VP9 and Opus in, the same frames
    /// and samples out, in a WebM.
    @Test func remuxGraphRuns() throws {
        let input = try RemuxChecks.Source.vp9Opus.make(in: folder)
        let out = folder.appendingPathComponent("out/remuxed.webm").path
        let graphFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../graphs/remux-webm.json").standardized.path
        let graph = try GraphLoader(registry: .builtIn).load(contentsOf: graphFile, overrides: [
            try .init(parsing: "src.path=\(input)"), try .init(parsing: "file.path=\(out)"),
        ])
        let run = try GraphRun(graph)
        try run.start()
        let report = run.wait()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(RemuxChecks.docType(out) == "webm")
        #expect(try RemuxChecks.frames(out, "v") == RemuxChecks.frames(input, "v"))
        #expect(try RemuxChecks.audio(out).md5 == RemuxChecks.audio(input).md5)
    }
}
