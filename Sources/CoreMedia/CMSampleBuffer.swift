@_spi(Engine) import GraphKitCore

/// A sample buffer, as CoreMedia's: format description, timing and data. Over GraphKit's
/// `SampleBuffer` (no copy of the data either way); a video frame's pixels are its image buffer
/// (`CMSampleBufferGetImageBuffer`), PCM and compressed samples its data buffer
/// (`CMSampleBufferGetDataBuffer`).
public final class CMSampleBuffer: @unchecked Sendable {
    package let sample: SampleBuffer
    package let formatDescription: CMFormatDescription?
    package let imageBuffer: CVImageBuffer?
    /// The times as given (a PCM buffer's in its sample rate).
    package let presentationTimeStamp: CMTime
    package let decodeTimeStamp: CMTime
    package let duration: CMTime

    /// A sample buffer over `sample`. Its times are given in the sample rate for PCM (as
    /// CoreMedia's readers give them) when that is exact, else as the engine keeps them.
    package init(sample: SampleBuffer) {
        self.sample = sample
        formatDescription = sample.format.map { CMFormatDescription(format: $0, capsDetail: sample.capsDetail) }
        if case .rawVideo(let v)? = sample.format {
            imageBuffer = CVImageBuffer(sample: sample, videoFormat: v)
        } else {
            imageBuffer = nil
        }
        var scale: Int32?
        if case .pcm(let f)? = sample.format { scale = Int32(exactly: f.sampleRate) }
        func time(_ t: MediaTime?) -> CMTime {
            guard let t else { return .invalid }
            if let scale, case let c = CMTimeConvertScale(CMTime(t), timescale: scale, method: .default), !c.hasBeenRounded { return c }
            return CMTime(t)
        }
        presentationTimeStamp = time(sample.presentationTime)
        decodeTimeStamp = time(sample.decodeTime)
        if case .pcm(let f)? = sample.format, let s = scale {
            duration = CMTime(value: Int64(sample.byteCount / f.bytesPerFrame), timescale: s)
        } else {
            duration = time(sample.duration)
        }
    }

    /// A sample buffer for a pixel buffer shown at `presentationTimeStamp`.
    package init(imageBuffer: CVImageBuffer, presentationTimeStamp: CMTime, duration: CMTime) {
        var sample = imageBuffer.sample
        sample.presentationTime = presentationTimeStamp.mediaTime
        if duration.isNumeric { sample.duration = duration.mediaTime }
        self.sample = sample
        formatDescription = CMFormatDescription(format: .rawVideo(imageBuffer.videoFormat))
        self.imageBuffer = imageBuffer
        self.presentationTimeStamp = presentationTimeStamp
        decodeTimeStamp = .invalid
        self.duration = duration
    }

    /// The same data with other times (CMSampleBufferCreateCopyWithNewTiming).
    package init(_ other: CMSampleBuffer, presentationTimeStamp: CMTime, decodeTimeStamp: CMTime, duration: CMTime) {
        var sample = other.sample
        sample.presentationTime = presentationTimeStamp.mediaTime
        sample.decodeTime = decodeTimeStamp.mediaTime
        sample.duration = duration.mediaTime
        self.sample = sample
        formatDescription = other.formatDescription
        imageBuffer = other.imageBuffer
        self.presentationTimeStamp = presentationTimeStamp
        self.decodeTimeStamp = decodeTimeStamp
        self.duration = duration
    }

    /// The sample the engine takes: the image buffer's current pixels for a video frame.
    package var sampleForEngine: SampleBuffer {
        guard let imageBuffer else { return sample }
        var s = imageBuffer.sample
        s.presentationTime = sample.presentationTime
        s.duration = sample.duration
        return s
    }

    package var numSamples: Int {
        if case .pcm? = sample.format { return sample.frameCount }
        return 1
    }
}

/// A block of bytes, as CoreMedia's `CMBlockBuffer`: a sample buffer's data (the buffer's own
/// memory, not a copy).
public final class CMBlockBuffer: @unchecked Sendable {
    package let sample: SampleBuffer
    package init(sample: SampleBuffer) { self.sample = sample }
}

public let kCMBlockBufferNoErr: OSStatus = 0
public let kCMBlockBufferBadOffsetParameterErr: OSStatus = -12703
public let kCMBlockBufferBadLengthParameterErr: OSStatus = -12704
public let kCMBlockBufferBadPointerParameterErr: OSStatus = -12705
public let kCMSampleBufferError_InvalidSampleData: OSStatus = -12742
public let kCMSampleBufferError_BufferHasNoSampleSizes: OSStatus = -12735

public func CMSampleBufferGetPresentationTimeStamp(_ sbuf: CMSampleBuffer) -> CMTime { sbuf.presentationTimeStamp }
/// Invalid when the decode order is the presentation order (raw samples, AAC).
public func CMSampleBufferGetDecodeTimeStamp(_ sbuf: CMSampleBuffer) -> CMTime { sbuf.decodeTimeStamp }
public func CMSampleBufferGetDuration(_ sbuf: CMSampleBuffer) -> CMTime { sbuf.duration }
/// The presentation time plus the duration, for a buffer whose duration is known.
public func CMSampleBufferGetOutputPresentationTimeStamp(_ sbuf: CMSampleBuffer) -> CMTime { sbuf.presentationTimeStamp }
public func CMSampleBufferGetOutputDuration(_ sbuf: CMSampleBuffer) -> CMTime { sbuf.duration }
/// Frames of PCM (samples per channel); 1 for a video frame or a compressed packet.
public func CMSampleBufferGetNumSamples(_ sbuf: CMSampleBuffer) -> CMItemCount { sbuf.numSamples }
public typealias CMItemCount = Int
public func CMSampleBufferGetTotalSampleSize(_ sbuf: CMSampleBuffer) -> Int { sbuf.sample.byteCount }
public func CMSampleBufferGetFormatDescription(_ sbuf: CMSampleBuffer) -> CMFormatDescription? { sbuf.formatDescription }
/// The data of a PCM or compressed buffer; nil for a video frame (whose data is its image buffer).
public func CMSampleBufferGetDataBuffer(_ sbuf: CMSampleBuffer) -> CMBlockBuffer? {
    sbuf.imageBuffer == nil ? CMBlockBuffer(sample: sbuf.sample) : nil
}
/// The pixels of a video frame; nil for audio or compressed video.
public func CMSampleBufferGetImageBuffer(_ sbuf: CMSampleBuffer) -> CVImageBuffer? { sbuf.imageBuffer }
/// Always true: GraphKit's sample buffers are valid from creation until released.
public func CMSampleBufferIsValid(_ sbuf: CMSampleBuffer) -> Bool { true }
/// Always true: GraphKit's sample buffers are made with their data.
public func CMSampleBufferDataIsReady(_ sbuf: CMSampleBuffer) -> Bool { true }

/// A copy sharing the data, with new times; takes the first of `sampleTimingArray` (one timing
/// for the whole buffer, as for PCM or a single frame).
@discardableResult
public func CMSampleBufferCreateCopyWithNewTiming(allocator: CFAllocator?, sampleBuffer originalSBuf: CMSampleBuffer, sampleTimingEntryCount numSampleTimingEntries: CMItemCount,
                                                  sampleTimingArray: UnsafePointer<CMSampleTimingInfo>?, sampleBufferOut: UnsafeMutablePointer<CMSampleBuffer?>) -> OSStatus {
    sampleBufferOut.pointee = nil
    guard numSampleTimingEntries >= 1, let timing = sampleTimingArray?.pointee else { return kCMSampleBufferError_BufferHasNoSampleSizes }
    sampleBufferOut.pointee = CMSampleBuffer(originalSBuf, presentationTimeStamp: timing.presentationTimeStamp,
                                             decodeTimeStamp: timing.decodeTimeStamp, duration: timing.duration)
    return OSStatus(noErr)
}

public struct CMSampleTimingInfo: Sendable {
    public var duration: CMTime
    public var presentationTimeStamp: CMTime
    public var decodeTimeStamp: CMTime
    public init() { duration = .invalid; presentationTimeStamp = .invalid; decodeTimeStamp = .invalid }
    public init(duration: CMTime, presentationTimeStamp: CMTime, decodeTimeStamp: CMTime) {
        self.duration = duration
        self.presentationTimeStamp = presentationTimeStamp
        self.decodeTimeStamp = decodeTimeStamp
    }
}

public func CMBlockBufferGetDataLength(_ theBuffer: CMBlockBuffer) -> Int { theBuffer.sample.byteCount }

/// Copies `dataLength` bytes from `offsetToData` into `destination`.
@discardableResult
public func CMBlockBufferCopyDataBytes(_ theSourceBuffer: CMBlockBuffer, atOffset offsetToData: Int, dataLength: Int,
                                       destination: UnsafeMutableRawPointer) -> OSStatus {
    theSourceBuffer.sample.withUnsafeBytes { raw in
        guard offsetToData >= 0, offsetToData <= raw.count else { return kCMBlockBufferBadOffsetParameterErr }
        guard dataLength >= 0, offsetToData + dataLength <= raw.count else { return kCMBlockBufferBadLengthParameterErr }
        if dataLength > 0 { destination.copyMemory(from: raw.baseAddress! + offsetToData, byteCount: dataLength) }
        return kCMBlockBufferNoErr
    }
}

/// A pointer into the data at `offset` (the buffer is one contiguous block: the length at the
/// offset is the rest of it). Valid as long as the block buffer is; do not write through it.
@discardableResult
public func CMBlockBufferGetDataPointer(_ theBuffer: CMBlockBuffer, atOffset offset: Int, lengthAtOffsetOut: UnsafeMutablePointer<Int>?,
                                        totalLengthOut: UnsafeMutablePointer<Int>?,
                                        dataPointerOut: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> OSStatus {
    theBuffer.sample.withUnsafeBytes { raw in
        guard offset >= 0, offset < max(raw.count, 1) else { return kCMBlockBufferBadOffsetParameterErr }
        lengthAtOffsetOut?.pointee = raw.count - offset
        totalLengthOut?.pointee = raw.count
        dataPointerOut?.pointee = raw.baseAddress.map { UnsafeMutablePointer(mutating: ($0 + offset).assumingMemoryBound(to: CChar.self)) }
        return kCMBlockBufferNoErr
    }
}

/// Whether the data is one contiguous block: always, here.
public func CMBlockBufferIsRangeContiguous(_ theBuffer: CMBlockBuffer, atOffset offset: Int, length: Int) -> Bool { true }
