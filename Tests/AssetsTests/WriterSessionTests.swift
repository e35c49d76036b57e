import Assets
import Foundation
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// The writer session has one owner and one lock (AssetWriter, WriterSession.swift): an input is
/// a handle, and an appended sample takes the session's lock at most twice on the steady path
/// (once to be admitted and shaped, once to be noted as in). The lock counts itself in debug
/// builds only, so these tests exist only there.
@Suite(.media, .timeLimit(.minutes(2))) struct WriterSessionTests {
    #if DEBUG
    /// 40 PCM buffers appended when the input is ready (so no append waits, which would add
    /// the stall rule's note): each takes the lock twice, the first one included.
    @Test func anAppendedSampleTakesTheSessionsLockAtMostTwice() async throws {
        let folder = try TestMedia.temporaryFolder()
        let writer = try AssetWriter(outputPath: folder.appendingPathComponent("counted.m4a").path, fileType: .m4a)
        let audio = AssetWriterInput(mediaType: .audio, outputSettings: AudioSettings(sampleRate: 8_000, channels: 1))
        try writer.add(audio)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        let tone = TestMedia.sine(sampleRate: 8_000, seconds: 2, framesPerBuffer: 400)
        var perSample: [Int] = []
        for buffer in tone {
            while !audio.isReadyForMoreMediaData { try await Task.sleep(for: .milliseconds(1)) }
            let before = writer.lockAcquisitions
            try await audio.append(buffer)
            perSample.append(writer.lockAcquisitions - before)
        }
        audio.markAsFinished()
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        #expect(perSample.count == 40)
        #expect(perSample.allSatisfy { $0 >= 1 && $0 <= 2 }, "acquisitions per appended sample: \(perSample)")
    }

    /// The same through the pixel-buffer adaptor, whose first frame is held until the second
    /// says the rate: still at most two per frame.
    @Test func anAppendedFrameTakesTheSessionsLockAtMostTwice() async throws {
        let folder = try TestMedia.temporaryFolder()
        let writer = try AssetWriter(outputPath: folder.appendingPathComponent("counted.mp4").path, fileType: .mp4)
        let video = AssetWriterInput(mediaType: .video, outputSettings: VideoSettings(width: 64, height: 48))
        let adaptor = AssetWriterInputPixelBufferAdaptor(assetWriterInput: video)
        try writer.add(video)
        try writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        let pool = try #require(adaptor.pixelBufferPool)
        var perFrame: [Int] = []
        for n in 0..<20 {
            let frame = try pool.makePixelBuffer()
            while !video.isReadyForMoreMediaData { try await Task.sleep(for: .milliseconds(1)) }
            let before = writer.lockAcquisitions
            try await adaptor.append(frame, withPresentationTime: MediaTime(value: Int64(n), timescale: 25))
            perFrame.append(writer.lockAcquisitions - before)
        }
        video.markAsFinished()
        try await writer.finishWriting()
        #expect(writer.status == .completed)
        #expect(perFrame.allSatisfy { $0 >= 1 && $0 <= 2 }, "acquisitions per appended frame: \(perFrame)")
    }
    #endif
}
