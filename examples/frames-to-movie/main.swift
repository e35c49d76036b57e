// Frames drawn by a closure, written to a movie through the pixel-buffer adaptor: the
// AVAssetWriterInputPixelBufferAdaptor loop, with the AV/CV prefixes dropped.
//
//   swift run example-frames-to-movie out/drawn.mp4 [frames]
import Assets
import Glibc
import GraphKit

/// Draws frame `n` into a BGRA frame: a bar that moves across a gradient.
func draw(_ n: Int, into frame: inout PixelBuffer) {
    let width = frame.width, height = frame.height, rowBytes = frame.bytesPerRow
    let bar = (n * 8) % width
    frame.withUnsafeMutableBytes { pixels in
        for y in 0..<height {
            let row = (pixels.baseAddress! + y * rowBytes).assumingMemoryBound(to: UInt32.self)
            let shade = UInt32(y * 255 / height)
            for x in 0..<width {
                // BGRA in memory: blue, green, red, alpha.
                row[x] = abs(x - bar) < 8 ? 0xFFFF_FFFF : 0xFF00_0000 | shade << 16 | UInt32(x * 255 / width) << 8 | 0x40
            }
        }
    }
}

let arguments = CommandLine.arguments
let path = arguments.count > 1 ? arguments[1] : "out/drawn.mp4"
let count = arguments.count > 2 ? Int(arguments[2]) ?? 90 : 90

func writeMovie() async throws(GraphError) {
    let writer = try AssetWriter(outputPath: path, fileType: .mp4)
    let input = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 640, height: 360))
    let adaptor = AssetWriterInputPixelBufferAdaptor(
        assetWriterInput: input, sourcePixelBufferAttributes: PixelBufferAttributes(pixelFormat: .bgra, width: 640, height: 360))
    try writer.add(input)
    try writer.startWriting()
    writer.startSession(atSourceTime: .zero)
    guard let pool = adaptor.pixelBufferPool else { fatalError("the pool exists once writing has started") }
    for n in 0..<count {
        var frame = try pool.makePixelBuffer()
        draw(n, into: &frame)
        try await adaptor.append(frame, withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
    }
    input.markAsFinished()
    try await writer.finishWriting()
    print("wrote \(count) frames to \(path); the pool made \(pool.allocations) frames")
}

do {
    try await writeMovie()
} catch {
    print("error: \(error)")
    exit(error.code.exitStatus)
}
