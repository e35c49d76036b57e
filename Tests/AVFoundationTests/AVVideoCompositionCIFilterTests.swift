import AVFoundation
import CoreImage
import _Testing_CoreImage
import GraphKitTesting
import Synchronization
import Testing
import TestSupport

/// CIFilter video compositions (`AVVideoComposition(asset:applyingCIFiltersWithHandler:)`), as
/// effect code uses them for an export or a reader: each frame handed to the handler as a
/// `CIImage`, the image it finishes with shown. Judged against the filter's definition applied
/// to the source's own frames, read apart.
@Suite(.media, .timeLimit(.minutes(5))) struct AVVideoCompositionCIFilterTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 1 s of 320x240 testsrc2 at 25 fps (a moving picture of many colours), with a tone.
    func source() throws -> URL {
        let url = folder.appendingPathComponent("source.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=1",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-qp", "10", "-pix_fmt", "yuv420p", "-c:a", "aac", url.path])
        return url
    }

    /// Green taken out, as RosyWriter's effect does.
    static func withoutGreen(_ image: CIImage) -> CIImage {
        let f = CIFilter.colorMatrix()
        f.inputImage = image
        f.gVector = CIVector(x: 0, y: 0, z: 0, w: 0)
        return f.outputImage!
    }

    /// Every frame of `track` as BGRA bytes, read by `output` (added to a new reader of `asset`).
    func frames(of asset: AVAsset, _ output: AVAssetReaderOutput) throws -> (frames: [[UInt8]], times: [CMTime], error: (any Error)?) {
        let reader = try AVAssetReader(asset: asset)
        reader.add(output)
        #expect(reader.startReading())
        var frames: [[UInt8]] = [], times: [CMTime] = []
        while let sb = output.copyNextSampleBuffer() {
            let pb = try #require(CMSampleBufferGetImageBuffer(sb))
            CVPixelBufferLockBaseAddress(pb, .readOnly)
            defer { CVPixelBufferUnlockBaseAddress(pb, .readOnly) }
            let rowBytes = CVPixelBufferGetBytesPerRow(pb), width = CVPixelBufferGetWidth(pb), height = CVPixelBufferGetHeight(pb)
            let base = try #require(CVPixelBufferGetBaseAddress(pb)).assumingMemoryBound(to: UInt8.self)
            frames.append((0..<height).flatMap { y in Array(UnsafeBufferPointer(start: base + y * rowBytes, count: width * 4)) })
            times.append(CMSampleBufferGetPresentationTimeStamp(sb))
        }
        return (frames, times, reader.error)
    }

    /// A reader's frames are the handler's: green gone from every pixel, blue and red as the
    /// source's to 1/255, one frame per source frame at the composition's times, which the
    /// handler saw in order.
    @Test func aReaderShowsTheFilteredFrames() throws {
        let asset = AVURLAsset(url: try source())
        let track = try #require(asset.tracks(withMediaType: .video).first)
        let seen = Mutex<[CMTime]>([])
        let composition = AVVideoComposition(asset: asset) { request in
            seen.withLock { $0.append(request.compositionTime) }
            #expect(request.renderSize == CGSize(width: 320, height: 240))
            #expect(request.sourceImage.extent == CGRect(x: 0, y: 0, width: 320, height: 240))
            request.finish(with: Self.withoutGreen(request.sourceImage), context: nil)
        }
        #expect(composition.renderSize == CGSize(width: 320, height: 240) && composition.frameDuration == CMTime(value: 1, timescale: 25))
        let output = AVAssetReaderVideoCompositionOutput(videoTracks: [track], videoSettings: nil)
        output.videoComposition = composition
        let filtered = try frames(of: asset, output)
        #expect(filtered.error == nil, "\(String(describing: filtered.error))")
        let plain = try frames(of: asset, AVAssetReaderTrackOutput(track: track, outputSettings: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_32BGRA]))
        #expect(filtered.frames.count == 25 && plain.frames.count == 25)
        #expect(seen.withLock { $0 } == (0..<25).map { CMTime(value: Int64($0), timescale: 25) })
        #expect(filtered.times == (0..<25).map { CMTime(value: Int64($0), timescale: 25) })
        var worst = 0, greenest = 0
        for (f, p) in zip(filtered.frames, plain.frames) {
            #expect(f.count == p.count)
            for i in Swift.stride(from: 0, to: min(f.count, p.count), by: 4) {
                worst = max(worst, abs(Int(f[i]) - Int(p[i])), abs(Int(f[i + 2]) - Int(p[i + 2])))
                greenest = max(greenest, Int(f[i + 1]))
            }
        }
        #expect(worst <= 1 && greenest == 0, "blue/red off by \(worst), green up to \(greenest)")
    }

    /// An export through a handler that finishes later, on another queue: every frame comes,
    /// without green (H.264's rounding allowed), and the sound is kept.
    @Test func anExportWaitsForAHandlerThatFinishesLater() async throws {
        let asset = AVURLAsset(url: try source())
        let composition = try await AVMutableVideoComposition.videoComposition(with: asset) { request in
            let image = request.sourceImage
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(5)) {
                request.finish(with: Self.withoutGreen(image), context: CIContext())
            }
        }
        let session = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetHighestQuality))
        session.videoComposition = composition
        let out = folder.appendingPathComponent("filtered.mp4")
        try await session.export(to: out, as: .mp4)
        let probe = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=codec_type,nb_read_frames",
                                                      "-of", "csv=p=0", out.path])
        #expect(probe.contains("video,25") && probe.contains("audio"), "\(probe)")
        let raw = folder.appendingPathComponent("frame.rgb").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", out.path, "-vf", "select=eq(n\\,12)", "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24", raw])
        let rgb = Array(try Data(contentsOf: URL(fileURLWithPath: raw)))
        let green = Swift.stride(from: 1, to: rgb.count, by: 3).map { Double(rgb[$0]) }
        let red = Swift.stride(from: 0, to: rgb.count, by: 3).map { Double(rgb[$0]) }
        #expect(green.reduce(0, +) / Double(green.count) < 6, "the green is still there")
        #expect(red.reduce(0, +) / Double(red.count) > 40, "the picture is gone")
    }

    /// A handler that fails a frame fails the export with its error, naming the frame's time;
    /// nothing is left under the output's name.
    @Test func aFailedFrameFailsTheExport() async throws {
        struct Refused: Error, CustomStringConvertible { var description: String { "no filter for this frame" } }
        let asset = AVURLAsset(url: try source())
        let composition = AVVideoComposition(asset: asset) { request in
            if request.compositionTime >= CMTime(value: 3, timescale: 25) { request.finish(with: Refused()) } else {
                request.finish(with: request.sourceImage, context: nil)
            }
        }
        let session = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetHighestQuality))
        session.videoComposition = composition
        let out = folder.appendingPathComponent("failed.mp4")
        await #expect(throws: (any Error).self) { try await session.export(to: out, as: .mp4) }
        #expect(session.status == .failed)
        let message = (session.error as NSError?)?.localizedDescription ?? ""
        #expect(message.contains("no filter for this frame") && message.contains("0.12"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    /// A handler that never finishes holds the export until it is cancelled; the cancel ends it
    /// at once (the wait looks every 50 ms; 0.05 s measured quiet), leaving nothing. The bound
    /// is for a hang: under the whole suite on 2 cores the awaiting task itself waited 5.24 s
    /// for a thread (Debian 13, 2026-11-30), so 15 s are allowed.
    @Test(.timeLimit(.minutes(1))) func aHandlerThatNeverFinishesIsCancelled() async throws {
        let asset = AVURLAsset(url: try source())
        let asked = Mutex(0)
        let composition = AVVideoComposition(asset: asset) { _ in asked.withLock { $0 += 1 } }
        let session = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetHighestQuality))
        session.videoComposition = composition
        let out = folder.appendingPathComponent("held.mp4")
        let exporting = Task { try await session.export(to: out, as: .mp4) }
        let held = await watchFromThread("asked") { asked.withLock { $0 } > 0 ? true : nil }
        #expect(held)
        let start = ContinuousClock.now
        session.cancelExport()
        await #expect(throws: CancellationError.self) { try await exporting.value }
        #expect(ContinuousClock.now - start < .seconds(15), "\(ContinuousClock.now - start)")
        #expect(session.status == .cancelled && asked.withLock { $0 } == 1)
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    /// A turned track is handed over upright: a 160x120 picture turned 90° gives 120x160
    /// images, and the export is 120x160 with no display matrix left.
    @Test func aTurnedTrackIsHandedOverUpright() async throws {
        let asset = AVURLAsset(url: URL(fileURLWithPath: try RotatedVideo.make(90, in: folder)))
        let extents = Mutex<Set<CGRect>>([])
        let composition = AVVideoComposition(asset: asset) { request in
            extents.withLock { _ = $0.insert(request.sourceImage.extent) }
            request.finish(with: request.sourceImage, context: nil)
        }
        #expect(composition.renderSize == CGSize(width: 120, height: 160))
        let session = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetHighestQuality))
        session.videoComposition = composition
        let out = folder.appendingPathComponent("upright.mp4")
        try await session.export(to: out, as: .mp4)
        #expect(extents.withLock { $0 } == [CGRect(x: 0, y: 0, width: 120, height: 160)])
        let geometry = try RotatedVideo.geometry(out.path)
        #expect(geometry.width == 120 && geometry.height == 160 && geometry.rotation == 0, "\(geometry)")
    }

    /// A reader asked for 4:2:0 refuses a CIFilter composition, saying to ask for BGRA.
    @Test func aPlanarReaderSaysToAskForBGRA() throws {
        let asset = AVURLAsset(url: try source())
        let track = try #require(asset.tracks(withMediaType: .video).first)
        let output = AVAssetReaderVideoCompositionOutput(videoTracks: [track], videoSettings: [kCVPixelBufferPixelFormatTypeKey as String: kCVPixelFormatType_420YpCbCr8Planar])
        output.videoComposition = AVVideoComposition(asset: asset) { $0.finish(with: $0.sourceImage, context: nil) }
        let read = try frames(of: asset, output)
        #expect(read.frames.isEmpty)
        #expect(((read.error as NSError?)?.localizedDescription ?? "").contains("kCVPixelFormatType_32BGRA"), "\(String(describing: read.error))")
    }

    /// Pixel (x, y) of `image` (y from the top) as blue, green, red.
    static func pixel(_ image: CGImage, _ x: Int, _ y: Int) -> (b: Int, g: Int, r: Int) {
        let data = CGDataProviderCopyData(image.dataProvider)
        let p = CFDataGetBytePtr(data)! + y * image.bytesPerRow + x * 4
        return (Int(p[0]), Int(p[1]), Int(p[2]))
    }

    /// A thumbnail drawn by a CIFilter composition is the handler's image, exactly, fitted into
    /// `maximumSize` keeping its shape; the handler sees the frame's own time.
    @Test func aThumbnailIsTheHandlersImage() async throws {
        let asset = AVURLAsset(url: try source())
        let times = Mutex<[CMTime]>([])
        let generator = AVAssetImageGenerator(asset: asset)
        generator.requestedTimeToleranceBefore = .zero
        generator.requestedTimeToleranceAfter = .zero
        generator.videoComposition = AVVideoComposition(asset: asset) { request in
            times.withLock { $0.append(request.compositionTime) }
            request.finish(with: CIImage(color: CIColor(red: 0.2, green: 0.4, blue: 0.6)).cropped(to: request.sourceImage.extent), context: nil)
        }
        let (image, actual) = try await generator.image(at: CMTime(value: 12, timescale: 25))
        #expect(actual == CMTime(value: 12, timescale: 25) && times.withLock { $0 } == [actual])
        #expect(image.width == 320 && image.height == 240)
        let centre = Self.pixel(image, 160, 120), corner = Self.pixel(image, 0, 239)
        #expect(centre == (b: 153, g: 102, r: 51) && corner == centre, "\(centre) \(corner)")
        generator.maximumSize = CGSize(width: 80, height: 80)
        let small = try generator.copyCGImage(at: CMTime(value: 5, timescale: 25), actualTime: nil)
        #expect(small.width == 80 && small.height == 60)
        #expect(Self.pixel(small, 40, 30) == (b: 153, g: 102, r: 51))
    }

    /// A thumbnail drawn by instructions: a crop of the middle (render size 160x120, the layer
    /// moved by minus the corner) is the plain picture's middle, to the bilinear scaler's
    /// rounding; a turned track's composition of its properties gives an upright picture.
    @Test func aThumbnailIsDrawnByInstructions() async throws {
        let asset = AVURLAsset(url: try source())
        let plain = AVAssetImageGenerator(asset: asset)
        plain.requestedTimeToleranceBefore = .zero
        plain.requestedTimeToleranceAfter = .zero
        let whole = try await plain.image(at: CMTime(value: 10, timescale: 25)).image
        let track = try #require(asset.tracks(withMediaType: .video).first)
        let crop = AVMutableVideoComposition(propertiesOf: asset)
        crop.renderSize = CGSize(width: 160, height: 120)
        let layer = AVMutableVideoCompositionLayerInstruction(assetTrack: track)
        layer.setTransform(CGAffineTransform(translationX: -80, y: -60), at: .zero)
        let instruction = try #require(crop.instructions.first as? AVMutableVideoCompositionInstruction)
        instruction.layerInstructions = [layer]
        let generator = AVAssetImageGenerator(asset: asset)
        generator.requestedTimeToleranceBefore = .zero
        generator.requestedTimeToleranceAfter = .zero
        generator.videoComposition = crop
        let middle = try await generator.image(at: CMTime(value: 10, timescale: 25)).image
        #expect(middle.width == 160 && middle.height == 120)
        var worst = 0
        for y in Swift.stride(from: 0, to: 120, by: 7) {
            for x in Swift.stride(from: 0, to: 160, by: 7) {
                let a = Self.pixel(middle, x, y), b = Self.pixel(whole, x + 80, y + 60)
                worst = max(worst, abs(a.b - b.b), abs(a.g - b.g), abs(a.r - b.r))
            }
        }
        #expect(worst <= 1, "the middle differs by up to \(worst)")

        let turned = AVURLAsset(url: URL(fileURLWithPath: try RotatedVideo.make(90, in: folder)))
        let upright = AVAssetImageGenerator(asset: turned)
        upright.videoComposition = AVVideoComposition(propertiesOf: turned)
        let picture = try await upright.image(at: .zero).image
        #expect(picture.width == 120 && picture.height == 160)
    }

    /// A variable frame rate (a phone's video: frames 5 to 9 missing, a 0.2 s gap) keeps its
    /// own timing: one frame for each source frame at its time, none made up in the gap, as
    /// Apple's composition of one track's properties (`sourceTrackIDForFrameTiming`).
    @Test func aVariableFrameRateKeepsItsTiming() async throws {
        let src = folder.appendingPathComponent("vfr.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=1",
                                         "-vf", "select='not(between(n\\,5\\,9))'", "-fps_mode", "passthrough",
                                         "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", src.path])
        func times(_ path: String) throws -> [Double] {
            try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path])
                .split(separator: "\n").compactMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        }
        let before = try times(src.path)
        // 19 or 20 frames with a gap of 0.2 s among them.
        try #require((19...20).contains(before.count) && zip(before.dropFirst(), before).contains { $0 - $1 > 0.19 }, "the source's frames: \(before)")
        let asset = AVURLAsset(url: src)
        let composition = AVVideoComposition(asset: asset) { $0.finish(with: Self.withoutGreen($0.sourceImage), context: nil) }
        let track = try #require(asset.tracks(withMediaType: .video).first)
        #expect(composition.sourceTrackIDForFrameTiming == track.trackID)
        let session = try #require(AVAssetExportSession(asset: asset, presetName: AVAssetExportPresetHighestQuality))
        session.videoComposition = composition
        let out = folder.appendingPathComponent("vfr-out.mp4")
        try await session.export(to: out, as: .mp4)
        let after = try times(out.path)
        #expect(after.count == before.count, "\(after.count) frames: \(after)")
        if after.count == before.count {
            let worst = zip(after, before).map { abs($0 - $1) }.max() ?? 0
            #expect(worst < 0.002, "times differ by up to \(worst) s")
        }
    }

    /// A handler that finishes twice (the second ignored), and one whose image is smaller than
    /// the frame: outside its extent the reader's BGRA frame is transparent.
    @Test func aSecondFinishIsIgnoredAndOutsideTheImageIsClear() throws {
        let asset = AVURLAsset(url: try source())
        let track = try #require(asset.tracks(withMediaType: .video).first)
        let output = AVAssetReaderVideoCompositionOutput(videoTracks: [track], videoSettings: nil)
        output.videoComposition = AVVideoComposition(asset: asset) { request in
            let red = CIImage(color: CIColor(red: 1, green: 0, blue: 0)).cropped(to: CGRect(x: 0, y: 0, width: 100, height: 50))
            request.finish(with: red, context: nil)
            request.finish(with: request.sourceImage, context: nil)
        }
        let read = try frames(of: asset, output)
        #expect(read.error == nil && read.frames.count == 25)
        let frame = try #require(read.frames.first)
        // CoreImage's origin is bottom left: the red 100x50 is the frame's last 50 rows.
        func pixel(_ x: Int, _ y: Int) -> [UInt8] { Array(frame[(y * 320 + x) * 4..<(y * 320 + x) * 4 + 4]) }
        #expect(pixel(10, 230) == [0, 0, 255, 255] && pixel(200, 230) == [0, 0, 0, 0] && pixel(10, 10) == [0, 0, 0, 0],
                "\(pixel(10, 230)) \(pixel(200, 230)) \(pixel(10, 10))")
    }

    /// Filtered frames are recycled and keep nothing of an earlier picture: the first 12 frames
    /// show the whole source (opaque everywhere), so every frame in the pool holds it, and the
    /// 13 after show `later`, each exactly `expected` at each pixel (x, y from the top).
    func wholeThen(_ later: @escaping @Sendable (CIImage) -> CIImage, expected: (Int, Int) -> [UInt8]) throws {
        let asset = AVURLAsset(url: try source())
        let track = try #require(asset.tracks(withMediaType: .video).first)
        let output = AVAssetReaderVideoCompositionOutput(videoTracks: [track], videoSettings: nil)
        output.videoComposition = AVVideoComposition(asset: asset) { request in
            let image = request.sourceImage
            request.finish(with: request.compositionTime < CMTime(value: 12, timescale: 25) ? image : later(image), context: nil)
        }
        let read = try frames(of: asset, output)
        #expect(read.error == nil && read.frames.count == 25)
        var left = 0
        for (frame, time) in zip(read.frames, read.times) where time >= CMTime(value: 12, timescale: 25) {
            for y in 0..<240 {
                for x in 0..<320 where Array(frame[(y * 320 + x) * 4..<(y * 320 + x) * 4 + 4]) != expected(x, y) { left += 1 }
            }
        }
        #expect(left == 0, "\(left) pixels of the later frames are not as expected")
    }

    /// After a whole frame, an image smaller than the frame: transparent outside its extent.
    @Test func aSmallerImageAfterAWholeOneLeavesNothingBehind() throws {
        try wholeThen({ _ in CIImage(color: CIColor(red: 1, green: 0, blue: 0)).cropped(to: CGRect(x: 0, y: 0, width: 100, height: 50)) },
                        expected: { x, y in x < 100 && y >= 190 ? [0, 0, 255, 255] : [0, 0, 0, 0] })
    }

    /// After a whole frame, an image too large for the renderer (a blur that needs more than
    /// its largest intermediate): the frame is transparent, as a fresh one it draws nothing in.
    @Test func anImageTooLargeToRenderAfterAWholeOneLeavesNothingBehind() throws {
        try wholeThen({ $0.applyingGaussianBlur(sigma: 1000) }, expected: { _, _ in [0, 0, 0, 0] })
    }

    /// Cancelling a reader while the handler holds a frame: reading ends, the status is
    /// cancelled with no error, as Apple's.
    @Test(.timeLimit(.minutes(1))) func cancellingAReaderWhileTheHandlerHoldsAFrame() throws {
        let asset = AVURLAsset(url: try source())
        let track = try #require(asset.tracks(withMediaType: .video).first)
        let asked = Mutex(0)
        let output = AVAssetReaderVideoCompositionOutput(videoTracks: [track], videoSettings: nil)
        output.videoComposition = AVVideoComposition(asset: asset) { _ in asked.withLock { $0 += 1 } }
        let reader = try AVAssetReader(asset: asset)
        reader.add(output)
        #expect(reader.startReading())
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { reader.cancelReading() }
        #expect(output.copyNextSampleBuffer() == nil)
        #expect(reader.status == .cancelled && reader.error == nil && asked.withLock { $0 } == 1, "\(reader.status.rawValue) \(String(describing: reader.error))")
    }

    /// A thumbnail task cancelled while the handler holds its frame ends at once, cancelled
    /// (15 s allowed for a loaded suite, as for the export above).
    @Test(.timeLimit(.minutes(1))) func aThumbnailTaskCancelledWhileTheHandlerHoldsItsFrame() async throws {
        let asset = AVURLAsset(url: try source())
        let asked = Mutex(0)
        let generator = AVAssetImageGenerator(asset: asset)
        generator.videoComposition = AVVideoComposition(asset: asset) { _ in asked.withLock { $0 += 1 } }
        let task = Task { try await generator.image(at: CMTime(value: 5, timescale: 25)) }
        #expect(await watchFromThread("asked") { asked.withLock { $0 } > 0 ? true : nil })
        let start = ContinuousClock.now
        task.cancel()
        await #expect(throws: (any Error).self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(15), "\(ContinuousClock.now - start)")
    }
}
