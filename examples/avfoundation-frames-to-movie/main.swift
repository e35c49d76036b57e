// Frames drawn into pixel buffers, written to an H.264 movie: AVFoundation code as it is written
// for iOS and macOS (AVAssetWriter, an input with a settings dictionary, the pixel-buffer
// adaptor's pool, requestMediaDataWhenReady), compiled unchanged against GraphKit's
// AVFoundation module on Linux.
//
//   swift run example-avfoundation-frames-to-movie out/frames.mp4 [frames]
import AVFoundation

let arguments = CommandLine.arguments
let outputURL = URL(fileURLWithPath: arguments.count > 1 ? arguments[1] : "out/frames.mp4")
let frameCount = arguments.count > 2 ? Int(arguments[2]) ?? 90 : 90
let width = 640
let height = 360
let frameDuration = CMTime(value: 1, timescale: 30)

/// Draws frame `index`: a white bar moving over a gradient.
func draw(_ index: Int, into pixelBuffer: CVPixelBuffer) {
    CVPixelBufferLockBaseAddress(pixelBuffer, [])
    defer { CVPixelBufferUnlockBaseAddress(pixelBuffer, []) }
    guard let base = CVPixelBufferGetBaseAddress(pixelBuffer) else { return }
    let bytesPerRow = CVPixelBufferGetBytesPerRow(pixelBuffer)
    let w = CVPixelBufferGetWidth(pixelBuffer), h = CVPixelBufferGetHeight(pixelBuffer)
    let bar = (index * 8) % w
    for y in 0..<h {
        let row = (base + y * bytesPerRow).assumingMemoryBound(to: UInt32.self)
        let shade = UInt32(y * 255 / h)
        for x in 0..<w {
            row[x] = abs(x - bar) < 8 ? 0xFFFF_FFFF : 0xFF00_0000 | shade << 16 | UInt32(x * 255 / w) << 8 | 0x40
        }
    }
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
