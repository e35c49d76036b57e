// `graphkit-bench cifilter [FRAMES]`: issue 52's CoreImage figure. A `CIFilter.colorMatrix()`
// rendered by a `CIContext` from one 1920×1080 BGRA pixel buffer into another, as RosyWriter's
// renderer does, against effect.colorMatrix's process() with the same matrix writing a frame
// someone else holds into another frame (the same work: read one frame, write another). Five
// rounds, each timing both; the ratio is the median of the rounds' (goal: at most 1.1).
import CoreImage
import Foundation
import GraphKit
import Nodes

@MainActor func benchmarkCIFilter() throws {
    let frames = Int(CommandLine.arguments.dropFirst(2).first ?? "") ?? 300
    let (r, g, b): ([Double], [Double], [Double]) = ([0.393, 0.769, 0.189, 0], [0.349, 0.686, 0.168, 0], [0.272, 0.534, 0.131, 0])

    var source: CVPixelBuffer?, target: CVPixelBuffer?
    guard CVPixelBufferCreate(nil, width, height, kCVPixelFormatType_32BGRA, nil, &source) == kCVReturnSuccess, let source,
          CVPixelBufferCreate(nil, width, height, kCVPixelFormatType_32BGRA, nil, &target) == kCVReturnSuccess, let target else {
        throw GraphError(.runFailed, "no 1080p pixel buffers")
    }
    CVPixelBufferLockBaseAddress(source, [])
    let bytes = CVPixelBufferGetBytesPerRow(source) * height
    let base = CVPixelBufferGetBaseAddress(source)!.assumingMemoryBound(to: UInt8.self)
    for i in 0..<bytes { base[i] = UInt8(truncatingIfNeeded: i &* 31) | (i % 4 == 3 ? 255 : 0) }
    CVPixelBufferUnlockBaseAddress(source, [])
    let context = CIContext()
    func vector(_ v: [Double]) -> CIVector { CIVector(x: v[0], y: v[1], z: v[2], w: v[3]) }

    let graph = try GraphLoader(registry: .builtIn).load(json: #"""
        { "version": 1, "nodes": { "a": { "type": "source.app" }, "e": { "type": "effect.colorMatrix", "params": { "r": \#(r), "g": \#(g), "b": \#(b) } },
          "b": { "type": "sink.app" } }, "edges": ["a.out -> e.in", "e.out -> b.in"] }
        """#)
    let spec = graph.node("e")!
    let node = try spec.type.init(context: NodeContext(id: "e", parameters: spec.parameters)) as! any ProcessingNode
    try node.formatDidChange(to: .rawVideo(format))

    var ci: [Double] = [], effect: [Double] = []
    for _ in 0..<5 {
        ci.append(seconds {
            for _ in 0..<frames {
                // As RosyWriter's renderer: a filter made from the frame, rendered into another buffer.
                let filter = CIFilter.colorMatrix()
                filter.inputImage = CIImage(cvPixelBuffer: source)
                (filter.rVector, filter.gVector, filter.bVector) = (vector(r), vector(g), vector(b))
                context.render(filter.outputImage!, to: target)
            }
        })
        effect.append(try seconds { for _ in 0..<frames { var other = frame; _ = try node.process(&other) } })
    }
    let ratio = median(zip(ci, effect).map { $0 / $1 })
    row("- CIFilter.colorMatrix() → CIContext.render(_:to:), 1920×1080 BGRA: \(String(format: "%.3f", median(ci) * 1000 / Double(frames))) ms a frame; "
        + "effect.colorMatrix process() into another frame: \(String(format: "%.3f", median(effect) * 1000 / Double(frames))) ms a frame; "
        + "CIFilter / effect, median of 5 rounds' ratios: \(String(format: "%.3f", ratio)) (goal: at most 1.1)")
}
