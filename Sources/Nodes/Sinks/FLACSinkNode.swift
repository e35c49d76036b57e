import GraphKitCore
import GraphKitRuntime

/// `sink.flac`: writes a FLAC stream as a bare FLAC file (`fLaC`, its metadata blocks, its
/// frames), as `flac` and ffmpeg write `.flac`, by the rule every output follows (`MuxedFile`):
/// through a descriptor into a temporary file beside the target, renamed over it only once
/// complete and on the disk. The stream goes to the file as the encoder makes it: at its end
/// `encode.flac` seeks back and writes the STREAMINFO block again with the total sample count
/// and the MD5 of the samples, so players know the length. (A FLAC stream taken out of
/// another container keeps the STREAMINFO it had there.)
///
/// Example:
/// ```json
/// "file": { "type": "sink.flac", "params": { "path": "out/voice.flac" } }
/// ```
public final class FLACSinkNode: MuxedFileNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.flac",
        category: .sink,
        summary: "FLAC (.flac) file writer",
        inputs: [PortDescriptor("audio", FormatSet([.audio(.flac)]), presence: .optional, help: "FLAC audio (encode.flac)")],
        parameters: [path],
        requiresAnInput: true,
        example: #"{ "type": "sink.flac", "params": { "path": "out/voice.flac" } }"#
    )

    public static let path = MuxedFile.pathParameter
    /// No muxer: the stream is the file. `identity` passes the encoder's seek back to the header on.
    package static let muxer = "identity"
    package static let oneStream = true

    package let file: MuxedFile

    public init(context: NodeContext) throws(GraphError) {
        file = try MuxedFile(context: context, parameter: Self.path)
    }
}
