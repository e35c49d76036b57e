import AVFoundation
import GraphKitTesting
import Synchronization
import TestSupport
import Testing

/// AVAssetImageGenerator and CGImage as AVFoundation code uses them, on a video whose frames say
/// their number in their colour (frame N: grey 20 + 14 × (N mod 16) on the left half, 20 + 14 ×
/// (N / 16) on the right, as luma).
@Suite(.media, .timeLimit(.minutes(10))) struct AVAssetImageGeneratorTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 10 s of 320x240 at 25 fps, a keyframe every 2 s.
    func counter() throws -> URL {
        let url = folder.appendingPathComponent("counter.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i",
                                         "color=c=black:s=320x240:r=25:d=10,format=yuv420p,"
                                            + "geq=lum='if(lt(X\\,W/2)\\,mod(N\\,16)*14+20\\,floor(N/16)*14+20)':cb=128:cr=128",
                                         "-c:v", "libx264", "-crf", "12", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", url.path])
        return url
    }

    /// The frame number an image shows, read as pixel-reading code reads a CGImage: through its
    /// data provider's bytes, rows `bytesPerRow` apart, the blue byte first.
    static func frameNumber(_ image: CGImage) -> Int {
        let data = CGDataProviderCopyData(image.dataProvider)
        let bytes = CFDataGetBytePtr(data)!
        func grey(_ x0: Double, _ x1: Double) -> Double {
            var sum = 0, n = 0
            for y in image.height / 4..<image.height * 3 / 4 {
                for x in Int(x0 * Double(image.width))..<Int(x1 * Double(image.width)) {
                    sum += Int(bytes[y * image.bytesPerRow + x * image.bitsPerPixel / 8])
                    n += 1
                }
            }
            return Double(sum) / Double(n)
        }
        func step(_ g: Double) -> Int { Int(((g * 219 / 255 + 16 - 20) / 14).rounded()) }
        return step(grey(0.1, 0.4)) + 16 * step(grey(0.6, 0.9))
    }

    /// copyCGImage(at:actualTime:): the nearest keyframe by default (after the time, when it is
    /// nearer), the keyframe before with no tolerance after, the exact frame with zero
    /// tolerances; maximumSize fits with the aspect kept; the image's layout is BGRA.
    @Test func copyCGImageGivesTheKeyframeOrTheExactFrame() throws {
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: try counter()))
        var actual = CMTime.invalid
        let image = try generator.copyCGImage(at: CMTime(value: 33, timescale: 10), actualTime: &actual)
        #expect(actual.seconds == 4)
        #expect(Self.frameNumber(image) == 100)
        generator.requestedTimeToleranceAfter = .zero
        let before = try generator.copyCGImage(at: CMTime(value: 33, timescale: 10), actualTime: &actual)
        #expect(actual.seconds == 2)
        #expect(Self.frameNumber(before) == 50)
        #expect((image.width, image.height, image.bitsPerComponent, image.bitsPerPixel, image.bytesPerRow) == (320, 240, 8, 32, 1280))
        #expect(image.alphaInfo == .noneSkipFirst)
        #expect(image.bitmapInfo.contains(.byteOrder32Little))
        #expect(CFDataGetLength(image.dataProvider?.data) == 1280 * 240)

        generator.requestedTimeToleranceBefore = .zero
        generator.requestedTimeToleranceAfter = .zero
        generator.maximumSize = CGSize(width: 160, height: 160)
        let exact = try generator.copyCGImage(at: CMTime(value: 33, timescale: 10), actualTime: &actual)
        #expect(CMTimeCompare(actual, CMTime(value: 82, timescale: 25)) == 0, "\(actual)")  // the frame showing at 3.3 s, its own time
        #expect(Self.frameNumber(exact) == 82)
        #expect((exact.width, exact.height) == (160, 120))
        // At 2.13 s the frame showing is the one from 2.12 s to 2.16 s: that frame, at its own time.
        let showing = try generator.copyCGImage(at: CMTime(value: 213, timescale: 100), actualTime: &actual)
        #expect(CMTimeCompare(actual, CMTime(value: 53, timescale: 25)) == 0, "\(actual)")
        #expect(Self.frameNumber(showing) == 53)
    }

    /// A phone's portrait video comes out upright with appliesPreferredTrackTransform.
    @Test func appliesPreferredTrackTransformTurnsTheImage() throws {
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: URL(fileURLWithPath: try RotatedVideo.make(90, in: folder))))
        #expect(try generator.copyCGImage(at: .zero, actualTime: nil).width == 160)
        generator.appliesPreferredTrackTransform = true
        let upright = try generator.copyCGImage(at: .zero, actualTime: nil)
        #expect((upright.width, upright.height) == (120, 160))
    }

    /// generateCGImagesAsynchronously: a handler call a time, in order, a time past the end
    /// failed with an error naming the file.
    @Test func generateCGImagesAsynchronouslyCallsBackInOrder() throws {
        let url = try counter()
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: url))
        let times = [CMTime(value: 5, timescale: 1), CMTime(value: 11, timescale: 1), CMTime(value: 1, timescale: 2)]
        let calls = Mutex<[(CMTime, CMTime, AVAssetImageGenerator.Result, String?)]>([])
        let done = TestEvent()
        generator.generateCGImagesAsynchronously(forTimes: times.map { NSValue(time: $0) }) { requested, image, actual, result, error in
            let count = calls.withLock { c in
                c.append((requested, actual, result, error?.localizedDescription))
                return c.count
            }
            #expect((image != nil) == (result == .succeeded))
            if count == times.count { done.signal() }
        }
        #expect(done.wait())
        let got = calls.withLock { $0 }
        #expect(got.map(\.0) == times)
        #expect(got.map(\.2) == [.succeeded, .failed, .succeeded])
        #expect(got[0].1.seconds == 4 && got[2].1.seconds == 0)
        #expect(got[1].3?.contains(url.path) == true && got[1].3?.contains("past the end") == true)
    }

    /// images(for:), the AsyncSequence of Apple's: an element a time, in order, each with its
    /// requested time and its image and frame's time, or its error (a time past the end names
    /// the file; one that is not numeric is refused) while the others go on.
    @Test func imagesForTimesIsAnAsyncSequenceOfResults() async throws {
        let url = try counter()
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: url))
        generator.requestedTimeToleranceBefore = .zero
        generator.requestedTimeToleranceAfter = .zero
        let times = [CMTime(value: 1, timescale: 1), CMTime(value: 11, timescale: 1), .indefinite, CMTime(value: 33, timescale: 10)]
        var elements: [AVAssetImageGenerator.Images.Element] = []
        for await element in generator.images(for: times) { elements.append(element) }
        #expect(elements.count == 4)
        #expect(elements.map(\.requestedTime) == times)
        #expect(try Self.frameNumber(elements[0].image) == 25 && elements[0].actualTime.seconds == 1)
        #expect(try Self.frameNumber(elements[3].image) == 82 && elements[3].actualTime.seconds <= 3.3)
        for failed in [elements[1], elements[2]] {
            guard case .failure = failed else { Issue.record("\(failed.requestedTime) did not fail"); continue }
            #expect(throws: (any Error).self) { try failed.image }
        }
        #expect((try? elements[1].actualTime) == nil)
        do {
            _ = try elements[1].image
        } catch {
            #expect(error.localizedDescription.contains(url.path) && error.localizedDescription.contains("past the end"), "\(error)")
        }
    }

    /// generateCGImageAsynchronously(for:completionHandler:): the image and its frame's time,
    /// or the error, to the handler.
    @Test func generateCGImageAsynchronouslyCallsBack() throws {
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: try counter()))
        let got = Mutex<[(Int?, CMTime, Bool)]>([])
        let done = TestEvent()
        for time in [CMTime(value: 6, timescale: 1), CMTime(value: 20, timescale: 1)] {
            generator.generateCGImageAsynchronously(for: time) { image, actual, error in
                if got.withLock({ $0.append((image.map(Self.frameNumber), actual, error != nil)); return $0.count }) == 2 { done.signal() }
            }
        }
        #expect(done.wait())
        let results = got.withLock { $0 }
        #expect(results[0].0 == 150 && results[0].1.seconds == 6 && !results[0].2)
        #expect(results[1].0 == nil && results[1].2)
    }

    /// The async image(at:) as copyCGImage; a time that is not numeric refused.
    @Test func imageAtTimeAsync() async throws {
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: try counter()))
        generator.requestedTimeToleranceAfter = .zero  // the keyframe at or before
        let (image, actual) = try await generator.image(at: CMTime(value: 17, timescale: 2))
        #expect(actual.seconds == 8)
        #expect(Self.frameNumber(image) == 200)
        await #expect(throws: (any Error).self) { try await generator.image(at: .indefinite) }
    }

    /// cancelAllCGImageGeneration: the times asked for before it come back `.cancelled`.
    @Test func cancelAllCGImageGenerationCancelsWhatWasAsked() throws {
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: try counter()))
        let results = Mutex<[AVAssetImageGenerator.Result]>([])
        let done = TestEvent()
        let times = (0..<6).map { NSValue(time: CMTime(value: CMTimeValue($0), timescale: 1)) }
        generator.generateCGImagesAsynchronously(forTimes: times) { _, _, _, result, _ in
            if results.withLock({ $0.append(result); return $0.count }) == times.count { done.signal() }
        }
        generator.cancelAllCGImageGeneration()
        #expect(done.wait())
        let got = results.withLock { $0 }
        // The first may have been made before the cancel reached it; none after a cancelled one.
        #expect(got.filter { $0 == .cancelled }.count >= 5, "\(got)")
        #expect(!got.contains(.failed))
    }

    /// The CGImage is the file's colours (issue 71), read as pixel-reading code reads it (its
    /// data provider's bytes, rows `bytesPerRow` apart): BT.709 limited range at a size that is
    /// not a multiple of 16, at least 35 dB from ffmpeg's zscale of the frame with the file's
    /// matrix, range and chroma siting, whole and fitted into maximumSize.
    @Test func imagesAreTheFilesColours() throws {
        let file = try ColorFidelity.video("testsrc2", width: 318, height: 178, matrix: "bt709", range: "tv", in: folder)
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: URL(fileURLWithPath: file)))
        for maximum in [CGSize.zero, CGSize(width: 160, height: 160)] {
            generator.maximumSize = maximum
            var actual = CMTime.invalid
            let image = try generator.copyCGImage(at: CMTime(value: 2, timescale: 1), actualTime: &actual)
            let data = CGDataProviderCopyData(image.dataProvider)
            let bytes = [UInt8](UnsafeBufferPointer(start: CFDataGetBytePtr(data), count: CFDataGetLength(data)))
            let reference = try ColorFidelity.anchor(file, at: actual.seconds, matrix: "bt709", range: "tv",
                                                     size: maximum == .zero ? nil : (image.width, image.height), in: folder)
            let db = ColorFidelity.psnr(bgra: bytes, bytesPerRow: image.bytesPerRow, rgb: reference, width: image.width) ?? 0
            print("AVAssetImageGenerator colours, maximumSize \(maximum): \(db) dB")
            #expect(db >= 35, "maximumSize \(maximum): \(db) dB")
        }
    }
}
