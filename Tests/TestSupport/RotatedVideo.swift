import Foundation
import GraphKitTesting

/// Rotated video as phones record it, made with ffmpeg, and what ffprobe reads of a file's video
/// geometry: for the tests of decode's orientation handling and of AVFoundation's transforms.
public enum RotatedVideo {
    /// ffmpeg's `-metadata:s:v rotate=N` on a 160x120 H.264 file with sound.
    public static func make(_ degrees: Int, in folder: URL) throws -> String {
        let plain = folder.appendingPathComponent("plain.mp4").path, rotated = folder.appendingPathComponent("rotated\(degrees).mp4").path
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=30:duration=1",
                                             "-f", "lavfi", "-i", "sine=duration=1", "-c:v", "libx264", "-qp", "0", "-c:a", "aac", plain])
        // FFmpeg 6.1+ (Debian 13's 7.1) ignores the `rotate` tag and takes the input option
        // -display_rotation (counter-clockwise) instead; FFmpeg 5.1 (Debian 12) has no such option.
        // Each writes the same display matrix for the same number (ffprobe reads the same
        // rotation from both), so what tests assert holds on both platforms.
        let rotation = Self.ffmpegHasDisplayRotation
            ? ["-display_rotation:v:0", "\(degrees)", "-i", plain, "-c", "copy"]
            : ["-i", plain, "-c", "copy", "-metadata:s:v:0", "rotate=\(degrees)"]
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y"] + rotation + [rotated])
        return rotated
    }

    /// Whether the installed ffmpeg sets a display rotation with `-display_rotation` (FFmpeg 6.1
    /// and later), asked of ffmpeg itself rather than read from its version.
    public static let ffmpegHasDisplayRotation: Bool = {
        (try? TestMedia.runTool("ffmpeg", ["-hide_banner", "-h", "long"]))?.contains("-display_rotation") ?? false
    }()

    /// The stored size and the display rotation ffprobe reads from the first video track.
    public static func geometry(_ path: String) throws -> (width: Int, height: Int, rotation: Int) {
        let csv = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                    "stream=width,height:stream_side_data=rotation", "-of", "csv=p=0", path])
        let fields = csv.split(whereSeparator: { $0 == "," || $0.isNewline }).compactMap { Int($0) }
        return (fields.first ?? 0, fields.dropFirst().first ?? 0, fields.dropFirst(2).first ?? 0)
    }
}
