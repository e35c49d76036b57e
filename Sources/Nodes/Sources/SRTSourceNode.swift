import GraphKitCore
import GraphKitRuntime

/// `source.srt`: an MPEG-TS stream received over SRT (`srtsrc`), as caller, listener or
/// rendezvous (`SRTSettings`), for `demux` (its streams as sent, no re-encoding: SRT → MP4 or
/// HLS) or `decode`, as `source.file` gives a file's bytes.
///
/// The stream ends when the peer closes the connection (or the run is stopped); a caller whose
/// peer never answers fails after SRT's connect timeout (3 s), a listener waits for its caller
/// until the run is stopped. Its bytes pass on as they arrive: nothing is dropped here (a live
/// capture's edge drops frames, a byte stream cannot lose bytes without damage).
///
/// Example:
/// ```json
/// "in": { "type": "source.srt", "params": { "url": "srt://127.0.0.1:9000", "mode": "listener" } }
/// ```
public final class SRTSourceNode: ElementNode, ExplainsFailures, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "source.srt",
        category: .source,
        summary: "Receives an MPEG-TS stream over SRT (caller, listener or rendezvous)",
        outputs: [PortDescriptor("out", .container, help: "the MPEG-TS bytes as received, for demux (passthrough) or decode")],
        parameters: SRTSettings.parameters,
        rules: SRTSettings.rules,
        unboundedWhen: .given(SRTSettings.url),
        example: #"{ "type": "source.srt", "params": { "url": "srt://127.0.0.1:9000", "mode": "listener" } }"#
    )

    let context: NodeContext
    let settings: SRTSettings

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        settings = try SRTSettings(context: context)
    }

    public var mediaDescription: String? { settings.description }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let source = try bin.make("srtsrc", name: "srtsrc")
        try settings.configure(source)
        try bin.expose(output: "out", source)
    }

    public func explainFailure(_ message: String, debug: String?, location: String) -> GraphError? {
        settings.explain(message, debug: debug, node: context.id, at: location)
    }
}
