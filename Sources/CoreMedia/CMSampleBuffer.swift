@_spi(Engine) import GraphKitCore

/// A sample buffer, as CoreMedia's: format description, timing and data. Over GraphKit's
/// `SampleBuffer` (no copy of the data either way); a video frame's pixels are its image buffer
/// (`CMSampleBufferGetImageBuffer`), PCM and compressed samples its data buffer
/// (`CMSampleBufferGetDataBuffer`).
public final class CMSampleBuffer: Sendable {
    /// The data, and whether it is there yet: a buffer made by `CMSampleBufferCreate` without
    /// data gets it once, by `CMSampleBufferSetDataBuffer…`.
    private let data: Guarded<(sample: SampleBuffer, ready: Bool)>
    package var sample: SampleBuffer { data.withLock { $0.sample } }
    /// The samples a buffer made without its data was declared to hold.
    private let declaredSamples: Int?
    /// The format (`CMSampleBufferGetFormatDescription`), as the Swift overlay names it.
    public let formatDescription: CMFormatDescription?
    /// A video frame's pixels (`CMSampleBufferGetImageBuffer`).
    public let imageBuffer: CVImageBuffer?
    /// The times as given (a PCM buffer's in its sample rate), as the Swift overlay names them.
    public let presentationTimeStamp: CMTime
    public let decodeTimeStamp: CMTime
    public let duration: CMTime
    /// Cleared by `CMSampleBufferInvalidate`.
    private let valid = Guarded(true)
    /// The buffer's own attachments (`CMSetAttachment`), by key; the samples' are
    /// ``sampleAttachments``.
    package let bufferAttachments = Attachments()

    /// A sample buffer over `sample`. Its times are given in the sample rate for PCM (as
    /// CoreMedia's readers give them) when that is exact, else as the engine keeps them.
    package convenience init(sample: SampleBuffer) {
        self.init(sample: sample, givenTime: nil)
    }

    /// A sample buffer over `sample` whose times are `lead` earlier than the sample's own: an
    /// engine's sample stamped later than its time line because its times go below 0, which
    /// CMTime holds and the engine's stamps do not. The sample keeps its stamps (a writer that
    /// takes no time before 0 is given those: ``sampleForEngine``).
    package convenience init(sample: SampleBuffer, earlierBy lead: CMTime) {
        self.init(sample: sample, givenTime: nil, earlier: lead.isNumeric && lead > .zero ? lead : nil)
    }

    /// A PCM buffer made by app code, its time as given.
    package convenience init(sample: SampleBuffer, presentationTimeStamp: CMTime) {
        self.init(sample: sample, givenTime: presentationTimeStamp)
    }

    /// Over `sample`, shown at `givenTime` when there is one, else at the sample's own time
    /// (`earlier` earlier, and decoded so, when there is one).
    private init(sample: SampleBuffer, givenTime: CMTime?, earlier: CMTime? = nil) {
        data = Guarded((sample, true))
        declaredSamples = nil
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
        func moved(_ t: CMTime) -> CMTime { earlier.map { t.isValid ? t - $0 : t } ?? t }
        presentationTimeStamp = moved(givenTime ?? time(sample.presentationTime))
        decodeTimeStamp = moved(time(sample.decodeTime))
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
        data = Guarded((sample, true))
        declaredSamples = nil
        formatDescription = CMFormatDescription(format: .rawVideo(imageBuffer.videoFormat))
        self.imageBuffer = imageBuffer
        self.presentationTimeStamp = presentationTimeStamp
        decodeTimeStamp = .invalid
        self.duration = duration
    }

    /// The same data with other times (CMSampleBufferCreateCopyWithNewTiming).
    package init(_ other: CMSampleBuffer, presentationTimeStamp: CMTime, decodeTimeStamp: CMTime, duration: CMTime) {
        var (sample, ready) = other.data.withLock { $0 }
        sample.presentationTime = presentationTimeStamp.mediaTime
        sample.decodeTime = decodeTimeStamp.mediaTime
        sample.duration = duration.mediaTime
        data = Guarded((sample, ready))
        declaredSamples = other.declaredSamples
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

    /// A buffer of `format`, its data to come (CMSampleBufferCreate with no data buffer) or
    /// given now, with times as given.
    package init(format: MediaFormat?, capsDetail: String?, data block: SampleBuffer?, samples: Int,
                 presentationTimeStamp: CMTime, decodeTimeStamp: CMTime, duration: CMTime) {
        var sample = block ?? SampleBuffer(format: format, byteCount: 0)
        sample.format = format
        sample.capsDetail = capsDetail
        sample.presentationTime = presentationTimeStamp.mediaTime
        sample.decodeTime = decodeTimeStamp.mediaTime
        sample.duration = duration.mediaTime
        data = Guarded((sample, block != nil))
        declaredSamples = samples
        formatDescription = format.map { CMFormatDescription(format: $0, capsDetail: capsDetail) }
        imageBuffer = nil
        self.presentationTimeStamp = presentationTimeStamp
        self.decodeTimeStamp = decodeTimeStamp
        self.duration = duration
    }

    /// Whether the buffer has its data.
    package var isDataReady: Bool { data.withLock { $0.ready } }

    /// Attachments set on samples by app code, by sample (see `sampleAttachments`).
    private let extraAttachments = Guarded<[Int: [CFString: AttachmentValue]]>([:])
    var setAttachments: [Int: [CFString: AttachmentValue]] { extraAttachments.withLock { $0 } }

    /// Sets (or with nil removes) one attachment of sample `index`. NotSync on compressed video
    /// is the engine's keyframe flag, which a muxer writes as the sample's sync flag.
    func setAttachment(_ key: CFString, _ value: AttachmentValue?, at index: Int) {
        let compressedVideo = data.withLock { data -> Bool in
            switch data.sample.format {
            case .h264?, .video?: break
            default: return false
            }
            guard key == kCMSampleAttachmentKey_NotSync else { return true }
            let notSync = (value?.value as? Bool) ?? (value?.value as? NSNumber)?.boolValue ?? false
            if notSync { data.sample.flags.remove(.keyframe) } else { data.sample.flags.insert(.keyframe) }
            return true
        }
        if compressedVideo, key == kCMSampleAttachmentKey_NotSync { return }
        extraAttachments.withLock { $0[index, default: [:]][key] = value }
    }

    /// Gives a buffer made without data its data, once; false when it already has some.
    package func setData(_ bytes: SampleBuffer) -> Bool {
        data.withLock { data in
            guard !data.ready else { return false }
            var sample = bytes
            sample.format = data.sample.format
            sample.capsDetail = data.sample.capsDetail
            sample.presentationTime = data.sample.presentationTime
            sample.decodeTime = data.sample.decodeTime
            sample.duration = data.sample.duration
            data = (sample, true)
            return true
        }
    }

    /// Whether the buffer is still valid (`CMSampleBufferIsValid`): true until invalidated.
    public var isValid: Bool { valid.withLock { $0 } }
    /// The presentation time as output (no trim or speed applied here: the presentation time).
    public var outputPresentationTimeStamp: CMTime { presentationTimeStamp }
    /// The bytes of its samples (`CMSampleBufferGetTotalSampleSize`).
    public var totalSampleSize: Int { sample.byteCount }

    /// Makes the buffer invalid, as the Swift overlay's `invalidate()`: `isValid` is false from
    /// then on. Throws `kCMSampleBufferError_Invalidated` (as an NSError of NSOSStatusErrorDomain)
    /// when it was already invalid.
    public func invalidate() throws {
        guard markInvalid() else {
            throw NSError(domain: "NSOSStatusErrorDomain", code: Int(kCMSampleBufferError_Invalidated))
        }
    }

    /// Marks the buffer invalid, once; false when it was already.
    func markInvalid() -> Bool {
        valid.withLock { v in
            defer { v = false }
            return v
        }
    }

    public var numSamples: Int {
        if let declaredSamples { return declaredSamples }
        if case .pcm? = sample.format { return sample.frameCount }
        return 1
    }
}

/// A block of bytes, as CoreMedia's `CMBlockBuffer`: a sample buffer's data (the buffer's own
/// memory, not a copy).
public final class CMBlockBuffer: Sendable {
    private let lock = Guarded<SampleBuffer>(SampleBuffer(format: nil, byteCount: 0))
    package var sample: SampleBuffer { lock.withLock { $0 } }
    package init(sample: SampleBuffer) { lock.withLock { $0 = sample } }

    /// Writes into the block (copying first if a sample buffer made from it holds the bytes).
    fileprivate func write(_ body: (UnsafeMutableRawBufferPointer) -> OSStatus) -> OSStatus {
        lock.withLock { s in s.withUnsafeMutableBytes(body) }
    }
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
    sbuf.imageBuffer == nil && sbuf.isDataReady ? CMBlockBuffer(sample: sbuf.sample) : nil
}
/// The pixels of a video frame; nil for audio or compressed video.
public func CMSampleBufferGetImageBuffer(_ sbuf: CMSampleBuffer) -> CVImageBuffer? { sbuf.imageBuffer }
/// Always true: GraphKit's sample buffers are valid from creation until released.
public func CMSampleBufferIsValid(_ sbuf: CMSampleBuffer) -> Bool { sbuf.isValid }

/// Makes the buffer invalid, as CoreMedia's: `CMSampleBufferIsValid` is false from then on.
/// `kCMSampleBufferError_Invalidated` (−12744) when it was already invalid.
@discardableResult
public func CMSampleBufferInvalidate(_ sbuf: CMSampleBuffer) -> OSStatus {
    sbuf.markInvalid() ? OSStatus(noErr) : kCMSampleBufferError_Invalidated
}

public let kCMSampleBufferError_Invalidated: OSStatus = -12744
/// Whether the buffer has its data: false only for one made by `CMSampleBufferCreate` without
/// data, until `CMSampleBufferSetDataBuffer` or `…SetDataBufferFromAudioBufferList` gives it.
public func CMSampleBufferDataIsReady(_ sbuf: CMSampleBuffer) -> Bool { sbuf.isDataReady }

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

public typealias CMItemIndex = Int

/// The timing of sample `sampleIndex`: for PCM, frame `sampleIndex` (its time the buffer's plus
/// that many frames, its duration one frame); for a video frame or a compressed packet, the one
/// sample there is. An index outside the buffer is `kCMSampleBufferError_SampleIndexOutOfRange`.
@discardableResult
public func CMSampleBufferGetSampleTimingInfo(_ sbuf: CMSampleBuffer, at sampleIndex: CMItemIndex,
                                              timingInfoOut: UnsafeMutablePointer<CMSampleTimingInfo>) -> OSStatus {
    guard sampleIndex >= 0, sampleIndex < max(sbuf.numSamples, 1) else { return kCMSampleBufferError_SampleIndexOutOfRange }
    timingInfoOut.pointee = sbuf.timing(ofSample: sampleIndex)
    return OSStatus(noErr)
}

/// The buffer's timing entries: one, as CoreMedia gives for PCM (the first frame's time, one
/// frame's duration) and for a single frame or packet. With `arrayToFill` nil, only the count;
/// an array of no entries is `kCMSampleBufferError_ArrayTooSmall`.
@discardableResult
public func CMSampleBufferGetSampleTimingInfoArray(_ sbuf: CMSampleBuffer, entryCount: CMItemCount,
                                                   arrayToFill timingArrayOut: UnsafeMutablePointer<CMSampleTimingInfo>?,
                                                   entriesNeededOut timingArrayEntriesNeededOut: UnsafeMutablePointer<CMItemCount>?) -> OSStatus {
    timingArrayEntriesNeededOut?.pointee = 1
    guard let timingArrayOut else { return OSStatus(noErr) }
    guard entryCount >= 1 else { return kCMSampleBufferError_ArrayTooSmall }
    timingArrayOut.pointee = sbuf.timing(ofSample: 0)
    return OSStatus(noErr)
}

/// The bytes of sample `sampleIndex`: one frame of PCM, or the whole of a frame or packet. An
/// index outside the buffer gives 0, as CoreMedia's does.
public func CMSampleBufferGetSampleSize(_ sbuf: CMSampleBuffer, at sampleIndex: CMItemIndex) -> Int {
    guard sampleIndex >= 0, sampleIndex < max(sbuf.numSamples, 1) else { return 0 }
    if case .pcm(let f)? = sbuf.sample.format { return sbuf.numSamples > 0 ? f.bytesPerFrame : 0 }
    return sbuf.sample.byteCount
}

extension CMSampleBuffer {
    /// Sample `index`'s timing (see `CMSampleBufferGetSampleTimingInfo`).
    fileprivate func timing(ofSample index: Int) -> CMSampleTimingInfo {
        if case .pcm(let f)? = sample.format, let rate = Int32(exactly: f.sampleRate) {
            let frame = CMTime(value: 1, timescale: rate)
            let start = presentationTimeStamp.isNumeric ? CMTimeAdd(presentationTimeStamp, CMTime(value: CMTimeValue(index), timescale: rate)) : presentationTimeStamp
            return CMSampleTimingInfo(duration: frame, presentationTimeStamp: start, decodeTimeStamp: .invalid)
        }
        return CMSampleTimingInfo(duration: duration, presentationTimeStamp: presentationTimeStamp, decodeTimeStamp: decodeTimeStamp)
    }
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

// MARK: Making sample buffers, as capture code and tests do

public typealias CMBlockBufferFlags = UInt32
public let kCMBlockBufferAssureMemoryNowFlag: CMBlockBufferFlags = 1 << 0
public let kCMBlockBufferAlwaysCopyDataFlag: CMBlockBufferFlags = 1 << 1
public let kCMSampleBufferError_RequiredParameterMissing: OSStatus = -12731
public let kCMSampleBufferError_InvalidMediaFormat: OSStatus = -12743

/// The hooks of a custom block source: not used by GraphKit (pass nil).
public struct CMBlockBufferCustomBlockSource {}

/// A block of `dataLength` bytes. With `memoryBlock` nil, GraphKit allocates it (zeroed); with
/// memory given, the bytes are copied and `blockAllocator` is ignored (GraphKit's blocks own
/// their memory: a difference from CoreMedia, which would refer to it).
@discardableResult
public func CMBlockBufferCreateWithMemoryBlock(allocator structureAllocator: CFAllocator?, memoryBlock: UnsafeMutableRawPointer?, blockLength: Int,
                                               blockAllocator: CFAllocator?, customBlockSource: UnsafePointer<CMBlockBufferCustomBlockSource>?,
                                               offsetToData: Int, dataLength: Int, flags: CMBlockBufferFlags,
                                               blockBufferOut: UnsafeMutablePointer<CMBlockBuffer?>) -> OSStatus {
    blockBufferOut.pointee = nil
    guard blockLength >= 0, offsetToData >= 0 else { return kCMBlockBufferBadOffsetParameterErr }
    guard dataLength >= 0, offsetToData + dataLength <= blockLength else { return kCMBlockBufferBadLengthParameterErr }
    let sample: SampleBuffer
    if let memoryBlock {
        sample = SampleBuffer(format: nil, bytes: UnsafeRawBufferPointer(start: memoryBlock + offsetToData, count: dataLength))
    } else {
        sample = SampleBuffer(format: nil, byteCount: dataLength)
    }
    blockBufferOut.pointee = CMBlockBuffer(sample: sample)
    return kCMBlockBufferNoErr
}

/// Copies `dataLength` bytes from `sourceBytes` into the block at `offsetIntoDestination`.
@discardableResult
public func CMBlockBufferReplaceDataBytes(with sourceBytes: UnsafeRawPointer, blockBuffer destinationBuffer: CMBlockBuffer,
                                          offsetIntoDestination: Int, dataLength: Int) -> OSStatus {
    destinationBuffer.write { raw in
        guard offsetIntoDestination >= 0, offsetIntoDestination <= raw.count else { return kCMBlockBufferBadOffsetParameterErr }
        guard dataLength >= 0, offsetIntoDestination + dataLength <= raw.count else { return kCMBlockBufferBadLengthParameterErr }
        if dataLength > 0 { (raw.baseAddress! + offsetIntoDestination).copyMemory(from: sourceBytes, byteCount: dataLength) }
        return kCMBlockBufferNoErr
    }
}

/// A packet of a compressed audio stream (unused for PCM: pass nil).
public struct AudioStreamPacketDescription: Sendable {
    public var mStartOffset: Int64
    public var mVariableFramesInPacket: UInt32
    public var mDataByteSize: UInt32
    public init() { mStartOffset = 0; mVariableFramesInPacket = 0; mDataByteSize = 0 }
    public init(mStartOffset: Int64, mVariableFramesInPacket: UInt32, mDataByteSize: UInt32) {
        self.mStartOffset = mStartOffset
        self.mVariableFramesInPacket = mVariableFramesInPacket
        self.mDataByteSize = mDataByteSize
    }
}

/// A PCM sample buffer of `sampleCount` frames from `dataBuffer`, starting at `presentationTimeStamp`
/// (its duration is the frames at the description's rate). PCM only: a compressed description is
/// `kCMSampleBufferError_InvalidMediaFormat`; a data length that is not `sampleCount` frames is
/// `kCMSampleBufferError_InvalidSampleData`.
@discardableResult
public func CMAudioSampleBufferCreateReadyWithPacketDescriptions(allocator: CFAllocator?, dataBuffer: CMBlockBuffer, formatDescription: CMFormatDescription,
                                                                 sampleCount numSamples: CMItemCount, presentationTimeStamp: CMTime,
                                                                 packetDescriptions: UnsafePointer<AudioStreamPacketDescription>?,
                                                                 sampleBufferOut: UnsafeMutablePointer<CMSampleBuffer?>) -> OSStatus {
    sampleBufferOut.pointee = nil
    guard case .pcm(let f) = formatDescription.format else { return kCMSampleBufferError_InvalidMediaFormat }
    guard presentationTimeStamp.isNumeric, let pts = presentationTimeStamp.mediaTime else { return kCMSampleBufferError_RequiredParameterMissing }
    var sample = dataBuffer.sample
    guard numSamples >= 0, sample.byteCount == numSamples * f.bytesPerFrame else { return kCMSampleBufferError_InvalidSampleData }
    sample.format = formatDescription.format
    sample.presentationTime = pts
    sample.duration = MediaTime(value: Int64(numSamples), timescale: Int32(f.sampleRate))
    sampleBufferOut.pointee = CMSampleBuffer(sample: sample, presentationTimeStamp: presentationTimeStamp)
    return OSStatus(noErr)
}

/// A sample buffer for a pixel buffer, with its timing.
@discardableResult
public func CMSampleBufferCreateReadyWithImageBuffer(allocator: CFAllocator?, imageBuffer: CVImageBuffer, formatDescription: CMVideoFormatDescription,
                                                     sampleTiming: UnsafePointer<CMSampleTimingInfo>,
                                                     sampleBufferOut: UnsafeMutablePointer<CMSampleBuffer?>) -> OSStatus {
    sampleBufferOut.pointee = CMSampleBuffer(imageBuffer: imageBuffer, presentationTimeStamp: sampleTiming.pointee.presentationTimeStamp,
                                             duration: sampleTiming.pointee.duration)
    return OSStatus(noErr)
}

/// The description of a pixel buffer's frames.
@discardableResult
public func CMVideoFormatDescriptionCreateForImageBuffer(allocator: CFAllocator?, imageBuffer: CVImageBuffer,
                                                         formatDescriptionOut: UnsafeMutablePointer<CMVideoFormatDescription?>) -> OSStatus {
    formatDescriptionOut.pointee = CMFormatDescription(format: .rawVideo(imageBuffer.videoFormat))
    return OSStatus(noErr)
}
