import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `demux` on the container path (``RunPlan/containerPath``): `source.file → demux → sink.mp4`
/// with an MP4 or MOV input needs no GStreamer pipeline. The file's index is read when the graph
/// is compiled; each connected output's track (the first video track; the audio track `track`
/// names) is copied as `ffmpeg -c copy` copies samples: every sample, its times, and the sound's edit
/// list (an AAC encoder's priming packet and the edit that hides it, which GStreamer's demuxer
/// drops and forgets), with the picture's colour and display matrix. A file or track the writer
/// would not copy exactly (``MP4StoredTrack``: another container, a fragmented file, FLAC, several
/// sample descriptions, an edit list of another shape) runs as a pipeline, as before.
extension DemuxNode: StoredSampleDemuxer {
    package func storedStreams(reading file: FileBytes, name: String) -> [String: StoredStream]? {
        guard let mp4 = try? MP4File(file), mp4.isWholeMovie, let movie = try? mp4.movie() else { return nil }
        var chosen: [(kind: String, track: MP4StoredTrack)] = []
        for kind in ["video", "audio"] where context.connectedOutputs.contains(kind) {
            let tracks = movie.tracks(handler: kind == "video" ? "vide" : "soun")
            let n = kind == "video" ? 0 : context.parameters[Self.track]
            guard tracks.indices.contains(n),
                  let stored = MP4StoredTrack(tracks[n].track, index: tracks[n].index, movie: movie, fileSize: file.count),
                  stored.format.isVideo == (kind == "video") else { return nil }
            chosen.append((kind, stored))
        }
        guard !chosen.isEmpty else { return nil }
        let plan = Self.storedPlan(chosen, file: file, name: name)
        storedDuration.withLock { $0 = plan.duration }
        var streams: [String: StoredStream] = [:]
        for (stream, (_, track)) in zip(plan.streams, chosen) {
            streams[stream.kind] = StoredStream(format: track.format) { n in plan.sample(n, of: stream) }
        }
        return streams
    }

    /// The tracks' samples on one timeline: each sample where its track's edits show it, all moved
    /// later together so that none is decoded or shown before 0 (B-frames are decoded before they
    /// show; a cut file's pictures before its edit are decoded, not shown); a sound whose edit the
    /// writer states again (its priming) from its media's start.
    static func storedPlan(_ tracks: [(kind: String, track: MP4StoredTrack)], file: FileBytes, name: String) -> ConcatPlan {
        func start(_ t: MP4StoredTrack) -> Int64 { t.format.gapless == nil ? t.timing.mediaStart : 0 }
        // The earliest time on the timeline, in seconds (a decode time, or a picture shown before
        // its edit starts), over every sample (a file's composition offsets may say anything):
        // what every time is moved by.
        let earliest = tracks.compactMap { (_, t) in
            t.timing.samples.lazy.map { Double(min(Int64($0.decodeTime), $0.presentationTime) - start(t)) / Double(t.timing.timescale) + t.timing.delay }.min()
        }.min() ?? 0
        let lead = max(0, -earliest)
        var streams: [ConcatPlan.Stream] = []
        var end = 0.0
        for (kind, t) in tracks {
            let timing = t.timing, scale = Double(timing.timescale), origin = start(t)
            func nanoseconds(_ ticks: Int64) -> UInt64 { ConcatPlan.nanoseconds(Double(ticks - origin) / scale + timing.delay + lead) }
            let samples = timing.samples.map { s in
                ConcatPlan.Sample(file: 0, offset: s.offset, size: Int(s.size), pts: nanoseconds(s.presentationTime), dts: nanoseconds(Int64(s.decodeTime)),
                                  duration: UInt64(s.duration) * 1_000_000_000 / UInt64(timing.timescale), keyframe: s.isSync)
            }
            if let last = timing.samples.lazy.map({ $0.presentationTime + Int64($0.duration) }).max() {
                end = max(end, Double(last - origin) / scale + timing.delay)
            }
            streams.append(ConcatPlan.Stream(kind: kind, samples: samples))
        }
        return ConcatPlan(files: [file], names: [name], streams: streams, duration: end, warnings: [])
    }
}
