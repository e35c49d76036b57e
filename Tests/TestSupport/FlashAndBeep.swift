import Foundation
import GraphKitTesting

/// A/V sync media: a black picture that flashes white for one frame (25 fps) at every whole
/// second, and silence with a 1 kHz beep for the same 40 ms: H.264 and AAC in MP4, made by
/// ffmpeg. ``offsets(_:)`` reads back, through ffmpeg's own players' timeline, how far each beep
/// starts from its flash: what a viewer sees of the sync of a file or a received stream.
public enum FlashAndBeep {
    /// `seconds` of it at `folder/flash-beep.mp4`.
    public static func make(in folder: URL, seconds: Int = 4) throws -> String {
        let path = folder.appendingPathComponent("flash-beep.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error",
            "-f", "lavfi", "-i", "color=c=black:s=160x120:r=25:d=\(seconds),geq=lum='if(lt(mod(T\\,1)\\,0.04)\\,235\\,16)':cb=128:cr=128",
            "-f", "lavfi", "-i", "aevalsrc='if(lt(mod(t\\,1)\\,0.04)\\,0.5*sin(2*PI*1000*t)\\,0)':s=48000:d=\(seconds)",
            "-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", "-y", path])
        return path
    }

    /// For each flash, the seconds from it to the beep that starts nearest it (ffmpeg's
    /// blackdetect and silencedetect, on one timeline). A flash or beep is a start of picture or
    /// sound that ends again within 0.2 s: the file's own end is neither.
    public static func offsets(_ path: String) throws -> [Double] {
        let log = try TestMedia.runTool("sh", ["-c", "ffmpeg -v info -nostats -i '\(path)' -af silencedetect=n=-40dB:d=0.02 -vf blackdetect=d=0.01:pix_th=0.5 -f null - 2>&1"])
        func values(_ key: String) -> [Double] {
            log.split(separator: "\n").compactMap { line -> Double? in
                guard let r = line.range(of: key) else { return nil }
                return Double(line[r.upperBound...].prefix { $0 == "." || $0.isNumber })
            }
        }
        func events(starts: String, ends: String) -> [Double] {
            let again = values(starts)
            return values(ends).filter { end in again.contains { $0 > end && $0 - end < 0.2 } }
        }
        let flashes = events(starts: "black_start:", ends: "black_end:"), beeps = events(starts: "silence_start: ", ends: "silence_end: ")
        return flashes.compactMap { flash in beeps.min { abs($0 - flash) < abs($1 - flash) }.map { $0 - flash } }.filter { abs($0) < 0.5 }
    }

    /// How a stream kept the sync of `source` in `received`: each file's ``offsets(_:)`` and the
    /// largest change of a beep from its flash between the two (infinite when either has none).
    public static func change(from source: String, to received: String) throws -> (sent: [Double], received: [Double], worst: Double) {
        let sent = try offsets(source), got = try offsets(received)
        return (sent, got, zip(sent, got).map { abs($1 - $0) }.max() ?? .infinity)
    }
}
