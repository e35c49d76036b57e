import Dispatch
import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// An asset's range exported on its own: by the container library when it can copy it
/// (``exportByIndex(_:)``), else by one graph that reads the range with a seek.
extension AssetExportSession {
    /// Exports the asset's range (all of it by default): by index when it can, else by a graph.
    func exportRange() async throws(GraphError) {
        let (segments, seek) = try begin()
        do throws(GraphError) {
            if try await exportByIndex(segments) { return }
            var gain: Double?
            if let normalization = locked.withLock({ $0.settings.loudnessNormalization }) {
                gain = try await normalizationGain(normalization, of: segments[0], seek: seek)
            }
            let run = try GraphRun(try graph(for: segments, seek: seek, normalizationGain: gain))
            // The cover, and the chapters that show in the range, moved to its timeline.
            try (locked.withLock { $0.settings.metadata } ?? asset.metadata).addExtraTags(to: run, showing: segments[0].range, of: asset.duration)
            let cancelled = locked.withLock { l in
                l.run = run
                return l.cancelRequested
            }
            guard !cancelled else { throw Self.cancelled }
            try await start(run, at: seek)
            locked.withLock { if $0.status == .waiting { $0.status = .exporting } }
            // The task awaiting the export cancels it while it runs too, not only while it starts.
            let report = await withTaskCancellationHandler { await run.report() } onCancel: { cancelExport() }
            try end(as: report)
        } catch {
            throw ending(with: error)
        }
    }

    /// Checks the settings and marks the export started: the segments to export, and the seek
    /// that plays them (nil: the whole file, from its start).
    func begin() throws(GraphError) -> (segments: [Segment], seek: GraphRun.Seek?) {
        try starting { l throws(GraphError) in
            try l.settings.metadata?.checkWritable()
            let segments = [Segment(path: asset.path, range: try clamped(l.settings.timeRange, of: asset.duration, named: "\"\(asset.path)\""))]
            try checkOutput(l)
            l.status = .waiting
            let range = segments[0].range
            l.length = range.duration.seconds
            let whole = range.start == .zero && range.end >= asset.duration
            let start: GraphRun.Seek = preset == .passthrough ? .keyframe(atOrBefore: range.start) : .exact(range.start)
            return (segments, whole ? nil : start.ending(at: range.end))
        }
    }

    /// The graph that exports `segments`: one segment, a file's range, read by a seek. (A
    /// composition, several files' ranges in sequence, is read by ``AssetReader`` instead:
    /// ``exportEncoding(_:)``; the graph form of a join is `source.concat`.)
    /// `normalizationGain`: the sound goes through `effect.normalize` at this gain
    /// (``normalizationGain(_:of:seek:)`` measured it).
    func graph(for segments: [Segment], seek: GraphRun.Seek?, normalizationGain: Double? = nil) throws(GraphError) -> Graph {
        guard segments.count == 1, let segment = segments.first else {
            throw GraphError(.usage, at: "AssetExportSession", "an asset's export is of one range of it; export several files' ranges in sequence as a Composition")
        }
        var (path, type, faststart, tags, limit) = locked.withLock { l in
            (l.settings.outputPath ?? "", l.settings.outputFileType ?? .mp4, l.settings.optimizeForNetworkUse, l.settings.metadata ?? asset.metadata, l.settings.fileLengthLimit)
        }
        // GStreamer's muxer starts its file while the graph prerolls, and starts it again after
        // the seek; written in place, the second one lands after the first's header (a file
        // whose index the first's media box swallows). Index first, the muxer writes nothing to
        // the file before the end: a range is always written so.
        if seek != nil { faststart = true }
        var b = GraphBuilder(name: "AssetExportSession", description: "exports \(segment.path) to \(path)")
        let file = addFile(to: &b, path: path, type: type, faststart: faststart, tags: tags, limit: limit)
        let source = b.add("source", FileSourceNode.self) { $0[\.path] = segment.path }
        let video = type == .m4a ? nil : asset.tracks(withMediaType: .video).first
        let audio = asset.tracks(withMediaType: .audio).first
        if preset == .passthrough {
            let demux = b.add("demux", DemuxNode.self)
            b.connect(source.output(), to: demux.input())
            for track in [video, audio].compactMap({ $0 }) where track.isCopyable {
                b.connect(demux.output(track.mediaType.rawValue), to: file.input(track.mediaType.rawValue), capacity: AssetWriter.intoTheMuxer)
            }
        } else {
            let normalization = normalizationGain.flatMap { gain in locked.withLock { $0.settings.loudnessNormalization }.map { ($0, gain) } }
            let toneMaps = video?.stream.color?.hdr != nil && videoSettings?.codec.encodesHDRAsSDR == true
            // A 10-bit source into HEVC stays 10-bit (Main 10), as a Mac's HEVC presets keep it;
            // HDR whose depth the file does not state is 10-bit or more (BT.2100 has no 8-bit).
            var videoSettings = videoSettings
            let color = video?.stream.color
            let tenBit = !toneMaps && videoSettings?.keepsTenBits([color]) == true
            if tenBit { videoSettings?.tenBit = true }
            let decode = b.add("decode", DecodeNode.self) { p in
                p[\.pixelFormat] = tenBit ? .i420_10le : .i420  // what the encoder takes: no conversion before it
                p[\.sampleFormat] = normalization == nil ? .auto : .value(.f32le)  // what effect.normalize takes
                p[\.toneMap] = toneMaps
            }
            b.connect(source.output(), to: decode.input())
            // The encoders the settings name (H.264 or HEVC, AAC), from the one place that maps
            // settings to nodes, as the writer's.
            for (type, settings) in [(MediaType.video, video.flatMap { _ in videoSettings } as (any OutputSettings)?),
                                     (.audio, audio.flatMap { _ in audioSettings })] {
                guard let settings, let encoder = try WriterEncoders.add(for: settings, id: "\(type.rawValue)-encoder", at: "export", to: &b) else { continue }
                if type == .audio, let (normalization, gain) = normalization {
                    // The gain the first run measured, applied as the sound streams (ExportNormalization.swift).
                    let normalize = b.add("normalize", NormalizeNode.self) { p in
                        p[\.target] = normalization.targetLUFS
                        p[\.truePeak] = normalization.truePeakDBTP
                        p[\.gain] = gain
                    }
                    b.connect(decode.output(type.rawValue), to: normalize.input())
                    b.connect(normalize.output(), to: encoder.input)
                } else {
                    b.connect(decode.output(type.rawValue), to: encoder.input)
                }
                b.connect(encoder.output, to: file.input(type.rawValue), capacity: AssetWriter.intoTheMuxer)
            }
        }
        return try b.build(registry: .builtIn)
    }

    /// Starts the run, at `seek` when given: a seek blocks until the run plays from there, so
    /// it is made on a thread of its own; the task's cancellation cancels the run, which wakes it.
    func start(_ run: GraphRun, at seek: GraphRun.Seek?) async throws(GraphError) {
        guard let seek else { return try run.start() }
        let failure: GraphError? = await withTaskCancellationHandler {
            await withHandOff { (done: HandOff<GraphError?, Never>) in
                DispatchQueue.global().async {
                    do throws(GraphError) {
                        try run.start(at: seek)
                        done.resume(returning: nil)
                    } catch {
                        done.resume(returning: error)
                    }
                }
            }
        } onCancel: {
            run.cancel()
        }
        if let failure { throw failure }
    }
}
