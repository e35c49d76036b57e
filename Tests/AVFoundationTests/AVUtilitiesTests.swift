import AVFoundation
import GraphKitTesting
import TestSupport
import Testing

/// Small names of Apple's with behaviour to pin: AVMakeRect's fit, the file types and codec
/// GraphKit's writer does not make (refused saying so), the image generator's handler type.
@Suite struct AVUtilitiesTests {
    @Test func makeRectFitsAndCentres() {
        // 16:9 into a 4:3 box: full width, letterboxed.
        #expect(AVMakeRect(aspectRatio: CGSize(width: 1920, height: 1080), insideRect: CGRect(x: 0, y: 0, width: 640, height: 480))
                == CGRect(x: 0, y: 60, width: 640, height: 360))
        // Portrait into landscape, offset box: full height, pillarboxed.
        #expect(AVMakeRect(aspectRatio: CGSize(width: 9, height: 16), insideRect: CGRect(x: 10, y: 20, width: 400, height: 160))
                == CGRect(x: 165, y: 20, width: 90, height: 160))
        // Same shape: the box itself.
        #expect(AVMakeRect(aspectRatio: CGSize(width: 2, height: 1), insideRect: CGRect(x: 5, y: 5, width: 200, height: 100))
                == CGRect(x: 5, y: 5, width: 200, height: 100))
        #expect(AVMakeRect(aspectRatio: .zero, insideRect: CGRect(x: 0, y: 0, width: 100, height: 50)) == CGRect(x: 50, y: 25, width: 0, height: 0))
    }

    @Test func typesTheWriterDoesNotMakeAreRefused() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect([AVFileType.mp3, .amr, .mobile3GPP, .mobile3GPP2, .SCC].map(\.rawValue)
                == ["public.mp3", "org.3gpp.adaptive-multi-rate-audio", "public.3gpp", "public.3gpp2", "com.scenarist.closed-caption"])
        for type in [AVFileType.mp3, .amr, .mobile3GPP, .mobile3GPP2, .SCC] {
            #expect(throws: (any Error).self, "\(type.rawValue)") { try AVAssetWriter(outputURL: folder.appendingPathComponent("out"), fileType: type) }
        }
        #expect(AVVideoCodecType.hevcWithAlpha.rawValue == "muxa")
        let writer = try AVAssetWriter(outputURL: folder.appendingPathComponent("out.mov"), fileType: .mov)
        let input = AVAssetWriterInput(mediaType: .video, outputSettings: [AVVideoCodecKey: AVVideoCodecType.hevcWithAlpha, AVVideoWidthKey: 320, AVVideoHeightKey: 240])
        #expect(!writer.canAdd(input))
        writer.add(input)
        #expect(writer.error?.localizedDescription.contains("AVVideoCodecKey is muxa") == true, "\(String(describing: writer.error))")
    }

    /// A handler of Apple's type is called once a time; for a file that is not there, failed with the error.
    @Test func theGeneratorCallsAHandlerOfApplesType() async throws {
        let generator = AVAssetImageGenerator(asset: AVURLAsset(url: URL(fileURLWithPath: "/nonexistent/graphkit.mp4")))
        let results: [(AVAssetImageGenerator.Result, Bool)] = await withCheckedContinuation { done in
            let seen = Seen()
            let handler: AVAssetImageGeneratorCompletionHandler = { _, image, _, result, error in
                let all = seen.add((result, image == nil && error != nil))
                if all.count == 2 { done.resume(returning: all) }
            }
            generator.generateCGImagesAsynchronously(forTimes: [NSValue(time: .zero), NSValue(time: CMTime(value: 1, timescale: 1))], completionHandler: handler)
        }
        #expect(results.map(\.0) == [.failed, .failed] && results.allSatisfy(\.1))
    }
}

/// The handler's calls, from the generator's queue.
private final class Seen: @unchecked Sendable {  // Unchecked: `items` only under `lock`.
    private let lock = NSLock()
    private var items: [(AVAssetImageGenerator.Result, Bool)] = []
    func add(_ item: (AVAssetImageGenerator.Result, Bool)) -> [(AVAssetImageGenerator.Result, Bool)] {
        lock.withLock { items.append(item); return items }
    }
}
