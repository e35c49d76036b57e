import Foundation
import GraphKitTesting

/// How faithful a picture is to a file's own colours (issue 71): H.264 made by ffmpeg in a stated
/// matrix and range, ffmpeg's picture of one of its frames with that matrix, range and chroma
/// siting stated (zscale, not guessed), and PSNR between a BGRA picture and it.
public enum ColorFidelity {
    /// 3 s of `source` (an ffmpeg lavfi source, 25 fps, with `options`) as H.264 4:2:0 in
    /// `matrix` (bt601 or bt709) and `range` (tv or pc), tagged so, a keyframe every second and
    /// no scene-cut ones, in `folder`.
    public static func video(_ source: String, options: String = "", width: Int, height: Int, matrix: String, range: String,
                             in folder: URL) throws -> String {
        let p = folder.appendingPathComponent("\(source)-\(width)x\(height)-\(matrix)-\(range).mp4").path
        let tag = matrix == "bt709" ? ["-colorspace", "bt709", "-color_primaries", "bt709", "-color_trc", "bt709"]
            : ["-colorspace", "bt470bg", "-color_primaries", "bt470bg", "-color_trc", "smpte170m"]
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "\(source)=s=\(width)x\(height):r=25:d=3\(options)",
                                         "-vf", "scale=out_color_matrix=\(matrix):out_range=\(range),format=yuv420p",
                                         "-c:v", "libx264", "-crf", "10", "-g", "25", "-sc_threshold", "0"] + tag + ["-color_range", range, p])
        return p
    }

    /// ffmpeg's picture of `file` at `seconds` as packed RGB: zscale with the file's matrix and
    /// range stated, chroma interpolated from where MPEG-2 (x264's default) sites it, then
    /// scaled by area to `size` when given.
    public static func anchor(_ file: String, at seconds: Double, matrix: String, range: String, size: (Int, Int)?,
                              in folder: URL) throws -> [UInt8] {
        let out = folder.appendingPathComponent("anchor-\(UUID().uuidString).rgb")
        var vf = "zscale=matrixin=\(matrix == "bt709" ? "709" : "470bg"):rangein=\(range == "tv" ? "limited" : "full"):chromal=left:filter=bilinear,format=gbrp"
        if let (w, h) = size { vf += ",scale=\(w):\(h):flags=area+accurate_rnd" }
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-ss", "\(seconds)", "-i", file, "-frames:v", "1", "-vf", vf,
                                         "-pix_fmt", "rgb24", "-f", "rawvideo", out.path])
        defer { try? FileManager.default.removeItem(at: out) }
        return [UInt8](try Data(contentsOf: out))
    }

    /// PSNR (dB) of packed BGRA rows (`bytesPerRow` apart; packed when nil) against packed RGB of
    /// the same size; nil when the sizes differ.
    public static func psnr(bgra: [UInt8], bytesPerRow: Int? = nil, rgb: [UInt8], width: Int) -> Double? {
        let stride = bytesPerRow ?? width * 4
        guard width > 0, rgb.count % (width * 3) == 0, !rgb.isEmpty else { return nil }
        let height = rgb.count / (width * 3)
        guard bgra.count >= (height - 1) * stride + width * 4 else { return nil }
        var sum = 0.0
        for y in 0..<height {
            for x in 0..<width {
                for c in 0..<3 {
                    let d = Double(bgra[y * stride + x * 4 + 2 - c]) - Double(rgb[(y * width + x) * 3 + c])
                    sum += d * d
                }
            }
        }
        let mse = sum / Double(rgb.count)
        return mse == 0 ? .infinity : 10 * log10(255 * 255 / mse)
    }
}
