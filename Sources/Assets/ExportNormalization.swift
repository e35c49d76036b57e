import GraphKitCore
import GraphKitRuntime
import Nodes

/// Loudness normalization of an export's sound (EBU R128): GraphKit's own, as AVFoundation has
/// none. Set as ``AssetExportSession/loudnessNormalization``, the decoded sound goes through
/// `effect.normalize` in its two-pass mode (measured whole, then one gain, with a true-peak
/// limiter only where that gain would pass the ceiling) before the AAC encoder.
public struct LoudnessNormalization: Sendable, Equatable {
    /// The integrated loudness to reach, in LUFS: -70 to -5 (`effect.normalize`'s `target`).
    public var targetLUFS: Double
    /// The true-peak ceiling, in dBTP: -20 to 0 (`effect.normalize`'s `truePeak`).
    public var truePeakDBTP: Double

    /// A value left nil is `effect.normalize`'s default: -16 LUFS (podcasts' loudness), -1 dBTP.
    public init(targetLUFS: Double? = nil, truePeakDBTP: Double? = nil) {
        self.targetLUFS = targetLUFS ?? Self.defaultOf(NormalizeNode.target)
        self.truePeakDBTP = truePeakDBTP ?? Self.defaultOf(NormalizeNode.truePeak)
    }

    /// `effect.normalize`'s default for `parameter`, so that the two never differ.
    static func defaultOf(_ parameter: Parameter<Double>) -> Double {
        if case .number(let value)? = parameter.descriptor.defaultValue { return value }
        return 0
    }

    /// Refused (`usage`) when a value is outside `effect.normalize`'s range for it.
    func check() throws(GraphError) {
        for (value, parameter, name) in [(targetLUFS, NormalizeNode.target, "targetLUFS"), (truePeakDBTP, NormalizeNode.truePeak, "truePeakDBTP")] {
            guard case .number(let range) = parameter.descriptor.kind, !range.contains(value) else { continue }
            throw GraphError(.usage, at: "loudnessNormalization.\(name)",
                             "\(value) is out of range: effect.normalize's \(parameter.name) takes \(range.lowerBound) to \(range.upperBound)")
        }
    }
}

extension AssetExportSession {
    /// Normalization is of an asset's sound, decoded and encoded again by the export's own graph.
    func checkNormalizable(_ normalization: LoudnessNormalization) throws(GraphError) {
        try normalization.check()
        guard preset != .passthrough else {
            throw GraphError(.usage, at: "loudnessNormalization", "loudness normalization changes the sound, and \(ExportPreset.passthrough.rawValue) copies it as stored: pick a preset that encodes")
        }
        guard composition == nil, locked.withLock({ $0.settings.videoComposition == nil && $0.settings.audioMix == nil }) else {
            throw GraphError(.usage, at: "loudnessNormalization", "loudness normalization is of an asset's export, not of a composition's nor with a video composition or an audio mix")
        }
        guard audioSettings != nil, !asset.tracks(withMediaType: .audio).isEmpty else {
            throw GraphError(.usage, at: "loudnessNormalization", "\"\(asset.path)\" has no sound this export encodes: there is nothing to normalize")
        }
        // Two passes hold the whole sound before sending any, and the muxer waits for sound to
        // interleave with the pictures: beside a video from the same file the run stalls (a
        // minute of 720p did). The sound alone, until the measurement is a pass of its own.
        // A range's sound came out short of its end (2.14 of 2.5 s): refused until that is found.
        guard locked.withLock({ $0.settings.timeRange }) == nil else {
            throw GraphError(.usage, at: "loudnessNormalization", "loudness normalization of a time range is not supported yet: export the whole sound")
        }
        guard videoSettings == nil || asset.tracks(withMediaType: .video).isEmpty else {
            throw GraphError(.usage, at: "loudnessNormalization",
                             "loudness normalization measures the whole sound before it writes any, which an export with video cannot wait for: export the sound alone (\(ExportPreset.appleM4A.rawValue)), or normalize it with graphctl normalize")
        }
    }
}
