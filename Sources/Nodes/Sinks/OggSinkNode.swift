import GraphKitCore
import GraphKitRuntime

/// `sink.ogg`: writes an Ogg file (`oggmux`) of one Opus or FLAC stream, by the rule every output
/// follows (`MuxedFile`): through a descriptor into a temporary file beside the target, renamed
/// over it only once complete and on the disk.
///
/// No tag parameters: an Ogg file's tags are its stream's own comment header (OpusTags, FLAC's
/// VORBIS_COMMENT), written by the encoder and passed as it is in a remux (`demux` keeps an Opus
/// stream's, which its parser would empty); GStreamer's Ogg muxer takes no tags of its own.
///
/// Example:
/// ```json
/// "file": { "type": "sink.ogg", "params": { "path": "out/voice.opus" } }
/// ```
public final class OggSinkNode: MuxedFileNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.ogg",
        category: .sink,
        summary: "Ogg (.ogg / .opus / .oga) writer of Opus or FLAC",
        inputs: [
            PortDescriptor("audio", FormatSet([.audio(.opus), .audio(.flac)]), presence: .optional, help: "Opus or FLAC audio"),
        ],
        parameters: [path],
        requiresAnInput: true,
        example: #"{ "type": "sink.ogg", "params": { "path": "out/voice.opus" } }"#
    )

    public static let path = MuxedFile.pathParameter
    package static let muxer = "oggmux"

    package let file: MuxedFile

    public init(context: NodeContext) throws(GraphError) {
        file = try MuxedFile(context: context, parameter: Self.path)
    }
}
