import Dispatch
import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// A composition, or an asset read as one, decoded and encoded once (``CompositionTranscode``).
extension AssetExportSession {
    /// A composition exported by decoding every piece and encoding once (``CompositionTranscode``):
    /// the reader's samples appended to a graph of encoders and `sink.mp4`, so the file's type,
    /// tags, length limit and index are written as for an asset.
    func exportEncoding(_ composition: Composition, named name: String) async throws(GraphError) {
        let (range, path, type, faststart, tags, limit, drawing, mix) = try starting { l throws(GraphError) in
            try l.settings.metadata?.checkWritable()
            let range = try clamped(l.settings.timeRange, of: composition.duration, named: name)
            try checkOutput(l)
            try l.settings.videoComposition?.check(duration: composition.duration,
                                          trackIDs: Set(composition.tracks.filter { $0.mediaType == .video }.map(\.trackID)))
            try l.settings.audioMix?.check()
            l.status = .waiting
            l.length = range.duration.seconds
            return (range, l.settings.outputPath ?? "", l.settings.outputFileType ?? .mp4, l.settings.optimizeForNetworkUse, l.settings.metadata ?? asset.metadata, l.settings.fileLengthLimit,
                    l.settings.videoComposition, l.settings.audioMix)
        }
        var transcode: CompositionTranscode?
        var started: GraphRun?
        do throws(GraphError) {
            // A video composition's frames are of its render size: the preset fits that.
            var video = videoSettings
            if let drawing, let preset, video != nil {
                let size = drawing.encodedSize
                video = preset.settings(width: size.width, height: size.height, sampleRate: nil, channels: nil).video
            }
            let job = try CompositionTranscode(composition, range: range, video: type == .m4a ? nil : video, audio: audioSettings,
                                               videoComposition: drawing, audioMix: mix)
            transcode = job
            var b = GraphBuilder(name: "AssetExportSession", description: "exports a composition to \(path)")
            // A composition track's preferredTransform, set, is the file's display matrix (a video
            // composition draws the frames upright instead, as Apple's export does).
            let transform = drawing == nil ? composition.encodedTrack(.video)?.preferredTransform : nil
            let file = addFile(to: &b, path: path, type: type, faststart: faststart, tags: tags, limit: limit, videoTransform: transform)
            try job.addInputs(to: &b, file: file)
            let run = try GraphRun(try b.build(registry: .builtIn))
            // The cover, and the chapters that show in the range, moved to its timeline: an
            // asset's range read apart is on the asset's timeline; a composition has none of its
            // own unless they were set (the asset's are not the composition's).
            var extra = tags
            if self.composition != nil, locked.withLock({ $0.settings.metadata == nil }) { extra.chapters = [] }
            try extra.addExtraTags(to: run, showing: range, of: composition.duration)
            let cancelled = locked.withLock { l in
                l.run = run
                l.transcode = job
                return l.cancelRequested
            }
            guard !cancelled else { throw Self.cancelled }
            try run.start()
            started = run
            locked.withLock { if $0.status == .waiting { $0.status = .exporting } }
            try job.start(feeding: run)
            let report = await withTaskCancellationHandler { await run.report() } onCancel: { cancelExport() }
            // The run has ended (a length limit ends it before the reader does): stop reading.
            job.cancel()
            await job.ended()
            if let failure = job.failure { throw failure }
            try end(as: report)
        } catch {
            started?.cancel()  // nothing is left under the output's name
            if let transcode {
                transcode.cancel()
                await transcode.ended()
            }
            throw ending(with: error)
        }
    }

    /// The asset's first video and sound tracks as a composition of one piece each, keeping
    /// their track IDs (a video composition's layers and an audio mix's inputs name them).
    func wholeAsset() throws(GraphError) -> Composition {
        var tracks: [CompositionTrack] = []
        for type in [MediaType.video, .audio] {
            guard let source = asset.tracks(withMediaType: type).first else { continue }
            var track = CompositionTrack(mediaType: type, trackID: source.trackID)
            try track.insertTimeRange(source.timeRange, of: source, in: asset, at: .zero)
            tracks.append(track)
        }
        return Composition(tracks: tracks)
    }

    /// An asset's range to re-encode with the index last, as a composition of one piece (the
    /// tracks encoded, from 0): read by a reader of its own, apart from the writing graph, since
    /// GStreamer's muxer restarts its file after a seek in its own graph (see
    /// ``graph(for:seek:)``), which only an index written first survives. Nil otherwise.
    func rangeReadApart() -> Composition? {
        guard preset != .passthrough else { return nil }
        let (asked, faststart) = locked.withLock { ($0.settings.timeRange, $0.settings.optimizeForNetworkUse) }
        guard !faststart, let asked, asked.start > .zero || asked.end < asset.duration else { return nil }
        var tracks: [CompositionTrack] = []
        for (type, encodes) in [(MediaType.video, videoSettings != nil), (.audio, audioSettings != nil)] where encodes {
            guard let source = asset.tracks(withMediaType: type).first else { continue }
            var track = CompositionTrack(mediaType: type, trackID: tracks.count + 1)
            guard (try? track.insertTimeRange(source.timeRange, of: source, in: asset, at: .zero)) != nil else { return nil }
            tracks.append(track)
        }
        return tracks.isEmpty ? nil : Composition(tracks: tracks)
    }
}
