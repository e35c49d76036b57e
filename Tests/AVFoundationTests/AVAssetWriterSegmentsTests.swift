import AVFoundation
import GraphKitTesting
import Synchronization
import TestSupport
import Testing

/// AVAssetWriter writing HLS segments by Apple's names, with a delegate shaped as Apple's
/// "Writing fragmented MPEG-4 files for HTTP Live Streaming" sample's (an NSObject that switches
/// on the segment type and reads the report's track durations).
@Suite(.media, .timeLimit(.minutes(10))) struct AVAssetWriterSegmentsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    final class SegmentCollector: NSObject, AVAssetWriterDelegate, @unchecked Sendable {
        let lock = NSLock()
        var data: [Data] = []
        var initializations = 0
        var durations: [Double] = []
        var syncStarts: [Bool] = []

        func assetWriter(_ writer: AVAssetWriter, didOutputSegmentData segmentData: Data, segmentType: AVAssetSegmentType,
                         segmentReport: AVAssetSegmentReport?) {
            lock.lock()
            defer { lock.unlock() }
            switch segmentType {
            case .initialization:
                initializations += 1
            case .separable:
                if let report = segmentReport, let video = report.trackReports.first(where: { $0.mediaType == .video }) {
                    durations.append(video.duration.seconds)
                    syncStarts.append(video.firstVideoSampleInformation?.isSyncSample ?? false)
                }
            @unknown default:
                return
            }
            data.append(segmentData)
        }
    }

    @Test func segmentsReachTheDelegateByApplesNames() async throws {
        let writer = AVAssetWriter(contentType: UTType(AVFileType.mp4.rawValue)!)
        writer.outputFileTypeProfile = .mpeg4AppleHLS
        writer.preferredOutputSegmentInterval = CMTime(seconds: 1, preferredTimescale: 1)
        writer.initialSegmentStartTime = .zero
        let collector = SegmentCollector()
        writer.delegate = collector
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 320, AVVideoHeightKey: 240])
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: [
            kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA])
        writer.add(input)
        #expect(writer.startWriting(), "\(String(describing: writer.error))")
        writer.startSession(atSourceTime: .zero)
        let pool = try #require(adaptor.pixelBufferPool)
        for n in 0..<150 {
            var pb: CVPixelBuffer?
            #expect(CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pb) == kCVReturnSuccess)
            let frame = try #require(pb)
            CVPixelBufferLockBaseAddress(frame, [])
            memset(CVPixelBufferGetBaseAddress(frame)!, Int32(n * 3), CVPixelBufferGetDataSize(frame))
            CVPixelBufferUnlockBaseAddress(frame, [])
            #expect(adaptor.append(frame, withPresentationTime: CMTimeMake(value: Int64(n), timescale: 25)))
        }
        input.markAsFinished()
        await writer.finishWriting()
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        // The encoder is asked for a key frame at each second (its own come every 60 frames at
        // most, 2.4 s, and at scene cuts): segments of exactly one second.
        #expect(collector.initializations == 1)
        #expect(collector.durations == [1, 1, 1, 1, 1, 1], "\(collector.durations)")
        #expect(collector.syncStarts.count == collector.durations.count && collector.syncStarts.allSatisfy { $0 })
        let joined = folder.appendingPathComponent("joined.mp4")
        try collector.data.reduce(Data(), +).write(to: joined)
        let probe = try MediaProbe(joined.path, countFrames: true)
        #expect(probe.stream("video")?.frameCount == 150)
    }

    @Test func flushSegmentOnAWriterThatCutsByItselfFailsIt() throws {
        let writer = AVAssetWriter(contentType: .mpeg4Movie)
        writer.outputFileTypeProfile = .mpeg4CMAFCompliant
        writer.flushSegment()
        #expect(writer.status == .failed)
        #expect(writer.startWriting() == false)
    }
}
