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
        let (timelines, duration) = Self.storedTimelines(chosen.map(\.track))
        storedDuration.withLock { $0 = duration }
        let reader = ConcatPlan(files: [file], names: [name], streams: [], duration: duration, warnings: [])
        var streams: [String: StoredStream] = [:]
        for ((kind, track), timeline) in zip(chosen, timelines) {
            // Each sample read from the tables as it is asked for, in order: no list of them.
            let cursor = Condition(track.samples.makeCursor())
            streams[kind] = StoredStream(format: track.format) { n in
                let next = cursor.withLock { c -> MP4Sample? in
                    if n < c.n { c = track.samples.makeCursor() }
                    while c.n < n, c.next() != nil {}
                    return c.next()
                }
                guard let s = next else { return .end }
                return reader.read(ConcatPlan.Sample(file: 0, offset: s.offset, size: Int(s.size), pts: timeline.nanoseconds(s.presentationTime),
                                                     dts: timeline.nanoseconds(Int64(s.decodeTime)),
                                                     duration: UInt64(s.duration) * 1_000_000_000 / UInt64(track.timescale), keyframe: s.isSync))
            }
        }
        return streams
    }

    /// Where a track's samples go on the copy's timeline: its ticks from `origin` in seconds,
    /// moved by `offset` seconds, in nanoseconds.
    struct StoredTimeline: Sendable {
        var origin: Int64
        var scale: Double
        var offset: Double
        func nanoseconds(_ ticks: Int64) -> UInt64 { ConcatPlan.nanoseconds(Double(ticks &- origin) / scale + offset) }
    }

    /// The tracks' samples on one timeline: each sample where its track's edits show it, all moved
    /// later together so that none is decoded or shown before 0 (B-frames are decoded before they
    /// show; a cut file's pictures before its edit are decoded, not shown); a sound whose edit the
    /// writer states again (its priming) from its media's start. And where the last one ends, in
    /// seconds. One walk of each track's tables.
    static func storedTimelines(_ tracks: [MP4StoredTrack]) -> (timelines: [StoredTimeline], duration: Double) {
        func start(_ t: MP4StoredTrack) -> Int64 { t.format.gapless == nil ? t.mediaStart : 0 }
        // The earliest time on the timeline, in seconds (a decode time, or a picture shown before
        // its edit starts), over every sample (a file's composition offsets may say anything):
        // what every time is moved by.
        var earliest = Double.infinity
        for t in tracks {
            var cursor = t.samples.makeCursor(), least = Int64.max
            while let s = cursor.next() { least = min(least, Int64(s.decodeTime), s.presentationTime) }
            if least != .max { earliest = min(earliest, Double(least &- start(t)) / Double(t.timescale) + t.delay) }
        }
        let lead = earliest.isFinite ? max(0, -earliest) : 0
        var end = 0.0
        let timelines = tracks.map { t in
            if let last = t.samples.presentationEnd { end = max(end, Double(last &- start(t)) / Double(t.timescale) + t.delay) }
            return StoredTimeline(origin: start(t), scale: Double(t.timescale), offset: t.delay + lead)
        }
        return (timelines, end)
    }
}
