import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// `AVVideoColorPropertiesKey` and its keys and values, and the image buffer's and format
/// description's colour keys: Apple's strings, and a writer that honours the colour it is given
/// (the H.264 stream's VUI, read back by ffprobe) or refuses it saying why, never ignores it.
@Suite struct AVVideoColorPropertiesTests {
    static func video(_ colour: [String: Any], codec: AVVideoCodecType = .h264) -> [String: Any] {
        [AVVideoCodecKey: codec, AVVideoWidthKey: 320, AVVideoHeightKey: 240, AVVideoColorPropertiesKey: colour]
    }
    static let hd: [String: Any] = [AVVideoColorPrimariesKey: AVVideoColorPrimaries_ITU_R_709_2,
                                    AVVideoTransferFunctionKey: AVVideoTransferFunction_ITU_R_709_2,
                                    AVVideoYCbCrMatrixKey: AVVideoYCbCrMatrix_ITU_R_709_2]
    static let pq: [String: Any] = [AVVideoColorPrimariesKey: AVVideoColorPrimaries_ITU_R_2020,
                                    AVVideoTransferFunctionKey: AVVideoTransferFunction_SMPTE_ST_2084_PQ,
                                    AVVideoYCbCrMatrixKey: AVVideoYCbCrMatrix_ITU_R_2020]

    @Test func applesStrings() {
        #expect([AVVideoColorPrimariesKey, AVVideoTransferFunctionKey, AVVideoYCbCrMatrixKey] == ["ColorPrimaries", "TransferFunction", "YCbCrMatrix"])
        #expect([AVVideoColorPrimaries_ITU_R_709_2, AVVideoColorPrimaries_ITU_R_2020, AVVideoColorPrimaries_P3_D65, AVVideoColorPrimaries_SMPTE_C,
                 AVVideoColorPrimaries_EBU_3213] == ["ITU_R_709_2", "ITU_R_2020", "P3_D65", "SMPTE_C", "EBU_3213"])
        #expect([AVVideoTransferFunction_ITU_R_709_2, AVVideoTransferFunction_SMPTE_ST_2084_PQ, AVVideoTransferFunction_ITU_R_2100_HLG,
                 AVVideoTransferFunction_Linear] == ["ITU_R_709_2", "SMPTE_ST_2084_PQ", "ITU_R_2100_HLG", "Linear"])
        #expect([AVVideoYCbCrMatrix_ITU_R_709_2, AVVideoYCbCrMatrix_ITU_R_601_4, AVVideoYCbCrMatrix_ITU_R_2020] == ["ITU_R_709_2", "ITU_R_601_4", "ITU_R_2020"])
        // Core Media's extension keys are Core Video's attachment keys; the values are AVFoundation's.
        #expect(kCMFormatDescriptionExtension_ColorPrimaries == kCVImageBufferColorPrimariesKey)
        #expect(kCMFormatDescriptionExtension_TransferFunction == kCVImageBufferTransferFunctionKey)
        #expect(kCMFormatDescriptionExtension_YCbCrMatrix == kCVImageBufferYCbCrMatrixKey)
        #expect([kCVImageBufferColorPrimariesKey, kCVImageBufferTransferFunctionKey, kCVImageBufferYCbCrMatrixKey]
                == ["CVImageBufferColorPrimaries", "CVImageBufferTransferFunction", "CVImageBufferYCbCrMatrix"])
        #expect(kCVImageBufferColorPrimaries_ITU_R_709_2 == AVVideoColorPrimaries_ITU_R_709_2 && kCVImageBufferColorPrimaries_ITU_R_2020 == AVVideoColorPrimaries_ITU_R_2020)
        #expect(kCVImageBufferTransferFunction_SMPTE_ST_2084_PQ == AVVideoTransferFunction_SMPTE_ST_2084_PQ)
        #expect(kCVImageBufferTransferFunction_ITU_R_2100_HLG == AVVideoTransferFunction_ITU_R_2100_HLG)
        #expect(kCVImageBufferTransferFunction_ITU_R_709_2 == AVVideoTransferFunction_ITU_R_709_2)
        #expect(kCVImageBufferYCbCrMatrix_ITU_R_709_2 == AVVideoYCbCrMatrix_ITU_R_709_2 && kCVImageBufferYCbCrMatrix_ITU_R_601_4 == AVVideoYCbCrMatrix_ITU_R_601_4)
        #expect(kCVImageBufferYCbCrMatrix_ITU_R_2020 == AVVideoYCbCrMatrix_ITU_R_2020)
        #expect([kCVImageBufferPixelAspectRatioKey, kCVImageBufferPixelAspectRatioHorizontalSpacingKey, kCVImageBufferPixelAspectRatioVerticalSpacingKey]
                == ["CVPixelAspectRatio", "HorizontalSpacing", "VerticalSpacing"])
        #expect([kCVImageBufferCleanApertureKey, kCVImageBufferCleanApertureWidthKey, kCVImageBufferCleanApertureHeightKey] == ["CVCleanAperture", "Width", "Height"])
    }

    /// What GraphKit cannot write is refused by `canAdd`, with the reason on the writer's error:
    /// colour for another codec than H.264, an incomplete dictionary (AVFoundation needs all
    /// three keys), a value it does not know.
    /// A phone's HDR video (HEVC Main 10, HLG or PQ, as ffmpeg writes them) has the
    /// `containsHDRVideo` characteristic, as on a Mac; BT.709 video does not.
    @Test(.media, arguments: [("arib-std-b67", true), ("smpte2084", true), ("bt709", false)])
    func hdrVideoIsACharacteristic(_ transfer: String, _ isHDR: Bool) async throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("\(transfer).mov")
        let primaries = isHDR ? "bt2020" : "bt709", matrix = isHDR ? "bt2020nc" : "bt709"
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=d=0.4:s=128x96:r=25", "-c:v", "libx265", "-pix_fmt", "yuv420p10le",
                                         "-x265-params", "log-level=error:colorprim=\(primaries):transfer=\(transfer):colormatrix=\(matrix)",
                                         "-tag:v", "hvc1", "-y", url.path])
        let asset = AVURLAsset(url: url)
        let video = try #require(try await asset.loadTracks(withMediaType: .video).first)
        #expect(video.hasMediaCharacteristic(.containsHDRVideo) == isHDR)
        #expect(video.hasMediaCharacteristic(.visual))
        #expect(try await asset.loadTracks(withMediaCharacteristic: .containsHDRVideo).count == (isHDR ? 1 : 0))
        #expect(AVMediaCharacteristic.containsHDRVideo.rawValue == "AVMediaCharacteristicContainsHDRVideo")
    }

    /// A video track's format description carries the colour its file states as Core Media's
    /// extensions, by Apple's keys and values: HDR10 (PQ) with its mastering display and content
    /// light level as the SEI's big-endian bytes, HLG, and BT.709 8-bit; ffmpeg writes each.
    @Test(.media, arguments: [("smpte2084", true), ("arib-std-b67", false), ("bt709", false)])
    func formatDescriptionsCarryTheFilesColour(_ transfer: String, _ withMetadata: Bool) async throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("\(transfer).mp4")
        let sdr = transfer == "bt709"
        let primaries = sdr ? "bt709" : "bt2020", matrix = sdr ? "bt709" : "bt2020nc"
        let hdr10 = withMetadata ? ":master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,50):max-cll=1000,400" : ""
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=d=0.4:s=128x96:r=25", "-c:v", "libx265", "-pix_fmt", sdr ? "yuv420p" : "yuv420p10le",
                                         "-x265-params", "log-level=error:colorprim=\(primaries):transfer=\(transfer):colormatrix=\(matrix)\(hdr10)",
                                         "-tag:v", "hvc1", "-y", url.path])
        let video = try #require(try await AVURLAsset(url: url).loadTracks(withMediaType: .video).first)
        let description = try #require(try await video.load(.formatDescriptions).first)
        let extensions = try #require(CMFormatDescriptionGetExtensions(description))
        #expect(extensions[kCMFormatDescriptionExtension_ColorPrimaries] as? String == (sdr ? kCMFormatDescriptionColorPrimaries_ITU_R_709_2 : kCMFormatDescriptionColorPrimaries_ITU_R_2020))
        let expectedTransfer = ["smpte2084": kCMFormatDescriptionTransferFunction_SMPTE_ST_2084_PQ, "arib-std-b67": kCMFormatDescriptionTransferFunction_ITU_R_2100_HLG,
                                "bt709": kCMFormatDescriptionTransferFunction_ITU_R_709_2][transfer]
        #expect(CMFormatDescriptionGetExtension(description, extensionKey: kCMFormatDescriptionExtension_TransferFunction) as? String == expectedTransfer)
        #expect(extensions[kCMFormatDescriptionExtension_YCbCrMatrix] as? String == (sdr ? kCMFormatDescriptionYCbCrMatrix_ITU_R_709_2 : kCMFormatDescriptionYCbCrMatrix_ITU_R_2020))
        #expect(extensions[kCMFormatDescriptionExtension_FullRangeVideo] as? Bool == false)
        #expect(extensions[kCMFormatDescriptionExtension_BitsPerComponent] as? Int == (sdr ? 8 : 10))
        let mastering = extensions[kCMFormatDescriptionExtension_MasteringDisplayColorVolume] as? Data
        let light = extensions[kCMFormatDescriptionExtension_ContentLightLevelInfo] as? Data
        if withMetadata {
            // x265's master-display is the SEI's fields: G, B, R, white point, then L(max, min).
            let bytes = try #require(mastering).map { Int($0) }
            func u16(_ i: Int) -> Int { bytes[i] << 8 | bytes[i + 1] }
            func u32(_ i: Int) -> Int { u16(i) << 16 | u16(i + 2) }
            #expect(bytes.count == 24)
            #expect((0..<8).map { u16(2 * $0) } == [13250, 34500, 7500, 3000, 34000, 16000, 15635, 16450])
            #expect(u32(16) == 10_000_000 && u32(20) == 50)
            #expect(try #require(light) == Data([0x03, 0xE8, 0x01, 0x90]))
        } else {
            #expect(mastering == nil && light == nil)
        }
        #expect(kCMFormatDescriptionExtension_FullRangeVideo == "FullRangeVideo" && kCMFormatDescriptionExtension_BitsPerComponent == "BitsPerComponent")
        #expect(kCMFormatDescriptionExtension_MasteringDisplayColorVolume == "MasteringDisplayColorVolume"
                && kCMFormatDescriptionExtension_ContentLightLevelInfo == "ContentLightLevelInfo")
    }

    @Test func whatCannotBeWrittenIsRefused() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cases: [([String: Any], String)] = [
            (Self.video(Self.hd, codec: .hevc), "H.264 encoder only"),
            (Self.video([AVVideoColorPrimariesKey: AVVideoColorPrimaries_ITU_R_709_2, AVVideoYCbCrMatrixKey: AVVideoYCbCrMatrix_ITU_R_709_2]), "needs TransferFunction"),
            (Self.video(Self.hd.merging([AVVideoYCbCrMatrixKey: "ITU_R_999"]) { $1 }), "YCbCrMatrix \"ITU_R_999\" is not one GraphKit writes"),
            (Self.video(Self.hd.merging(["Gamma": 2.2]) { $1 }), "Gamma"),
        ]
        for (settings, reason) in cases {
            let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("out.mp4"), fileType: .mp4)
            let input = AVAssetWriterInput(mediaType: .video, outputSettings: settings)
            #expect(!writer.canAdd(input), "\(reason)")
            writer.add(input)
            let message = writer.error.map { $0.localizedDescription } ?? ""
            #expect(message.contains(reason), "\(message)")
        }
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("ok.mp4"), fileType: .mp4)
        #expect(writer.canAdd(AVAssetWriterInput(mediaType: .video, outputSettings: Self.video(Self.pq))))
    }

    /// The stream states the colour asked for, as ffprobe reads its VUI: BT.709, BT.2020 with PQ
    /// and with HLG, SMPTE C with BT.601's matrix; BGRA frames converted with the matrix asked for, 4:2:0 ones labelled.
    @Test(.media) func theStreamStatesTheColourAskedFor() async throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let hlg = Self.pq.merging([AVVideoTransferFunctionKey: AVVideoTransferFunction_ITU_R_2100_HLG]) { $1 }
        let smpteC = Self.hd.merging([AVVideoColorPrimariesKey: AVVideoColorPrimaries_SMPTE_C, AVVideoYCbCrMatrixKey: AVVideoYCbCrMatrix_ITU_R_601_4]) { $1 }
        let nv12 = kCVPixelFormatType_420YpCbCr8BiPlanarVideoRange
        for (name, colour, expected, format) in [("709", Self.hd, "bt709,bt709,bt709", kCVPixelFormatType_32BGRA),
                                                 ("709-nv12", Self.hd, "bt709,bt709,bt709", nv12),
                                                 ("pq", Self.pq, "bt2020nc,smpte2084,bt2020", kCVPixelFormatType_32BGRA),
                                                 ("hlg", hlg, "bt2020nc,arib-std-b67,bt2020", nv12),
                                                 ("smpte-c", smpteC, "smpte170m,bt709,smpte170m", kCVPixelFormatType_32BGRA)] {
            let url = folder.appendingPathComponent("\(name).mp4")
            let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
            let input = AVAssetWriterInput(mediaType: .video, outputSettings: Self.video(colour))
            let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes:
                [kCVPixelBufferPixelFormatTypeKey as String: format])
            writer.add(input)
            #expect(writer.startWriting(), "\(String(describing: writer.error))")
            writer.startSession(atSourceTime: .zero)
            for i in 0..<5 {
                var pb: CVPixelBuffer?
                CVPixelBufferCreate(nil, 320, 240, format, nil, &pb)
                let frame = try #require(pb)
                while !input.isReadyForMoreMediaData { try await Task.sleep(for: .milliseconds(5)) }
                #expect(adaptor.append(frame, withPresentationTime: CMTimeMake(value: Int64(i), timescale: 30)))
            }
            input.markAsFinished()
            await writer.finishWriting()
            #expect(writer.status == .completed, "\(String(describing: writer.error))")
            let vui = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries",
                                                        "stream=color_range,color_space,color_transfer,color_primaries", "-of", "csv=p=0", url.path])
            #expect(vui.trimmingCharacters(in: .whitespacesAndNewlines) == "tv,\(expected)", "\(name): \(vui)")
        }
    }
}
