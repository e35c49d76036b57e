@_spi(Engine) import GraphKitCore
import MediaContainers

/// One converter: its formats, its properties, and the stream in flight (the engine's session,
/// packets pulled and not yet returned, frames pushed).
///
/// Unchecked Sendable: the stream's state is touched only by the one fill that holds `busy`
/// (a second fill, or a reset, during it is refused), and by `dispose`, which only cancels the
/// session's run (thread-safe) and sets a flag under the lock; properties are under the lock.
/// The compiler cannot see that exclusion.
final class AudioConverter: @unchecked Sendable {
    let source: AudioStreamBasicDescription
    let pcm: MediaFormat.PCMFormat
    /// The destination with its zero fields filled in.
    let destination: AudioStreamBasicDescription

    struct Shared {
        var busy = false
        var disposed = false
        var bitRate: UInt32
        var quality: UInt32 = kAudioConverterQuality_High
        var session: AACEncoderSession?
    }
    let shared: Guarded<Shared>

    // The stream, the busy fill's alone.
    var pending: [SampleBuffer] = []
    var framesPushed: Int64 = 0
    var packetsPulled = 0
    var inputEnded = false
    var outputEnded = false

    static let framesPerPacket = 1024
    /// avenc_aac's priming (its encoder delay): one packet.
    static let priming: UInt32 = 1024
    static let bitRates: ClosedRange<UInt32> = 8_000...512_000
    static let writable: Set<AudioConverterPropertyID> = [kAudioConverterEncodeBitRate, kAudioConverterCodecQuality]

    init(source: AudioStreamBasicDescription, pcm: MediaFormat.PCMFormat, destination: AudioStreamBasicDescription) {
        self.source = source
        self.pcm = pcm
        self.destination = destination
        // Apple's default for AAC-LC: about 64 kbit/s a channel at 44.1 and 48 kHz, less below.
        let perChannel: UInt32 = destination.mSampleRate >= 32_000 ? 64_000 : 32_000
        shared = Guarded(Shared(bitRate: min(perChannel * destination.mChannelsPerFrame, Self.bitRates.upperBound)))
    }

    // MARK: References

    private static let live = Guarded<[UInt: AudioConverter]>([:])

    static func register(_ converter: AudioConverter) -> AudioConverterRef {
        let reference = OpaquePointer(Unmanaged.passUnretained(converter).toOpaque())
        live.withLock { $0[UInt(bitPattern: reference)] = converter }
        return reference
    }

    static func lookUp(_ reference: AudioConverterRef) -> AudioConverter? {
        live.withLock { $0[UInt(bitPattern: reference)] }
    }

    static func unregister(_ reference: AudioConverterRef) -> AudioConverter? {
        live.withLock { $0.removeValue(forKey: UInt(bitPattern: reference)) }
    }

    // MARK: Formats

    /// The engine's PCM format for the source and the destination completed, or Apple's status.
    static func formats(source s: AudioStreamBasicDescription, destination d: AudioStreamBasicDescription)
        -> Result<(MediaFormat.PCMFormat, AudioStreamBasicDescription), StatusError> {
        guard s.mFormatID == kAudioFormatLinearPCM else { return .failure(StatusError(kAudioConverterErr_FormatNotSupported)) }
        guard s.mSampleRate >= 8_000, s.mSampleRate <= 192_000, s.mSampleRate == s.mSampleRate.rounded() else {
            return .failure(StatusError(kAudioConverterErr_InputSampleRateOutOfRange))
        }
        let channels = Int(s.mChannelsPerFrame)
        let float = s.mFormatFlags & kAudioFormatFlagIsFloat != 0
        let sampleFormat: SampleFormat
        switch (float, s.mBitsPerChannel) {
        case (true, 32): sampleFormat = .f32le
        case (false, 16) where s.mFormatFlags & kAudioFormatFlagIsSignedInteger != 0: sampleFormat = .s16le
        default: return .failure(StatusError(kAudioConverterErr_FormatNotSupported))
        }
        let bytesPerFrame = UInt32(channels * sampleFormat.bytesPerSample)
        guard (1...8).contains(channels),
              s.mFormatFlags & (kAudioFormatFlagIsBigEndian | kAudioFormatFlagIsNonInterleaved) == 0,
              s.mBytesPerFrame == bytesPerFrame, s.mFramesPerPacket == 1, s.mBytesPerPacket == bytesPerFrame else {
            return .failure(StatusError(kAudioConverterErr_FormatNotSupported))
        }
        guard d.mFormatID == kAudioFormatMPEG4AAC,
              d.mFormatFlags == 0 || d.mFormatFlags == UInt32(MPEG4ObjectID.AAC_LC.rawValue),
              d.mFramesPerPacket == 0 || d.mFramesPerPacket == UInt32(framesPerPacket),
              d.mBitsPerChannel == 0, d.mBytesPerFrame == 0, d.mBytesPerPacket == 0 else {
            return .failure(StatusError(kAudioConverterErr_FormatNotSupported))
        }
        var out = d
        if out.mSampleRate == 0 { out.mSampleRate = s.mSampleRate }
        if out.mChannelsPerFrame == 0 { out.mChannelsPerFrame = s.mChannelsPerFrame }
        out.mFormatFlags = UInt32(MPEG4ObjectID.AAC_LC.rawValue)
        out.mFramesPerPacket = UInt32(framesPerPacket)
        guard AudioSpecificConfig.sampleRates.contains(Int(exactly: out.mSampleRate) ?? 0), (1...6).contains(out.mChannelsPerFrame) else {
            return .failure(StatusError(kAudioConverterErr_FormatNotSupported))
        }
        return .success((MediaFormat.PCMFormat(sampleRate: Int(s.mSampleRate), channels: channels, sampleFormat: sampleFormat), out))
    }

    struct StatusError: Error { let status: OSStatus; init(_ s: OSStatus) { status = s } }

    // MARK: Properties

    /// A property's value as bytes, nil for one this converter does not have.
    func property(_ id: AudioConverterPropertyID) -> PropertyValue? {
        let (bitRate, quality) = shared.withLock { ($0.bitRate, $0.quality) }
        switch id {
        case kAudioConverterCompressionMagicCookie: return .bytes(magicCookie(bitRate: bitRate))
        case kAudioConverterPropertyMaximumOutputPacketSize: return .value(UInt32(maximumPacketSize))
        case kAudioConverterPropertyMaximumInputPacketSize: return .value(source.mBytesPerPacket)
        case kAudioConverterPropertyMinimumInputBufferSize: return .value(source.mBytesPerPacket)
        case kAudioConverterPropertyMinimumOutputBufferSize: return .value(UInt32(maximumPacketSize))
        case kAudioConverterEncodeBitRate: return .value(bitRate)
        case kAudioConverterCodecQuality: return .value(quality)
        case kAudioConverterCurrentInputStreamDescription: return .value(source)
        case kAudioConverterCurrentOutputStreamDescription: return .value(destination)
        case kAudioConverterPrimeInfo: return .value(AudioConverterPrimeInfo(leadingFrames: Self.priming, trailingFrames: 0))
        case kAudioConverterApplicableEncodeBitRates:
            return .values([AudioValueRange(mMinimum: Float64(Self.bitRates.lowerBound), mMaximum: Float64(Self.bitRates.upperBound))])
        default: return nil
        }
    }

    enum PropertyValue {
        case bytes([UInt8])
        static func value<T>(_ v: T) -> PropertyValue { values([v]) }
        static func values<T>(_ v: [T]) -> PropertyValue { .bytes(v.withUnsafeBytes { Array($0) }) }
        var bytes: [UInt8] { if case .bytes(let b) = self { b } else { [] } }
    }

    /// AAC's largest packet: 6,144 bits a channel (ISO/IEC 14496-3, 4.5.3.2).
    var maximumPacketSize: Int { 768 * Int(destination.mChannelsPerFrame) }

    func magicCookie(bitRate: UInt32) -> [UInt8] {
        let config = AudioSpecificConfig.aacLC(sampleRate: Int(destination.mSampleRate), channels: Int(destination.mChannelsPerFrame)) ?? []
        return aacMagicCookie(audioSpecificConfig: config, averageBitRate: bitRate, maximumBitRate: bitRate,
                              bufferSize: UInt32(maximumPacketSize))
    }

    func set(_ id: AudioConverterPropertyID, _ value: UInt32) -> OSStatus {
        shared.withLock { s in
            switch id {
            case kAudioConverterEncodeBitRate:
                guard Self.bitRates.contains(value) else { return kAudio_ParamError }
                guard s.session == nil else { return kAudioConverterErr_OperationNotSupported }
                s.bitRate = value
            default:
                s.quality = min(value, kAudioConverterQuality_Max)
            }
            return OSStatus(noErr)
        }
    }

    // MARK: Life

    func dispose() {
        let session = shared.withLock { s in
            s.disposed = true
            return s.session
        }
        session?.cancel()
    }

    func reset() -> OSStatus {
        let result: OSStatus? = shared.withLock { s in
            guard !s.busy else { return kAudioConverterErr_OperationNotSupported }
            guard !s.disposed else { return kAudio_ParamError }
            s.busy = true
            return nil
        }
        if let result { return result }
        let session = shared.withLock { s in
            defer { s.session = nil }
            return s.session
        }
        session?.cancel()
        pending = []
        framesPushed = 0
        packetsPulled = 0
        inputEnded = false
        outputEnded = false
        shared.withLock { $0.busy = false }
        return OSStatus(noErr)
    }
}
