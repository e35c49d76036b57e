import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// AudioBufferList and the CoreMedia functions that read PCM through one, as audio code uses
/// them (a meter, a waveform, a conversion to AVAudioPCMBuffer), on samples an AVAssetReader
/// decoded from a file made here; and the per-sample timing and size functions.
@Suite(.media, .timeLimit(.minutes(10))) struct AudioBufferListTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// Every PCM sample buffer of a 48 kHz stereo WAV whose left channel counts frames and whose
    /// right channel is its negation (so each frame's bytes say where it is).
    func readBuffers(frames: Int = 12_000) throws -> [CMSampleBuffer] {
        var samples = [Int16]()
        for i in 0..<frames { samples += [Int16(truncatingIfNeeded: i), Int16(truncatingIfNeeded: -i)] }
        let raw = folder.appendingPathComponent("count.raw"), wav = folder.appendingPathComponent("count.wav")
        try samples.withUnsafeBytes { try Data($0).write(to: raw) }
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "s16le", "-ar", "48000", "-ac", "2", "-i", raw.path, "-c:a", "pcm_s16le", "-y", wav.path])
        let asset = AVURLAsset(url: wav)
        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderTrackOutput(track: asset.tracks(withMediaType: .audio)[0], outputSettings: AVAssetReaderTests.pcm16)
        reader.add(output)
        #expect(reader.startReading())
        var buffers: [CMSampleBuffer] = []
        while let buffer = output.copyNextSampleBuffer() { buffers.append(buffer) }
        #expect(reader.status == .completed)
        return buffers
    }

    /// The list's one buffer is the sample buffer's data, every channel interleaved; the block
    /// buffer it returns keeps the data alive; the frames are the file's, in order.
    @Test func aPCMBufferReadsThroughItsBufferList() throws {
        var next = 0
        for sampleBuffer in try readBuffers() {
            var list = AudioBufferList()
            var block: CMBlockBuffer?
            var needed = 0
            let status = CMSampleBufferGetAudioBufferListWithRetainedBlockBuffer(
                sampleBuffer, bufferListSizeNeededOut: &needed, bufferListOut: &list, bufferListSize: MemoryLayout<AudioBufferList>.size,
                blockBufferAllocator: nil, blockBufferMemoryAllocator: nil, flags: kCMSampleBufferFlag_AudioBufferList_Assure16ByteAlignment,
                blockBufferOut: &block)
            #expect(status == noErr)
            #expect(needed == MemoryLayout<AudioBufferList>.size)
            let buffers = UnsafeMutableAudioBufferListPointer(&list)
            #expect(buffers.count == 1)
            let buffer = buffers[0]
            #expect(buffer.mNumberChannels == 2)
            #expect(Int(buffer.mDataByteSize) == CMBlockBufferGetDataLength(try #require(block)))
            #expect(Int(buffer.mDataByteSize) == CMSampleBufferGetNumSamples(sampleBuffer) * 4)
            let data = try #require(buffer.mData)
            #expect(UInt(bitPattern: data) % 16 == 0)
            let frames = data.assumingMemoryBound(to: Int16.self)
            for f in 0..<CMSampleBufferGetNumSamples(sampleBuffer) {
                #expect(frames[2 * f] == Int16(truncatingIfNeeded: next) && frames[2 * f + 1] == Int16(truncatingIfNeeded: -next))
                next += 1
            }
        }
        #expect(next == 12_000)
    }

    /// The sizes and refusals CoreMedia documents: the size needed without a list, a list too
    /// small, no block buffer to keep the data, a video frame.
    @Test func whatTheBufferListRefuses() throws {
        let sampleBuffer = try #require(try readBuffers().first)
        var needed = 0
        #expect(CMSampleBufferGetAudioBufferListWithRetainedBlockBuffer(sampleBuffer, bufferListSizeNeededOut: &needed, bufferListOut: nil, bufferListSize: 0,
                                                                        blockBufferAllocator: nil, blockBufferMemoryAllocator: nil, flags: 0, blockBufferOut: nil) == noErr)
        #expect(needed == AudioBufferList.sizeInBytes(maximumBuffers: 1))
        var list = AudioBufferList()
        var block: CMBlockBuffer?
        #expect(CMSampleBufferGetAudioBufferListWithRetainedBlockBuffer(sampleBuffer, bufferListSizeNeededOut: nil, bufferListOut: &list, bufferListSize: 8,
                                                                        blockBufferAllocator: nil, blockBufferMemoryAllocator: nil, flags: 0,
                                                                        blockBufferOut: &block) == kCMSampleBufferError_ArrayTooSmall)
        #expect(CMSampleBufferGetAudioBufferListWithRetainedBlockBuffer(sampleBuffer, bufferListSizeNeededOut: nil, bufferListOut: &list,
                                                                        bufferListSize: MemoryLayout<AudioBufferList>.size, blockBufferAllocator: nil,
                                                                        blockBufferMemoryAllocator: nil, flags: 0,
                                                                        blockBufferOut: nil) == kCMSampleBufferError_RequiredParameterMissing)

        var pixels: CVPixelBuffer?
        #expect(CVPixelBufferCreate(nil, 32, 16, kCVPixelFormatType_32BGRA, nil, &pixels) == kCVReturnSuccess)
        var description: CMVideoFormatDescription?
        CMVideoFormatDescriptionCreateForImageBuffer(allocator: nil, imageBuffer: try #require(pixels), formatDescriptionOut: &description)
        var timing = CMSampleTimingInfo(duration: CMTime(value: 1, timescale: 30), presentationTimeStamp: .zero, decodeTimeStamp: .invalid)
        var frame: CMSampleBuffer?
        CMSampleBufferCreateReadyWithImageBuffer(allocator: nil, imageBuffer: try #require(pixels), formatDescription: try #require(description),
                                                 sampleTiming: &timing, sampleBufferOut: &frame)
        #expect(CMSampleBufferGetAudioBufferListWithRetainedBlockBuffer(try #require(frame), bufferListSizeNeededOut: nil, bufferListOut: &list,
                                                                        bufferListSize: MemoryLayout<AudioBufferList>.size, blockBufferAllocator: nil,
                                                                        blockBufferMemoryAllocator: nil, flags: 0,
                                                                        blockBufferOut: &block) == kCMSampleBufferError_InvalidMediaTypeForOperation)
        #expect(CMSampleBufferGetSampleSize(try #require(frame), at: 0) == 32 * 16 * 4)
    }

    /// A range of frames copied into a list the caller allocated, as CoreMedia requires it set
    /// up; a range past the end, or a buffer too small for it, is refused and nothing written.
    @Test func framesCopyIntoAnAllocatedList() throws {
        let sampleBuffer = try #require(try readBuffers().first)
        let start = Int(CMSampleBufferGetPresentationTimeStamp(sampleBuffer).value)
        let list = AudioBufferList.allocate(maximumBuffers: 1)
        defer { free(list.unsafeMutablePointer) }
        let storage = UnsafeMutableRawPointer.allocate(byteCount: 40, alignment: 16)
        defer { storage.deallocate() }
        list[0] = AudioBuffer(mNumberChannels: 2, mDataByteSize: 40, mData: storage)
        #expect(CMSampleBufferCopyPCMDataIntoAudioBufferList(sampleBuffer, at: 10, frameCount: 10, into: list.unsafeMutablePointer) == noErr)
        let copied = storage.assumingMemoryBound(to: Int16.self)
        #expect((0..<10).allSatisfy { copied[2 * $0] == Int16(start + 10 + $0) && copied[2 * $0 + 1] == Int16(-(start + 10 + $0)) })
        let frames = Int32(CMSampleBufferGetNumSamples(sampleBuffer))
        #expect(CMSampleBufferCopyPCMDataIntoAudioBufferList(sampleBuffer, at: frames - 5, frameCount: 10, into: list.unsafeMutablePointer)
                == kCMSampleBufferError_SampleIndexOutOfRange)
        #expect(CMSampleBufferCopyPCMDataIntoAudioBufferList(sampleBuffer, at: 0, frameCount: 11, into: list.unsafeMutablePointer)
                == kCMSampleBufferError_SampleIndexOutOfRange)
        #expect(CMSampleBufferCopyPCMDataIntoAudioBufferList(sampleBuffer, at: -1, frameCount: 1, into: list.unsafeMutablePointer)
                == kCMSampleBufferError_SampleIndexOutOfRange)
    }

    /// A list of several buffers is laid out as C's: the count, then the buffers one after
    /// another from `mBuffers` on.
    @Test func aListOfSeveralBuffersIsCsLayout() {
        #expect(MemoryLayout<AudioBuffer>.size == 16)
        #expect(MemoryLayout<AudioBufferList>.size == 24)
        #expect(AudioBufferList.sizeInBytes(maximumBuffers: 3) == 8 + 3 * 16)
        let list = AudioBufferList.allocate(maximumBuffers: 3)
        defer { free(list.unsafeMutablePointer) }
        #expect(list.count == 3 && list.unsafePointer.pointee.mNumberBuffers == 3)
        for i in 0..<3 { list[i].mDataByteSize = UInt32(100 + i) }
        #expect(list.unsafePointer.pointee.mBuffers.mDataByteSize == 100)
        #expect(list.map(\.mDataByteSize) == [100, 101, 102])
        let second = (UnsafeRawPointer(list.unsafePointer) + 8 + 16).assumingMemoryBound(to: AudioBuffer.self)
        #expect(second.pointee.mDataByteSize == 101)
    }

    /// Per-sample timing as CoreMedia gives it for PCM: frame i at the buffer's time plus i
    /// frames, one frame long; one entry for the whole buffer; each frame's size its bytes.
    @Test func eachFramesTimingAndSize() throws {
        let buffers = try readBuffers()
        let second = try #require(buffers.dropFirst().first)
        let pts = CMSampleBufferGetPresentationTimeStamp(second)
        #expect(pts.timescale == 48_000 && pts.value > 0)
        var timing = CMSampleTimingInfo()
        #expect(CMSampleBufferGetSampleTimingInfo(second, at: 7, timingInfoOut: &timing) == noErr)
        #expect(timing.presentationTimeStamp == CMTime(value: pts.value + 7, timescale: 48_000))
        #expect(timing.duration == CMTime(value: 1, timescale: 48_000))
        #expect(CMSampleBufferGetSampleTimingInfo(second, at: CMSampleBufferGetNumSamples(second), timingInfoOut: &timing)
                == kCMSampleBufferError_SampleIndexOutOfRange)
        var needed = 0
        #expect(CMSampleBufferGetSampleTimingInfoArray(second, entryCount: 0, arrayToFill: nil, entriesNeededOut: &needed) == noErr)
        #expect(needed == 1)
        var entries = [CMSampleTimingInfo](repeating: CMSampleTimingInfo(), count: 2)
        #expect(CMSampleBufferGetSampleTimingInfoArray(second, entryCount: 2, arrayToFill: &entries, entriesNeededOut: &needed) == noErr)
        #expect(entries[0].presentationTimeStamp == pts && entries[0].duration == CMTime(value: 1, timescale: 48_000))
        #expect(CMSampleBufferGetSampleSize(second, at: 0) == 4)
        #expect(CMSampleBufferGetSampleSize(second, at: -1) == 0)
    }
}
