import FoundationEssentials
import GraphKitCore
import GraphKitRuntime

/// `analysis.loudness`: measures PCM as EBU R128 / ITU-R BS.1770-4 does (``LoudnessMeter``):
/// integrated loudness, loudness range, true and sample peak, and on request the momentary and
/// short-term loudness every 100 ms. Writes a ``LoudnessMeasurement`` as JSON when the stream
/// ends; the file is made when the run starts and renamed into place when it completes
/// (`OutputFile`). Code that built the graph reads ``measurement`` after the run.
///
/// Example:
/// ```json
/// "loud": { "type": "analysis.loudness", "params": { "json": "out/loudness.json" } }
/// ```
public final class LoudnessNode: ProcessingNode, Sendable {
    /// PCM ends here: a measurement is all that comes out.
    public static let bufferFlow = BufferFlow.consume

    public static let json = OptionalParameter<String>("json", format: .path, writesFile: true, help: "write the measurement here as JSON")
    public static let series = Parameter<Bool>("series", default: false,
                                               help: "also write the momentary and short-term loudness every 100 ms")

    public static let descriptor = NodeDescriptor(
        type: "analysis.loudness",
        category: .analysis,
        summary: "Measures loudness per EBU R128: integrated LUFS, loudness range, true peak; written as JSON",
        inputs: [PortDescriptor("in", .pcm(), help: "PCM audio")],
        outputs: [],
        parameters: [json, series],
        example: #"{ "type": "analysis.loudness", "params": { "json": "out/loudness.json" } }"#
    )

    let context: NodeContext
    let file: ReportFile?
    private struct State {
        var input = PCMAnalysisInput<LoudnessMeter>()
        var result: LoudnessMeasurement?
    }
    private let state = Guarded(State())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        file = ReportFile(Self.json, of: context)
    }

    /// The measurement, once the stream has ended (nil before, or if no audio came).
    public var measurement: LoudnessMeasurement? { state.withLock { $0.result } }

    public func prepare() throws(GraphError) { try file?.prepare() }

    public var outputs: [OutputReport] { file.map { [$0.report] } ?? [] }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        try state.withLock { (s) throws(GraphError) in
            try s.input.setFormat(format, node: context, type: "analysis.loudness") { (pcm) throws(GraphError) in
                guard pcm.sampleRate >= LoudnessMeter.lowestRate, (1...64).contains(pcm.channels) else {
                    throw GraphError(.runFailed, "analysis.loudness measures 1 to 64 channels at \(LoudnessMeter.lowestRate) Hz or more, got \(pcm.sampleRate) Hz \(pcm.channels) ch",
                                     node: context.id)
                }
                return LoudnessMeter(sampleRate: pcm.sampleRate, channels: pcm.channels, keepsSeries: context.parameters[Self.series])
            }
        }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        try state.withLock { (s) throws(GraphError) in try s.input.add(buffer, node: context) }
        return false
    }

    public func endOfStream() throws(GraphError) {
        let result = state.withLock { s -> LoudnessMeasurement? in
            guard let meter = s.input.measure, meter.framesSeen > 0 else { return nil }
            s.result = meter.measurement
            return s.result
        }
        if let result { try file?.write(result) }
    }

    /// The measurement as the node writes it: sorted keys, one line.
    public static func encodeJSON(_ measurement: LoudnessMeasurement) throws(GraphError) -> [UInt8] {
        try ReportFile.encode(measurement)
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) { try file?.finish(outcome) }
}
