/// `source.app`: a graph input that code pushes samples into (see ``MediaInput``).
public final class AppSourceNode: ElementNode, LiveNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "source.app",
        category: .app,
        summary: "Samples appended by code (GraphRun.input(id)), like AVAssetWriterInput",
        outputs: [PortDescriptor("out", .any, help: "the appended samples, in the format of the first one")],
        parameters: [
            ParameterDescriptor("maxBuffers", .integer(0...100_000), default: .integer(8),
                                help: "samples held before isReadyForMoreMediaData turns false (0: no bound)"),
            ParameterDescriptor("live", .boolean, default: .boolean(false),
                                help: "timestamps follow the clock and a full edge drops instead of waiting"),
        ],
        example: #"{ "type": "source.app", "params": { "maxBuffers": 8 } }"#
    )

    let context: NodeContext
    private(set) var input: MediaInput!

    public init(context: NodeContext) throws {
        self.context = context
    }

    public var isLive: Bool { context.parameters.bool("live") ?? false }

    public func build(in bin: BinBuilder) throws {
        let limit = context.parameters.int("maxBuffers") ?? 8
        let src = try bin.make("appsrc", name: "appsrc", [
            "format": "time", "is-live": isLive ? "true" : "false", "do-timestamp": "false",
            "max-bytes": "0", "max-buffers": String(limit), "block": "false", "emit-signals": "false",
        ])
        input = MediaInput(appsrc: src.raw, nodeID: context.id)
        try bin.expose(output: "out", src)
    }
}
