import Foundation
import GraphKit
import Nodes

/// `graphkit-bench generate`: frames/s of generate.frames at 1280×720, each pattern and pixel
/// format through a graph into a sink.app that is pulled and let go frame by frame (drawing, the
/// pool, and the appsrc → appsink hop: what a graph gets), median of 3 runs of 600 frames.
func benchmarkGeneratedFrames() throws {
    let count = 600
    let loader = GraphLoader(registry: .builtIn)
    row("| pattern | pixel format | frames/s | pooled frames allocated |\n|---|---|---|---|")
    for (pattern, pixelFormat) in [("gradient", "bgra"), ("box", "bgra"), ("counter", "bgra"), ("solid", "bgra"),
                                   ("gradient", "i420"), ("gradient", "nv12"), ("counter", "i420")] {
        var walls: [Double] = [], allocated = 0
        for _ in 0..<3 {
            let graph = try loader.load(json: """
                { "version": 1, "nodes": { "f": { "type": "generate.frames", "params": { "width": 1280, "height": 720, "frames": \(count),
                    "pattern": "\(pattern)", "pixelFormat": "\(pixelFormat)" } }, "s": { "type": "sink.app", "params": { "maxBuffers": 4 } } },
                  "edges": [ "f.out -> s.in" ] }
                """)
            let run = try GraphRun(graph)
            let output = try run.output("s")
            var pulled = 0
            walls.append(try seconds {
                try run.start()
                while output.copyNextSampleBuffer(timeout: 60) != nil { pulled += 1 }
            })
            let report = run.wait()
            guard report.status == .completed, pulled == count else { throw report.error ?? GraphError(.runFailed, "\(pulled) of \(count) frames") }
            allocated = (run.node("f") as? FrameGeneratorNode)?.buffersAllocated ?? -1
        }
        row("| \(pattern) | \(pixelFormat) | \(Int(Double(count) / median(walls))) | \(allocated) |")
    }
}
