// Written for Apple's platforms: the everyday names of AVFoundation, CoreMedia and CoreVideo,
// reached through `import AVFoundation` alone, as on iOS and macOS. This file is compiled
// unchanged; the test beside it only calls it.
import AVFoundation

func appleEverydayNames() -> [String] {
    let time = CMTimeMake(value: 3, timescale: 30)
    let range = CMTimeRange(start: .zero, duration: CMTime(seconds: 2, preferredTimescale: 600))
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("never-written.mp4")
    let settings: [String: Any] = [
        AVVideoCodecKey: AVVideoCodecType.h264,
        AVVideoWidthKey: 640,
        AVVideoHeightKey: 360,
        AVVideoCompressionPropertiesKey: [AVVideoAverageBitRateKey: 2_000_000, AVVideoMaxKeyFrameIntervalKey: 30],
    ]
    let audio: [String: Any] = [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 44_100, AVNumberOfChannelsKey: 2]
    let input = AVAssetWriterInput(mediaType: .video, outputSettings: settings)
    input.expectsMediaDataInRealTime = true
    input.transform = CGAffineTransform(rotationAngle: .pi / 2)
    let adaptor = AVAssetWriterInputPixelBufferAdaptor(
        assetWriterInput: input,
        sourcePixelBufferAttributes: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA])
    var pixelBuffer: CVPixelBuffer?
    let status = CVPixelBufferCreate(kCFAllocatorDefault, 64, 48, kCVPixelFormatType_32BGRA, nil, &pixelBuffer)
    var names = ["\(time.seconds)", "\(range.end.seconds)", url.lastPathComponent, "\(status == kCVReturnSuccess)"]
    if let pixelBuffer {
        CVPixelBufferLockBaseAddress(pixelBuffer, [])
        let rowBytes = CVPixelBufferGetBytesPerRow(pixelBuffer)
        CVPixelBufferUnlockBaseAddress(pixelBuffer, [])
        names.append("\(rowBytes)")
    }
    names.append(AVAssetWriterInput(mediaType: .audio, outputSettings: audio).mediaType.rawValue)
    names.append("\(adaptor.pixelBufferPool == nil)")
    let err: OSStatus = 0
    names.append("\(err == noErr)")
    return names
}
