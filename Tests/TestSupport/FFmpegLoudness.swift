import Foundation
import GraphKitTesting

/// What ffmpeg's `ebur128` filter says of a file (the reference the loudness tests hold GraphKit's
/// meter and normalization to): integrated loudness (LUFS), true peak (dBTP) and loudness range
/// (LU), read from the metadata of its last 100 ms.
public enum FFmpegLoudness {
    public struct Figures: Sendable {
        public var integrated: Double
        public var truePeak: Double
        public var range: Double
    }

    public static func measure(_ file: String) throws -> Figures {
        let out = try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-af",
                                                   "ebur128=peak=true:metadata=1,ametadata=mode=print:file=-", "-f", "null", "-"])
        func last(_ key: String) throws -> Double {
            guard let v = out.split(separator: "\n").last(where: { $0.hasPrefix("lavfi.r128.\(key)=") }).flatMap({ Double($0.split(separator: "=")[1]) }) else {
                throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "ffmpeg's ebur128 gave no \(key) for \(file)"])
            }
            return v
        }
        return Figures(integrated: try last("I"), truePeak: 20 * log10(try last("true_peak")), range: try last("LRA"))
    }
}
