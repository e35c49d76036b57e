@_spi(Engine) import GraphKitCore

// AVFAudio's buffers and formats, which AVFoundation re-exports on Apple's platforms: what code
// that reads a sound file into PCM (waveforms, analysis) and writes one uses of them.

public typealias AVAudioFrameCount = UInt32
public typealias AVAudioFramePosition = Int64
public typealias AVAudioChannelCount = UInt32

/// A PCM sample format, as AVFAudio's.
public enum AVAudioCommonFormat: UInt, Sendable {
    case otherFormat = 0, pcmFormatFloat32 = 1, pcmFormatFloat64 = 2, pcmFormatInt16 = 3, pcmFormatInt32 = 4
}

/// A PCM format, as AVFAudio's `AVAudioFormat`: sample format, rate, channels, interleaving.
/// GraphKit's buffers and files hold 32-bit float and 16-bit integer samples; other common
/// formats are refused (the failable initializers return nil).
open class AVAudioFormat: @unchecked Sendable, Equatable {
    // Unchecked: open, as AVFAudio's; every field is let.
    public let commonFormat: AVAudioCommonFormat
    public let sampleRate: Double
    public let channelCount: AVAudioChannelCount
    public let isInterleaved: Bool
    private let description: AudioStreamBasicDescription

    public init?(commonFormat format: AVAudioCommonFormat, sampleRate: Double, channels: AVAudioChannelCount, interleaved: Bool) {
        guard format == .pcmFormatFloat32 || format == .pcmFormatInt16, sampleRate.isFinite, sampleRate > 0, sampleRate <= 1_536_000,
              (1...64).contains(channels) else { return nil }
        commonFormat = format
        self.sampleRate = sampleRate
        channelCount = channels
        // One channel is interleaved and not, as AVFAudio has it.
        isInterleaved = interleaved || channels == 1
        let bytes: UInt32 = format == .pcmFormatFloat32 ? 4 : 2
        let frameBytes = isInterleaved ? bytes * channels : bytes
        description = AudioStreamBasicDescription(
            mSampleRate: sampleRate, mFormatID: kAudioFormatLinearPCM,
            mFormatFlags: (format == .pcmFormatFloat32 ? kAudioFormatFlagIsFloat : kAudioFormatFlagIsSignedInteger) | kAudioFormatFlagIsPacked
                | (isInterleaved ? 0 : kAudioFormatFlagIsNonInterleaved),
            mBytesPerPacket: frameBytes, mFramesPerPacket: 1, mBytesPerFrame: frameBytes, mChannelsPerFrame: channels,
            mBitsPerChannel: bytes * 8, mReserved: 0)
    }

    /// 32-bit float, not interleaved: AVFAudio's standard format.
    public convenience init?(standardFormatWithSampleRate sampleRate: Double, channels: AVAudioChannelCount) {
        self.init(commonFormat: .pcmFormatFloat32, sampleRate: sampleRate, channels: channels, interleaved: false)
    }

    /// From an audio settings dictionary (`AVFormatIDKey` linear PCM, `AVSampleRateKey`,
    /// `AVNumberOfChannelsKey`, `AVLinearPCMBitDepthKey`, `AVLinearPCMIsFloatKey`,
    /// `AVLinearPCMIsNonInterleaved`); nil for settings it cannot hold.
    public convenience init?(settings: [String: Any]) {
        if let id = settings[AVFormatIDKey].flatMap(settingsInteger), UInt32(clamping: id) != kAudioFormatLinearPCM { return nil }
        guard let rate = settings[AVSampleRateKey].flatMap(settingsNumber),
              let channels = settings[AVNumberOfChannelsKey].flatMap(settingsInteger) else { return nil }
        let isFloat = (settings[AVLinearPCMIsFloatKey] as? Bool) ?? true
        let bits = settings[AVLinearPCMBitDepthKey].flatMap(settingsInteger) ?? (isFloat ? 32 : 16)
        let format: AVAudioCommonFormat = isFloat && bits == 32 ? .pcmFormatFloat32 : !isFloat && bits == 16 ? .pcmFormatInt16 : .otherFormat
        self.init(commonFormat: format, sampleRate: rate, channels: AVAudioChannelCount(clamping: channels),
                  interleaved: !((settings[AVLinearPCMIsNonInterleaved] as? Bool) ?? false))
    }

    /// Whether it is the standard format: 32-bit float, not interleaved.
    public var isStandard: Bool { commonFormat == .pcmFormatFloat32 && (!isInterleaved || channelCount == 1) }

    /// The format as a settings dictionary, as `init(settings:)` reads it.
    public var settings: [String: Any] {
        [AVFormatIDKey: kAudioFormatLinearPCM, AVSampleRateKey: sampleRate, AVNumberOfChannelsKey: Int(channelCount),
         AVLinearPCMBitDepthKey: commonFormat == .pcmFormatFloat32 ? 32 : 16, AVLinearPCMIsFloatKey: commonFormat == .pcmFormatFloat32,
         AVLinearPCMIsBigEndianKey: false, AVLinearPCMIsNonInterleaved: !isInterleaved]
    }

    /// The stream description, as CoreAudio's.
    public var streamDescription: UnsafePointer<AudioStreamBasicDescription> {
        withUnsafePointer(to: description) { UnsafePointer(UnsafeMutablePointer(mutating: $0)) }
    }

    var bytesPerSample: Int { commonFormat == .pcmFormatFloat32 ? 4 : 2 }

    public static func == (a: AVAudioFormat, b: AVAudioFormat) -> Bool {
        a.commonFormat == b.commonFormat && a.sampleRate == b.sampleRate && a.channelCount == b.channelCount && a.isInterleaved == b.isInterleaved
    }
}

/// A buffer of audio, as AVFAudio's.
open class AVAudioBuffer: @unchecked Sendable {
    // Unchecked: open, as AVFAudio's; its memory is the caller's to share, as Apple's is.
    public let format: AVAudioFormat
    init(format: AVAudioFormat) { self.format = format }
}

/// PCM samples, as AVFAudio's `AVAudioPCMBuffer`: `frameCapacity` frames of memory, of which
/// `frameLength` are valid, reached per channel (`floatChannelData`, `int16ChannelData`: one
/// pointer per channel, or one for all when interleaved, `stride` apart).
open class AVAudioPCMBuffer: AVAudioBuffer, @unchecked Sendable {
    public let frameCapacity: AVAudioFrameCount
    private var length: AVAudioFrameCount = 0
    private let memory: UnsafeMutableRawPointer
    private let channels: UnsafeMutablePointer<UnsafeMutableRawPointer>

    public init?(pcmFormat format: AVAudioFormat, frameCapacity: AVAudioFrameCount) {
        let bytes = Int(frameCapacity) * Int(format.channelCount) * format.bytesPerSample
        guard frameCapacity > 0, bytes < 1 << 31 else { return nil }
        self.frameCapacity = frameCapacity
        memory = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 16)
        memory.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        let n = Int(format.channelCount)
        channels = .allocate(capacity: n)
        for c in 0..<n {
            channels[c] = format.isInterleaved ? memory + c * format.bytesPerSample : memory + c * Int(frameCapacity) * format.bytesPerSample
        }
        super.init(format: format)
    }

    deinit {
        memory.deallocate()
        channels.deallocate()
    }

    /// The valid frames; set it after writing samples. At most `frameCapacity` (more is clamped).
    public var frameLength: AVAudioFrameCount {
        get { length }
        set { length = min(newValue, frameCapacity) }
    }

    /// Samples between one frame's and the next in a channel: the channel count when
    /// interleaved, else 1.
    public var stride: Int { format.isInterleaved ? Int(format.channelCount) : 1 }

    public var floatChannelData: UnsafePointer<UnsafeMutablePointer<Float>>? {
        format.commonFormat == .pcmFormatFloat32 ? UnsafeRawPointer(channels).assumingMemoryBound(to: UnsafeMutablePointer<Float>.self) : nil
    }

    public var int16ChannelData: UnsafePointer<UnsafeMutablePointer<Int16>>? {
        format.commonFormat == .pcmFormatInt16 ? UnsafeRawPointer(channels).assumingMemoryBound(to: UnsafeMutablePointer<Int16>.self) : nil
    }

    public var int32ChannelData: UnsafePointer<UnsafeMutablePointer<Int32>>? { nil }

    /// Channel `c`'s sample of frame `f`, as a float from −1 to 1, whatever the format.
    func sample(_ c: Int, _ f: Int) -> Float {
        let i = f * stride
        if let d = floatChannelData { return d[c][i] }
        return Float(int16ChannelData![c][i]) / 32768
    }

    /// Sets channel `c`'s sample of frame `f` from a float (clamped for 16-bit).
    func setSample(_ c: Int, _ f: Int, _ value: Float) {
        let i = f * stride
        if let d = floatChannelData { d[c][i] = value; return }
        int16ChannelData![c][i] = Int16(clamping: Int((value * 32768).rounded()))
    }
}
