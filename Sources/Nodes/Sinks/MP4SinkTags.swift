import FoundationEssentials
import GraphKitCore
import GraphKitRuntime
import MediaContainers

// sink.mp4's tags: what it reads of its parameters, and what it keeps of the source's (as
// sink.mp4segments and sink.hls keep it too).

extension MP4SinkNode {
    /// The tags of the file read upstream (``sourceMetadata(upstreamOf:)``), unless `sourceTags`
    /// is off.
    static func sourceMetadata(_ context: NodeContext) -> MediaMetadata? {
        context.parameters[sourceTags] ? sourceMetadata(upstreamOf: context) : nil
    }

    /// The tags of the file the graph reads upstream of a node: the first of
    /// ``NodeContext/filesUpstream`` in a format whose tags ``MediaMetadata`` reads. Nil when no
    /// such file is there (one that cannot be read is its source's to report). Every MP4 sink's.
    static func sourceMetadata(upstreamOf context: NodeContext) -> MediaMetadata? { MediaMetadata.ofFirstReadable(context.filesUpstream) }

    /// The text tags to write: each parameter's, else the source's field of its name; the
    /// encoder only as given (the source's names the software that made it, not this file).
    /// `given` reads a parameter (nil for a sink without them).
    static func textTags(source: MediaMetadata?, given: (OptionalParameter<String>) -> String? = { _ in nil }) -> [(key: FourCC, text: String)] {
        var out: [(key: FourCC, text: String)] = []
        for (parameter, key) in tags {
            if let value = given(parameter), !value.isEmpty {
                out.append((key, value))
            } else if parameter.name != "encoder", let value = source?.textField(parameter.name), !value.isEmpty {
                out.append((key, value))
            }
        }
        return out
    }

    /// `extra` (the parameters') with what the source has and they do not set: its cover (a JPEG
    /// or PNG), place (as ISO 6709 writes it) and, when `chapters` and it is the one file read
    /// upstream (not the pieces of a join), its chapters as a chpl box holds them; its languages
    /// and creation time. A fragmented file, written as it goes, takes none of them.
    static func extraTags(_ extra: MP4ExtraTags, keeping source: MediaMetadata?, context: NodeContext, fragmented: Bool,
                          chapters: Bool = true) -> MP4ExtraTags {
        guard let source, !fragmented else { return extra }
        var out = extra
        if out.artwork == nil { out.artwork = source.writableArtwork }
        if out.location == nil { out.location = source.writableLocation }
        if chapters, out.chapters.isEmpty, context.filesUpstream.count == 1 { out.chapters = MP4ExtraTags.storable(source.chapters) }
        out.languages = source.languages
        out.creationTime = source.creationTime
        return out
    }


    /// The most bytes a cover may have: 16 MB.
    static let largestCover = 16 << 20

    /// The `cover`, `location` and `chapters` parameters, read and checked: a cover that cannot
    /// be read (66), or is not a JPEG or PNG by its first bytes (65), is refused naming the
    /// parameter and the file.
    static func extraTags(_ context: NodeContext) throws(GraphError) -> MP4ExtraTags {
        var extra = MP4ExtraTags(location: context.parameters[location])
        if let text = context.parameters[chapters] {
            extra.chapters = text.split(separator: "\n").compactMap { line in
                let trimmed = line.drop { $0 == " " || $0 == "\t" }
                guard let gap = trimmed.firstIndex(where: { $0 == " " || $0 == "\t" }), let start = Double(trimmed[..<gap]) else { return nil }
                return MP4ExtraTags.Chapter(start: start, title: String(trimmed[gap...].drop { $0 == " " || $0 == "\t" }))
            }
        }
        if let picture = context.parameters[cover] {
            let at = context.location(parameter: "cover")
            guard let bytes = FileBytes(path: picture) else {
                throw GraphError(.inputUnreadable, at: at, "cannot read the cover \"\(picture)\": it cannot be opened as a file", node: context.id)
            }
            guard bytes.count <= UInt64(largestCover) else {
                throw GraphError(.invalidGraph, at: at, "the cover \"\(picture)\" has \(bytes.count) bytes, more than a cover may (16 MB)", node: context.id)
            }
            do throws(ContainerError) { extra.artwork = try bytes.read(at: 0, count: Int(bytes.count)) } catch {
                throw GraphError(.inputUnreadable, at: at, "cannot read the cover \"\(picture)\": \(error.reason)", node: context.id)
            }
        }
        if let problem = extra.problem {
            let parameter = extra.artwork.map { MP4ExtraTags.pictureType($0) == nil } == true ? "cover" : "chapters"
            throw GraphError(.invalidGraph, at: context.location(parameter: parameter),
                             parameter == "cover" ? "\"\(context.parameters[cover] ?? "")\" cannot be the cover: \(problem)" : problem, node: context.id)
        }
        return extra
    }
}
