import GraphKitCore
import GraphKitRuntime

/// `sink.mkv`: writes a Matroska file (`matroskamux`), by the rule every output follows
/// (`MuxedFile`): through a descriptor into a temporary file beside the target, renamed over it
/// only once complete and on the disk; nothing under the target's name when the run fails or is
/// cancelled.
///
/// Its inputs are what GStreamer 1.22's Matroska muxer writes of the codecs GraphKit names: AAC,
/// Opus and FLAC audio; H.264, HEVC, VP9 and AV1 video. Not ALAC: 1.22's muxer has no ALAC
/// (its pad templates list none), so ALAC goes to `sink.mp4`. A WebM file, which holds fewer
/// codecs and which browsers check, is `sink.webm`: its ports refuse H.264, AAC and FLAC where
/// the graph connects them, which no parameter of this node could do (the loader checks each
/// edge against a node type's ports). A path ending in `.webm` is refused here for that reason.
///
/// The text tags of the file read upstream are kept (``MuxedFile``); no tag parameters.
/// GStreamer's Matroska muxer writes each tag's value as `gst_value_serialize` gives it ("Café"
/// as `"Caf\303\251"`, on 1.22 and later), so ``MuxedFile`` mends the finished file's tags in
/// place (``MatroskaTags``) before it is renamed.
///
/// Example:
/// ```json
/// "file": { "type": "sink.mkv", "params": { "path": "out/remuxed.mkv" } }
/// ```
public final class MatroskaSinkNode: MuxedFileNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.mkv",
        category: .sink,
        summary: "Matroska (.mkv / .mka) writer",
        inputs: [
            PortDescriptor("audio", FormatSet([.aac, .audio(.opus), .audio(.flac)]), presence: .optional,
                           help: "AAC, Opus or FLAC audio track (GStreamer 1.22's Matroska muxer writes no ALAC: use sink.mp4)"),
            PortDescriptor("video", FormatSet([.h264, .video(.hevc), .video(.vp9), .video(.av1)]), presence: .optional,
                           help: "H.264, HEVC, VP9 or AV1 video track"),
        ],
        parameters: [path],
        requiresAnInput: true,
        example: #"{ "type": "sink.mkv", "params": { "path": "out/remuxed.mkv" } }"#
    )

    public static let path = RequiredParameter<String>("path", format: .path, writesFile: true,
                                                       help: "the file to write (Matroska whatever its extension, but not .webm: use sink.webm); missing folders are created")
    package static let muxer = "matroskamux"

    package let file: MuxedFile

    public init(context: NodeContext) throws(GraphError) {
        let path = try context.parameters.value(Self.path)
        if path.lowercased().hasSuffix(".webm") {
            throw GraphError(.invalidGraph, at: context.location(parameter: "path"),
                             "\"\(path)\" names a WebM file, and sink.mkv writes Matroska, which players of WebM refuse: write it with sink.webm",
                             node: context.id)
        }
        file = MuxedFile(context: context, path: path)
    }
}
