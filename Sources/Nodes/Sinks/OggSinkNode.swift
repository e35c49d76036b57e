import GraphKitCore
import GraphKitRuntime

/// `sink.ogg`: writes an Ogg file (`oggmux`) of one Opus or FLAC stream, by the rule every output
/// follows (``MuxedFile``): through a descriptor into a temporary file beside the target, renamed
/// over it only once complete and on the disk.
///
/// No tag parameters: an Ogg file's tags are its stream's own comment header (OpusTags, FLAC's
/// VORBIS_COMMENT), written by the encoder and passed as it is in a remux; GStreamer's Ogg muxer
/// takes no tags of its own.
///
/// Example:
/// ```json
/// "file": { "type": "sink.ogg", "params": { "path": "out/voice.opus" } }
/// ```
public final class OggSinkNode: ElementNode, Sendable {
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

    public static let path = RequiredParameter<String>("path", format: .path, writesFile: true, help: "the file to write; missing folders are created")

    let context: NodeContext
    let file: MuxedFile

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        file = MuxedFile(context: context, path: try context.parameters.value(Self.path))
    }

    public var output: OutputReport? { file.output }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let mux = try bin.make("oggmux", name: "mux")
        try file.build(in: bin, mux: mux, inputs: Self.descriptor.inputs, connected: context.connectedInputs)
    }

    public func prepare() throws(GraphError) { try file.prepare() }
    public func finish(_ outcome: RunStatus) throws(GraphError) { try file.finish(outcome) }
}
