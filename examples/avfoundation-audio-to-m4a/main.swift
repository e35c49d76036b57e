// Audio "captured" as 16-bit PCM sample buffers, encoded to AAC and written to an M4A: the
// AVAssetWriter half of an audio recorder, as written for iOS and macOS. The microphone is
// simulated (a 440 Hz tone, in 1024-frame buffers, as a capture callback hands them over);
// everything else is AVFoundation and CoreMedia code, compiled unchanged on Linux.
//
//   swift run example-avfoundation-audio-to-m4a out/tone.m4a [seconds]
import AVFoundation

let arguments = CommandLine.arguments
let outputURL = URL(fileURLWithPath: arguments.count > 1 ? arguments[1] : "out/tone.m4a")
let seconds = arguments.count > 2 ? Double(arguments[2]) ?? 2 : 2
let sampleRate = 44_100.0
let channels = 2
let framesPerBuffer = 1024

/// The capture format: interleaved 16-bit signed PCM.
func makeFormatDescription() -> CMAudioFormatDescription? {
    var asbd = AudioStreamBasicDescription(
        mSampleRate: sampleRate, mFormatID: kAudioFormatLinearPCM,
        mFormatFlags: kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked,
        mBytesPerPacket: UInt32(2 * channels), mFramesPerPacket: 1, mBytesPerFrame: UInt32(2 * channels),
        mChannelsPerFrame: UInt32(channels), mBitsPerChannel: 16, mReserved: 0)
    var description: CMAudioFormatDescription?
    let status = CMAudioFormatDescriptionCreate(allocator: kCFAllocatorDefault, asbd: &asbd, layoutSize: 0, layout: nil,
                                                magicCookieSize: 0, magicCookie: nil, extensions: nil, formatDescriptionOut: &description)
    return status == noErr ? description : nil
}

/// One buffer from the "microphone": frames `start..<start+count` of the tone.
func captureBuffer(start: Int, count: Int, format: CMAudioFormatDescription) -> CMSampleBuffer? {
    var samples = [Int16](repeating: 0, count: count * channels)
    for frame in 0..<count {
        let value = Int16(8000 * sin(2 * Double.pi * 440 * Double(start + frame) / sampleRate))
        for channel in 0..<channels { samples[frame * channels + channel] = value }
    }
    let length = samples.count * MemoryLayout<Int16>.size
    var blockBuffer: CMBlockBuffer?
    guard CMBlockBufferCreateWithMemoryBlock(allocator: kCFAllocatorDefault, memoryBlock: nil, blockLength: length, blockAllocator: nil,
                                             customBlockSource: nil, offsetToData: 0, dataLength: length,
                                             flags: kCMBlockBufferAssureMemoryNowFlag, blockBufferOut: &blockBuffer) == kCMBlockBufferNoErr,
          let blockBuffer else { return nil }
    samples.withUnsafeBytes { bytes in
        _ = CMBlockBufferReplaceDataBytes(with: bytes.baseAddress!, blockBuffer: blockBuffer, offsetIntoDestination: 0, dataLength: length)
    }
    var sampleBuffer: CMSampleBuffer?
    let time = CMTimeMake(value: Int64(start), timescale: Int32(sampleRate))
    guard CMAudioSampleBufferCreateReadyWithPacketDescriptions(allocator: kCFAllocatorDefault, dataBuffer: blockBuffer, formatDescription: format,
                                                               sampleCount: count, presentationTimeStamp: time, packetDescriptions: nil,
                                                               sampleBufferOut: &sampleBuffer) == noErr else { return nil }
    return sampleBuffer
}

try? FileManager.default.removeItem(at: outputURL)
guard let format = makeFormatDescription() else {
    print("cannot describe the capture format")
    exit(1)
}
let writer: AVAssetWriter
do {
    writer = try AVAssetWriter(outputURL: outputURL, fileType: .m4a)
} catch {
    print("cannot make the writer: \(error.localizedDescription)")
    exit(1)
}
var layout = AudioChannelLayout()
layout.mChannelLayoutTag = kAudioChannelLayoutTag_Stereo
let audioSettings: [String: Any] = [
    AVFormatIDKey: kAudioFormatMPEG4AAC,
    AVSampleRateKey: sampleRate,
    AVNumberOfChannelsKey: channels,
    AVEncoderBitRateKey: 128_000,
    AVChannelLayoutKey: Data(bytes: &layout, count: MemoryLayout<AudioChannelLayout>.size),
]
let input = AVAssetWriterInput(mediaType: .audio, outputSettings: audioSettings, sourceFormatHint: format)
input.expectsMediaDataInRealTime = true
guard writer.canAdd(input) else {
    print("cannot add the audio input")
    exit(1)
}
writer.add(input)
guard writer.startWriting() else {
    print("cannot start writing: \(writer.error?.localizedDescription ?? "unknown")")
    exit(1)
}
writer.startSession(atSourceTime: .zero)

let totalFrames = Int(seconds * sampleRate)
var written = 0
while written < totalFrames {
    let count = min(framesPerBuffer, totalFrames - written)
    guard let buffer = captureBuffer(start: written, count: count, format: format) else {
        print("cannot make a sample buffer")
        exit(1)
    }
    while !input.isReadyForMoreMediaData && writer.status == .writing { usleep(1000) }
    if !input.append(buffer) {
        print("append failed: \(writer.error?.localizedDescription ?? "status \(writer.status.rawValue)")")
        exit(1)
    }
    written += count
}
input.markAsFinished()
let done = DispatchSemaphore(value: 0)
writer.finishWriting { done.signal() }
done.wait()
guard writer.status == .completed else {
    print("writing failed: \(writer.error?.localizedDescription ?? "unknown")")
    exit(1)
}
print("wrote \(written) frames (\(Double(written) / sampleRate) s) of AAC to \(outputURL.path)")
