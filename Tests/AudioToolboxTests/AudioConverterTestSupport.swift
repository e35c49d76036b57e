import AVFoundation
import AudioToolbox
import GraphKitTesting
import Testing
import TestSupport

/// PCM the test generates, handed to the converter's input callback through its user data, as
/// code written for Apple's platforms does. `chunk` frames a call at most; `pauseEvery` makes the
/// callback say "nothing yet" (a non-zero status, no packets) once after that many frames.
final class SineSource {
    let rate: Double, channels: Int, frequency: Double, amplitude: Double, totalFrames: Int, chunk: Int, float: Bool
    var position = 0
    var storage: UnsafeMutableRawPointer
    var pauseEvery: Int?
    var pausedAt = -1
    var calls = 0
    var disposeOnCall: (AudioConverterRef, Int)?
    static let noDataYet: OSStatus = 0x6E6F_6474  // 'nodt', the caller's own status

    init(rate: Double, channels: Int, frequency: Double, amplitude: Double, seconds: Double, chunk: Int, float: Bool) {
        (self.rate, self.channels, self.frequency, self.amplitude, self.chunk, self.float) = (rate, channels, frequency, amplitude, chunk, float)
        totalFrames = Int(rate * seconds)
        storage = .allocate(byteCount: chunk * channels * 4, alignment: 16)
    }
    deinit { storage.deallocate() }

    var asbd: AudioStreamBasicDescription {
        let bytes = UInt32(float ? 4 : 2) * UInt32(channels)
        return AudioStreamBasicDescription(mSampleRate: rate, mFormatID: kAudioFormatLinearPCM,
                                           mFormatFlags: (float ? kAudioFormatFlagIsFloat : kAudioFormatFlagIsSignedInteger) | kAudioFormatFlagIsPacked,
                                           mBytesPerPacket: bytes, mFramesPerPacket: 1, mBytesPerFrame: bytes,
                                           mChannelsPerFrame: UInt32(channels), mBitsPerChannel: float ? 32 : 16, mReserved: 0)
    }

    func provide(_ count: UnsafeMutablePointer<UInt32>, _ list: UnsafeMutablePointer<AudioBufferList>) -> OSStatus {
        calls += 1
        if let (converter, call) = disposeOnCall, call == calls { AudioConverterDispose(converter) }
        if let every = pauseEvery, position > 0, position / every != pausedAt {
            pausedAt = position / every
            count.pointee = 0
            return Self.noDataYet
        }
        let frames = min(Int(count.pointee), chunk, totalFrames - position)
        for i in 0..<max(frames, 0) {
            let value = amplitude * sin(2 * .pi * frequency * Double(position + i) / rate)
            for c in 0..<channels {
                if float { storage.storeBytes(of: Float(value), toByteOffset: ((i * channels) + c) * 4, as: Float.self) }
                else { storage.storeBytes(of: Int16(value * 32767), toByteOffset: ((i * channels) + c) * 2, as: Int16.self) }
            }
        }
        position += max(frames, 0)
        count.pointee = UInt32(max(frames, 0))
        list.pointee.mNumberBuffers = 1
        list.pointee.mBuffers = AudioBuffer(mNumberChannels: UInt32(channels), mDataByteSize: UInt32(max(frames, 0) * channels * (float ? 4 : 2)),
                                            mData: storage)
        return OSStatus(noErr)
    }
}

/// The callback, a closure without captures as Apple's C function pointer needs.
let sineInput: AudioConverterComplexInputDataProc = { _, ioNumberDataPackets, ioData, _, inUserData in
    let source = Unmanaged<SineSource>.fromOpaque(inUserData!).takeUnretainedValue()
    return source.provide(ioNumberDataPackets, ioData)
}

func aacDescription(rate: Double = 0, channels: UInt32 = 0) -> AudioStreamBasicDescription {
    var d = AudioStreamBasicDescription()
    d.mFormatID = kAudioFormatMPEG4AAC
    d.mSampleRate = rate
    d.mChannelsPerFrame = channels
    return d
}

/// The converter's packets and its cookie.
struct Encoded {
    var packets: [[UInt8]] = []
    var cookie: [UInt8] = []
    var statuses: [OSStatus] = []
}

/// Runs `source` through a new converter, `perFill` packets a call, until a call returns none.
func encode(_ source: SineSource, to destination: AudioStreamBasicDescription, perFill: Int = 1, bitRate: UInt32? = nil) throws -> Encoded {
    var input = source.asbd, output = destination
    var converter: AudioConverterRef?
    try #require(AudioConverterNew(&input, &output, &converter) == noErr)
    let c = try #require(converter)
    defer { AudioConverterDispose(c) }
    if var bitRate { #expect(AudioConverterSetProperty(c, kAudioConverterEncodeBitRate, UInt32(MemoryLayout<UInt32>.size), &bitRate) == noErr) }
    var result = Encoded()
    var size: UInt32 = 0
    #expect(AudioConverterGetPropertyInfo(c, kAudioConverterCompressionMagicCookie, &size, nil) == noErr)
    result.cookie = [UInt8](repeating: 0, count: Int(size))
    #expect(AudioConverterGetProperty(c, kAudioConverterCompressionMagicCookie, &size, &result.cookie) == noErr)
    var maxPacket: UInt32 = 0, propertySize = UInt32(MemoryLayout<UInt32>.size)
    #expect(AudioConverterGetProperty(c, kAudioConverterPropertyMaximumOutputPacketSize, &propertySize, &maxPacket) == noErr)
    let capacity = Int(maxPacket) * perFill
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
    defer { buffer.deallocate() }
    var descriptions = [AudioStreamPacketDescription](repeating: AudioStreamPacketDescription(), count: perFill)
    let user = Unmanaged.passUnretained(source).toOpaque()
    for _ in 0..<100_000 {
        var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: output.mChannelsPerFrame == 0 ? input.mChannelsPerFrame : output.mChannelsPerFrame,
                                                                            mDataByteSize: UInt32(capacity), mData: buffer))
        var packets = UInt32(perFill)
        let status = AudioConverterFillComplexBuffer(c, sineInput, user, &packets, &list, &descriptions)
        result.statuses.append(status)
        guard status == noErr || status == SineSource.noDataYet else { throw FillFailed(status: status) }
        for d in descriptions.prefix(Int(packets)) {
            result.packets.append(Array(UnsafeRawBufferPointer(start: buffer + Int(d.mStartOffset), count: Int(d.mDataByteSize))))
        }
        #expect(Int(list.mBuffers.mDataByteSize) == descriptions.prefix(Int(packets)).reduce(0) { $0 + Int($1.mDataByteSize) })
        if packets == 0 && status == noErr { break }
        #expect(status != noErr || packets == UInt32(perFill) || source.position == source.totalFrames, "a fill returned early")
    }
    return result
}

/// An ADTS stream of the packets (a 7-byte header each), which ffmpeg reads as it is.
func adts(_ packets: [[UInt8]], rate: Int, channels: Int) -> [UInt8] {
    let index = [96_000, 88_200, 64_000, 48_000, 44_100, 32_000, 24_000, 22_050, 16_000, 12_000, 11_025, 8_000, 7_350].firstIndex(of: rate)!
    var out: [UInt8] = []
    for p in packets {
        let length = p.count + 7
        out += [0xFF, 0xF1, UInt8(1 << 6 | index << 2 | channels >> 2), UInt8((channels & 3) << 6 | length >> 11),
                UInt8(length >> 3 & 0xFF), UInt8((length & 7) << 5 | 0x1F), 0xFC] + p
    }
    return out
}

/// The decoded file as 32-bit float samples, interleaved.
func decode(_ path: String) throws -> [Float] {
    let out = path + ".f32"
    try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "f32le", out])
    let data = try Data(contentsOf: URL(fileURLWithPath: out))
    return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
}

/// The frequency of a sine by its rising zero crossings, and its RMS level.
func measure(_ samples: ArraySlice<Float>, rate: Double) -> (frequency: Double, rms: Double) {
    var crossings: [Int] = []
    var previous = samples.first ?? 0
    for (i, s) in samples.enumerated() where i > 0 {
        if previous < 0 && s >= 0 { crossings.append(i) }
        previous = s
    }
    let frequency = crossings.count > 1 ? Double(crossings.count - 1) * rate / Double(crossings.last! - crossings.first!) : 0
    let rms = (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    return (frequency, rms)
}

struct FillFailed: Error { let status: OSStatus }
