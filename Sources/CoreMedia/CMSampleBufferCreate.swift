@_spi(Engine) import GraphKitCore

// Making sample buffers from data, as code that fills them itself does (audio it generated or
// converted, packets it parsed), and giving a buffer made without data its data later.

public let kCMSampleBufferError_AlreadyHasDataBuffer: OSStatus = -12732
public let kCMSampleBufferError_BufferNotReady: OSStatus = -12733
public let kCMSampleBufferError_InvalidEntryCount: OSStatus = -12738
public let kCMSampleBufferError_CannotSubdivide: OSStatus = -12739

/// Called to make a buffer's data ready. A buffer's data is ready once given, so GraphKit calls it
/// only where a made buffer is said not to be ready (`CMSampleBufferCreateForImageBuffer` with
/// `dataReady` false: at once); pass nil elsewhere. A Swift closure here, where Apple's is a C
/// function pointer.
public typealias CMSampleBufferMakeDataReadyCallback = (CMSampleBuffer, UnsafeMutableRawPointer?) -> OSStatus

/// A sample buffer of `numSamples` samples described by `formatDescription`, over `dataBuffer`
/// (nil: its data is given later, by `CMSampleBufferSetDataBuffer` or
/// `CMSampleBufferSetDataBufferFromAudioBufferList`). Timing, as CoreMedia takes it: no entry
/// (no times), or one (for PCM, the first frame's time and ONE frame's duration; for a packet or
/// frame, its own), or one per sample (the first is used for PCM).
///
/// Where GraphKit differs: data given is ready whatever `dataReady` says (the callback is never
/// called), and a compressed buffer holds one packet: more than one sample is
/// `kCMSampleBufferError_CannotSubdivide`. PCM data must be `numSamples` whole frames
/// (`kCMSampleBufferError_InvalidSampleData`).
@discardableResult
public func CMSampleBufferCreate(allocator: CFAllocator?, dataBuffer: CMBlockBuffer?, dataReady: Bool,
                                 makeDataReadyCallback: CMSampleBufferMakeDataReadyCallback?, refcon: UnsafeMutableRawPointer?,
                                 formatDescription: CMFormatDescription?, sampleCount numSamples: CMItemCount,
                                 sampleTimingEntryCount numSampleTimingEntries: CMItemCount, sampleTimingArray: UnsafePointer<CMSampleTimingInfo>?,
                                 sampleSizeEntryCount numSampleSizeEntries: CMItemCount, sampleSizeArray: UnsafePointer<Int>?,
                                 sampleBufferOut: UnsafeMutablePointer<CMSampleBuffer?>) -> OSStatus {
    sampleBufferOut.pointee = nil
    guard numSamples >= 0, numSampleTimingEntries >= 0, numSampleSizeEntries >= 0,
          numSampleTimingEntries <= 1 || numSampleTimingEntries == numSamples,
          numSampleTimingEntries == 0 || sampleTimingArray != nil,
          numSampleSizeEntries == 0 || sampleSizeArray != nil else { return kCMSampleBufferError_InvalidEntryCount }
    let format = formatDescription?.format
    let timing = numSampleTimingEntries > 0 ? sampleTimingArray!.pointee : CMSampleTimingInfo()
    var duration = timing.duration
    if case .pcm(let f)? = format {
        if let data = dataBuffer?.sample, data.byteCount != numSamples * f.bytesPerFrame { return kCMSampleBufferError_InvalidSampleData }
        // One frame's duration, as CoreMedia takes PCM timing, times the frames.
        if duration.isNumeric { duration = CMTimeMultiply(duration, multiplier: Int32(clamping: numSamples)) }
    } else if numSamples > 1 {
        return kCMSampleBufferError_CannotSubdivide
    }
    sampleBufferOut.pointee = CMSampleBuffer(format: format, capsDetail: formatDescription?.capsDetail, data: dataBuffer?.sample, samples: numSamples,
                                             presentationTimeStamp: timing.presentationTimeStamp, decodeTimeStamp: timing.decodeTimeStamp,
                                             duration: duration)
    return OSStatus(noErr)
}

/// `CMSampleBufferCreate` with its data, ready.
@discardableResult
public func CMSampleBufferCreateReady(allocator: CFAllocator?, dataBuffer: CMBlockBuffer?, formatDescription: CMFormatDescription?,
                                      sampleCount numSamples: CMItemCount, sampleTimingEntryCount numSampleTimingEntries: CMItemCount,
                                      sampleTimingArray: UnsafePointer<CMSampleTimingInfo>?, sampleSizeEntryCount numSampleSizeEntries: CMItemCount,
                                      sampleSizeArray: UnsafePointer<Int>?, sampleBufferOut: UnsafeMutablePointer<CMSampleBuffer?>) -> OSStatus {
    CMSampleBufferCreate(allocator: allocator, dataBuffer: dataBuffer, dataReady: true, makeDataReadyCallback: nil, refcon: nil,
                         formatDescription: formatDescription, sampleCount: numSamples, sampleTimingEntryCount: numSampleTimingEntries,
                         sampleTimingArray: sampleTimingArray, sampleSizeEntryCount: numSampleSizeEntries, sampleSizeArray: sampleSizeArray,
                         sampleBufferOut: sampleBufferOut)
}

/// Gives a buffer made without data its data (the block's bytes, not copied). A buffer that has
/// data is `kCMSampleBufferError_AlreadyHasDataBuffer`; PCM that is not the declared frames,
/// `kCMSampleBufferError_InvalidSampleData`.
@discardableResult
public func CMSampleBufferSetDataBuffer(_ sbuf: CMSampleBuffer, newValue dataBuffer: CMBlockBuffer) -> OSStatus {
    let bytes = dataBuffer.sample
    if case .pcm(let f)? = sbuf.sample.format, bytes.byteCount != sbuf.numSamples * f.bytesPerFrame { return kCMSampleBufferError_InvalidSampleData }
    return sbuf.setData(bytes) ? OSStatus(noErr) : kCMSampleBufferError_AlreadyHasDataBuffer
}

/// Gives a PCM buffer made without data a copy of `bufferList`'s samples: one interleaved buffer
/// with the format's channels and exactly the declared frames. More than one buffer (planar
/// audio) or another channel count is `kCMSampleBufferError_InvalidMediaFormat`; another size,
/// `kCMSampleBufferError_InvalidSampleData`; a buffer that has data,
/// `kCMSampleBufferError_AlreadyHasDataBuffer`.
@discardableResult
public func CMSampleBufferSetDataBufferFromAudioBufferList(_ sbuf: CMSampleBuffer, blockBufferAllocator: CFAllocator?,
                                                           blockBufferMemoryAllocator: CFAllocator?, flags: UInt32,
                                                           bufferList: UnsafePointer<AudioBufferList>) -> OSStatus {
    guard case .pcm(let f)? = sbuf.sample.format else { return kCMSampleBufferError_InvalidMediaTypeForOperation }
    let list = UnsafeMutableAudioBufferListPointer(UnsafeMutablePointer(mutating: bufferList))
    guard list.count == 1, list[0].mNumberChannels == UInt32(f.channels) else { return kCMSampleBufferError_InvalidMediaFormat }
    let size = Int(list[0].mDataByteSize)
    guard size == sbuf.numSamples * f.bytesPerFrame, size == 0 || list[0].mData != nil else { return kCMSampleBufferError_InvalidSampleData }
    let copy = SampleBuffer(format: nil, bytes: UnsafeRawBufferPointer(start: list[0].mData, count: size))
    return sbuf.setData(copy) ? OSStatus(noErr) : kCMSampleBufferError_AlreadyHasDataBuffer
}

/// Marks the data ready: there is nothing to do for a buffer that has its data; one that has
/// none yet is `kCMSampleBufferError_BufferNotReady` (give it data first).
@discardableResult
public func CMSampleBufferSetDataReady(_ sbuf: CMSampleBuffer) -> OSStatus {
    sbuf.isDataReady ? OSStatus(noErr) : kCMSampleBufferError_BufferNotReady
}

extension CMSampleBuffer {
    /// Its data as a block buffer (`CMSampleBufferGetDataBuffer`), as the Swift overlay names it:
    /// nil for a video frame (its pixels are ``imageBuffer``) and before the data is given.
    public var dataBuffer: CMBlockBuffer? { CMSampleBufferGetDataBuffer(self) }
}

extension CMSampleTimingInfo {
    /// Every time invalid (`kCMTimingInfoInvalid`).
    public static let invalid = CMSampleTimingInfo()
}

/// Every time invalid.
public let kCMTimingInfoInvalid = CMSampleTimingInfo.invalid

/// A sample buffer for a pixel buffer, as ``CMSampleBufferCreateReadyWithImageBuffer`` makes
/// one: a pixel buffer's data is always ready here, so `dataReady` false with a callback calls it
/// at once, and its error is returned. A callback's refcon is handed back as given.
@discardableResult
public func CMSampleBufferCreateForImageBuffer(allocator: CFAllocator?, imageBuffer: CVImageBuffer, dataReady: Bool,
                                               makeDataReadyCallback: CMSampleBufferMakeDataReadyCallback?, refcon: UnsafeMutableRawPointer?,
                                               formatDescription: CMVideoFormatDescription, sampleTiming: UnsafePointer<CMSampleTimingInfo>,
                                               sampleBufferOut: UnsafeMutablePointer<CMSampleBuffer?>) -> OSStatus {
    sampleBufferOut.pointee = nil
    let made = CMSampleBuffer(imageBuffer: imageBuffer, presentationTimeStamp: sampleTiming.pointee.presentationTimeStamp,
                              duration: sampleTiming.pointee.duration)
    if !dataReady, let makeDataReadyCallback {
        let status = makeDataReadyCallback(made, refcon)
        guard status == noErr else { return status }
    }
    sampleBufferOut.pointee = made
    return OSStatus(noErr)
}
