import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// analysis.silence on media made with known silences: every silence found within 10 ms, and
/// none on a noise floor just above the threshold.
@Suite struct SilenceNodeTests {
    let folder = try! TestMedia.temporaryFolder()
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    func silences(of file: String, threshold: Double = -50, minimumDuration: Double = 0.3) throws -> SilenceReport {
        let json = file + ".silence.json"
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } }, "dec": { "type": "decode" },
              "silence": { "type": "analysis.silence", "params": { "threshold": \(threshold), "minimumDuration": \(minimumDuration), "json": "\(json)" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> silence.in" ] }
            """)
        try GraphRun(graph).run()
        return try JSONDecoder().decode(SilenceReport.self, from: Data(contentsOf: URL(fileURLWithPath: file + ".silence.json")))
    }

    /// A 440 Hz tone with silences from 1 to 2 s, 3.5 to 4.25 s and from 5.6 s to the end, and
    /// a gap of 0.1 s (shorter than the minimum) at 3 s; made by ffmpeg, read through a graph.
    @Test(.media, arguments: ["wav", "flac"])
    func findsEverySilenceWithin10Milliseconds(_ container: String) throws {
        let file = path("tone.\(container)")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i",
            "aevalsrc=if(between(t\\,1\\,2)+between(t\\,3\\,3.1)+between(t\\,3.5\\,4.25)+gte(t\\,5.6)\\,0\\,0.5*sin(2*PI*440*t))|0.3*sin(2*PI*440*t)*lt(t\\,1)+0.3*sin(2*PI*440*t)*between(t\\,2\\,5.6)*(1-between(t\\,3\\,3.1))*(1-between(t\\,3.5\\,4.25)):s=48000:d=6",
            "-y", file])
        let report = try silences(of: file)
        let expected: [(Double, Double)] = [(1, 2), (3.5, 4.25), (5.6, 6)]
        #expect(report.silences.count == expected.count, "\(report.silences)")
        for (event, (start, end)) in zip(report.silences, expected) {
            #expect(abs(event.start - start) <= 0.01 && abs(event.end - end) <= 0.01, "\(event) expected \(start)–\(end)")
            #expect(event.peakDBFS == nil || event.peakDBFS! < -50)
        }
        #expect(abs(report.durationSeconds - 6) <= 0.01)
    }

    /// Noise whose level is just above the threshold (−48.8 dBFS RMS, −44 dBFS peak, against
    /// −50) is never silence, though half its samples are under the threshold.
    @Test(.media) func noFalseSilencesOnANoiseFloorJustAboveTheThreshold() throws {
        let h = try NodeHarness(#"{ "type": "analysis.silence", "params": { "threshold": -50, "minimumDuration": 0.05 } }"#, outputs: [])
        var state: UInt64 = 42
        let peak = pow(10, -44.0 / 20) * 32767
        try h.push(TestMedia.pcm(sampleRate: 48_000, channels: 2, frames: 48_000 * 10) { _, _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int16((Double(Int64(bitPattern: state) >> 11) / Double(1 << 52) * peak).rounded())
        })
        try h.finish()
        let node = try #require(h.node as? SilenceNode)
        let report = try #require(node.report)
        #expect(report.silences.isEmpty, "\(report.silences.prefix(3))")
        #expect(report.durationSeconds == 10)
    }

    /// Exact frames: a silence's start is its first silent frame, its end the first loud one.
    @Test func eventsAreSampleExact() {
        var d = SilenceDetector(sampleRate: 1000, channels: 2, thresholdDB: -40, minimumDuration: 0.01)
        var samples: [Double] = []
        for f in 0..<100 {
            let loud = f < 20 || (f >= 45 && f < 50) || (f >= 53 && f < 70)  // 50–53 is 3 frames: too short
            samples += [loud ? 0.5 : 0.001, loud && f % 2 == 0 ? 0 : 0.002]
        }
        d.add(samples)
        d.finish()
        #expect(d.events.map(\.start) == [0.02, 0.07])
        #expect(d.events.map(\.end) == [0.045, 0.1])
        #expect(d.events.first?.peakDBFS.map { abs($0 - 20 * log10(0.002)) < 1e-9 } == true)
    }
}
