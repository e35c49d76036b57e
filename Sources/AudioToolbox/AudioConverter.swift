@_spi(Engine) import GraphKitCore

// AudioToolbox's AudioConverter for the job code written for Apple's platforms gives it most:
// interleaved 16-bit or 32-bit float PCM in, AAC-LC out, pulled through an input callback
// (`AudioConverterFillComplexBuffer`), over the engine's AAC encoder (`encode.aac`, FFmpeg's).
// Every mistake Apple answers with a status is answered with Apple's status here; a reference
// that was disposed or never made is refused (`kAudio_ParamError`), never followed.

/// MPEG-4 audio object types (`mFormatFlags` of an AAC description).
public enum MPEG4ObjectID: Int, Sendable {
    case AAC_Main = 1, AAC_LC = 2, AAC_SSR = 3, AAC_LTP = 4, AAC_SBR = 5, AAC_Scalable = 6, TwinVQ = 7, CELP = 8, HVXC = 9
}

/// Makes a converter from `inSourceFormat` to `inDestinationFormat`.
///
/// The source must be interleaved, packed, native-endian linear PCM, 16-bit signed integer or
/// 32-bit float, 1 to 8 channels at 8 to 192 kHz; the destination AAC-LC (`kAudioFormatMPEG4AAC`,
/// `mFormatFlags` 0 or `MPEG4ObjectID.AAC_LC`, `mFramesPerPacket` 0 or 1024) at a rate AAC
/// takes (0: the source's, which must then be one) and 1 to 6 channels (0: the source's);
/// the audio is resampled and mixed to it. Anything else is `kAudioConverterErr_FormatNotSupported`
/// (PCM to PCM too: this converter encodes), a source rate out of range
/// `kAudioConverterErr_InputSampleRateOutOfRange`. `outAudioConverter` is set to nil on failure.
@discardableResult
public func AudioConverterNew(_ inSourceFormat: UnsafePointer<AudioStreamBasicDescription>,
                              _ inDestinationFormat: UnsafePointer<AudioStreamBasicDescription>,
                              _ outAudioConverter: UnsafeMutablePointer<AudioConverterRef?>) -> OSStatus {
    outAudioConverter.pointee = nil
    switch AudioConverter.formats(source: inSourceFormat.pointee, destination: inDestinationFormat.pointee) {
    case .failure(let status):
        return status.status
    case .success(let (pcm, destination)):
        outAudioConverter.pointee = AudioConverter.register(AudioConverter(source: inSourceFormat.pointee, pcm: pcm, destination: destination))
        return OSStatus(noErr)
    }
}

/// ``AudioConverterNew(_:_:_:)`` with a choice of codec (Apple's software or hardware AAC
/// encoder): there is one encoder here, so the descriptions are read only for their count (0 with
/// descriptions missing is `kAudio_ParamError`, as Apple's) and the converter is the same.
@discardableResult
public func AudioConverterNewSpecific(_ inSourceFormat: UnsafePointer<AudioStreamBasicDescription>,
                                      _ inDestinationFormat: UnsafePointer<AudioStreamBasicDescription>,
                                      _ inNumberClassDescriptions: UInt32, _ inClassDescriptions: UnsafePointer<AudioClassDescription>,
                                      _ outAudioConverter: UnsafeMutablePointer<AudioConverterRef?>) -> OSStatus {
    outAudioConverter.pointee = nil
    guard inNumberClassDescriptions > 0 else { return kAudio_ParamError }
    return AudioConverterNew(inSourceFormat, inDestinationFormat, outAudioConverter)
}

/// Ends a converter: its encoder stops (a fill waiting on it in another thread wakes and returns
/// `kAudio_ParamError`) and the reference is refused from now on.
@discardableResult
public func AudioConverterDispose(_ inAudioConverter: AudioConverterRef) -> OSStatus {
    guard let converter = AudioConverter.unregister(inAudioConverter) else { return kAudio_ParamError }
    converter.dispose()
    return OSStatus(noErr)
}

/// Forgets everything in flight: packets not yet returned, the encoder's state, the input
/// ended. The next fill starts a new stream (its first packet primes again). A fill running on
/// another thread is `kAudioConverterErr_OperationNotSupported`.
@discardableResult
public func AudioConverterReset(_ inAudioConverter: AudioConverterRef) -> OSStatus {
    guard let converter = AudioConverter.lookUp(inAudioConverter) else { return kAudio_ParamError }
    return converter.reset()
}

/// Converts input the callback supplies into up to `ioOutputDataPacketSize` AAC packets, written
/// one after another into `outOutputData`'s first buffer (`mDataByteSize` set to the bytes
/// written), each described in `outPacketDescription` (required: AAC's packets vary in size,
/// `kAudioConverterErr_RequiresPacketDescriptionsError` without it).
///
/// The callback is called as often as the packets asked for need; it returns when they are
/// there, or when the input has ended (the callback gave 0 packets with `noErr`) and every packet
/// has been returned: `ioOutputDataPacketSize` is then what was written, 0 at the very end. A
/// callback's non-zero status ends the call at once with what was converted and that status;
/// the next call goes on where it stopped (the input does not end). A packet that does not fit
/// waits for the next call (`kAudioConverterErr_InvalidOutputSize` when not even the first
/// fits: give the buffer `kAudioConverterPropertyMaximumOutputPacketSize` bytes a packet).
/// If the encoder fails, the call returns `kAudioConverterErr_UnspecifiedError`.
@discardableResult
public func AudioConverterFillComplexBuffer(_ inAudioConverter: AudioConverterRef, _ inInputDataProc: AudioConverterComplexInputDataProc,
                                            _ inInputDataProcUserData: UnsafeMutableRawPointer?,
                                            _ ioOutputDataPacketSize: UnsafeMutablePointer<UInt32>,
                                            _ outOutputData: UnsafeMutablePointer<AudioBufferList>,
                                            _ outPacketDescription: UnsafeMutablePointer<AudioStreamPacketDescription>?) -> OSStatus {
    guard let converter = AudioConverter.lookUp(inAudioConverter) else {
        ioOutputDataPacketSize.pointee = 0
        return kAudio_ParamError
    }
    return converter.fill(reference: inAudioConverter, proc: inInputDataProc, userData: inInputDataProcUserData,
                          packets: ioOutputDataPacketSize, into: outOutputData, descriptions: outPacketDescription)
}

/// The size of a property's value and whether it can be set. Unknown properties are
/// `kAudioConverterErr_PropertyNotSupported`.
@discardableResult
public func AudioConverterGetPropertyInfo(_ inAudioConverter: AudioConverterRef, _ inPropertyID: AudioConverterPropertyID,
                                          _ outSize: UnsafeMutablePointer<UInt32>?, _ outWritable: UnsafeMutablePointer<DarwinBoolean>?) -> OSStatus {
    guard let converter = AudioConverter.lookUp(inAudioConverter) else { return kAudio_ParamError }
    guard let value = converter.property(inPropertyID) else { return kAudioConverterErr_PropertyNotSupported }
    outSize?.pointee = UInt32(value.bytes.count)
    outWritable?.pointee = DarwinBoolean(AudioConverter.writable.contains(inPropertyID))
    return OSStatus(noErr)
}

/// Reads a property: `kAudioConverterCompressionMagicCookie` (the ES_Descriptor around the
/// AudioSpecificConfig, as Apple's encoder gives it, to hand to `CMAudioFormatDescriptionCreate`
/// or a file's `esds`), `kAudioConverterPropertyMaximumOutputPacketSize`,
/// `kAudioConverterEncodeBitRate`, `kAudioConverterCurrentInputStreamDescription`,
/// `kAudioConverterCurrentOutputStreamDescription` (its zero fields filled in),
/// `kAudioConverterPrimeInfo` (the encoder's priming), `kAudioConverterApplicableEncodeBitRates`,
/// `kAudioConverterCodecQuality`, the minimum buffer sizes. `ioPropertyDataSize` smaller than the
/// value is `kAudioConverterErr_BadPropertySizeError`; on return it is the bytes written.
@discardableResult
public func AudioConverterGetProperty(_ inAudioConverter: AudioConverterRef, _ inPropertyID: AudioConverterPropertyID,
                                      _ ioPropertyDataSize: UnsafeMutablePointer<UInt32>, _ outPropertyData: UnsafeMutableRawPointer) -> OSStatus {
    guard let converter = AudioConverter.lookUp(inAudioConverter) else { return kAudio_ParamError }
    guard let value = converter.property(inPropertyID) else { return kAudioConverterErr_PropertyNotSupported }
    let bytes = value.bytes
    // A variable-size value (the cookie, the bit-rate list) takes a buffer at least its size;
    // a fixed one exactly its size, or more.
    guard Int(ioPropertyDataSize.pointee) >= bytes.count else { return kAudioConverterErr_BadPropertySizeError }
    bytes.withUnsafeBytes { outPropertyData.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
    ioPropertyDataSize.pointee = UInt32(bytes.count)
    return OSStatus(noErr)
}

/// Sets a property: `kAudioConverterEncodeBitRate` (a `UInt32`, 8 to 512 kbit/s: out of range
/// is `kAudio_ParamError`; set before the first fill, or after `AudioConverterReset`, it applies
/// to the stream that starts then; during a stream, `kAudioConverterErr_OperationNotSupported`),
/// and `kAudioConverterCodecQuality` (accepted: the encoder has one quality). Other properties
/// are `kAudioConverterErr_PropertyNotSupported`; a size that is not the value's,
/// `kAudioConverterErr_BadPropertySizeError`.
@discardableResult
public func AudioConverterSetProperty(_ inAudioConverter: AudioConverterRef, _ inPropertyID: AudioConverterPropertyID,
                                      _ inPropertyDataSize: UInt32, _ inPropertyData: UnsafeRawPointer) -> OSStatus {
    guard let converter = AudioConverter.lookUp(inAudioConverter) else { return kAudio_ParamError }
    guard AudioConverter.writable.contains(inPropertyID) else {
        return converter.property(inPropertyID) == nil ? kAudioConverterErr_PropertyNotSupported : kAudioConverterErr_OperationNotSupported
    }
    guard inPropertyDataSize == UInt32(MemoryLayout<UInt32>.size) else { return kAudioConverterErr_BadPropertySizeError }
    let value = inPropertyData.loadUnaligned(as: UInt32.self)
    return converter.set(inPropertyID, value)
}
