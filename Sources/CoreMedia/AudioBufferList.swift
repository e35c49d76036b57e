@_spi(Engine) import GraphKitCore

// CoreAudioTypes' buffer lists, and CoreMedia's functions that read a PCM sample buffer through
// one: the way audio code (waveforms, meters, AVAudioPCMBuffer conversions) reaches the samples.

/// One buffer of audio data, as CoreAudioTypes declares it.
public struct AudioBuffer {
    /// Channels interleaved in this buffer (all of them for interleaved PCM, GraphKit's only layout).
    public var mNumberChannels: UInt32
    public var mDataByteSize: UInt32
    public var mData: UnsafeMutableRawPointer?

    public init() { mNumberChannels = 0; mDataByteSize = 0; mData = nil }
    public init(mNumberChannels: UInt32, mDataByteSize: UInt32, mData: UnsafeMutableRawPointer?) {
        self.mNumberChannels = mNumberChannels
        self.mDataByteSize = mDataByteSize
        self.mData = mData
    }
}

/// A count of buffers followed by that many ``AudioBuffer``s, laid out as C's `AudioBufferList`
/// (whose `mBuffers` is a variable-length array: `mBuffers` here is its first element; reach the
/// others through ``UnsafeMutableAudioBufferListPointer``).
public struct AudioBufferList {
    public var mNumberBuffers: UInt32
    public var mBuffers: AudioBuffer

    public init() { mNumberBuffers = 0; mBuffers = AudioBuffer() }
    public init(mNumberBuffers: UInt32, mBuffers: AudioBuffer) {
        self.mNumberBuffers = mNumberBuffers
        self.mBuffers = mBuffers
    }

    /// The bytes a list of `maximumBuffers` buffers takes.
    public static func sizeInBytes(maximumBuffers: Int) -> Int {
        precondition(maximumBuffers >= 1, "AudioBufferList needs at least one buffer")
        return bufferOffset + maximumBuffers * MemoryLayout<AudioBuffer>.stride
    }

    /// A zeroed list of `maximumBuffers` buffers (its count set to that), to `free` when done,
    /// as CoreAudio's overlay allocates it.
    public static func allocate(maximumBuffers: Int) -> UnsafeMutableAudioBufferListPointer {
        let raw = calloc(1, sizeInBytes(maximumBuffers: maximumBuffers))!
        let list = UnsafeMutableAudioBufferListPointer(raw.bindMemory(to: AudioBufferList.self, capacity: 1))
        list.count = maximumBuffers
        return list
    }

    static let bufferOffset = MemoryLayout<AudioBufferList>.offset(of: \.mBuffers)!
}

/// A list's buffers as a collection, over the list's own memory (CoreAudio's Swift overlay type).
public struct UnsafeMutableAudioBufferListPointer: RandomAccessCollection, MutableCollection {
    public var unsafeMutablePointer: UnsafeMutablePointer<AudioBufferList>
    public var unsafePointer: UnsafePointer<AudioBufferList> { UnsafePointer(unsafeMutablePointer) }

    public init(_ p: UnsafeMutablePointer<AudioBufferList>) { unsafeMutablePointer = p }
    public init?(_ p: UnsafeMutablePointer<AudioBufferList>?) {
        guard let p else { return nil }
        unsafeMutablePointer = p
    }

    /// The list's `mNumberBuffers`.
    public var count: Int {
        get { Int(unsafeMutablePointer.pointee.mNumberBuffers) }
        nonmutating set { unsafeMutablePointer.pointee.mNumberBuffers = UInt32(newValue) }
    }
    public var startIndex: Int { 0 }
    public var endIndex: Int { count }

    private var buffers: UnsafeMutablePointer<AudioBuffer> {
        (UnsafeMutableRawPointer(unsafeMutablePointer) + AudioBufferList.bufferOffset).assumingMemoryBound(to: AudioBuffer.self)
    }

    public subscript(index: Int) -> AudioBuffer {
        get {
            precondition(index >= 0 && index < count, "audio buffer index \(index) out of range 0..<\(count)")
            return buffers[index]
        }
        nonmutating set {
            precondition(index >= 0 && index < count, "audio buffer index \(index) out of range 0..<\(count)")
            buffers[index] = newValue
        }
    }
}

/// Asks that each buffer's data start on a 16-byte boundary (copied there when it does not).
public let kCMSampleBufferFlag_AudioBufferList_Assure16ByteAlignment: UInt32 = 1 << 0
public let kCMSampleBufferError_AllocationFailed: OSStatus = -12730
public let kCMSampleBufferError_SampleIndexOutOfRange: OSStatus = -12734
public let kCMSampleBufferError_ArrayTooSmall: OSStatus = -12737
public let kCMSampleBufferError_InvalidMediaTypeForOperation: OSStatus = -12741

/// A PCM buffer's samples as an audio buffer list, its data the sample buffer's own (no copy,
/// unless 16-byte alignment is asked for and the data lacks it), kept alive by the block buffer
/// returned in `blockBufferOut`, which the caller holds while it reads. GraphKit's PCM is
/// interleaved, so the list has one buffer holding every channel. A list too small for it is
/// `kCMSampleBufferError_ArrayTooSmall`; a video or compressed buffer,
/// `kCMSampleBufferError_InvalidMediaTypeForOperation`.
@discardableResult
public func CMSampleBufferGetAudioBufferListWithRetainedBlockBuffer(
    _ sbuf: CMSampleBuffer, bufferListSizeNeededOut: UnsafeMutablePointer<Int>?, bufferListOut: UnsafeMutablePointer<AudioBufferList>?,
    bufferListSize: Int, blockBufferAllocator: CFAllocator?, blockBufferMemoryAllocator: CFAllocator?, flags: UInt32,
    blockBufferOut: UnsafeMutablePointer<CMBlockBuffer?>?
) -> OSStatus {
    guard case .pcm(let f)? = sbuf.sample.format else { return kCMSampleBufferError_InvalidMediaTypeForOperation }
    let needed = AudioBufferList.sizeInBytes(maximumBuffers: 1)
    bufferListSizeNeededOut?.pointee = needed
    guard let bufferListOut else { return OSStatus(noErr) }
    guard bufferListSize >= needed else { return kCMSampleBufferError_ArrayTooSmall }
    guard let blockBufferOut else { return kCMSampleBufferError_RequiredParameterMissing }
    var sample = sbuf.sample
    if flags & kCMSampleBufferFlag_AudioBufferList_Assure16ByteAlignment != 0,
       sample.withUnsafeBytes({ UInt(bitPattern: $0.baseAddress) % 16 != 0 }) {
        // A copy in memory allocated on a 16-byte boundary, freed with the last buffer holding it.
        let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: max(sample.byteCount, 1), alignment: 16)
        sample.withUnsafeBytes { source in
            if let from = source.baseAddress { memory.baseAddress!.copyMemory(from: from, byteCount: source.count) }
        }
        let held = UnsafeMutableRawBufferPointer(rebasing: memory[0..<sample.byteCount])
        nonisolated(unsafe) let owned = memory
        sample = SampleBuffer(format: sample.format, wrapping: held, release: { owned.deallocate() })
    }
    let block = CMBlockBuffer(sample: sample)
    let data = block.sample.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress) }
    let list = UnsafeMutableAudioBufferListPointer(bufferListOut)
    list.count = 1
    list[0] = AudioBuffer(mNumberChannels: UInt32(f.channels), mDataByteSize: UInt32(clamping: block.sample.byteCount), mData: data)
    blockBufferOut.pointee = block
    return OSStatus(noErr)
}

/// Copies `numFrames` frames from `frameOffset` into `bufferList`, whose one buffer must have
/// the sample buffer's channel count and room for them (as CoreMedia requires); its
/// `mDataByteSize` is left as it is. A range outside the buffer, or a list that cannot hold it, is
/// `kCMSampleBufferError_SampleIndexOutOfRange`; a video or compressed buffer,
/// `kCMSampleBufferError_InvalidMediaTypeForOperation`.
@discardableResult
public func CMSampleBufferCopyPCMDataIntoAudioBufferList(_ sbuf: CMSampleBuffer, at frameOffset: Int32, frameCount numFrames: Int32,
                                                         into bufferList: UnsafeMutablePointer<AudioBufferList>) -> OSStatus {
    guard case .pcm(let f)? = sbuf.sample.format else { return kCMSampleBufferError_InvalidMediaTypeForOperation }
    let frames = sbuf.sample.byteCount / f.bytesPerFrame
    guard frameOffset >= 0, numFrames >= 0, Int(frameOffset) + Int(numFrames) <= frames else { return kCMSampleBufferError_SampleIndexOutOfRange }
    let list = UnsafeMutableAudioBufferListPointer(bufferList)
    guard list.count == 1, list[0].mNumberChannels == UInt32(f.channels) else { return kCMSampleBufferError_InvalidMediaFormat }
    let bytes = Int(numFrames) * f.bytesPerFrame
    guard let destination = list[0].mData, Int(list[0].mDataByteSize) >= bytes else { return kCMSampleBufferError_SampleIndexOutOfRange }
    sbuf.sample.withUnsafeBytes { source in
        if bytes > 0 { destination.copyMemory(from: source.baseAddress! + Int(frameOffset) * f.bytesPerFrame, byteCount: bytes) }
    }
    return OSStatus(noErr)
}
