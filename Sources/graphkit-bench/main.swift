// Effect throughput on 1920×1080 BGRA, offline: frames per second of each Swift effect's
// process() on a uniquely held frame, against a plain memcpy of the same frame measured the same
// way. Each round times memcpy, then the effect in place, then on a shared frame, so each ratio
// is taken within a round (this machine's memory speed drifts between rounds); the ratios are the
// medians of the rounds'. Run by scripts/bench.py (`make bench`), release build only.
import Foundation
import GraphKit
import Nodes

// `graphkit-bench generate`: generate.frames instead (GeneratedFrames.swift).
if CommandLine.arguments.dropFirst().first == "generate" {
    try benchmarkGeneratedFrames()
    exit(0)
}

let width = 1920, height = 1080
let frames = Int(CommandLine.arguments.dropFirst().first ?? "") ?? 300  // (cifilter reads its own)
let format = MediaFormat.VideoFormat(pixelFormat: .bgra, width: width, height: height, frameRate: FrameRate(30))

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    try body()
    let d = ContinuousClock.now - start
    return Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

func median(_ xs: [Double]) -> Double { xs.sorted()[xs.count / 2] }

/// One table row, written at once (a pipe would otherwise hold it back).
func row(_ text: String) { FileHandle.standardOutput.write(Data((text + "\n").utf8)) }

var frame = SampleBuffer(video: format, bytesPerRow: width * 4)
frame.withUnsafeMutableBytes { raw in for i in raw.indices { raw[i] = UInt8(truncatingIfNeeded: i &* 31) } }

// `graphkit-bench cifilter [FRAMES]`: CoreImage's colour matrix against effect.colorMatrix (CIFilterBench.swift).
if CommandLine.arguments.dropFirst().first == "cifilter" {
    try benchmarkCIFilter()
    exit(0)
}

// The anchor: copy each frame into another buffer of the same size.
var target = [UInt8](repeating: 0, count: width * height * 4)
@MainActor func memcpyRound() -> Double {
    seconds {
        for _ in 0..<frames {
            frame.withUnsafeBytes { src in target.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: src.baseAddress!, byteCount: src.count) } }
        }
    }
}

let effects: [(String, String)] = [
    ("effect.dropChannel", #"{"channel": "green"}"#),
    ("effect.colorMatrix", #"{"r": [0.393, 0.769, 0.189, 0], "g": [0.349, 0.686, 0.168, 0], "b": [0.272, 0.534, 0.131, 0]}"#),
    ("effect.grayscale", "{}"),
    ("effect.mirror", #"{"axis": "horizontal"}"#),
]
let loader = GraphLoader(registry: .builtIn)
var memcpyRuns: [Double] = []
var rows: [String] = []
for (type, params) in effects {
    // Parameters validated as in a graph; the node itself is driven directly.
    let graph = try loader.load(json: #"{ "version": 1, "nodes": { "a": { "type": "source.app" }, "e": { "type": "\#(type)", "params": \#(params) }, "b": { "type": "sink.app" } }, "edges": ["a.out -> e.in", "e.out -> b.in"] }"#)
    let spec = graph.node("e")!
    let node = try spec.type.init(context: NodeContext(id: "e", parameters: spec.parameters)) as! any ProcessingNode
    try node.formatDidChange(to: .rawVideo(format))
    var anchor: [Double] = [], runs: [Double] = [], sharedRuns: [Double] = []
    for _ in 0..<5 {
        anchor.append(memcpyRound())
        runs.append(try seconds { for _ in 0..<frames { _ = try node.process(&frame) } })
        // A frame someone else also holds (a fan-out's other branch): the effect must not
        // change it, and writes its result into another frame.
        sharedRuns.append(try seconds { for _ in 0..<frames { var other = frame; _ = try node.process(&other) } })
    }
    memcpyRuns += anchor
    // frames/s over memcpy's frames/s in the same round is memcpy's time over the effect's.
    let ratio = median(zip(anchor, runs).map { $0 / $1 }), sharedRatio = median(zip(anchor, sharedRuns).map { $0 / $1 })
    let fps = Double(frames) / median(runs), shared = Double(frames) / median(sharedRuns)
    rows.append("| \(type) | \(Int(fps)) | \(String(format: "%.2f", ratio)) | \(Int(shared)) | \(String(format: "%.2f", sharedRatio)) | \(Int(Double(frames) / median(anchor))) |")
}
row("| memcpy | \(Int(Double(frames) / median(memcpyRuns))) | 1.00 | | | |")
rows.forEach(row)
