import GraphKitCore
import GraphKitRuntime

/// `sink.webm`: writes a WebM file (`webmmux`: Matroska with the `webm` doc type and only the
/// codecs WebM allows), by the rule every output follows (`MuxedFile`): through a descriptor
/// into a temporary file beside the target, renamed over it only once complete and on the disk.
///
/// WebM holds VP9 or AV1 video and Opus audio (GraphKit names no VP8 or Vorbis): an H.264, AAC or
/// FLAC output connected to it is refused when the graph loads, at the edge. A demuxed file's
/// track, whose codec is known only as it plays, is checked as it arrives, and a codec WebM
/// cannot hold fails the run naming the codec and the file.
///
/// The text tags of the file read upstream are kept (``MuxedFile``); no tag parameters.
/// GStreamer's Matroska muxer writes each tag's value as `gst_value_serialize` gives it ("Café"
/// as `"Caf\303\251"`, on 1.22 and later), so ``MuxedFile`` mends the finished file's tags in
/// place (``MatroskaTags``) before it is renamed.
///
/// Example:
/// ```json
/// "file": { "type": "sink.webm", "params": { "path": "out/clip.webm" } }
/// ```
public final class WebMSinkNode: MuxedFileNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.webm",
        category: .sink,
        summary: "WebM writer (VP9 or AV1 with Opus)",
        inputs: [
            PortDescriptor("audio", .audio(.opus), presence: .optional, help: "Opus audio track"),
            PortDescriptor("video", FormatSet([.video(.vp9), .video(.av1)]), presence: .optional, help: "VP9 or AV1 video track"),
        ],
        parameters: [path],
        requiresAnInput: true,
        example: #"{ "type": "sink.webm", "params": { "path": "out/clip.webm" } }"#
    )

    public static let path = MuxedFile.pathParameter
    package static let muxer = "webmmux"

    package let file: MuxedFile

    public init(context: NodeContext) throws(GraphError) {
        file = try MuxedFile(context: context, parameter: Self.path)
    }
}
