// The pixel-buffer adaptor benchmark of graphkit-api-bench (scripts/bench.py, job swiftapi),
// written with AVFoundation's names (issue 30): AVAssetWriter, a settings dictionary, the
// adaptor's CVPixelBufferPool, CVPixelBufferLockBaseAddress, append(_:withPresentationTime:).
// The same 600 frames, drawn the same way, so that the two figures measure the layer.
//
//   graphkit-avf-bench adaptor OUT.mp4 [bgra|i420]
import AVFoundation

let arguments = CommandLine.arguments
guard arguments.count > 2, arguments[1] == "adaptor" else {
    print("usage: graphkit-avf-bench adaptor OUT.mp4 [bgra|i420]")
    exit(64)
}
let url = URL(fileURLWithPath: arguments[2])
let i420 = arguments.count > 3 && arguments[3] == "i420"
try? FileManager.default.removeItem(at: url)
let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
let input = AVAssetWriterInput(mediaType: .video, outputSettings: [
    AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 1280, AVVideoHeightKey: 720,
    AVVideoCompressionPropertiesKey: [AVVideoAverageBitRateKey: 2_048_000, AVVideoMaxKeyFrameIntervalKey: 250],
])
let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: [
    kCVPixelBufferPixelFormatTypeKey as String: i420 ? kCVPixelFormatType_420YpCbCr8Planar : kCVPixelFormatType_32BGRA,
    kCVPixelBufferWidthKey as String: 1280, kCVPixelBufferHeightKey as String: 720,
])
writer.add(input)
guard writer.startWriting(), let pool = adaptor.pixelBufferPool else {
    print("error: \(writer.error?.localizedDescription ?? "no pool")")
    exit(70)
}
writer.startSession(atSourceTime: .zero)
for n in 0..<600 {
    var pixelBuffer: CVPixelBuffer?
    guard CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pixelBuffer) == kCVReturnSuccess, let frame = pixelBuffer else { exit(70) }
    // A moving picture, each row one value (the whole buffer, planes included, as graphkit-api-bench draws).
    CVPixelBufferLockBaseAddress(frame, [])
    let base = CVPixelBufferGetBaseAddress(frame)!
    let rowBytes = CVPixelBufferGetBytesPerRow(frame)
    let size = CVPixelBufferGetDataSize(frame)
    for y in 0..<size / rowBytes {
        (base + y * rowBytes).initializeMemory(as: UInt8.self, repeating: UInt8((n + y) & 0xFF), count: rowBytes)
    }
    CVPixelBufferUnlockBaseAddress(frame, [])
    guard adaptor.append(frame, withPresentationTime: CMTime(value: Int64(n), timescale: 30)) else {
        print("error: \(writer.error?.localizedDescription ?? "append failed")")
        exit(70)
    }
}
input.markAsFinished()
let done = DispatchSemaphore(value: 0)
writer.finishWriting { done.signal() }
done.wait()
guard writer.status == .completed else {
    print("error: \(writer.error?.localizedDescription ?? "not completed")")
    exit(70)
}
print("pool allocations: \(pool.pool.allocations)")
