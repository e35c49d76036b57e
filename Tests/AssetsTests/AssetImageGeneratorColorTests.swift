@testable import Assets
import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport
import Testing

/// AssetImageGenerator's pictures are the file's colours (issue 71): against ffmpeg's zscale of
/// the same frame with the file's matrix, range and chroma siting (MPEG-2's, x264's default),
/// chroma interpolated, on pictures with colour detail. GStreamer's fast path from 4:2:0 to BGRA
/// repeats each chroma sample over 2×2 pixels and measured 24.0-24.7 dB here.
@Suite(.media, .timeLimit(.minutes(10))) struct AssetImageGeneratorColorTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// BT.601 and BT.709, limited and full range, a size that is a multiple of 16 and one that
    /// is not, at full size and fitted into `maximumSize`: every picture at least 35 dB from
    /// ffmpeg's.
    @Test(arguments: [(320, 240), (318, 178)])
    func picturesAreTheFilesColours(_ size: (Int, Int)) throws {
        var measured: [String] = []
        for matrix in ["bt601", "bt709"] {
            for range in ["tv", "pc"] {
                let file = try ColorFidelity.video("testsrc2", width: size.0, height: size.1, matrix: matrix, range: range, in: folder)
                let generator = AssetImageGenerator(asset: try Asset(path: file))
                for maximum in [(0, 0), (160, 160)] {
                    generator.maximumSize = maximum
                    let (image, actual) = try generator.image(at: MediaTime(seconds: 2))
                    #expect(actual == MediaTime(seconds: 2))  // the keyframe there (no scene-cut keyframes)
                    let fitted = ThumbnailPicker.fitted(width: size.0, height: size.1, within: maximum)
                    let reference = try ColorFidelity.anchor(file, at: actual.seconds, matrix: matrix, range: range,
                                                             size: maximum == (0, 0) ? nil : fitted, in: folder)
                    let db = ColorFidelity.psnr(bgra: image.bytes, rgb: reference, width: fitted.width) ?? 0
                    measured.append("\(matrix) \(range) max \(maximum): \(String(format: "%.1f", db)) dB")
                    #expect(db >= 35, "\(size) \(matrix) \(range) maximumSize \(maximum): \(db) dB")
                }
            }
        }
        print("AssetImageGenerator colours \(size):", measured.joined(separator: ", "))
    }

    /// Smooth gradients (ffmpeg's `gradients`, its colours fixed by the seed) in BT.709 keep
    /// their colours too: no banding or shift from rounding twice.
    @Test(arguments: [1, 2, 3]) func gradientsKeepTheirColours(_ seed: Int) throws {
        let file = try ColorFidelity.video("gradients", options: ":seed=\(seed)", width: 320, height: 240, matrix: "bt709", range: "tv", in: folder)
        let (image, actual) = try AssetImageGenerator(asset: try Asset(path: file)).image(at: MediaTime(seconds: 2))
        let reference = try ColorFidelity.anchor(file, at: actual.seconds, matrix: "bt709", range: "tv", size: nil, in: folder)
        let db = ColorFidelity.psnr(bgra: image.bytes, rgb: reference, width: 320) ?? 0
        print("AssetImageGenerator gradients seed \(seed) at \(actual.seconds) s: \(db) dB")
        #expect(db >= 38, "\(db) dB")  // 42-45 dB measured, as x264 gives the file
    }
}
