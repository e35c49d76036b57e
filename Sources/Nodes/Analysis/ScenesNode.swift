import FoundationEssentials
import GraphKitCore
import GraphKitRuntime

/// `analysis.scenes`: scores each frame against the one before (``SceneDetector``), and writes
/// the cuts (frames scoring at least `threshold`) as a ``ScenesReport`` in JSON, with every
/// frame's score when `scores` is set, and as WebVTT chapters (one cue a scene). Each file is
/// renamed into place when the run completes (`OutputFile`). Code that built the graph reads
/// ``report`` after the run.
///
/// Example:
/// ```json
/// "scenes": { "type": "analysis.scenes", "params": { "threshold": 10, "json": "out/scenes.json", "vtt": "out/chapters.vtt" } }
/// ```
public final class ScenesNode: ProcessingNode, Sendable {
    /// Frames end here: the scores are all that comes out.
    public static let bufferFlow = BufferFlow.consume

    public static let threshold = Parameter<Double>("threshold", 0...100, default: 10,
                                                    help: "a frame scoring at least this (0 to 100) starts a new scene")
    public static let scores = Parameter<Bool>("scores", default: false, help: "also write every frame's score")
    public static let json = OptionalParameter<String>("json", format: .path, writesFile: true, help: "write the cuts here as JSON")
    public static let vtt = OptionalParameter<String>("vtt", format: .path, writesFile: true, help: "write the scenes here as WebVTT chapters")

    public static let descriptor = NodeDescriptor(
        type: "analysis.scenes",
        category: .analysis,
        summary: "Scores scene changes frame by frame; the cuts above a threshold as JSON and WebVTT chapters",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw video: I420 or NV12 (read as they are) or BGRA/RGBA")],
        outputs: [],
        parameters: [threshold, scores, json, vtt],
        example: #"{ "type": "analysis.scenes", "params": { "threshold": 10, "json": "out/scenes.json", "vtt": "out/chapters.vtt" } }"#
    )

    let context: NodeContext
    let jsonFile: ReportFile?
    let vttFile: ReportFile?
    private struct State {
        var input = VideoAnalysisInput()
        var detector: SceneDetector
        var result: ScenesReport?
    }
    private let state: Guarded<State>

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        jsonFile = ReportFile(Self.json, of: context)
        vttFile = ReportFile(Self.vtt, of: context)
        state = Guarded(State(detector: SceneDetector(threshold: context.parameters[Self.threshold], keepsScores: context.parameters[Self.scores])))
    }

    /// The cuts found, once the stream has ended (nil before, or if no frame came).
    public var report: ScenesReport? { state.withLock { $0.result } }

    public func prepare() throws(GraphError) {
        try jsonFile?.prepare()
        try vttFile?.prepare()
    }

    public var outputs: [OutputReport] { [jsonFile, vttFile].compactMap { $0?.report } }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        try state.withLock { (s) throws(GraphError) in try s.input.setFormat(format, node: "analysis.scenes") }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        try state.withLock { (s) throws(GraphError) in
            let frame = try s.input.read(buffer)
            s.detector.add(frame.luma, time: frame.time, duration: frame.duration)
        }
        return false
    }

    public func endOfStream() throws(GraphError) {
        let (result, chapters) = state.withLock { s in
            s.result = s.detector.report
            return (s.result, s.detector.webVTTChapters)
        }
        guard let result, result.frames > 0 else { return }
        try jsonFile?.write(result)
        try vttFile?.writeText(chapters)
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        var firstError: GraphError?
        for file in [jsonFile, vttFile].compactMap({ $0 }) {
            do { try file.finish(outcome) } catch { if firstError == nil { firstError = error } }
        }
        if let firstError { throw firstError }
    }
}
