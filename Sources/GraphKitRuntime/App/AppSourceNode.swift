import GraphKitCore
import MediaContainers
/// `source.app`: a graph input that code pushes samples into (see ``MediaInput``).
///
/// Nothing it accepted is ever dropped, real time or not (as AVFoundation keeps every appended
/// sample): its edge is a link like any source's, never a queue that drops. A real-time producer
/// (`live`) sees real time in readiness only, and drops what it cannot hand over itself (as
/// `alwaysDiscardsLateVideoFrames` does). Nor is the stream live to GStreamer (`is-live`): a live
/// source's buffers carry the pipeline clock's running time, and these carry the app's own times,
/// which muxers interleave as they do a file's. (A live appsrc was measured to interleave the same
/// on GStreamer 1.22, the app's times 2 s behind the clock and audio coming 1 s late in bursts;
/// it gave nothing but a source that holds its samples until the pipeline plays.)
public final class AppSourceNode: ElementNode {
    public static let descriptor = NodeDescriptor(
        type: "source.app",
        category: .app,
        summary: "Samples appended by code (GraphRun.input(id)), like AVAssetWriterInput",
        outputs: [PortDescriptor("out", .any, carries: .decided(by: Dictionary(uniqueKeysWithValues: FormatSet.Aspect.allCases.map { ($0, format) })) { p in
            // A declared format is what every appended sample has, so the loader checks it
            // against what the output feeds; without one, any.
            p[AppSourceNode.format].flatMap(MediaFormat.init(text:)).map(FormatSet.init(exactly:)) ?? .any
        }, help: "the appended samples")],
        parameters: [maxBuffers, live, format],
        example: #"{ "type": "source.app", "params": { "maxBuffers": 8, "format": "audio/pcm s16le 48000 Hz 2 ch" } }"#
    )

    public static let maxBuffers = Parameter<Int>("maxBuffers", 0...100_000, default: 8,
                                           help: "samples held before isReadyForMoreMediaData turns false (0: no bound)")
    public static let live = Parameter<Bool>("live", default: false,
                                      help: "the producer runs in real time: ready again as soon as one sample fits (not once the input has emptied); nothing appended is dropped")
    public static let format = OptionalParameter<String>(
        "format", format: .pattern(#"^[A-Za-z]+/[A-Za-z0-9]+([ ,\t].*)?$"#, "a format such as \"audio/pcm s16le 48000 Hz 2 ch\""),
        help: "the format every appended sample must have: \(MediaFormat.textForms); without it, any")

    let context: NodeContext
    let declaredFormat: MediaFormat?
    /// The appsrc's side, once `build(in:)` made it.
    var input: AppInput? { built.withLock { $0 } }
    private let built = Guarded<AppInput?>(nil)
    private struct Handle {
        /// The handle app code holds, while it holds one.
        weak var input: MediaInput?
        /// Set once the run's report is awaited: from then on, an input nobody holds is finished.
        var reportAwaited = false
    }
    private let handle = Guarded(Handle())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        if let text = context.parameters[Self.format] {
            guard let format = MediaFormat(text: text) else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "format"),
                                 "\"\(text)\" is not a format; write one such as \(MediaFormat.textForms)", node: context.id)
            }
            declaredFormat = format
        } else {
            declaredFormat = nil
        }
    }

    /// Whether the producer runs in real time (`live`): see ``readyAgainPercent(limit:live:)``.
    public var isLive: Bool { context.parameters[Self.live] }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let limit = context.parameters[Self.maxBuffers]
        let src = try bin.make("appsrc", name: "appsrc", [
            "format": "time", "is-live": "false", "do-timestamp": "false",
            "max-bytes": "0", "max-buffers": String(limit), "block": "false", "emit-signals": "false",
            "min-percent": String(Self.readyAgainPercent(limit: limit, live: isLive)),
        ])
        let input = AppInput(appsrc: src.raw, nodeID: context.id, checksAppends: true, declaredFormat: declaredFormat)
        built.withLock { $0 = input }
        try bin.expose(output: "out", src)
    }

    /// When a full input is ready again (appsrc's need-data), as a percentage of `limit` buffers
    /// still held: an offline producer once the input has emptied (0: woken once a batch), a
    /// real-time one as soon as one more sample fits, so that it drops as few as it can.
    static func readyAgainPercent(limit: Int, live: Bool) -> Int {
        guard live, limit > 1 else { return 0 }
        return (limit - 1) * 100 / limit  // appsrc compares held * 100 / limit <= this, in integers
    }

    /// The handle app code appends through: the one it holds, or a new one.
    func mediaInput() -> MediaInput? {
        guard let input else { return nil }
        return handle.withLock { h in
            if let held = h.input { return held }
            let made = MediaInput(core: input) { [weak self] in self?.handleReleased() }
            h.input = made
            return made
        }
    }

    private func handleReleased() {
        if handle.withLock({ $0.reportAwaited && $0.input == nil }) { input?.markAsFinished(reason: Self.released(context.id)) }
    }

    /// The run's report is awaited: an input the app does not hold can never be finished by it.
    func reportIsAwaited() {
        let held = handle.withLock { h in
            h.reportAwaited = true
            return h.input != nil
        }
        if !held { input?.markAsFinished(reason: Self.released(context.id)) }
    }

    private static func released(_ id: String) -> GraphError {
        GraphError(.usage, at: "input \"\(id)\"",
                   "this input was finished because no MediaInput for it was held while the run's report was awaited; hold the input while appending",
                   node: id)
    }
}
