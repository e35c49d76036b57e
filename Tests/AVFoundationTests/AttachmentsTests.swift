import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// Buffer attachments (CoreVideo's CVBuffer… and CoreMedia's CM…Attachment functions): values by
/// key with a propagation mode, as Apple documents them; decoded frames carrying their track's
/// colour; a sample buffer invalidated once.
@Suite struct AttachmentsTests {
    static func pixelBuffer() throws -> CVPixelBuffer {
        var made: CVPixelBuffer?
        #expect(CVPixelBufferCreate(kCFAllocatorDefault, 16, 8, kCVPixelFormatType_32BGRA, nil, &made) == kCVReturnSuccess)
        return try #require(made)
    }

    @Test func aPixelBufferKeepsItsAttachmentsByMode() throws {
        let buffer = try Self.pixelBuffer()
        #expect(CVBufferCopyAttachments(buffer, .shouldPropagate) == nil)
        CVBufferSetAttachment(buffer, kCVImageBufferColorPrimariesKey, kCVImageBufferColorPrimaries_ITU_R_2020, .shouldPropagate)
        CVBufferSetAttachment(buffer, "Private", 42, .shouldNotPropagate)
        var mode = CVAttachmentMode.shouldNotPropagate
        #expect(CVBufferCopyAttachment(buffer, kCVImageBufferColorPrimariesKey, &mode) as? String == kCVImageBufferColorPrimaries_ITU_R_2020)
        #expect(mode == .shouldPropagate)
        #expect(CVBufferCopyAttachment(buffer, "Private", &mode) as? Int == 42 && mode == .shouldNotPropagate)
        #expect(CVBufferHasAttachment(buffer, "Private") && !CVBufferHasAttachment(buffer, "Absent"))
        #expect(CVBufferCopyAttachments(buffer, .shouldPropagate)?.keys.sorted() == [kCVImageBufferColorPrimariesKey])
        #expect(CVBufferGetAttachments(buffer, .shouldNotPropagate)?.keys.sorted() == ["Private"])

        // Propagation copies the propagating ones only, replacing the destination's of the same key.
        let other = try Self.pixelBuffer()
        CVBufferSetAttachment(other, kCVImageBufferColorPrimariesKey, kCVImageBufferColorPrimaries_ITU_R_709_2, .shouldPropagate)
        CVBufferPropagateAttachments(buffer, other)
        #expect(CVBufferCopyAttachment(other, kCVImageBufferColorPrimariesKey, nil) as? String == kCVImageBufferColorPrimaries_ITU_R_2020)
        #expect(CVBufferCopyAttachment(other, "Private", nil) == nil)

        // A key set again takes the new value and mode; removal removes.
        CVBufferSetAttachment(buffer, "Private", "again", .shouldPropagate)
        #expect(CVBufferCopyAttachment(buffer, "Private", &mode) as? String == "again" && mode == .shouldPropagate)
        CVBufferRemoveAttachment(buffer, "Private")
        #expect(!CVBufferHasAttachment(buffer, "Private"))
        CVBufferSetAttachments(buffer, ["A": 1, "B": true], .shouldNotPropagate)
        #expect(CVBufferCopyAttachments(buffer, .shouldNotPropagate)?.count == 2)
        CVBufferRemoveAllAttachments(buffer)
        #expect(CVBufferCopyAttachments(buffer, .shouldNotPropagate) == nil && CVBufferCopyAttachments(buffer, .shouldPropagate) == nil)
    }

    @Test func coreMediaReachesSampleBuffersAndPixelBuffersAlike() throws {
        let format = try CMSampleBufferCreateTests.monoPCM()
        let sample = try CMSampleBufferCreateTests.sine(from: 0, frames: 480, format: format)
        CMSetAttachment(sample, key: "Note", value: ["take": 3], attachmentMode: kCMAttachmentMode_ShouldPropagate)
        var mode: CMAttachmentMode = 99
        let note = try #require(CMGetAttachment(sample, key: "Note", attachmentModeOut: &mode) as? [String: Int])
        #expect(mode == kCMAttachmentMode_ShouldPropagate && note == ["take": 3])
        #expect(CMCopyDictionaryOfAttachments(allocator: nil, target: sample, attachmentMode: kCMAttachmentMode_ShouldNotPropagate) == nil)
        // A nil value removes the key.
        CMSetAttachment(sample, key: "Note", value: nil, attachmentMode: kCMAttachmentMode_ShouldPropagate)
        #expect(CMGetAttachment(sample, key: "Note", attachmentModeOut: nil) == nil)

        // On a pixel buffer, the CM functions and the CV ones read and write one store.
        let buffer = try Self.pixelBuffer()
        CMSetAttachment(buffer, key: kCVImageBufferTransferFunctionKey, value: kCVImageBufferTransferFunction_ITU_R_2100_HLG,
                        attachmentMode: kCMAttachmentMode_ShouldPropagate)
        #expect(CVBufferCopyAttachment(buffer, kCVImageBufferTransferFunctionKey, nil) as? String == kCVImageBufferTransferFunction_ITU_R_2100_HLG)
        #expect(CMCopyDictionaryOfAttachments(allocator: nil, target: buffer, attachmentMode: kCMAttachmentMode_ShouldPropagate)?.count == 1)
        // What bears no attachments has none: setting does nothing, reading gives nil.
        CMSetAttachment("not a buffer", key: "K", value: 1, attachmentMode: kCMAttachmentMode_ShouldPropagate)
        #expect(CMGetAttachment("not a buffer", key: "K", attachmentModeOut: nil) == nil)
    }

    @Test func aSampleBufferIsInvalidatedOnce() throws {
        let sample = try CMSampleBufferCreateTests.sine(from: 0, frames: 480, format: try CMSampleBufferCreateTests.monoPCM())
        #expect(sample.isValid)
        try sample.invalidate()
        #expect(!sample.isValid && !CMSampleBufferIsValid(sample))
        #expect(throws: NSError.self) { try sample.invalidate() }
        #expect(CMSampleBufferInvalidate(sample) == kCMSampleBufferError_Invalidated)
    }

    /// Frames decoded from an HLG file carry the file's colour as propagating attachments, as
    /// Apple's decoders set them on the pixel buffers a reader gives; an untagged file's have none.
    @Test(.media, .timeLimit(.minutes(2))) func decodedFramesCarryTheirTracksColour() async throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let tagged = folder.appendingPathComponent("hlg.mp4"), plain = folder.appendingPathComponent("plain.mp4")
        // x264's own parameters: the SPS states the colour on every ffmpeg (7.1's -color_* alone do not).
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x48:r=10:d=0.5", "-c:v", "libx264",
                                         "-pix_fmt", "yuv420p", "-x264-params", "colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc",
                                         tagged.path])
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x48:r=10:d=0.5", "-c:v", "libx264",
                                         "-pix_fmt", "yuv420p", plain.path])
        func firstFrame(_ url: URL) async throws -> CVPixelBuffer {
            let asset = AVURLAsset(url: url)
            let track = try #require(try await asset.loadTracks(withMediaType: .video).first)
            let reader = try AVAssetReader(asset: asset)
            let output = AVAssetReaderTrackOutput(track: track, outputSettings: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA])
            reader.add(output)
            #expect(reader.startReading())
            defer { reader.cancelReading() }
            return try #require(output.copyNextSampleBuffer().flatMap(CMSampleBufferGetImageBuffer), "\(String(describing: reader.error))")
        }
        let frame = try await firstFrame(tagged)
        var mode = CVAttachmentMode.shouldNotPropagate
        #expect(CVBufferCopyAttachment(frame, kCVImageBufferColorPrimariesKey, &mode) as? String == kCVImageBufferColorPrimaries_ITU_R_2020)
        #expect(mode == .shouldPropagate)
        #expect(CVBufferCopyAttachment(frame, kCVImageBufferTransferFunctionKey, nil) as? String == kCVImageBufferTransferFunction_ITU_R_2100_HLG)
        #expect(CVBufferCopyAttachment(frame, kCVImageBufferYCbCrMatrixKey, nil) as? String == kCVImageBufferYCbCrMatrix_ITU_R_2020)
        #expect(CVBufferCopyAttachments(try await firstFrame(plain), .shouldPropagate) == nil)
    }
}
