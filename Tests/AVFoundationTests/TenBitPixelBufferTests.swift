import AVFoundation
import Foundation
import GraphKitTesting
import TestSupport
import Testing

/// A 10-bit video read and written as on a Mac: `AVAssetReaderTrackOutput` asked for
/// `kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange` gives each frame's samples as stored (in
/// each word's high 10 bits), and those pixel buffers through an adaptor into HEVC Main 10 keep them.
@Suite(.media, .timeLimit(.minutes(3))) struct TenBitPixelBufferTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func ramp() throws -> URL { URL(fileURLWithPath: try HDRTestMedia.makeTenBitRamp(in: folder)) }

    /// Row `y` of a P010 buffer's luma, each sample's 10 bits (nil when a low bit is set).
    func lumaRow(_ buffer: CVPixelBuffer, _ y: Int) -> [Int?] {
        CVPixelBufferLockBaseAddress(buffer, .readOnly)
        defer { CVPixelBufferUnlockBaseAddress(buffer, .readOnly) }
        let base = CVPixelBufferGetBaseAddressOfPlane(buffer, 0)! + y * CVPixelBufferGetBytesPerRowOfPlane(buffer, 0)
        return (0..<CVPixelBufferGetWidthOfPlane(buffer, 0)).map { x in
            let word = UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self))
            return word & 0x3F == 0 ? Int(word >> 6) : nil
        }
    }

    @Test func readInTenBitsAndWrittenAsMain10() async throws {
        let asset = AVURLAsset(url: try ramp())
        let reader = try AVAssetReader(asset: asset)
        let output = AVAssetReaderTrackOutput(track: asset.tracks(withMediaType: .video)[0],
                                              outputSettings: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange])
        reader.add(output)
        #expect(reader.startReading())
        var frames: [(CVPixelBuffer, CMTime)] = []
        while let sb = output.copyNextSampleBuffer() {
            let image = try #require(CMSampleBufferGetImageBuffer(sb))
            frames.append((image, CMSampleBufferGetPresentationTimeStamp(sb)))
        }
        #expect(reader.status == .completed && frames.count == 5)
        let first = try #require(frames.first?.0)
        #expect(CVPixelBufferGetPixelFormatType(first) == kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange)
        #expect(CVPixelBufferGetPlaneCount(first) == 2 && CVPixelBufferGetWidthOfPlane(first, 1) == 512)
        #expect(CVPixelBufferGetBytesPerRowOfPlane(first, 0) >= 2048)
        #expect(lumaRow(first, 10) == (0..<1024).map { $0 }, "as stored: every level, in the high bits")

        let url = folder.appendingPathComponent("main10.mp4")
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [
            AVVideoCodecKey: AVVideoCodecType.hevc, AVVideoWidthKey: 1024, AVVideoHeightKey: 64,
            AVVideoCompressionPropertiesKey: [AVVideoProfileLevelKey: "HEVC_Main10_AutoLevel", AVVideoAverageBitRateKey: 50_000_000],
        ])
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: [
            kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange,
        ])
        writer.add(input)
        #expect(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        for (buffer, time) in frames {
            while !input.isReadyForMoreMediaData { try await Task.sleep(for: .milliseconds(5)) }
            #expect(adaptor.append(buffer, withPresentationTime: time))
        }
        input.markAsFinished()
        await writer.finishWriting()
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        let stream = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=profile,pix_fmt", "-of", "csv=p=0", url.path])
        #expect(stream.trimmingCharacters(in: .whitespacesAndNewlines) == "Main 10,yuv420p10le", "\(stream)")
        let raw = folder.appendingPathComponent("main10.yuv")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", url.path, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p10le", "-y", raw.path])
        let bytes = [UInt8](try Data(contentsOf: raw))
        var total = 0
        for y in 0..<64 {
            for x in 0..<1024 { total += abs(Int(bytes[2 * (y * 1024 + x)]) | Int(bytes[2 * (y * 1024 + x) + 1]) << 8 - x) }
        }
        // Through 8 bits the ramp would be steps of 4 (a mean error of about 1.5).
        #expect(Double(total) / Double(64 * 1024) < 0.75, "mean error \(Double(total) / Double(64 * 1024))")
    }
}
