// Frames drawn into pixel buffers, written to an H.264 movie: AVFoundation code as it is written
// for iOS and macOS (AVAssetWriter, an input with a settings dictionary, the pixel-buffer
// adaptor's pool, requestMediaDataWhenReady), each frame drawn with CoreGraphics into a bitmap
// context over the locked pixel buffer's memory, compiled unchanged against GraphKit's
// AVFoundation and CoreGraphics modules on Linux.
//
//   swift run example-avfoundation-frames-to-movie out/frames.mp4 [frames]
import AVFoundation
import CoreGraphics

let arguments = CommandLine.arguments
let outputURL = URL(fileURLWithPath: arguments.count > 1 ? arguments[1] : "out/frames.mp4")
let frameCount = arguments.count > 2 ? Int(arguments[2]) ?? 90 : 90
let width = 640
let height = 360
let frameDuration = CMTime(value: 1, timescale: 30)

/// Draws frame `index` (CoreGraphics' origin is the bottom left): a dark blue ground, a red ball
/// crossing the lower half 8 points a frame, and a white frame around the top right quarter.
func draw(_ index: Int, into pixelBuffer: CVPixelBuffer) {
    CVPixelBufferLockBaseAddress(pixelBuffer, [])
    defer { CVPixelBufferUnlockBaseAddress(pixelBuffer, []) }
    guard let context = CGContext(data: CVPixelBufferGetBaseAddress(pixelBuffer),
                                  width: CVPixelBufferGetWidth(pixelBuffer), height: CVPixelBufferGetHeight(pixelBuffer),
                                  bitsPerComponent: 8, bytesPerRow: CVPixelBufferGetBytesPerRow(pixelBuffer),
                                  space: CGColorSpaceCreateDeviceRGB(),
                                  bitmapInfo: CGImageAlphaInfo.premultipliedFirst.rawValue | CGBitmapInfo.byteOrder32Little.rawValue) else { return }
    let w = CGFloat(context.width), h = CGFloat(context.height)
    context.setFillColor(red: 0.05, green: 0.1, blue: 0.3, alpha: 1)
    context.fill(CGRect(x: 0, y: 0, width: w, height: h))
    let x = 40 + CGFloat((index * 8) % (Int(w) - 80))
    context.setFillColor(red: 0.9, green: 0.1, blue: 0.1, alpha: 1)
    context.fillEllipse(in: CGRect(x: x - 30, y: 60, width: 60, height: 60))
    context.setStrokeColor(red: 1, green: 1, blue: 1, alpha: 1)
    context.setLineWidth(6)
    context.stroke(CGRect(x: w / 2, y: h / 2, width: w / 2 - 20, height: h / 2 - 20))
}

try? FileManager.default.removeItem(at: outputURL)
let writer: AVAssetWriter
do {
    writer = try AVAssetWriter(outputURL: outputURL, fileType: .mp4)
} catch {
    print("cannot make the writer: \(error.localizedDescription)")
    exit(1)
}
let videoSettings: [String: Any] = [
    AVVideoCodecKey: AVVideoCodecType.h264,
    AVVideoWidthKey: width,
    AVVideoHeightKey: height,
    AVVideoCompressionPropertiesKey: [
        AVVideoAverageBitRateKey: 2_000_000,
        AVVideoMaxKeyFrameIntervalKey: 30,
        AVVideoProfileLevelKey: AVVideoProfileLevelH264HighAutoLevel,
    ],
]
let input = AVAssetWriterInput(mediaType: .video, outputSettings: videoSettings)
input.expectsMediaDataInRealTime = false
let adaptor = AVAssetWriterInputPixelBufferAdaptor(
    assetWriterInput: input,
    sourcePixelBufferAttributes: [
        kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA,
        kCVPixelBufferWidthKey as String: width,
        kCVPixelBufferHeightKey as String: height,
    ])
guard writer.canAdd(input) else {
    print("cannot add the input: \(writer.error?.localizedDescription ?? "unknown")")
    exit(1)
}
writer.add(input)
writer.shouldOptimizeForNetworkUse = true
guard writer.startWriting() else {
    print("cannot start writing: \(writer.error?.localizedDescription ?? "unknown")")
    exit(1)
}
writer.startSession(atSourceTime: .zero)

var frameIndex = 0
var failed = false
let queue = DispatchQueue(label: "frames-to-movie")
let allAppended = DispatchSemaphore(value: 0)
input.requestMediaDataWhenReady(on: queue) {
    while input.isReadyForMoreMediaData {
        if frameIndex == frameCount {
            input.markAsFinished()
            allAppended.signal()
            return
        }
        guard let pool = adaptor.pixelBufferPool else {
            failed = true
            input.markAsFinished()
            allAppended.signal()
            return
        }
        var pixelBuffer: CVPixelBuffer?
        let status = CVPixelBufferPoolCreatePixelBuffer(kCFAllocatorDefault, pool, &pixelBuffer)
        guard status == kCVReturnSuccess, let pixelBuffer else {
            failed = true
            input.markAsFinished()
            allAppended.signal()
            return
        }
        draw(frameIndex, into: pixelBuffer)
        let presentationTime = CMTimeMultiply(frameDuration, multiplier: Int32(frameIndex))
        if !adaptor.append(pixelBuffer, withPresentationTime: presentationTime) {
            failed = true
            input.markAsFinished()
            allAppended.signal()
            return
        }
        frameIndex += 1
    }
}
allAppended.wait()

let finished = DispatchSemaphore(value: 0)
writer.endSession(atSourceTime: CMTimeMultiply(frameDuration, multiplier: Int32(frameCount)))
writer.finishWriting {
    finished.signal()
}
finished.wait()
if failed || writer.status != .completed {
    print("writing failed: \(writer.error?.localizedDescription ?? "status \(writer.status.rawValue)")")
    exit(1)
}
print("wrote \(frameIndex) frames (\(CMTimeGetSeconds(CMTimeMultiply(frameDuration, multiplier: Int32(frameIndex)))) s) to \(outputURL.path)")
