import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// Sample buffers made from data, as code that generates or converts audio makes them
/// (CMSampleBufferCreate, then its data from an AudioBufferList), written by an AVAssetWriter and
/// read back; and what CoreMedia documents them to refuse.
@Suite(.media, .timeLimit(.minutes(10))) struct CMSampleBufferCreateTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    static func monoPCM(rate: Double = 48_000) throws -> CMAudioFormatDescription {
        var asbd = AudioStreamBasicDescription(mSampleRate: rate, mFormatID: kAudioFormatLinearPCM,
                                               mFormatFlags: kAudioFormatFlagIsSignedInteger | kAudioFormatFlagIsPacked,
                                               mBytesPerPacket: 2, mFramesPerPacket: 1, mBytesPerFrame: 2, mChannelsPerFrame: 1,
                                               mBitsPerChannel: 16, mReserved: 0)
        var description: CMAudioFormatDescription?
        #expect(CMAudioFormatDescriptionCreate(allocator: kCFAllocatorDefault, asbd: &asbd, layoutSize: 0, layout: nil, magicCookieSize: 0,
                                               magicCookie: nil, extensions: nil, formatDescriptionOut: &description) == noErr)
        return try #require(description)
    }

    /// `frames` frames of a 1 kHz sine at a quarter of full scale from frame `start`, as a sample
    /// buffer made without data and then given it from an AudioBufferList (the usual way from
    /// an AVAudioPCMBuffer or a synthesiser's output).
    static func sine(from start: Int, frames: Int, format: CMAudioFormatDescription) throws -> CMSampleBuffer {
        var timing = CMSampleTimingInfo(duration: CMTime(value: 1, timescale: 48_000),
                                        presentationTimeStamp: CMTime(value: CMTimeValue(start), timescale: 48_000), decodeTimeStamp: .invalid)
        var made: CMSampleBuffer?
        #expect(CMSampleBufferCreate(allocator: kCFAllocatorDefault, dataBuffer: nil, dataReady: false, makeDataReadyCallback: nil, refcon: nil,
                                     formatDescription: format, sampleCount: frames, sampleTimingEntryCount: 1, sampleTimingArray: &timing,
                                     sampleSizeEntryCount: 0, sampleSizeArray: nil, sampleBufferOut: &made) == noErr)
        let buffer = try #require(made)
        #expect(!CMSampleBufferDataIsReady(buffer))
        #expect(CMSampleBufferGetDataBuffer(buffer) == nil)
        #expect(CMSampleBufferGetNumSamples(buffer) == frames)
        #expect(CMSampleBufferGetDuration(buffer) == CMTime(value: CMTimeValue(frames), timescale: 48_000))
        var samples = (0..<frames).map { Int16(8192 * sin(2 * Double.pi * 1000 * Double(start + $0) / 48_000)) }
        let status = samples.withUnsafeMutableBytes { bytes -> OSStatus in
            var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 1, mDataByteSize: UInt32(bytes.count), mData: bytes.baseAddress))
            return CMSampleBufferSetDataBufferFromAudioBufferList(buffer, blockBufferAllocator: nil, blockBufferMemoryAllocator: nil, flags: 0, bufferList: &list)
        }
        #expect(status == noErr)
        #expect(CMSampleBufferDataIsReady(buffer))
        return buffer
    }

    /// One second of made sound, in buffers of 1024 frames, encoded to AAC by the writer: the
    /// file holds a second, and its sound, read back, is the sine's (its RMS a quarter of full
    /// scale over √2).
    @Test func madeBuffersAreWrittenAndReadBack() async throws {
        let url = folder.appendingPathComponent("made.m4a")
        let writer = try AVAssetWriter(outputURL: url, fileType: .m4a)
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000,
                                                                          AVNumberOfChannelsKey: 1, AVEncoderBitRateKey: 96_000])
        writer.add(input)
        try #require(writer.startWriting(), "\(String(describing: writer.error))")  // a failed writer is never ready
        writer.startSession(atSourceTime: .zero)
        let format = try Self.monoPCM()
        var start = 0
        while start < 48_000 {
            while !input.isReadyForMoreMediaData { usleep(1000) }
            let frames = min(1024, 48_000 - start)
            #expect(input.append(try Self.sine(from: start, frames: frames, format: format)), "\(String(describing: writer.error))")
            start += frames
        }
        input.markAsFinished()
        await writer.finishWriting()
        #expect(writer.status == .completed, "\(String(describing: writer.error))")

        let seconds = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", url.path])
        #expect(abs((Double(seconds.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) - 1) < 0.03, "ffprobe: \(seconds)")
        let asset = AVURLAsset(url: url)
        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderTrackOutput(track: try #require(try await asset.loadTracks(withMediaType: .audio).first),
                                              outputSettings: AVAssetReaderTests.pcm16)
        reader.add(output)
        #expect(reader.startReading())
        var sum = 0.0, count = 0
        while let buffer = output.copyNextSampleBuffer() {
            var list = AudioBufferList()
            var block: CMBlockBuffer?
            CMSampleBufferGetAudioBufferListWithRetainedBlockBuffer(buffer, bufferListSizeNeededOut: nil, bufferListOut: &list,
                                                                    bufferListSize: MemoryLayout<AudioBufferList>.size, blockBufferAllocator: nil,
                                                                    blockBufferMemoryAllocator: nil, flags: 0, blockBufferOut: &block)
            let data = UnsafeMutableAudioBufferListPointer(&list)[0]
            let values = try #require(data.mData).assumingMemoryBound(to: Int16.self)
            for i in 0..<Int(data.mDataByteSize) / 2 { sum += Double(values[i]) * Double(values[i]); count += 1 }
        }
        #expect(count >= 47_000, "\(count) samples decoded")
        let rms = (sum / Double(max(count, 1))).squareRoot()
        #expect(abs(rms - 8192 / 2.0.squareRoot()) < 8192 * 0.05, "RMS \(rms)")
    }

    /// What CoreMedia documents these to refuse, each by its code; and a buffer appended before
    /// it has its data fails the writer, saying so, instead of writing silence.
    @Test func whatMakingABufferRefuses() async throws {
        let format = try Self.monoPCM()
        var timing = CMSampleTimingInfo(duration: CMTime(value: 1, timescale: 48_000), presentationTimeStamp: .zero, decodeTimeStamp: .invalid)
        var block: CMBlockBuffer?
        CMBlockBufferCreateWithMemoryBlock(allocator: nil, memoryBlock: nil, blockLength: 10, blockAllocator: nil, customBlockSource: nil,
                                           offsetToData: 0, dataLength: 10, flags: 0, blockBufferOut: &block)
        var made: CMSampleBuffer?
        // 10 bytes are not 4 frames of 16-bit mono.
        #expect(CMSampleBufferCreateReady(allocator: nil, dataBuffer: block, formatDescription: format, sampleCount: 4, sampleTimingEntryCount: 1,
                                          sampleTimingArray: &timing, sampleSizeEntryCount: 0, sampleSizeArray: nil,
                                          sampleBufferOut: &made) == kCMSampleBufferError_InvalidSampleData)
        #expect(made == nil)
        #expect(CMSampleBufferCreateReady(allocator: nil, dataBuffer: block, formatDescription: format, sampleCount: 5, sampleTimingEntryCount: 1,
                                          sampleTimingArray: &timing, sampleSizeEntryCount: 0, sampleSizeArray: nil, sampleBufferOut: &made) == noErr)
        let ready = try #require(made)
        #expect(CMSampleBufferDataIsReady(ready) && CMSampleBufferGetNumSamples(ready) == 5)
        #expect(CMSampleBufferSetDataBuffer(ready, newValue: try #require(block)) == kCMSampleBufferError_AlreadyHasDataBuffer)
        // Three timing entries for five samples.
        #expect(CMSampleBufferCreate(allocator: nil, dataBuffer: nil, dataReady: false, makeDataReadyCallback: nil, refcon: nil, formatDescription: format,
                                     sampleCount: 5, sampleTimingEntryCount: 3, sampleTimingArray: &timing, sampleSizeEntryCount: 0,
                                     sampleSizeArray: nil, sampleBufferOut: &made) == kCMSampleBufferError_InvalidEntryCount)

        let empty = try Self.dataless(format, frames: 4)
        #expect(CMSampleBufferSetDataReady(empty) == kCMSampleBufferError_BufferNotReady)
        var two = [Int16](repeating: 0, count: 8)
        let wrongChannels = two.withUnsafeMutableBytes { bytes -> OSStatus in
            var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 2, mDataByteSize: 16, mData: bytes.baseAddress))
            return CMSampleBufferSetDataBufferFromAudioBufferList(empty, blockBufferAllocator: nil, blockBufferMemoryAllocator: nil, flags: 0, bufferList: &list)
        }
        #expect(wrongChannels == kCMSampleBufferError_InvalidMediaFormat)
        let wrongSize = two.withUnsafeMutableBytes { bytes -> OSStatus in
            var list = AudioBufferList(mNumberBuffers: 1, mBuffers: AudioBuffer(mNumberChannels: 1, mDataByteSize: 16, mData: bytes.baseAddress))
            return CMSampleBufferSetDataBufferFromAudioBufferList(empty, blockBufferAllocator: nil, blockBufferMemoryAllocator: nil, flags: 0, bufferList: &list)
        }
        #expect(wrongSize == kCMSampleBufferError_InvalidSampleData)
        #expect(!CMSampleBufferDataIsReady(empty))

        let url = folder.appendingPathComponent("dataless.m4a")
        let writer = try AVAssetWriter(outputURL: url, fileType: .m4a)
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 1])
        writer.add(input)
        #expect(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        #expect(!input.append(empty))
        #expect(writer.status == .failed)
        let message = (writer.error as? NSError)?.localizedDescription ?? ""
        #expect(message.contains("without its data"), "\(message)")
        writer.cancelWriting()
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    static func dataless(_ format: CMFormatDescription, frames: Int) throws -> CMSampleBuffer {
        var timing = CMSampleTimingInfo(duration: CMTime(value: 1, timescale: 48_000), presentationTimeStamp: .zero, decodeTimeStamp: .invalid)
        var made: CMSampleBuffer?
        #expect(CMSampleBufferCreate(allocator: nil, dataBuffer: nil, dataReady: false, makeDataReadyCallback: nil, refcon: nil, formatDescription: format,
                                     sampleCount: frames, sampleTimingEntryCount: 1, sampleTimingArray: &timing, sampleSizeEntryCount: 0,
                                     sampleSizeArray: nil, sampleBufferOut: &made) == noErr)
        return try #require(made)
    }
}
