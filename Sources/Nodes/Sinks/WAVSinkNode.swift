import GraphKitCore
import GraphKitRuntime

/// `sink.wav`: writes PCM as a WAV file (RIFF WAVE, `wavenc`): 16-bit integer samples as PCM, 32-bit
/// float ones as IEEE float (format 3), any rate and up to 64 channels, by the rule every output
/// follows (`MuxedFile`): through a descriptor into a temporary file beside the target, its
/// header's sizes written at the end (the writer seeks back to them), renamed over the target
/// only once complete and on the disk. A WAV file's sizes are 32-bit: past 4 GiB of samples
/// (about 6 hours of 48 kHz stereo float) the header no longer says the length; write FLAC
/// (`sink.flac`) or Matroska for longer.
///
/// Example:
/// ```json
/// "file": { "type": "sink.wav", "params": { "path": "out/voice.wav" } }
/// ```
public final class WAVSinkNode: MuxedFileNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.wav",
        category: .sink,
        summary: "WAV (.wav) writer of PCM: 16-bit integer or 32-bit float",
        inputs: [PortDescriptor("audio", .pcm(), presence: .optional, help: "PCM audio (16-bit integer or 32-bit float)")],
        parameters: [path],
        requiresAnInput: true,
        example: #"{ "type": "sink.wav", "params": { "path": "out/voice.wav" } }"#
    )

    public static let path = MuxedFile.pathParameter
    package static let muxer = "wavenc"
    package static let oneStream = true

    package let file: MuxedFile

    public init(context: NodeContext) throws(GraphError) {
        file = try MuxedFile(context: context, parameter: Self.path)
    }
}
