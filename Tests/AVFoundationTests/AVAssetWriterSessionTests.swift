import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// Apple's writer classes hold no writing state of their own: every call goes to GraphKit's
/// writer session, so an appended sample costs what it costs there, at most two acquisitions of
/// the session's one lock (counted in debug builds only), and a failure seen through one name is
/// the same failure through the other.
@Suite(.media, .timeLimit(.minutes(2))) struct AVAssetWriterSessionTests {
    #if DEBUG
    /// 24 made PCM buffers through AVAssetWriterInput.append, each when the input is ready.
    @Test func anAppendedSampleTakesTheSessionsLockAtMostTwice() async throws {
        let url = try TestMedia.temporaryFolder().appendingPathComponent("counted.m4a")
        let writer = try AVAssetWriter(outputURL: url, fileType: .m4a)
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000,
                                                                          AVNumberOfChannelsKey: 1, AVEncoderBitRateKey: 96_000])
        writer.add(input)
        try #require(writer.startWriting(), "\(String(describing: writer.error))")
        writer.startSession(atSourceTime: .zero)
        let format = try CMSampleBufferCreateTests.monoPCM()
        var perSample: [Int] = []
        for n in 0..<24 {
            let buffer = try CMSampleBufferCreateTests.sine(from: n * 1024, frames: 1024, format: format)
            while !input.isReadyForMoreMediaData { try await Task.sleep(for: .milliseconds(1)) }
            let before = writer.writer.lockAcquisitions
            #expect(input.append(buffer), "\(String(describing: writer.error))")
            perSample.append(writer.writer.lockAcquisitions - before)
        }
        input.markAsFinished()
        await writer.finishWriting()
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        #expect(perSample.allSatisfy { $0 >= 1 && $0 <= 2 }, "acquisitions per appended sample: \(perSample)")
    }

    /// Frames through AVAssetWriterInputPixelBufferAdaptor: the same budget.
    @Test func anAppendedFrameTakesTheSessionsLockAtMostTwice() async throws {
        let url = try TestMedia.temporaryFolder().appendingPathComponent("counted.mp4")
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 64, AVVideoHeightKey: 48])
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: AVAssetWriterTests.bgra)
        writer.add(input)
        try #require(writer.startWriting(), "\(String(describing: writer.error))")
        writer.startSession(atSourceTime: .zero)
        let pool = try #require(adaptor.pixelBufferPool)
        var perFrame: [Int] = []
        for n in 0..<20 {
            var pb: CVPixelBuffer?
            #expect(CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pb) == kCVReturnSuccess)
            let frame = try #require(pb)
            while !input.isReadyForMoreMediaData { try await Task.sleep(for: .milliseconds(1)) }
            let before = writer.writer.lockAcquisitions
            #expect(adaptor.append(frame, withPresentationTime: CMTimeMake(value: Int64(n), timescale: 25)))
            perFrame.append(writer.writer.lockAcquisitions - before)
        }
        input.markAsFinished()
        await writer.finishWriting()
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        #expect(perFrame.allSatisfy { $0 >= 1 && $0 <= 2 }, "acquisitions per appended frame: \(perFrame)")
    }
    #endif

    /// A failure the AVFoundation layer reports (a sample with no data: AVFoundation raises an
    /// exception) is the writer's own: GraphKit's writer is failed too, and a later append is
    /// refused by it, not by a flag of the AVFoundation object.
    @Test func aFailureThroughApplesNamesIsTheWritersOwn() throws {
        let url = try TestMedia.temporaryFolder().appendingPathComponent("failed.m4a")
        let writer = try AVAssetWriter(outputURL: url, fileType: .m4a)
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000,
                                                                          AVNumberOfChannelsKey: 1])
        writer.add(input)
        try #require(writer.startWriting(), "\(String(describing: writer.error))")
        writer.startSession(atSourceTime: .zero)
        var empty: CMSampleBuffer?
        var timing = CMSampleTimingInfo(duration: CMTime(value: 1, timescale: 48_000), presentationTimeStamp: .zero, decodeTimeStamp: .invalid)
        #expect(CMSampleBufferCreate(allocator: kCFAllocatorDefault, dataBuffer: nil, dataReady: false, makeDataReadyCallback: nil, refcon: nil,
                                     formatDescription: try CMSampleBufferCreateTests.monoPCM(), sampleCount: 1024, sampleTimingEntryCount: 1,
                                     sampleTimingArray: &timing, sampleSizeEntryCount: 0, sampleSizeArray: nil, sampleBufferOut: &empty) == noErr)
        #expect(!input.append(try #require(empty)))
        #expect(writer.status == .failed)
        #expect(writer.writer.status == .failed)
        #expect((writer.error as NSError?)?.domain == AVFoundationErrorDomain)
        #expect(!input.isReadyForMoreMediaData)
        #expect(!input.append(try CMSampleBufferCreateTests.sine(from: 0, frames: 1024, format: try CMSampleBufferCreateTests.monoPCM())))
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }
}
