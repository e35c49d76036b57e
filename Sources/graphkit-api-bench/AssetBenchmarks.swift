import Assets
import GraphKit

/// `graphkit-api-bench adaptor OUT.mp4 [bgra|i420]`: 600 drawn 1280×720 frames through
/// AssetWriterInputPixelBufferAdaptor into H.264 (x264 veryfast, 2,048 kb/s, keyframes every
/// 250, as scripts/bench.py's gst-launch-1.0 line), counting the pool's allocations.
func benchmarkAdaptor(_ arguments: [String]) async throws {
    let out = arguments.first ?? "out/bench/adaptor.mp4"
    let pixelFormat: PixelFormat = arguments.dropFirst().first == "i420" ? .i420 : .bgra
    let writer = try AssetWriter(outputPath: out, fileType: .mp4)
    let input = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 1280, height: 720, averageBitRate: 2_048_000, keyframeInterval: 250))
    let adaptor = AssetWriterInputPixelBufferAdaptor(
        assetWriterInput: input, sourcePixelBufferAttributes: PixelBufferAttributes(pixelFormat: pixelFormat, width: 1280, height: 720))
    try writer.add(input)
    try writer.startWriting()
    writer.startSession(atSourceTime: .zero)
    guard let pool = adaptor.pixelBufferPool else { throw GraphError(.runFailed, "no pool") }
    var steady = 0
    for n in 0..<600 {
        var frame = try pool.makePixelBuffer()
        // A moving picture, each row one value: the drawing costs about what videotestsrc's does.
        let rowBytes = frame.bytesPerRow
        frame.withUnsafeMutableBytes { raw in
            for y in 0..<raw.count / rowBytes {
                (raw.baseAddress! + y * rowBytes).initializeMemory(as: UInt8.self, repeating: UInt8((n + y) & 0xFF), count: rowBytes)
            }
        }
        try await adaptor.append(frame, withPresentationTime: MediaTime(value: Int64(n), timescale: 30))
        if n == 99 { steady = pool.allocations }
    }
    try await writer.finishWriting()
    // Allocations after the first 100 frames: each one a frame made in steady state.
    print("pool allocations: \(pool.allocations) in all, \(pool.allocations - steady) after frame 100")
}

/// `graphkit-api-bench reader FILE.wav`: every sample of a file through AssetReader's
/// copyNextSampleBuffer(), as 16-bit PCM.
func benchmarkReader(_ arguments: [String]) throws {
    guard let path = arguments.first else { throw GraphError(.usage, "graphkit-api-bench reader FILE") }
    let start = ContinuousClock.now
    let asset = try Asset(path: path)
    let opened = ContinuousClock.now
    let reader = try AssetReader(asset: asset)
    let output = AssetReaderTrackOutput(track: try asset.track(withMediaType: .audio), outputSettings: .linearPCM(sampleFormat: .s16le))
    try reader.add(output)
    try reader.startReading()
    var frames = 0, samples = 0
    while let sample = output.copyNextSampleBuffer() {
        frames += sample.frameCount
        samples += 1
    }
    guard reader.status == .completed else { throw reader.error ?? GraphError(.runFailed, "reader \(reader.status)") }
    print("\(frames) frames in \(samples) samples; Asset(path:) \(opened - start), reading \(ContinuousClock.now - opened)")
}
