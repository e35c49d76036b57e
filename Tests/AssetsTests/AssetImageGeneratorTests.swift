@testable import Assets
import Foundation
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// AssetImageGenerator on a video whose every frame says its number in its colour.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetImageGeneratorTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// 10 s of 320x240 H.264 at 25 fps, a keyframe every 2 s (no scene-cut keyframes), frame N
    /// grey with luma 20 + 14 × (N mod 16) on its left half and 20 + 14 × (N / 16) on its right:
    /// ``frameNumber(_:)`` reads N back from a picture.
    func counter() throws -> String {
        let p = path("counter.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i",
                                         "color=c=black:s=320x240:r=25:d=10,format=yuv420p,"
                                            + "geq=lum='if(lt(X\\,W/2)\\,mod(N\\,16)*14+20\\,floor(N/16)*14+20)':cb=128:cr=128",
                                         "-c:v", "libx264", "-crf", "12", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", p])
        return p
    }

    /// The keyframes' times as ffprobe lists them.
    func keyframeTimes(_ file: String) throws -> [Double] {
        try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "packet=pts_time,flags", "-of", "csv=p=0", file])
            .split(whereSeparator: \.isNewline).compactMap { line -> Double? in
                let fields = line.split(separator: ",")
                return fields.count == 2 && fields[1].hasPrefix("K") ? Double(fields[0]) : nil
            }.sorted()
    }

    /// The mean of the blue bytes of a BGRA picture over a rectangle given in fractions of it.
    static func mean(_ image: SampleBuffer, x: ClosedRange<Double>, y: ClosedRange<Double>) -> Double {
        guard case .rawVideo(let v)? = image.format else { return -1 }
        let bytes = image.bytes
        var sum = 0, n = 0
        for row in Int(y.lowerBound * Double(v.height))..<Int(y.upperBound * Double(v.height)) {
            for column in Int(x.lowerBound * Double(v.width))..<Int(x.upperBound * Double(v.width)) {
                sum += Int(bytes[(row * v.width + column) * 4])
                n += 1
            }
        }
        return Double(sum) / Double(max(n, 1))
    }

    /// The frame number a picture of ``counter()`` shows: each half's grey level back to its
    /// luma (video range: RGB = (Y − 16) × 255 / 219), to the nearest of the 16 steps.
    static func frameNumber(_ image: SampleBuffer) -> Int {
        func step(_ grey: Double) -> Int { Int(((grey * 219 / 255 + 16 - 20) / 14).rounded()) }
        return step(mean(image, x: 0.1...0.4, y: 0.25...0.75)) + 16 * step(mean(image, x: 0.6...0.9, y: 0.25...0.75))
    }

    static func size(_ image: SampleBuffer) -> (Int, Int) {
        guard case .rawVideo(let v)? = image.format else { return (0, 0) }
        return (v.width, v.height)
    }

    /// The default tolerances (infinite both ways) give the keyframe nearest each time, before
    /// or after it, as ffprobe lists the keyframes (the one before on a tie, at 3 s), with that
    /// frame's pixels; a picture near the end comes by seeking: a handful of frames reach the
    /// generator, not the 240 before it.
    @Test func theDefaultGivesTheNearestKeyframe() throws {
        let file = try counter()
        let keyframes = try keyframeTimes(file)
        #expect(keyframes.count == 5)
        let generator = AssetImageGenerator(asset: try Asset(path: file))
        for t in [0.5, 3.0, 3.3, 4.0, 7.9, 9.9] {
            let (image, actual) = try generator.image(at: MediaTime(seconds: t))
            let expected = keyframes.min { (abs($0 - t), $0) < (abs($1 - t), $1) } ?? -1
            #expect(abs(actual.seconds - expected) < 0.001, "at \(t) s: \(actual.seconds) s, not the keyframe at \(expected) s")
            #expect(Self.frameNumber(image) == Int((expected * 25).rounded()), "at \(t) s: frame \(Self.frameNumber(image))")
            #expect(Self.size(image) == (320, 240))
            #expect(image.presentationTime == actual)
            #expect(image.byteCount == 320 * 240 * 4)
            if t == 9.9 {
                // Counted, not timed: what reaches the sink after the seek is the picture and what
                // the pipeline's queues hold before the run is stopped (the sink takes 2), under
                // any load far fewer than the half GOP this allows, and the 250 of a decode from 0.
                #expect(generator.lastFramesDelivered < 25, "\(generator.lastFramesDelivered) frames reached the generator for one picture")
            }
        }
    }

    /// `.zero` tolerance gives the frame showing at exactly each time, decoded from the keyframe
    /// before it: its own pixels (frame ⌊t × 25⌋) and its own presentation time as `actualTime`
    /// (AVFoundation's "the time at which the image was actually generated"): at 2.13 s the frame
    /// that starts at 2.12 s and shows until 2.16 s, stamped 2.12 s, not the time asked for.
    @Test func zeroToleranceGivesTheExactFrame() throws {
        let generator = AssetImageGenerator(asset: try Asset(path: try counter()))
        generator.requestedTimeToleranceBefore = .zero
        generator.requestedTimeToleranceAfter = .zero
        for t in [0.0, 2.13, 3.3, 5.02, 7.97, 9.99] {
            let (image, actual) = try generator.image(at: MediaTime(seconds: t))
            let frame = Int((t * 25 + 1e-6).rounded(.down))
            #expect(actual == MediaTime(value: Int64(frame), timescale: 25), "at \(t) s: stamped \(actual.seconds) s, not frame \(frame)'s \(Double(frame) / 25) s")
            #expect(image.presentationTime == actual)
            #expect(Self.frameNumber(image) == frame, "at \(t) s: frame \(Self.frameNumber(image)), not \(frame)")
            #expect(generator.lastFramesDelivered < 25, "\(generator.lastFramesDelivered) frames reached the generator")  // as above
        }
        // A tolerance that reaches back past the keyframe takes the keyframe.
        generator.requestedTimeToleranceBefore = MediaTime(seconds: 2)
        #expect(try generator.image(at: MediaTime(seconds: 5.5)).actualTime.seconds == 4)
        // One that does not takes the first frame after the keyframe within it: 4.52 s, frame 113.
        generator.requestedTimeToleranceBefore = MediaTime(seconds: 1)
        let (within, time) = try generator.image(at: MediaTime(seconds: 5.5))
        #expect(abs(time.seconds - 4.52) < 0.001)
        #expect(Self.frameNumber(within) == 113)
    }

    /// The tolerances bound the picture to [t − before, t + after], as AVFoundation's: the
    /// keyframe nearest the time within them, after the time when only that one is (or it is
    /// nearer); with no keyframe within them, the first frame within them after the keyframe
    /// before; with none after, never later than the time. Keyframes at 0, 2, 4, 6, 8 s.
    @Test func theToleranceAfterLetsAKeyframeAfterTheTimeBeTheOne() throws {
        let generator = AssetImageGenerator(asset: try Asset(path: try counter()))
        let forever = MediaTime.positiveInfinity
        for (before, after, t, frame) in [(0.5, 1.0, 3.3, 100),       // 2 s is too early, 4 s within: the keyframe after
                                          (forever.seconds, 0, 3.3, 50), // nothing after: the keyframe before
                                          (0, forever.seconds, 3.3, 100), // nothing before: the keyframe after
                                          (0.5, 0.5, 3.3, 70),       // neither keyframe: the first frame from 2.8 s
                                          (0, 0.5, 3.3, 82),         // neither, none before: the frame showing at 3.3 s
                                          (1.5, 1.5, 3.3, 100)] {    // both within: the nearer, after
            generator.requestedTimeToleranceBefore = before.isInfinite ? forever : MediaTime(seconds: before)
            generator.requestedTimeToleranceAfter = after.isInfinite ? forever : MediaTime(seconds: after)
            let (image, actual) = try generator.image(at: MediaTime(seconds: t))
            #expect(Self.frameNumber(image) == frame, "before \(before), after \(after): frame \(Self.frameNumber(image)) at \(actual.seconds) s")
            #expect(abs(actual.seconds - Double(frame) / 25) < 0.001)
            // Within the tolerances (the frame showing at the time may have started a frame before it).
            #expect(actual.seconds >= t - before - 0.04 && actual.seconds <= t + after, "\(actual.seconds) s")
            // By seeking: a GOP decoded at most (two or three seeks), not the 80 frames before the time.
            #expect(generator.lastFramesDelivered < 50, "\(generator.lastFramesDelivered) frames reached the generator")
        }
    }

    /// maximumSize scales down to fit, the aspect kept; 0 leaves a dimension free; nothing is
    /// scaled up; the picture is still the frame (a uniform area keeps its grey).
    @Test func maximumSizeFitsWithTheAspectKept() throws {
        let generator = AssetImageGenerator(asset: try Asset(path: try counter()))
        for (maximum, expected) in [((100, 100), (100, 75)), ((0, 60), (80, 60)), ((1000, 1000), (320, 240)), ((0, 0), (320, 240)),
                                    ((161, 0), (161, 121))] {
            generator.maximumSize = (width: maximum.0, height: maximum.1)
            let (image, _) = try generator.image(at: MediaTime(seconds: 4.5))
            #expect(Self.size(image) == expected, "maximumSize \(maximum)")
            #expect(image.byteCount == expected.0 * expected.1 * 4)
            #expect(Self.frameNumber(image) == 100, "maximumSize \(maximum): frame \(Self.frameNumber(image))")
        }
    }

    /// A phone's portrait video (stored 160x120, shown turned a quarter): upright with
    /// appliesPreferredTrackTransform, as ffmpeg shows it (mean difference under 8 of 255,
    /// against over three times that for the picture turned the other way); as stored without.
    @Test func appliesPreferredTrackTransformTurnsThePictureUpright() throws {
        let file = try RotatedVideo.make(90, in: folder)
        let generator = AssetImageGenerator(asset: try Asset(path: file))
        let (stored, _) = try generator.image(at: .zero)
        #expect(Self.size(stored) == (160, 120))
        generator.appliesPreferredTrackTransform = true
        let (upright, _) = try generator.image(at: .zero)
        #expect(Self.size(upright) == (120, 160))
        let raw = path("upright.bgra")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", file, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "bgra", raw])
        let reference = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        let ours = upright.bytes
        #expect(reference.count == ours.count)
        guard reference.count == ours.count else { return }
        func difference(_ turned: Bool) -> Double {
            var total = 0
            for i in stride(from: 0, to: ours.count, by: 4) {
                let j = turned ? ours.count - 4 - i : i  // the picture turned by half a turn
                for c in 0..<3 { total += abs(Int(ours[i + c]) - Int(reference[j + c])) }
            }
            return Double(total) / Double(ours.count / 4 * 3)
        }
        #expect(difference(false) < 8, "mean difference \(difference(false))")
        #expect(difference(true) > 3 * difference(false), "turned: \(difference(true)), upright: \(difference(false))")
    }

    /// A time past the end, before 0, and a file with no video are refused as usage errors that
    /// name the file and the time.
    @Test func badRequestsAreRefusedByName() throws {
        let file = try counter()
        let generator = AssetImageGenerator(asset: try Asset(path: file))
        for t in [10.0, 12.5, -1.0] {
            #expect { try generator.image(at: MediaTime(seconds: t)) } throws: { error in
                guard let e = error as? GraphError else { return false }
                return e.code == .usage && e.description.contains(file) && e.description.contains(AssetImageGenerator.seconds(MediaTime(seconds: t)))
            }
        }
        let sound = path("sound.m4a")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=duration=2", "-c:a", "aac", sound])
        #expect { try AssetImageGenerator(asset: try Asset(path: sound)).image(at: .zero) } throws: { error in
            guard let e = error as? GraphError else { return false }
            return e.code == .usage && e.description.contains(sound) && e.description.contains("no video track")
        }
    }

    /// images(for:) gives one result a time, in the order asked, a failing time among them
    /// (its error, and the next goes on); the async image(at:) gives what the blocking one does.
    @Test func imagesForTimesGivesEachResultInOrder() async throws {
        let generator = AssetImageGenerator(asset: try Asset(path: try counter()))
        let times = [6.5, 11.0, 0.2, 2.0].map { MediaTime(seconds: $0) }
        var results: [AssetImageGenerator.Element] = []
        for await element in generator.images(for: times) { results.append(element) }
        #expect(results.map(\.requestedTime) == times)
        #expect(results.count == 4)
        guard results.count == 4 else { return }
        #expect(try results[0].actualTime.seconds == 6)
        #expect(throws: GraphError.self) { try results[1].image }
        #expect(try results[2].actualTime.seconds == 0)
        #expect(try Self.frameNumber(results[3].image) == 50)
        // The three pictures there are (11 s is past the end, refused before any pipeline) come
        // from the sequence's one session: one pipeline, sought from time to time.
        #expect(generator.pipelinesMade == 1)
        let (image, actual) = try await generator.image(at: MediaTime(seconds: 8.3))
        #expect(actual.seconds == 8)
        #expect(Self.frameNumber(image) == 200)
    }

    /// A cancel ends the pictures asked for before it: each then throws `cancelled`.
    @Test func cancelAllEndsWhatWasAskedBefore() async throws {
        let generator = AssetImageGenerator(asset: try Asset(path: try counter()))
        let sequence = generator.images(for: [1, 3, 5].map { MediaTime(seconds: $0) })
        generator.cancelAllImageGeneration()
        var codes: [GraphError.Code?] = []
        for await element in sequence {
            if case .failure(let e) = element.result { codes.append(e.code) } else { codes.append(nil) }
        }
        #expect(codes == [.cancelled, .cancelled, .cancelled])
        // Asked for after the cancel: made.
        #expect(try await generator.image(at: MediaTime(seconds: 3)).actualTime.seconds == 2)
    }

    /// A picture written as PNG reads back (ffmpeg's PNG decoder) byte for byte; a picture that is
    /// not BGRA is refused, and a write that fails leaves nothing.
    @Test func aPictureIsWrittenAsPNG() throws {
        let generator = AssetImageGenerator(asset: try Asset(path: try RotatedVideo.make(0, in: folder)))
        generator.maximumSize = (width: 101, height: 0)
        let (image, _) = try generator.image(at: MediaTime(seconds: 0.5))
        let png = path("thumb.png")
        try AssetImageGenerator.writePNG(image, to: png)
        let raw = path("thumb.bgra")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", png, "-f", "rawvideo", "-pix_fmt", "bgra", raw])
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: raw))) == image.bytes)
        #expect(try AssetImageGenerator.pngData(image) == [UInt8](try Data(contentsOf: URL(fileURLWithPath: png))))
        let pcm = SampleBuffer(format: .pcm(.init(sampleRate: 8000, channels: 1, sampleFormat: .s16le)), byteCount: 16)
        #expect { try AssetImageGenerator.pngData(pcm) } throws: { ($0 as? GraphError)?.code == .usage }
        let blocked = path("file")
        FileManager.default.createFile(atPath: blocked, contents: Data())
        #expect { try AssetImageGenerator.writePNG(image, to: blocked + "/thumb.png") } throws: { ($0 as? GraphError)?.code == .outputUnwritable }
    }

    /// A JPEG of a picture: ffmpeg reads it as the picture's size, each channel within 3 levels
    /// of it on average at quality 95; a lower quality is a smaller file; a link at the name is
    /// refused (73) and stays as it was.
    @Test func writesJPEG() throws {
        let generator = AssetImageGenerator(asset: try Asset(path: try counter()))
        generator.maximumSize = (width: 101, height: 0)
        let (image, _) = try generator.image(at: MediaTime(seconds: 0.5))
        let jpeg = path("thumb.jpg")
        try AssetImageGenerator.writeJPEG(image, to: jpeg, quality: 95)
        let raw = path("thumb-jpeg.bgra")
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", jpeg, "-f", "rawvideo", "-pix_fmt", "bgra", raw])
        let decoded = [UInt8](try Data(contentsOf: URL(fileURLWithPath: raw)))
        #expect(decoded.count == image.bytes.count)
        let mean = Double(zip(decoded, image.bytes).enumerated().reduce(0) { $0 + ($1.offset % 4 == 3 ? 0 : abs(Int($1.element.0) - Int($1.element.1))) })
            / Double(decoded.count * 3 / 4)
        #expect(mean < 3, "mean difference \(mean)")
        #expect(try AssetImageGenerator.jpegData(image, quality: 95) == [UInt8](try Data(contentsOf: URL(fileURLWithPath: jpeg))))
        #expect(try AssetImageGenerator.jpegData(image, quality: 30).count < AssetImageGenerator.jpegData(image, quality: 95).count)
        let link = path("link.jpg")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: jpeg)
        #expect { try AssetImageGenerator.writeJPEG(image, to: link) } throws: { ($0 as? GraphError)?.code == .outputUnwritable }
        #expect(try AssetImageGenerator.jpegData(image, quality: 95) == [UInt8](try Data(contentsOf: URL(fileURLWithPath: jpeg))))
    }

    /// Images of an HLG or a PQ file are SDR, as AVAssetImageGenerator gives them (tone-mapped by
    /// effect.toneMap, issue 49): as close to the chart the HDR file was made from as the chart's
    /// own image, by ToneMapNodeTests' measures and floors.
    @Test(arguments: ["hlg", "pq"]) func imagesOfHDRAreSDR(_ transfer: String) throws {
        let sdr = try HDRTestMedia.makeChart(in: folder)
        let hdr = transfer == "hlg" ? try HDRTestMedia.makeHLG(from: sdr, in: folder) : try HDRTestMedia.makePQ(from: sdr, in: folder)
        let ref = try AssetImageGenerator(asset: try Asset(path: sdr)).image(at: .zero).image
        let got = try AssetImageGenerator(asset: try Asset(path: hdr)).image(at: .zero).image
        #expect(got.byteCount == 320 * 240 * 4)
        let c = HDRTestMedia.compareBGRA(got.withUnsafeBytes { Array($0) }, with: ref.withUnsafeBytes { Array($0) }, width: 320, height: 240)
        print("AssetImageGenerator \(transfer): luma PSNR \(c.psnr) dB, ΔE00 mean \(c.meanDeltaE) over \(c.patches) patches")
        #expect(c.patches >= 100)
        #expect(c.meanDeltaE <= 3, "\(transfer): mean ΔE00 \(c.meanDeltaE)")
        #expect(c.psnr >= (transfer == "hlg" ? 33.5 : 32.5), "\(transfer): luma PSNR \(c.psnr) dB")
    }
}
