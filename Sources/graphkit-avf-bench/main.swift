// The pixel-buffer adaptor benchmark of graphkit-api-bench (scripts/bench.py, job swiftapi),
// written with AVFoundation's names (issue 30): AVAssetWriter, a settings dictionary, the
// adaptor's CVPixelBufferPool, CVPixelBufferLockBaseAddress, append(_:withPresentationTime:).
// The same 600 frames, drawn the same way, so that the two figures measure the layer.
//
//   graphkit-avf-bench adaptor OUT.mp4 [bgra|i420]
//   graphkit-avf-bench composition IN.mp4 OUT.mp4  (graphkit-api-bench's composition job, as
//                                                   Apple's export code writes it)
//   graphkit-avf-bench thumbnail IN.heic OUT.jpg SIZE  (issue 72: an upload service's thumbnail,
//                                                   ImageIO's names; SIZE 0: the whole picture)
//   graphkit-avf-bench decode IN.heic              (the picture decoded to a CGImage, nothing written)
import AVFoundation
import ImageIO

let arguments = CommandLine.arguments
if arguments.count == 4, arguments[1] == "composition" {
    try await exportComposition(from: URL(fileURLWithPath: arguments[2]), to: URL(fileURLWithPath: arguments[3]))
    exit(0)
}
if arguments.count == 5, arguments[1] == "thumbnail", let size = Int(arguments[4]) {
    exit(thumbnail(URL(fileURLWithPath: arguments[2]), URL(fileURLWithPath: arguments[3]), size: size))
}
if arguments.count == 3, arguments[1] == "decode" {
    // The decode alone: the picture as a CGImage, written nowhere.
    guard let source = CGImageSourceCreateWithURL(URL(fileURLWithPath: arguments[2]) as CFURL, nil),
          CGImageSourceCreateImageAtIndex(source, 0, nil) != nil else { exit(65) }
    exit(0)
}
guard arguments.count > 2, arguments[1] == "adaptor" else {
    print("usage: graphkit-avf-bench adaptor OUT.mp4 [bgra|i420] | composition IN.mp4 OUT.mp4")
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

/// The source's centre 1280x720, faded in over its first second and out over its last, with the
/// HighestQuality preset: an AVMutableVideoComposition with one instruction and one layer.
func exportComposition(from source: URL, to output: URL) async throws {
    let asset = AVURLAsset(url: source)
    guard let track = try await asset.loadTracks(withMediaType: .video).first else { exit(65) }
    let (size, duration) = (try await track.load(.naturalSize), try await asset.load(.duration))
    let composition = AVMutableVideoComposition()
    composition.renderSize = CGSize(width: 1280, height: 720)
    composition.frameDuration = CMTime(value: 1, timescale: 30)
    let instruction = AVMutableVideoCompositionInstruction()
    instruction.timeRange = CMTimeRange(start: .zero, duration: duration)
    let layer = AVMutableVideoCompositionLayerInstruction(assetTrack: track)
    layer.setTransform(CGAffineTransform(translationX: -(size.width - 1280) / 2, y: -(size.height - 720) / 2), at: .zero)
    let second = CMTime(value: 1, timescale: 1)
    layer.setOpacityRamp(fromStartOpacity: 0, toEndOpacity: 1, timeRange: CMTimeRange(start: .zero, duration: second))
    layer.setOpacityRamp(fromStartOpacity: 1, toEndOpacity: 0, timeRange: CMTimeRange(start: CMTimeSubtract(duration, second), duration: second))
    instruction.layerInstructions = [layer]
    composition.instructions = [instruction]
    guard let session = AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetHighestQuality) else { exit(65) }
    session.videoComposition = composition
    session.outputURL = output
    session.outputFileType = .mp4
    await session.export()
    guard session.status == .completed else {
        print("error: \(session.error?.localizedDescription ?? "the export did not complete")")
        exit(70)
    }
}

/// A photo's thumbnail as an upload service makes it with ImageIO: at most `size` pixels a side,
/// turned upright, saved as a JPEG of quality 0.8 (`size` 0: the whole picture, decoded).
func thumbnail(_ input: URL, _ output: URL, size: Int) -> Int32 {
    guard let source = CGImageSourceCreateWithURL(input as CFURL, nil) else { return 66 }
    let image: CGImage?
    if size > 0 {
        image = CGImageSourceCreateThumbnailAtIndex(source, 0, [kCGImageSourceCreateThumbnailFromImageIfAbsent: true,
                                                                kCGImageSourceCreateThumbnailWithTransform: true,
                                                                kCGImageSourceThumbnailMaxPixelSize: size] as CFDictionary)
    } else {
        image = CGImageSourceCreateImageAtIndex(source, 0, nil)
    }
    guard let image, let destination = CGImageDestinationCreateWithURL(output as CFURL, "public.jpeg" as CFString, 1, nil) else { return 65 }
    CGImageDestinationAddImage(destination, image, [kCGImageDestinationLossyCompressionQuality: 0.8] as CFDictionary)
    return CGImageDestinationFinalize(destination) ? 0 : 73
}
