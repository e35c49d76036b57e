import GraphKitCore
import MediaContainers
/// `sink.app`: a graph output that code pulls samples from (see ``MediaOutput``).
public final class AppSinkNode: ElementNode {
    public static let descriptor = NodeDescriptor(
        type: "sink.app",
        category: .app,
        summary: "Samples pulled by code (GraphRun.output(id)), like AVAssetReaderTrackOutput",
        inputs: [PortDescriptor("in", .any, help: "the samples to hand to code")],
        parameters: [maxBuffers],
        example: #"{ "type": "sink.app", "params": { "maxBuffers": 16 } }"#
    )

    public static let maxBuffers = Parameter<Int>("maxBuffers", 0...100_000, default: 16,
                                           help: "samples held for a consumer that has not pulled them (0: no bound)")

    let context: NodeContext
    /// The appsink's side, once `build(in:)` made it.
    var output: MediaOutput? { built.withLock { $0 } }
    private let built = Guarded<MediaOutput?>(nil)

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        // The samples never reach the appsink: MediaOutput's queue takes them off its pad and
        // bounds them (maxBuffers); the appsink gets the events, and posts end of stream.
        // async=false: an appsink and an appsrc in one pipeline otherwise deadlock at preroll.
        let sink = try bin.make("appsink", name: "appsink", ["sync": "false", "async": "false", "emit-signals": "false"])
        let output = MediaOutput(appsink: sink.raw, nodeID: context.id, capacity: context.parameters[Self.maxBuffers])
        built.withLock { $0 = output }
        try bin.expose(input: "in", sink)
    }
}
