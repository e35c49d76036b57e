/// One track as an MP4/M4A/MOV index states it: its kind (the handler: `soun`, `vide`, `text`…),
/// its ID and its duration, which a stream-level reader (GStreamer's discoverer) does not give.
/// For `graphctl probe`, whose tools package sees only this library's public API.
public struct IndexedTrack: Sendable, Equatable {
    /// The handler type: `soun`, `vide`, `sbtl`, `text`, `meta`…
    public var handler: String
    public var trackID: Int
    /// Its media's duration (media header over media clock); nil when the header does not say.
    public var seconds: Double?

    /// The tracks of the index of the ISO-BMFF file `source` holds, in track-ID order (the
    /// order GStreamer's demuxer exposes them); none for another file or an index that cannot
    /// be read.
    public static func all(in source: some ByteSource) -> [IndexedTrack] {
        guard let file = try? MP4File(source), let movie = try? file.movie() else { return [] }
        return movie.trackIndices.map { movie.track($0) }.sorted { $0.trackID < $1.trackID }.map { track in
            let scale = track.mediaTimescale
            let duration = track.mediaHeader?.duration
            let known = scale > 0 && duration.map { $0 != UInt64(UInt32.max) && $0 != .max } == true
            return IndexedTrack(handler: track.handler?.description ?? "", trackID: Int(track.trackID),
                                seconds: known ? Double(duration!) / Double(scale) : nil)
        }
    }
}
