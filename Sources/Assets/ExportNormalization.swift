import GraphKitCore
import GraphKitRuntime
import Nodes

/// Loudness normalization of an export's sound (EBU R128): GraphKit's own, as AVFoundation has
/// none. Set as ``AssetExportSession/loudnessNormalization``, the export runs twice over its
/// range: first the sound alone, decoded and measured by `effect.normalize` in its two-pass mode
/// (the gain to the target, raised where a true-peak limiter will take some back), then the
/// export itself, its sound through `effect.normalize` at that gain (the limiter only where it
/// passes the ceiling) before the AAC encoder. Nothing is held between decoder and muxer, so the
/// pictures beside the sound go on as they come.
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
    }

    /// The first run of a normalized export: the range's sound alone, measured, and the gain the
    /// second run applies (``NormalizationReport/gainDB``). Cancelled as the export is.
    func normalizationGain(_ normalization: LoudnessNormalization, of segment: Segment, seek: GraphRun.Seek?) async throws(GraphError) -> Double {
        var b = GraphBuilder(name: "AssetExportSession", description: "measures the loudness of \(segment.path)")
        let source = b.add("source", FileSourceNode.self) { $0[\.path] = segment.path }
        let decode = b.add("decode", DecodeNode.self) { $0[\.sampleFormat] = .value(.f32le) }
        let measure = b.add("measure", NormalizeNode.self) { p in
            p[\.target] = normalization.targetLUFS
            p[\.truePeak] = normalization.truePeakDBTP
            p[\.mode] = .twoPass
        }
        b.connect(source.output(), to: decode.input())
        b.connect(decode.output(MediaType.audio.rawValue), to: measure.input())
        let run = try GraphRun(try b.build(registry: .builtIn))
        let cancelled = locked.withLock { l in
            l.run = run
            return l.cancelRequested
        }
        guard !cancelled else { throw Self.cancelled }
        try await start(run, at: seek)
        let report = await withTaskCancellationHandler { await run.report() } onCancel: { cancelExport() }
        try end(measuring: report)
        guard let gain = (run.node("measure") as? NormalizeNode)?.report?.gainDB else {
            throw GraphError(.runFailed, at: "loudnessNormalization", "\"\(segment.path)\" gave no sound to measure in the range exported")
        }
        return gain
    }

    /// The measuring run's end: on, or the export's end (cancelled, failed).
    private func end(measuring report: RunReport) throws(GraphError) {
        switch report.status {
        case .completed: return
        case .stopped, .cancelled: throw Self.cancelled
        case .failed: throw report.error ?? GraphError(.runFailed, at: "loudnessNormalization", "measuring the sound failed and did not say why")
        }
    }
}
