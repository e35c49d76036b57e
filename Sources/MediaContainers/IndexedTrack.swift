/// One track as an MP4/M4A/MOV index states it: its kind (the handler: `soun`, `vide`, `text`…),
/// its ID and its duration, which a stream-level reader (GStreamer's discoverer) does not give.
/// For `graphctl probe`, whose tools package sees only this library's public API.
public struct IndexedTrack: Sendable, Equatable {
    /// The handler type: `soun`, `vide`, `sbtl`, `text`, `meta`…
    public var handler: String
    public var trackID: Int
    /// How long it plays: its edit list's span (an AAC track's priming and padding left out, as
    /// ffprobe gives a stream's duration), else its media's (media header over media clock); nil
    /// when neither says.
    public var seconds: Double?
    /// A video track's Dolby Vision configuration (its first sample entry's), which GStreamer's
    /// demuxer does not read.
    public var dolbyVision: DolbyVisionConfiguration?

    /// The tracks of the index of the ISO-BMFF file `source` holds, in track-ID order (the
    /// order GStreamer's demuxer exposes them); none for another file or an index that cannot
    /// be read.
    public static func all(in source: some ByteSource) -> [IndexedTrack] {
        guard let file = try? MP4File(source), let movie = try? file.movie() else { return [] }
        let movieScale = movie.timescale
        return movie.trackIndices.map { movie.track($0) }.sorted { $0.trackID < $1.trackID }.map { track in
            var seconds: Double?
            // The edits that show media (not the empty ones that delay it), in the movie's clock.
            if let edits = track.edits?.filter({ $0.mediaTime >= 0 }), !edits.isEmpty, movieScale > 0,
               case let (span, overflow) = edits.reduce((UInt64(0), false), { sum, e in
                   let (v, o) = sum.0.addingReportingOverflow(e.duration)
                   return (v, sum.1 || o)
               }), !overflow, span > 0 {
                seconds = Double(span) / Double(movieScale)
            } else if let duration = track.mediaHeader?.duration, track.mediaTimescale > 0,
                      duration != UInt64(UInt32.max), duration != .max {
                seconds = Double(duration) / Double(track.mediaTimescale)
            }
            return IndexedTrack(handler: track.handler?.description ?? "", trackID: Int(track.trackID), seconds: seconds,
                                dolbyVision: SampleDescription(track)?.dolbyVision)
        }
    }
}
