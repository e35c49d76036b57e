/// `source.app`: a graph input that code pushes samples into (see ``MediaInput``).
public final class AppSourceNode: ElementNode, LiveNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "source.app",
        category: .app,
        summary: "Samples appended by code (GraphRun.input(id)), like AVAssetWriterInput",
        outputs: [PortDescriptor("out", .any, help: "the appended samples, in the format of the first one")],
        parameters: [maxBuffers, live],
        example: #"{ "type": "source.app", "params": { "maxBuffers": 8 } }"#
    )

    public static let maxBuffers = Parameter<Int>("maxBuffers", 0...100_000, default: 8,
                                           help: "samples held before isReadyForMoreMediaData turns false (0: no bound)")
    public static let live = Parameter<Bool>("live", default: false,
                                      help: "timestamps follow the clock and a full edge drops instead of waiting")

    let context: NodeContext
    private(set) var input: MediaInput?

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public var isLive: Bool { context.parameters[Self.live] }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let limit = context.parameters[Self.maxBuffers]
        let src = try bin.make("appsrc", name: "appsrc", [
            "format": "time", "is-live": isLive ? "true" : "false", "do-timestamp": "false",
            "max-bytes": "0", "max-buffers": String(limit), "block": "false", "emit-signals": "false",
        ])
        input = MediaInput(appsrc: src.raw, nodeID: context.id)
        try bin.expose(output: "out", src)
    }
}
