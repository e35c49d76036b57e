import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// A file's tags as ``AssetWriter`` and ``AssetExportSession`` write them, both through
/// `sink.mp4`: the text tags, the date, the encoder and the place as its parameters (the muxer's
/// tags, and `©xyz`), the cover and the chapters into the finished index (``MP4ExtraTags``:
/// `covr`, Nero's `chpl`), as iTunes, AVFoundation and ffmpeg write them.
extension MediaMetadata {
    /// These tags as `sink.mp4`'s parameters (the fields it writes).
    func write(to p: inout NodeSettings<MP4SinkNode>) {
        p[\.title] = title
        p[\.artist] = artist
        p[\.album] = album
        p[\.albumArtist] = albumArtist
        p[\.genre] = genre
        p[\.comment] = comment
        p[\.date] = date
        p[\.encoder] = encoder
        p[\.location] = writableLocation
    }

    /// Throws `usage` (64) naming the cover (`metadata.artwork`) when it is not a JPEG or PNG
    /// picture by its first bytes (an MP4's `covr` holds one of the two), and, for a `fragmented`
    /// file (written as it goes), naming the cover, location or chapters, which go into the
    /// index once the file is finished.
    func checkWritable(fragmented: Bool = false) throws(GraphError) {
        if let artwork, MP4ExtraTags.pictureType(artwork.data) == nil {
            throw GraphError(.usage, at: "metadata.artwork", "the cover (artwork, \(artwork.mimeType)) is not a JPEG or PNG picture by its first bytes (\(artwork.data.prefix(8).map { String($0, radix: 16) }.joined(separator: " "))): an MP4's cover (covr) must be one; nothing was written")
        }
        guard fragmented else { return }
        for (name, given) in [("artwork", artwork != nil), ("location", location != nil), ("chapters", !chapters.isEmpty)] where given {
            throw GraphError(.usage, at: "metadata.\(name)", "a fragmented file (movieFragmentInterval) is written as it goes, and its \(name) is written into the index once the file is finished: leave out one of the two")
        }
    }

    /// What `sink.mp4` writes into the finished index: the cover (when it is a picture) and the
    /// chapters. With a `range` of a source `duration` long (an export), the source's chapters
    /// that show in it, from where they show, on the range's timeline, as a chpl box holds them
    /// (``MP4ExtraTags/storable(_:)``); without (a writer), the chapters as given, which sink.mp4
    /// refuses, naming them, when a chpl box cannot hold them.
    func extraTags(showing range: MediaTimeRange? = nil, of duration: MediaTime? = nil) -> MP4ExtraTags {
        var extra = MP4ExtraTags(artwork: writableArtwork, languages: languages, creationTime: creationTime)
        if let range {
            let shown = chapters(from: range.start.seconds, to: range.end.seconds, duration: (duration ?? range.end).seconds)
            extra.chapters = MP4ExtraTags.storable(shown.map(\.chapter))
        } else {
            extra.chapters = chapters
        }
        return extra
    }

    /// Hands ``extraTags(showing:of:)`` to the run's `sink.mp4` (node `file`); call it before
    /// the run starts. Throws, naming the tag, when the chapters cannot be written (more than a
    /// chpl box holds).
    func addExtraTags(to run: GraphRun, showing range: MediaTimeRange? = nil, of duration: MediaTime? = nil) throws(GraphError) {
        let extra = extraTags(showing: range, of: duration)
        guard !extra.isNothing, let sink = run.node("file") as? MP4SinkNode else { return }
        try sink.addExtraTags(extra)
    }
}
