import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// AVAssetWriter, AVAssetWriterInput and the pixel-buffer adaptor against AVFoundation's
/// documented behaviour, and the frames-to-movie example (AVFoundation code, compiled
/// unchanged) judged by ffprobe.
@Suite(.media, .timeLimit(.minutes(10))) struct AVAssetWriterTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    static let video: [String: Any] = [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoWidthKey: 320, AVVideoHeightKey: 240]
    static let bgra: [String: Any] = [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA]

    /// Writes `frames` frames through the adaptor; the writer, finished.
    func writeFrames(_ url: URL, frames: Int, transform: CGAffineTransform = .identity, settings: [String: Any] = Self.video,
                     configure: (AVAssetWriter) -> Void = { _ in }) async throws -> AVAssetWriter {
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: settings)
        input.transform = transform
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: Self.bgra)
        #expect(writer.canAdd(input))
        writer.add(input)
        configure(writer)
        #expect(adaptor.pixelBufferPool == nil, "no pool before writing starts, as in AVFoundation")
        #expect(writer.status == .unknown)
        #expect(writer.startWriting())
        #expect(writer.status == .writing)
        writer.startSession(atSourceTime: .zero)
        let pool = try #require(adaptor.pixelBufferPool)
        for n in 0..<frames {
            var pb: CVPixelBuffer?
            #expect(CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pb) == kCVReturnSuccess)
            let frame = try #require(pb)
            CVPixelBufferLockBaseAddress(frame, [])
            memset(CVPixelBufferGetBaseAddress(frame)!, Int32(n * 4), CVPixelBufferGetDataSize(frame))
            CVPixelBufferUnlockBaseAddress(frame, [])
            #expect(adaptor.append(frame, withPresentationTime: CMTimeMake(value: Int64(n), timescale: 25)))
        }
        input.markAsFinished()
        await writer.finishWriting()
        return writer
    }

    @Test func framesThroughTheAdaptorMakeAMovie() async throws {
        let url = folder.appendingPathComponent("adaptor.mp4")
        let writer = try await writeFrames(url, frames: 50)
        #expect(writer.status == .completed && writer.error == nil)
        let probe = try MediaProbe(url.path, countFrames: true)
        let v = try #require(probe.stream("video"))
        #expect(v.codecName == "h264" && v.width == 320 && v.height == 240 && v.frameCount == 50)
        #expect(abs(probe.duration - 2.0) < 0.05, "\(probe.duration)")
    }

    /// An input's transform becomes its track's display matrix, as AVFoundation writes it (a
    /// portrait recording from a landscape sensor: a quarter turn): ffprobe reads the rotation,
    /// `preferredTransform` reads the transform back, and the frames are stored as appended.
    /// Before, the file said nothing and showed the picture on its side.
    @Test(arguments: [(CGAffineTransform(rotationAngle: .pi / 2), -90), (CGAffineTransform(rotationAngle: .pi), -180),
                      (CGAffineTransform(rotationAngle: -.pi / 2), 90)])
    func theInputsTransformIsTheTracksDisplayMatrix(_ transform: CGAffineTransform, ffprobeRotation: Int) async throws {
        let url = folder.appendingPathComponent("turned.mp4")
        let writer = try await writeFrames(url, frames: 10, transform: transform)
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        let geometry = try RotatedVideo.geometry(url.path)
        #expect(geometry == (320, 240, ffprobeRotation), "\(geometry)")
        let track = try #require(try await AVURLAsset(url: url).loadTracks(withMediaType: .video).first)
        let read = try await track.load(.preferredTransform)
        for (got, set) in [(read.a, transform.a), (read.b, transform.b), (read.c, transform.c), (read.d, transform.d), (read.tx, 0), (read.ty, 0)] {
            #expect(abs(got - set) < 1e-4, "read \(read), set \(transform)")
        }
    }

    /// A transform no file can hold fails `startWriting()`, naming it, and so does one on a
    /// fragmented file (a difference from AVFoundation); nothing is written.
    @Test func aTransformNoFileHoldsFailsStartWriting() throws {
        let url = folder.appendingPathComponent("nan.mp4")
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: Self.video)
        input.transform = CGAffineTransform(a: .nan, b: 0, c: 0, d: 1, tx: 0, ty: 0)
        writer.add(input)
        #expect(!writer.startWriting())
        #expect(writer.status == .failed)
        let message = (writer.error as? NSError)?.localizedDescription ?? "\(String(describing: writer.error))"
        #expect(message.contains("transform") && message.contains("display matrix"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: url.path))
        // A fragmented file is written as it goes; GraphKit writes the matrix at the end.
        let fragmented = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let turned = AVAssetWriterInput(mediaType: .video, outputSettings: Self.video)
        turned.transform = CGAffineTransform(rotationAngle: .pi / 2)
        fragmented.add(turned)
        fragmented.movieFragmentInterval = CMTime(seconds: 1, preferredTimescale: 600)
        #expect(!fragmented.startWriting())
        // A local first: the expectation macro reads `?.` inside the receiver as optional
        // chaining, and the check it made of this expression could not fail.
        let refusal = (fragmented.error as? NSError)?.localizedDescription ?? ""
        #expect(refusal.contains("fragmented file"), "\(String(describing: fragmented.error))")
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    /// "Writing fails if a file already exists at the output URL" (Apple's documentation).
    @Test func startWritingFailsOverAnExistingFile() throws {
        let url = folder.appendingPathComponent("exists.mp4")
        try Data("keep me".utf8).write(to: url)
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        writer.add(AVAssetWriterInput(mediaType: .video, outputSettings: Self.video))
        #expect(!writer.startWriting())
        #expect(writer.status == .failed)
        let error = try #require(writer.error as NSError?)
        #expect(error.domain == AVFoundationErrorDomain && error.code == AVErrorCode.fileAlreadyExists.rawValue)
        #expect(try Data(contentsOf: url) == Data("keep me".utf8))
    }

    /// `AVVideoProfileLevelKey` picks the H.264 profile written (the level is the encoder's,
    /// as with AutoLevel); without it the stream is High. A profile GraphKit cannot encode is
    /// refused by `canAdd`, naming the value.
    @Test func theProfileLevelKeyPicksTheProfile() async throws {
        for (key, expected) in [(AVVideoProfileLevelH264MainAutoLevel, "Main"), (AVVideoProfileLevelH264BaselineAutoLevel, "Constrained Baseline"),
                                (AVVideoProfileLevelH264High41, "High"), (nil, "High")] {
            var settings = Self.video
            if let key { settings[AVVideoCompressionPropertiesKey] = [AVVideoProfileLevelKey: key] }
            let url = folder.appendingPathComponent("profile-\(key ?? "none").mp4")
            let writer = try await writeFrames(url, frames: 10, settings: settings)
            #expect(writer.status == .completed, "\(String(describing: writer.error))")
            let profile = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=profile",
                                                            "-of", "csv=p=0", url.path])
            #expect(profile.trimmingCharacters(in: .whitespacesAndNewlines) == expected, "\(key ?? "no key"): \(profile)")
        }
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("extended.mp4"), fileType: .mp4)
        let extended = AVAssetWriterInput(mediaType: .video, outputSettings: Self.video.merging(
            [AVVideoCompressionPropertiesKey: [AVVideoProfileLevelKey: "H264_Extended_AutoLevel"]]) { $1 })
        #expect(!writer.canAdd(extended))
        writer.add(extended)
        #expect((writer.error as NSError?)?.localizedDescription.contains("H264_Extended_AutoLevel") == true, "\(String(describing: writer.error))")
    }

    /// HEVC's `AVVideoProfileLevelKey`: Main, or Main 10 (10-bit samples: BGRA frames widened
    /// to 10 bits); another HEVC profile is refused by `canAdd`, naming the value.
    @Test func anHEVCProfileLevelKeyPicksMainOrMain10() async throws {
        for (key, expected) in [("HEVC_Main_AutoLevel", "Main,yuv420p"), ("HEVC_Main10_AutoLevel", "Main 10,yuv420p10le")] {
            var settings = Self.video
            settings[AVVideoCodecKey] = AVVideoCodecType.hevc
            settings[AVVideoCompressionPropertiesKey] = [AVVideoProfileLevelKey: key]
            let url = folder.appendingPathComponent("\(key).mp4")
            let writer = try await writeFrames(url, frames: 10, settings: settings)
            #expect(writer.status == .completed, "\(String(describing: writer.error))")
            let stream = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "stream=profile,pix_fmt",
                                                           "-of", "csv=p=0", url.path])
            #expect(stream.trimmingCharacters(in: .whitespacesAndNewlines) == expected, "\(key): \(stream)")
        }
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("rext.mp4"), fileType: .mp4)
        let rext = AVAssetWriterInput(mediaType: .video, outputSettings: Self.video.merging(
            [AVVideoCodecKey: AVVideoCodecType.hevc, AVVideoCompressionPropertiesKey: [AVVideoProfileLevelKey: "HEVC_Main42210_AutoLevel"]]) { $1 })
        #expect(!writer.canAdd(rext))
    }

    /// A folder that is not there is not made, as on Apple's platforms: `startWriting` returns
    /// false and the writer fails naming the folder, with the POSIX cause underneath; nothing is
    /// created. A file where the folder should be is refused the same way.
    @Test func startWritingFailsWhereTheFolderIsMissing() throws {
        for (url, cause) in [(folder.appendingPathComponent("no/such/folder/out.mp4"), ENOENT),
                             (folder.appendingPathComponent("plain-file/out.mp4"), ENOTDIR)] {
            if cause == ENOTDIR { try Data("a file".utf8).write(to: url.deletingLastPathComponent()) }
            let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
            writer.add(AVAssetWriterInput(mediaType: .video, outputSettings: Self.video))
            #expect(!writer.startWriting(), "\(url.path)")
            #expect(writer.status == .failed)
            let error = try #require(writer.error as NSError?)
            #expect(error.domain == AVFoundationErrorDomain && error.code == AVErrorCode.unknown.rawValue)
            #expect(error.localizedDescription.contains(url.deletingLastPathComponent().path), "\(error.localizedDescription)")
            let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError
            #expect(underlying?.domain == NSPOSIXErrorDomain && underlying?.code == Int(cause))
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("no").path))
    }

    /// After a failure, `append` returns false and `status` is `.failed` with the error, as
    /// AVFoundation documents; nothing crashes and nothing is left at the output URL.
    @Test func appendReturnsFalseOnceTheWriterHasFailed() throws {
        let url = folder.appendingPathComponent("failed.mp4")
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: Self.video)
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: Self.bgra)
        writer.add(input)
        #expect(writer.startWriting())
        writer.startSession(atSourceTime: .zero)
        var pb: CVPixelBuffer?
        CVPixelBufferCreate(nil, 320, 240, kCVPixelFormatType_32BGRA, nil, &pb)
        let frame = try #require(pb)
        #expect(adaptor.append(frame, withPresentationTime: CMTimeMake(value: 2, timescale: 1)))
        // A time that is not a number: AVFoundation raises; GraphKit fails the writer.
        #expect(!adaptor.append(frame, withPresentationTime: .invalid))
        #expect(writer.status == .failed)
        let message = writer.error.map { $0.localizedDescription } ?? ""
        #expect(message.contains("not a number"), "\(message)")
        #expect(!adaptor.append(frame, withPresentationTime: CMTimeMake(value: 3, timescale: 1)))
        #expect(!input.isReadyForMoreMediaData)
        #expect(!FileManager.default.fileExists(atPath: url.path))
    }

    /// Settings GraphKit cannot honour: canAdd says no, and adding anyway fails the writer
    /// with the key at fault (AVFoundation raises an exception).
    @Test func unsupportedSettingsAreRefusedByName() throws {
        let url = folder.appendingPathComponent("refused.mp4")
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let proRes = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.proRes422, AVVideoWidthKey: 320, AVVideoHeightKey: 240])
        let noWidth = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.h264, AVVideoHeightKey: 240])
        let pcm = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatLinearPCM, AVSampleRateKey: 48000, AVNumberOfChannelsKey: 2])
        let odd = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48000, AVNumberOfChannelsKey: 2, "Volume": 1])
        #expect(!writer.canAdd(proRes) && !writer.canAdd(noWidth) && !writer.canAdd(pcm) && !writer.canAdd(odd))
        #expect(!writer.canApply(outputSettings: [AVVideoCodecKey: AVVideoCodecType.proRes422], forMediaType: .video))
        #expect(writer.canApply(outputSettings: Self.video, forMediaType: .video))
        writer.add(noWidth)
        #expect(writer.status == .failed)
        let message = writer.error.map { $0.localizedDescription } ?? ""
        #expect(message.contains("AVVideoWidthKey"), "\(message)")
        #expect(!writer.startWriting())
        let m4a = try AVAssetWriter(outputURL: folder.appendingPathComponent("a.m4a"), fileType: .m4a)
        #expect(!m4a.canAdd(AVAssetWriterInput(mediaType: .video, outputSettings: Self.video)))
        #expect(m4a.availableMediaTypes == [.audio])
        #expect(throws: (any Error).self) { try AVAssetWriter(outputURL: folder.appendingPathComponent("a.wav"), fileType: .wav) }
    }

    @Test func finishWritingCompletionHandlerAndCancel() async throws {
        let url = folder.appendingPathComponent("handler.mp4")
        let writer = try AVAssetWriter(url: url, fileType: .mov)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: Self.video)
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: nil)
        writer.add(input)
        #expect(writer.inputs.count == 1 && writer.outputURL == url && writer.outputFileType == .mov)
        writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        var pb: CVPixelBuffer?
        CVPixelBufferPoolCreatePixelBuffer(nil, try #require(adaptor.pixelBufferPool), &pb)
        #expect(CVPixelBufferGetWidth(pb!) == 320 && CVPixelBufferGetHeight(pb!) == 240, "the pool makes frames of the output size by default")
        adaptor.append(pb!, withPresentationTime: .zero)
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            writer.finishWriting { c.resume() }
        }
        #expect(writer.status == .completed)
        #expect(try MediaProbe(url.path).formatName.contains("mov"))

        let cancelled = folder.appendingPathComponent("cancelled.mp4")
        let w2 = try AVAssetWriter(outputURL: cancelled, fileType: .mp4)
        w2.add(AVAssetWriterInput(mediaType: .video, outputSettings: Self.video))
        w2.startWriting()
        w2.cancelWriting()
        #expect(w2.status == .cancelled && !FileManager.default.fileExists(atPath: cancelled.path))
    }

    @Test func networkUseAndFragments() async throws {
        let fast = folder.appendingPathComponent("fast.mp4")
        _ = try await writeFrames(fast, frames: 10) { $0.shouldOptimizeForNetworkUse = true }
        let boxes = MediaProbe.boxes(fast.path)
        #expect(boxes.firstIndex(of: "moov")! < boxes.firstIndex(of: "mdat")!)
        let fragmented = folder.appendingPathComponent("fragments.mp4")
        _ = try await writeFrames(fragmented, frames: 50) { $0.movieFragmentInterval = CMTime(seconds: 0.5, preferredTimescale: 600) }
        #expect(MediaProbe.boxes(fragmented.path).contains("moof"), "\(MediaProbe.boxes(fragmented.path))")
        #expect(try MediaProbe(fragmented.path, countFrames: true).stream("video")?.frameCount == 50)
    }

    /// endSession(atSourceTime:): samples appended at or after the end are left out.
    @Test func endSessionLeavesLaterSamplesOut() async throws {
        let url = folder.appendingPathComponent("ended.mp4")
        let writer = try AVAssetWriter(outputURL: url, fileType: .mp4)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: Self.video)
        let adaptor = AVAssetWriterInputPixelBufferAdaptor(assetWriterInput: input, sourcePixelBufferAttributes: Self.bgra)
        writer.add(input)
        writer.startWriting()
        writer.startSession(atSourceTime: .zero)
        writer.endSession(atSourceTime: CMTimeMake(value: 10, timescale: 25))
        let pool = try #require(adaptor.pixelBufferPool)
        for n in 0..<20 {
            var pb: CVPixelBuffer?
            CVPixelBufferPoolCreatePixelBuffer(nil, pool, &pb)
            #expect(adaptor.append(pb!, withPresentationTime: CMTimeMake(value: Int64(n), timescale: 25)))
        }
        await writer.finishWriting()
        #expect(try MediaProbe(url.path, countFrames: true).stream("video")?.frameCount == 10)
    }

    // MARK: The example

    @Test func framesToMovieExample() throws {
        let out = folder.appendingPathComponent("frames.mp4").path
        let printed = try TestMedia.runTool(try builtExample("example-avfoundation-frames-to-movie"), [out, "60"])
        #expect(printed.contains("wrote 60 frames (2.0 s)"), "\(printed)")
        let probe = try MediaProbe(out, countFrames: true)
        let v = try #require(probe.stream("video"))
        #expect(v.codecName == "h264" && v.width == 640 && v.height == 360 && v.frameCount == 60)
        #expect(abs(probe.duration - 2.0) < 0.05, "\(probe.duration)")
        #expect(abs((v.frameRate ?? 0) - 30) < 0.01)
        // Frame 0 as CoreGraphics drew it (origin at the bottom left): the ball's centre (40, 90)
        // is image row 270, red; row 90 above it is the blue ground; the white frame's top edge
        // (y = 340) is row 20, inside it the ground again.
        let rgb = folder.appendingPathComponent("frame0.rgb").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", "-y", rgb])
        let pixels = try [UInt8](Data(contentsOf: URL(fileURLWithPath: rgb)))
        func pixel(_ x: Int, _ y: Int) -> [Int] { (0..<3).map { Int(pixels[(y * 640 + x) * 3 + $0]) } }
        func near(_ got: [Int], _ want: [Int]) -> Bool { zip(got, want).allSatisfy { abs($0 - $1) <= 16 } }
        #expect(pixels.count == 640 * 360 * 3)
        #expect(near(pixel(40, 270), [230, 26, 26]), "ball \(pixel(40, 270))")
        #expect(near(pixel(40, 90), [13, 26, 77]), "ground \(pixel(40, 90))")
        #expect(near(pixel(470, 20), [255, 255, 255]), "frame edge \(pixel(470, 20))")
        #expect(near(pixel(470, 100), [13, 26, 77]), "inside the frame \(pixel(470, 100))")
    }
}

/// AVMetadataItem, AVAssetWriter.metadata and AVAsset's common metadata: items written by the
/// writer are read back by an asset under the common keys and in the iTunes key space, as
/// AVFoundation names them.
@Suite(.media, .timeLimit(.minutes(10))) struct AVMetadataTests {
    @Test func identifiersAreApplesForm() {
        #expect(AVMetadataIdentifier.commonIdentifierTitle.rawValue == "common/title")
        #expect(AVMetadataIdentifier.iTunesMetadataSongName.rawValue == "itsk/%A9nam")
        #expect([AVMetadataIdentifier.iTunesMetadataEncodingTool, .iTunesMetadataUserComment, .iTunesMetadataLyrics].map(\.rawValue)
                == ["itsk/%A9too", "itsk/%A9cmt", "itsk/%A9lyr"])
        #expect(AVMetadataKey.commonKeyModel.rawValue == "model")
        #expect(AVMetadataIdentifier.quickTimeMetadataLocationISO6709.rawValue == "mdta/com.apple.quicktime.location.ISO6709")
        let item = AVMutableMetadataItem()
        item.identifier = .iTunesMetadataSongName
        #expect(item.keySpace == .iTunes && (item.key as? NSString) == "©nam" && item.commonKey == .commonKeyTitle)
    }

    static func item(_ identifier: AVMetadataIdentifier, _ value: any NSCopying & NSObjectProtocol, dataType: String? = nil) -> AVMetadataItem {
        let item = AVMutableMetadataItem()
        item.identifier = identifier
        item.value = value
        item.dataType = dataType
        return item
    }

    /// Half a second of sound written to `url` (an M4A) with `metadata`; the writer, finished,
    /// or failed to start.
    static func writeSound(to url: URL, metadata: [AVMetadataItem]) async throws -> AVAssetWriter {
        let writer = try AVAssetWriter(outputURL: url, fileType: .m4a)
        writer.metadata = metadata
        let input = AVAssetWriterInput(mediaType: .audio, outputSettings: [AVFormatIDKey: kAudioFormatMPEG4AAC, AVSampleRateKey: 48_000, AVNumberOfChannelsKey: 1])
        writer.add(input)
        guard writer.startWriting() else { return writer }
        writer.startSession(atSourceTime: .zero)
        let format = try CMSampleBufferCreateTests.monoPCM()
        for start in stride(from: 0, to: 24_000, by: 1024) {
            while !input.isReadyForMoreMediaData { usleep(1000) }
            #expect(input.append(try CMSampleBufferCreateTests.sine(from: start, frames: min(1024, 24_000 - start), format: format)))
        }
        input.markAsFinished()
        await writer.finishWriting()
        return writer
    }

    @Test func writtenItemsAreReadBack() async throws {
        let folder = try TestMedia.temporaryFolder()
        let url = folder.appendingPathComponent("tagged.m4a")
        let when = Date(timeIntervalSince1970: 1_714_566_600)  // 2024-05-01T12:30:00Z
        let writer = try await Self.writeSound(to: url, metadata: [
            Self.item(.commonIdentifierTitle, "Café – 東京" as NSString), Self.item(.iTunesMetadataArtist, "Zoë" as NSString),
            Self.item(.commonIdentifierCreationDate, when as NSDate)])
        #expect(writer.status == .completed, "\(String(describing: writer.error))")

        let asset = AVURLAsset(url: url)
        let common = try await asset.load(.commonMetadata)
        let title = AVMetadataItem.metadataItems(from: common, filteredByIdentifier: .commonIdentifierTitle).first
        #expect(try await title?.load(.stringValue) == "Café – 東京")
        let artist = AVMetadataItem.metadataItems(from: common, withKey: AVMetadataKey.commonKeyArtist, keySpace: .common).first
        #expect(artist?.stringValue == "Zoë")
        let date = AVMetadataItem.metadataItems(from: common, filteredByIdentifier: .commonIdentifierCreationDate).first
        #expect(date?.dateValue == when, "\(String(describing: date?.stringValue))")
        let all = try await asset.load(.metadata)
        #expect(AVMetadataItem.metadataItems(from: all, filteredByIdentifier: .iTunesMetadataSongName).first?.stringValue == "Café – 東京")
        #expect(try await asset.load(.availableMetadataFormats) == [.iTunesMetadata])
    }

    /// The artwork (a PNG as data, under the common key), the place (QuickTime's ISO 6709 key)
    /// and the software (common key) are written, by the export session's code: ffprobe reads
    /// the cover as an attached picture, the location and the encoder; the asset reads them back
    /// under their common keys. Before, the writer dropped the three.
    @Test func artworkLocationAndSoftwareAreWritten() async throws {
        let folder = try TestMedia.temporaryFolder()
        let png = folder.appendingPathComponent("cover.png").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=red:s=16x16", "-frames:v", "1", png])
        let cover = try Data(contentsOf: URL(fileURLWithPath: png))
        let url = folder.appendingPathComponent("art.m4a")
        let writer = try await Self.writeSound(to: url, metadata: [
            Self.item(.commonIdentifierArtwork, cover as NSData, dataType: "com.apple.metadata.datatype.PNG"),
            Self.item(.quickTimeMetadataLocationISO6709, "+48.8583+002.2945/" as NSString),
            Self.item(.commonIdentifierSoftware, "Frames 1.0" as NSString)])
        #expect(writer.status == .completed, "\(String(describing: writer.error))")
        let probe = try MediaProbe(url.path)
        #expect(probe.tags["location"] == "+48.8583+002.2945/", "\(probe.tags)")
        #expect(probe.tags["encoder"] == "Frames 1.0", "\(probe.tags)")
        #expect(probe.streams.contains { $0.codecType == "video" && $0.codecName == "png" }, "the cover is ffprobe's attached picture")
        let common = try await AVURLAsset(url: url).load(.commonMetadata)
        #expect(AVMetadataItem.metadataItems(from: common, filteredByIdentifier: .commonIdentifierArtwork).first?.dataValue == cover)
        #expect(AVMetadataItem.metadataItems(from: common, filteredByIdentifier: .commonIdentifierLocation).first?.stringValue == "+48.8583+002.2945/")
        #expect(AVMetadataItem.metadataItems(from: common, filteredByIdentifier: .commonIdentifierSoftware).first?.stringValue == "Frames 1.0")
    }

    /// An export session's metadata items are written as the writer's are: the artwork and the
    /// location survive a re-encode (ffprobe reads them), and the asset's chapters go on though
    /// metadata was set (they are not items).
    @Test func exportSessionMetadataCarriesArtworkLocationAndChapters() async throws {
        let folder = try TestMedia.temporaryFolder()
        let png = folder.appendingPathComponent("cover.png").path, list = folder.appendingPathComponent("chapters.txt").path
        let source = folder.appendingPathComponent("source.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=green:s=16x16", "-frames:v", "1", png])
        try ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1000\ntitle=First\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1000\nEND=2000\ntitle=Second\n"
            .write(toFile: list, atomically: true, encoding: .utf8)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25:duration=2", "-i", list,
                                         "-map", "0", "-map_chapters", "1", "-c:v", "libx264", "-pix_fmt", "yuv420p", source])
        let session = try #require(AVAssetExportSession(asset: AVURLAsset(url: URL(fileURLWithPath: source)), presetName: AVAssetExportPreset640x480))
        session.metadata = [Self.item(.commonIdentifierArtwork, try Data(contentsOf: URL(fileURLWithPath: png)) as NSData),
                            Self.item(.commonIdentifierLocation, "-33.8568+151.2153/" as NSString),
                            Self.item(.commonIdentifierTitle, "Exported" as NSString)]
        let out = folder.appendingPathComponent("out.mp4")
        try await session.export(to: out, as: .mp4)
        let probe = try MediaProbe(out.path)
        #expect(probe.tags["title"] == "Exported" && probe.tags["location"] == "-33.8568+151.2153/", "\(probe.tags)")
        #expect(probe.streams.contains { $0.codecType == "video" && $0.codecName == "png" }, "the cover, as ffprobe's attached picture")
        #expect(probe.chapters.map(\.title) == ["First", "Second"] && probe.chapters.map(\.start) == [0, 1], "\(probe.chapters)")
    }

    /// Artwork that is not a picture fails startWriting(), the error naming the artwork, and
    /// nothing is written.
    @Test func artworkThatIsNotAPictureIsRefused() async throws {
        let folder = try TestMedia.temporaryFolder()
        let url = folder.appendingPathComponent("not-art.m4a")
        let writer = try await Self.writeSound(to: url, metadata: [Self.item(.commonIdentifierArtwork, Data("not a picture".utf8) as NSData)])
        #expect(writer.status == .failed)
        let message = String(describing: writer.error)
        #expect(message.contains("artwork") && message.contains("not a JPEG or PNG"), "\(message)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    /// An asset's chapters as AVFoundation gives them: the titles' locale (undetermined: the
    /// file states none), and a timed group a chapter, its range the chapter's and its item the
    /// title under the common key; from an MP4's QuickTime chapter track as ffmpeg writes it.
    @Test func chaptersAreTimedMetadataGroups() async throws {
        let folder = try TestMedia.temporaryFolder()
        let list = folder.appendingPathComponent("chapters.txt").path, path = folder.appendingPathComponent("chapters.mp4").path
        try ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=400\ntitle=Intro\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=400\nEND=1000\ntitle=Deuxième\n"
            .write(toFile: list, atomically: true, encoding: .utf8)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=1", "-i", list, "-map", "0", "-map_chapters", "1",
                                         "-c:a", "aac", "-movflags", "disable_chpl", path])
        let asset = AVURLAsset(url: URL(fileURLWithPath: path))
        let locales = try await asset.load(.availableChapterLocales)
        #expect(locales.map(\.identifier) == ["und"])
        let groups = try await asset.loadChapterMetadataGroups(bestMatchingPreferredLanguages: ["fr", "en"])
        #expect(groups.count == 2)
        #expect(groups.map(\.timeRange) == [CMTimeRange(start: .zero, end: CMTime(seconds: 0.4, preferredTimescale: 1000)),
                                             CMTimeRange(start: CMTime(seconds: 0.4, preferredTimescale: 1000), end: CMTime(seconds: 1, preferredTimescale: 1000))])
        let titles = groups.map { AVMetadataItem.metadataItems(from: $0.items, filteredByIdentifier: .commonIdentifierTitle).first?.stringValue }
        #expect(titles == ["Intro", "Deuxième"])
        #expect(groups.first?.items.first?.commonKey == .commonKeyTitle && groups.first?.items.first?.time == .zero)
        let byLocale = try await asset.loadChapterMetadataGroups(withTitleLocale: locales[0], containingItemsWithCommonKeys: [.commonKeyArtwork])
        #expect(byLocale.map(\.timeRange) == groups.map(\.timeRange))
        // A file without chapters has no chapter locale and no groups.
        let plain = folder.appendingPathComponent("plain.m4a").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", plain])
        let none = AVURLAsset(url: URL(fileURLWithPath: plain))
        #expect(try await none.load(.availableChapterLocales).isEmpty)
        #expect(try await none.loadChapterMetadataGroups(bestMatchingPreferredLanguages: ["en"]).isEmpty)
    }
}
