import FoundationEssentials
import GraphKitCore
import GraphKitRuntime

/// `analysis.silence`: finds silences in PCM (``SilenceDetector``: every channel under
/// `threshold` for at least `minimumDuration`), sample-exactly, and writes a ``SilenceReport``
/// as JSON when the stream ends (renamed into place when the run completes, `OutputFile`).
/// Code that built the graph reads ``report`` after the run.
///
/// Example:
/// ```json
/// "silence": { "type": "analysis.silence", "params": { "threshold": -50, "minimumDuration": 0.5, "json": "out/silence.json" } }
/// ```
public final class SilenceNode: ProcessingNode, Sendable {
    /// PCM ends here: the events are all that comes out.
    public static let bufferFlow = BufferFlow.consume

    public static let threshold = Parameter<Double>("threshold", -120...0, default: -60,
                                                    help: "dBFS: a frame whose every sample is quieter than this is silent")
    public static let minimumDuration = Parameter<Double>("minimumDuration", 0.001...86_400, default: 0.5,
                                                          help: "seconds: the shortest silence reported")
    public static let json = OptionalParameter<String>("json", format: .path, writesFile: true, help: "write the silences here as JSON")

    public static let descriptor = NodeDescriptor(
        type: "analysis.silence",
        category: .analysis,
        summary: "Finds silences (level under a threshold for a minimum duration), sample-exactly; written as JSON",
        inputs: [PortDescriptor("in", .pcm(), help: "PCM audio")],
        outputs: [],
        parameters: [threshold, minimumDuration, json],
        example: #"{ "type": "analysis.silence", "params": { "threshold": -50, "minimumDuration": 0.5, "json": "out/silence.json" } }"#
    )

    let context: NodeContext
    let file: ReportFile?
    private struct State {
        var input = PCMAnalysisInput<SilenceDetector>()
        var result: SilenceReport?
    }
    private let state = Guarded(State())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        file = ReportFile(Self.json, of: context)
    }

    /// The silences found, once the stream has ended (nil before, or if no audio came).
    public var report: SilenceReport? { state.withLock { $0.result } }

    public func prepare() throws(GraphError) { try file?.prepare() }

    public var outputs: [OutputReport] { file.map { [$0.report] } ?? [] }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        let p = context.parameters
        try state.withLock { (s) throws(GraphError) in
            try s.input.setFormat(format, node: context, type: "analysis.silence") { pcm in
                SilenceDetector(sampleRate: pcm.sampleRate, channels: pcm.channels,
                                thresholdDB: p[Self.threshold], minimumDuration: p[Self.minimumDuration])
            }
        }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        try state.withLock { (s) throws(GraphError) in try s.input.add(buffer, node: context) }
        return false
    }

    public func endOfStream() throws(GraphError) {
        let result = state.withLock { s -> SilenceReport? in
            guard s.input.measure != nil else { return nil }
            s.input.measure?.finish()
            s.result = s.input.measure?.report
            return s.result
        }
        if let result { try file?.write(result) }
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) { try file?.finish(outcome) }
}
