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

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// 3 s of `source` (an ffmpeg lavfi source, 25 fps, with `options`) as H.264 4:2:0 in
    /// `matrix` (bt601 or bt709) and `range` (tv or pc), tagged so, a keyframe every second.
    func video(_ source: String, options: String = "", width: Int, height: Int, matrix: String, range: String) throws -> String {
        let p = path("\(source)-\(width)x\(height)-\(matrix)-\(range).mp4")
        let tag = matrix == "bt709" ? ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709"]
            : ["-colorspace", "bt470bg", "-color_primaries", "bt470bg", "-color_trc", "smpte170m"]
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "\(source)=s=\(width)x\(height):r=25:d=3\(options)",
                                         "-vf", "scale=out_color_matrix=\(matrix):out_range=\(range),format=yuv420p",
                                         "-c:v", "libx264", "-crf", "10", "-g", "25", "-sc_threshold", "0"] + tag + ["-color_range", range, p])
        return p
    }

    /// ffmpeg's picture of `file` at `seconds` as packed RGB: zscale with the file's matrix and
    /// range stated (not guessed), chroma interpolated from where MPEG-2 sites it, then scaled
    /// by area to `size` when given.
    func anchor(_ file: String, at seconds: Double, matrix: String, range: String, size: (Int, Int)?) throws -> [UInt8] {
        let out = path("anchor-\(UUID().uuidString).rgb")
        var vf = "zscale=matrixin=\(matrix == "bt709" ? "709" : "470bg"):rangein=\(range == "tv" ? "limited" : "full"):chromal=left:filter=bilinear,format=gbrp"
        if let (w, h) = size { vf += ",scale=\(w):\(h):flags=area+accurate_rnd" }
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-ss", "\(seconds)", "-i", file, "-frames:v", "1", "-vf", vf,
                                         "-pix_fmt", "rgb24", "-f", "rawvideo", out])
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// PSNR (dB) of a packed BGRA picture against packed RGB of the same size; nil when the sizes differ.
    static func psnr(bgra: [UInt8], rgb: [UInt8]) -> Double? {
        guard bgra.count / 4 == rgb.count / 3, !rgb.isEmpty else { return nil }
        var sum = 0.0
        for i in 0..<rgb.count / 3 {
            for c in 0..<3 {
                let d = Double(bgra[i * 4 + 2 - c]) - Double(rgb[i * 3 + c])
                sum += d * d
            }
        }
        let mse = sum / Double(rgb.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }

    /// BT.601 and BT.709, limited and full range, a size that is a multiple of 16 and one that
    /// is not, at full size and fitted into `maximumSize`: every picture at least 35 dB from
    /// ffmpeg's.
    @Test(arguments: [(320, 240), (318, 178)])
    func picturesAreTheFilesColours(_ size: (Int, Int)) throws {
        var measured: [String] = []
        for matrix in ["bt601", "bt709"] {
            for range in ["tv", "pc"] {
                let file = try video("testsrc2", width: size.0, height: size.1, matrix: matrix, range: range)
                let generator = AssetImageGenerator(asset: try Asset(path: file))
                for maximum in [(0, 0), (160, 160)] {
                    generator.maximumSize = maximum
                    let (image, actual) = try generator.image(at: MediaTime(seconds: 2))
                    #expect(actual == MediaTime(seconds: 2))  // the keyframe there (no scene-cut keyframes)
                    let fitted = ThumbnailPicker.fitted(width: size.0, height: size.1, within: maximum)
                    let reference = try anchor(file, at: actual.seconds, matrix: matrix, range: range, size: maximum == (0, 0) ? nil : fitted)
                    let db = Self.psnr(bgra: image.bytes, rgb: reference) ?? 0
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
        let file = try video("gradients", options: ":seed=\(seed)", width: 320, height: 240, matrix: "bt709", range: "tv")
        let (image, actual) = try AssetImageGenerator(asset: try Asset(path: file)).image(at: MediaTime(seconds: 2))
        let db = Self.psnr(bgra: image.bytes, rgb: try anchor(file, at: actual.seconds, matrix: "bt709", range: "tv", size: nil)) ?? 0
        print("AssetImageGenerator gradients seed \(seed) at \(actual.seconds) s: \(db) dB")
        #expect(db >= 40, "\(db) dB")
    }
}
