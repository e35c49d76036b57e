import GraphKitCore
import MediaContainers

// The source's tags, as every file sink keeps them (the MP4 sinks, sink.hls, and the muxed
// files: Matroska and WebM).

extension MediaMetadata {
    /// The tags of the first of `files` (the files a graph reads upstream of a sink) in a format
    /// whose tags this reads. Nil when none is there; one that cannot be read is its source's to
    /// report.
    static func ofFirstReadable(_ files: [String]) -> MediaMetadata? {
        for path in files {
            guard let bytes = FileBytes(path: path), (try? MediaContainerFormat.detect(bytes)) != nil else { continue }
            return try? MediaMetadata.read(from: bytes)
        }
        return nil
    }
}
