import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct WaveformNodeTests {
    let folder = try! TestMedia.temporaryFolder()
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    @Test func writesExactDataFilesAndEmitsPeaksAsItStreams() throws {
        let h = try NodeHarness("""
            { "type": "analysis.waveform", "params": { "samplesPerPixel": 4, "json": "\(path("w.json"))", "dat": "\(path("w.dat"))" } }
            """)
        // A ramp 0, 100, …, 900 in two buffers of 5 frames.
        let ramp = TestMedia.pcm(sampleRate: 8000, frames: 10, framesPerBuffer: 5) { f, _ in Int16(f * 100) }
        try h.push(ramp)
        let first = try #require(h.pull())  // the one bin finished by the first buffer
        #expect(first.format == .peaks(samplesPerPixel: 4, channels: 1))
        #expect(first.withAudioSamples(as: Int16.self) { Array($0) } == [0, 300])
        #expect(!FileManager.default.fileExists(atPath: path("w.json")))  // not before the end
        let result = try h.finish()
        let rest = result.leftovers["out"]!.flatMap { $0.withAudioSamples(as: Int16.self) { Array($0) } }
        #expect(rest == [400, 700, 800, 900])
        #expect(result.leftovers["out"]!.last?.presentationTime == MediaTime(value: 8, timescale: 8000))
        #expect(try String(contentsOfFile: path("w.json"), encoding: .utf8)
                == #"{"version":2,"channels":1,"sample_rate":8000,"samples_per_pixel":4,"bits":16,"length":3,"data":[0,300,400,700,800,900]}"# + "\n")
        let dat = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path("w.dat"))))
        #expect(dat.count == 20 + 12)
        #expect(!FileManager.default.fileExists(atPath: path(".w.json.partial")))
    }

    @Test func pixelsPerSecondAndEightBits() throws {
        let h = try NodeHarness("""
            { "type": "analysis.waveform", "params": { "pixelsPerSecond": 3000, "bits": 8, "mode": "maxabs", "json": "\(path("p.json"))" } }
            """, outputs: [])
        // 8000 / 3000 = 2 frames a bin.
        try h.push(TestMedia.pcm(sampleRate: 8000, frames: 4) { f, _ in [-1000, 200, 32767, -32768][f] })
        try h.finish()
        #expect(try String(contentsOfFile: path("p.json"), encoding: .utf8)
                == #"{"version":2,"channels":1,"sample_rate":8000,"samples_per_pixel":2,"bits":8,"length":2,"data":[-3,3,-127,127]}"# + "\n")
    }

    @Test(arguments: ["filled", "bars"])
    func picturesAreMirroredScaledAndCentred(_ style: String) throws {
        // Four bins of 100 frames: silence, half, full, half.
        let png = path("w-\(style).png")
        let h = try NodeHarness("""
            { "type": "analysis.waveform", "params": { "samplesPerPixel": 100, "png": "\(png)", "svg": "\(path("w-\(style).svg"))",
              "imageWidth": 400, "imageHeight": 200, "waveColor": "#ff0000", "backgroundColor": "#00ff00", "style": "\(style)" } }
            """, outputs: [])
        try h.push(TestMedia.pcm(sampleRate: 8000, frames: 400) { f, _ in
            let amplitude = [0, 16383, 32767, 16383][f / 100]
            return Int16(f % 2 == 0 ? amplitude : -amplitude)
        })
        try h.finish()
        let pixel = try Pixels(png: png)
        let wave: UInt32 = 0xFFFF_0000, background: UInt32 = 0xFF00_FF00
        // Drawing area: 95% of 400 = 380 wide from x = 10; bins 95 px each. 85% of 200 = 170 high.
        #expect(pixel[2, 2] == background)
        #expect(pixel[5, 100] == background)  // outside the 95% width
        #expect(pixel[30, 100] == wave || style == "bars")  // the centre line in silence
        #expect(pixel[30, 90] == background)
        // The loudest bin (x 200…295) reaches 85 px above and below the centre: y 15…185.
        #expect(pixel[247, 17] == wave)
        #expect(pixel[247, 183] == wave)
        #expect(pixel[247, 12] == background)
        #expect(pixel[247, 188] == background)
        // Half as loud reaches half as far: y 57.5…142.5.
        #expect(pixel[152, 60] == wave)
        #expect(pixel[152, 54] == background)
        let svg = try String(contentsOfFile: path("w-\(style).svg"), encoding: .utf8)
        #expect(svg.hasPrefix("<?xml") && svg.contains("<svg") && svg.contains("width=\"400\""))
    }

    @Test func widthFitsTheWholeFileInAtMostThatManyBins() throws {
        let wav = path("w.wav")
        try TestMedia.writeWAV(wav, seconds: 1, sampleRate: 8000, channels: 1)
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(wav)" } }, "dec": { "type": "decode" },
              "wave": { "type": "analysis.waveform", "params": { "width": 300, "json": "\(path("width.json"))" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> wave.in" ] }
            """)
        try GraphRun(graph).run()
        let json = try JSONParser.parse(try String(contentsOfFile: path("width.json"), encoding: .utf8))
        #expect(json["samples_per_pixel"] == 27)  // ceil(8000 / 300)
        #expect(json["length"] == 297)  // ceil(8000 / 27)
    }

    /// A Vorbis file's stated length falls short of the samples it decodes to (3.003 s said,
    /// more decoded): the bins sized from it made 101 for a width of 100. The last bin takes
    /// the rest, and the sound's loudest sample is still in the data.
    @Test func widthHoldsWhenTheStreamIsLongerThanItSays() throws {
        let mkv = path("v.mkv")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=f=300:d=3", "-c:a", "libvorbis", "-y", mkv])
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(mkv)" } }, "dec": { "type": "decode" },
              "wave": { "type": "analysis.waveform", "params": { "width": 100, "json": "\(path("v.json"))" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> wave.in" ] }
            """)
        try GraphRun(graph).run()
        let json = try JSONParser.parse(try String(contentsOfFile: path("v.json"), encoding: .utf8))
        #expect(json["length"] == 100)
        guard case .array(let values)? = json["data"] else { Issue.record("no data"); return }
        #expect(values.count == 200)
    }

    @Test func validationRejectsBadBinSizesAndWidthOnALiveSource() throws {
        let loader = GraphLoader(registry: .builtIn)
        func problems(_ params: String, source: String = #""duration": 1"#, overrides: [String] = []) -> [String] {
            let overrideList: [GraphLoader.Override]
            do { overrideList = try overrides.map { try GraphLoader.Override(parsing: $0) } } catch { return ["\(error)"] }
            do {
                _ = try loader.load(json: """
                    { "version": 1, "nodes": { "mic": { "type": "capture.audio", "params": { \(source) } },
                      "wave": { "type": "analysis.waveform", "params": { \(params) } } }, "edges": [ "mic.out -> wave.in" ] }
                    """, overrides: overrideList)
                return []
            } catch {
                return error.problems.map(\.description)
            }
        }
        #expect(problems(#""samplesPerPixel": 0"#) == ["nodes.wave.params.samplesPerPixel: 0 is out of range (2 to 10000000)"])
        #expect(problems(#""samplesPerPixel": -5"#) == ["nodes.wave.params.samplesPerPixel: -5 is out of range (2 to 10000000)"])
        #expect(problems(#""width": 800"#, source: #""duration": 0"#)
                == [#"nodes.wave.params.width: width needs a stream of known length, but "mic" (capture.audio) runs until stopped"#])
        #expect(problems(#""width": 800"#) == [])
        #expect(problems(#""width": 800, "samplesPerPixel": 64"#) == ["nodes.wave.params.width: give samplesPerPixel or width, not both"])
        #expect(problems(#""width": 800, "samplesPerPixel": 64, "pixelsPerSecond": 10"#)
                == ["nodes.wave.params.pixelsPerSecond: give only one of samplesPerPixel, pixelsPerSecond and width"])
        // A --set of one bin size replaces whichever the file gave.
        #expect(problems(#""width": 800"#, source: #""duration": 0"#, overrides: ["wave.samplesPerPixel=512"]) == [])
        #expect(problems(#""waveColor": "blue", "bits": 12"#)
                == [#"nodes.wave.params.waveColor: expected #rrggbb or #rrggbbaa, got "blue""#, "nodes.wave.params.bits: expected 8 or 16, got 12"])
        #expect(problems(##""json": "", "waveColor": "#11223344""##) == [#"nodes.wave.params.json: expected a path, got ""; leave the parameter out instead"#])
    }
}
