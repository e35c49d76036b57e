import FoundationEssentials
import GraphKitCore
import GraphKitRuntime

/// `analysis.black`: finds stretches of black frames (``BlackDetector``), to the frame, and
/// writes a ``BlackReport`` as JSON when the stream ends (renamed into place when the run
/// completes, `OutputFile`). Code that built the graph reads ``report`` after the run.
///
/// Example:
/// ```json
/// "black": { "type": "analysis.black", "params": { "threshold": 0.1, "minimumDuration": 0.5, "json": "out/black.json" } }
/// ```
public final class BlackNode: ProcessingNode, Sendable {
    /// Frames end here: the events are all that comes out.
    public static let bufferFlow = BufferFlow.consume

    public static let threshold = Parameter<Double>("threshold", 0...1, default: 0.1,
                                                    help: "a pixel is black when its luma is at most this far from black to white")
    public static let pixelRatio = Parameter<Double>("pixelRatio", 0...1, default: 0.98,
                                                     help: "a frame is black when at least this share of its pixels is")
    public static let minimumDuration = Parameter<Double>("minimumDuration", 0...86_400, default: 0.5,
                                                          help: "seconds: the shortest black stretch reported")
    public static let json = OptionalParameter<String>("json", format: .path, writesFile: true, help: "write the black stretches here as JSON")

    public static let descriptor = NodeDescriptor(
        type: "analysis.black",
        category: .analysis,
        summary: "Finds black stretches of video (luma threshold, minimum duration), to the frame; written as JSON",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw video: I420 or NV12 (read as they are) or BGRA/RGBA")],
        outputs: [],
        parameters: [threshold, pixelRatio, minimumDuration, json],
        example: #"{ "type": "analysis.black", "params": { "threshold": 0.1, "minimumDuration": 0.5, "json": "out/black.json" } }"#
    )

    let context: NodeContext
    let file: ReportFile?
    private struct State {
        var input = VideoAnalysisInput()
        var detector: BlackDetector
        var result: BlackReport?
    }
    private let state: Guarded<State>

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        file = ReportFile(Self.json, of: context)
        let p = context.parameters
        state = Guarded(State(detector: BlackDetector(threshold: p[Self.threshold], pixelRatio: p[Self.pixelRatio],
                                                      minimumDuration: p[Self.minimumDuration])))
    }

    /// The black stretches found, once the stream has ended (nil before, or if no frame came).
    public var report: BlackReport? { state.withLock { $0.result } }

    public func prepare() throws(GraphError) { try file?.prepare() }

    public var outputs: [OutputReport] { file.map { [$0.report] } ?? [] }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        try state.withLock { (s) throws(GraphError) in try s.input.setFormat(format, node: "analysis.black") }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        try state.withLock { (s) throws(GraphError) in
            let frame = try s.input.read(buffer)
            s.detector.add(frame.luma, time: frame.time, duration: frame.duration)
        }
        return false
    }

    public func endOfStream() throws(GraphError) {
        let result = state.withLock { s -> BlackReport? in
            s.detector.finish()
            s.result = s.detector.report
            return s.result
        }
        if let result, result.frames > 0 { try file?.write(result) }
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) { try file?.finish(outcome) }
}
