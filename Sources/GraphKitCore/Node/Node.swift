/// The unit of a graph.
///
/// A node has a static contract, its ``NodeDescriptor`` (type name, ports, parameters), which the
/// loader, `graphctl validate` and `graphctl inspect` read without building anything, and an
/// implementation in one of two families:
///
/// - ``ElementNode``: builds its GStreamer elements through ``BinBuilder`` (decoders,
///   encoders, muxers, capture). It never sees a GStreamer type.
/// - ``ProcessingNode``: processes each ``SampleBuffer`` in Swift (effects, analysis).
///
/// Lifecycle, and the thread of each call:
///
/// ```
///  init(context:)      graph-building thread, parameters already validated
///  build(in:)          graph-building thread (ElementNode), once
///  prepare()           graph-building thread, just before the pipeline starts: open or check
///                      files, fail early with a GraphError
///  formatDidChange / process   the streaming thread of the node's input (ProcessingNode),
///                      one buffer at a time, never concurrently
///  finish(_:)          the run's control thread, once, after the pipeline has stopped:
///                      finalize or remove outputs according to the outcome
/// ```
///
/// Every method throws ``GraphError`` and nothing else: a node says what went wrong in the
/// terms of its graph (the parameter at fault, the file), and which exit status that is
/// (`GraphError.Code`). The engine adds the node's id, and the run fails with that error.
public protocol Node: AnyObject, Sendable {
    static var descriptor: NodeDescriptor { get }
    init(context: NodeContext) throws(GraphError)
    /// Checks and opens what the run needs (input files readable, output folders writable).
    func prepare() throws(GraphError)
    /// Called once after the pipeline stopped, with how the run ended.
    func finish(_ outcome: RunStatus) throws(GraphError)
    /// What this node reads, for messages downstream: a file path, a device.
    var mediaDescription: String? { get }
    /// How much media this node will produce, when it knows (a capture with a duration).
    var expectedDuration: MediaTime? { get }
    /// For sinks: the file written and how writing ended.
    var output: OutputReport? { get }
    /// Every file the node writes, with how writing ended: ``output``, or several (the waveform's
    /// data and pictures). The run reports each, and fails when one of them received no media.
    var outputs: [OutputReport] { get }
    /// Where the node's live stream was interrupted (its peer went away) and the run went on:
    /// the run reports each under the node (``NodeStatistics/gaps``). Read once the run stopped.
    var gaps: [StreamGap] { get }
}

extension Node {
    public func prepare() throws(GraphError) {}
    public func finish(_ outcome: RunStatus) throws(GraphError) {}
    public var mediaDescription: String? { nil }
    public var expectedDuration: MediaTime? { nil }
    public var output: OutputReport? { nil }
    public var outputs: [OutputReport] { output.map { [$0] } ?? [] }
    public var gaps: [StreamGap] { [] }
    public var descriptor: NodeDescriptor { Self.descriptor }
}

/// How buffers flow through a ``ProcessingNode``: declared by each node, never inferred from its
/// ports' formats.
public enum BufferFlow: Sendable {
    /// `process` hands each buffer on to the output `out` (changed in place or not), or drops it
    /// by returning false. The node declares both `in` and `out`.
    case passThrough
    /// Buffers end in the node (`process`'s result is ignored). What it produces, if it declares
    /// an output `out`, it sends through ``ProcessingHost/emit(_:)``, in a format of its own.
    case consume
}

/// A node that processes buffers in Swift from one input `in`. It runs inside the pipeline on
/// the streaming thread: no extra thread hop. `process` may change the buffer in place: when the
/// buffer is uniquely held that writes straight into it; when it is shared (fan-out) the write
/// copies first.
public protocol ProcessingNode: Node {
    /// Whether buffers pass through to `out` or end in the node (see ``BufferFlow``).
    static var bufferFlow: BufferFlow { get }
    /// The negotiated input format, before the first buffer and whenever it changes.
    func formatDidChange(to format: MediaFormat) throws(GraphError)
    /// Processes one buffer. Return false to drop it.
    func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool
    /// End of stream on the input: the last chance to flush results.
    func endOfStream() throws(GraphError)
    /// The stream starts over (a seek flushed it: what the node was handed before is dropped
    /// downstream, and the buffers that follow are of the new position). A node that holds
    /// samples, or times what it emits from a count, starts over too.
    func streamWasFlushed()
    /// Called once before the run with what the engine offers beyond buffers: emitting on an
    /// output of another format, and asking upstream for the stream's duration.
    func attach(_ host: ProcessingHost)
}

extension ProcessingNode {
    public func formatDidChange(to format: MediaFormat) throws(GraphError) {}
    public func endOfStream() throws(GraphError) {}
    public func streamWasFlushed() {}
    public func attach(_ host: ProcessingHost) {}
}

public enum NodeCategory: String, Sendable, CaseIterable, Codable {
    case source, decode, effect, analysis, encode, sink, app
}

public struct PortDescriptor: Sendable {
    public enum Presence: String, Sendable {
        /// An input that must be connected, or an output that always exists.
        case always
        /// An input that may be left unconnected.
        case optional
        /// An output that exists only when the media has it (a decoded track).
        case sometimes
    }

    /// What an output carries, when the graph says more than `formats` (which list everything
    /// the port can carry, whatever the parameters): read by the loader, which refuses a graph
    /// in which a format cannot reach an input that takes it, at the parameter that decides it.
    public enum Carriage: Sendable {
        /// Any of `formats`.
        case formats
        /// What arrives at this node's input of that name, within `formats`: buffers that pass
        /// through unchanged in format (an effect).
        case input(String)
        /// What the node's parameters make of `formats`; `decidedBy` names the parameter that
        /// decides each aspect (decode's `sampleFormat` the sample format).
        case parameters(decidedBy: [FormatSet.Aspect: String], @Sendable (Parameters) -> FormatSet)

        /// `formats(parameters)`, each aspect decided by the parameter given for it.
        public static func decided(by parameters: [FormatSet.Aspect: any ParameterDeclaration],
                                   _ formats: @escaping @Sendable (Parameters) -> FormatSet) -> Carriage {
            .parameters(decidedBy: parameters.mapValues(\.name), formats)
        }
    }

    public var name: String
    public var formats: FormatSet
    public var presence: Presence
    public var help: String
    /// For outputs: what the port carries, given the graph (see ``Carriage``).
    public var carriage: Carriage

    public init(_ name: String, _ formats: FormatSet, presence: Presence = .always, carries carriage: Carriage = .formats,
                help: String) {
        self.name = name
        self.formats = formats
        self.presence = presence
        self.carriage = carriage
        self.help = help
    }

    /// What the output carries in a node with these parameters, `incoming` giving what reaches
    /// each of the node's inputs (nil: unconnected or unknown).
    public func carried(with parameters: Parameters, incoming: (String) -> FormatSet?) -> FormatSet {
        switch carriage {
        case .formats: formats
        case .input(let name): incoming(name)?.intersection(formats) ?? formats
        case .parameters(_, let made): made(parameters).intersection(formats)
        }
    }
}

/// A node's static contract.
public struct NodeDescriptor: Sendable {
    public var type: String
    public var category: NodeCategory
    public var summary: String
    public var inputs: [PortDescriptor]
    public var outputs: [PortDescriptor]
    public var parameters: [ParameterDescriptor]
    /// At least one of the optional inputs must be connected (a muxer).
    public var requiresAnInput: Bool
    /// Rules across parameters, as data: the loader reports each broken one at the parameter to
    /// change, `graphctl inspect` lists them and `graphctl schema` states them in JSON Schema.
    public var rules: [ParameterRule]
    /// A graph fragment using the node, shown by `inspect` and loaded by a test.
    public var example: String
    /// For sources: when the stream never ends by itself (a capture with no duration).
    public var unboundedWhen: ParameterCondition?
    /// For consumers: when the node needs a stream of known length (a waveform fitted to a
    /// width); the condition's parameter is where the loader reports an endless source.
    public var needsBoundedInputWhen: ParameterCondition?
    /// The files the node writes beyond its `writesFile` parameters, from its parameters and the
    /// names of its inputs that are connected: a folder output's fixed names (sink.hls's
    /// playlists, a ladder's multivariant one among them; the thumbnails' pictures).
    public var writtenFilesInFolders: (@Sendable (Parameters, _ connectedInputs: Set<String>) -> [WrittenFile])?
    /// False for a node whose frames' colours must be SDR (it reads or paints them as BT.709):
    /// an HDR file's frames decoded without tone mapping are refused at its input before the
    /// run, naming the edge, the file and its transfer.
    public var takesHDR: Bool

    public init(type: String, category: NodeCategory, summary: String,
                inputs: [PortDescriptor] = [], outputs: [PortDescriptor] = [],
                parameters: [any ParameterDeclaration] = [], rules: [ParameterRule] = [],
                requiresAnInput: Bool = false, takesHDR: Bool = true,
                unboundedWhen: ParameterCondition? = nil,
                needsBoundedInputWhen: ParameterCondition? = nil,
                writtenFilesInFolders: (@Sendable (Parameters, _ connectedInputs: Set<String>) -> [WrittenFile])? = nil,
                example: String) {
        self.type = type
        self.category = category
        self.summary = summary
        self.inputs = inputs
        self.outputs = outputs
        self.parameters = parameters.map(\.descriptor)
        self.rules = rules
        self.requiresAnInput = requiresAnInput
        self.takesHDR = takesHDR
        self.example = example
        self.unboundedWhen = unboundedWhen
        self.needsBoundedInputWhen = needsBoundedInputWhen
        self.writtenFilesInFolders = writtenFilesInFolders
    }

    /// Every file a node with `parameters` writes, by the parameter where a problem with it is
    /// reported: its `writesFile` parameters' paths, then ``writtenFilesInFolders``.
    public func writtenFiles(_ parameters: Parameters, connectedInputs: Set<String>) -> [WrittenFile] {
        var files: [WrittenFile] = []
        for p in self.parameters where p.writesFile {
            if case .string(let path)? = parameters[p.name] { files.append(WrittenFile(parameter: p.name, path: path)) }
        }
        return files + (writtenFilesInFolders?(parameters, connectedInputs) ?? [])
    }

    public func input(_ name: String) -> PortDescriptor? { inputs.first { $0.name == name } }
    public func output(_ name: String) -> PortDescriptor? { outputs.first { $0.name == name } }
    public func parameter(_ name: String) -> ParameterDescriptor? { parameters.first { $0.name == name } }
}

/// A node that plays an encoded sound from its first sample: what it writes has no edit list
/// that could skip an audio encoder's priming (MPEG-TS over SRT, FLV over RTMP, a live
/// playlist's segments, files cut while recording). An AAC encoder feeding only such nodes
/// leaves out as much of its input as its priming lasts, and stamps the rest that much earlier,
/// so that the priming plays in the place of what was left out and the sound stays with its
/// pictures (as ffmpeg's first negative timestamp does, which GStreamer's cannot be).
public protocol PlaysEncoderPriming: Node {
    /// Whether what reaches `input` is played from its first sample, with these parameters.
    static func playsEncoderPriming(input: String, parameters: Parameters) -> Bool
}

/// What a node is given when it is built.
public struct NodeContext: Sendable {
    public var id: String
    public var parameters: Parameters
    public var connectedInputs: Set<String>
    public var connectedOutputs: Set<String>
    /// For each connected input, what feeds it (the nearest upstream `mediaDescription`).
    public var inputDescriptions: [String: String]
    /// The paths of the files the graph's nodes read (their path parameters): a node that
    /// removes files it did not make in this run (sink.hls retiring an earlier package) spares them.
    public var filesRead: [String]
    /// The paths of the files read by the nodes upstream of this one (feeding it, directly or
    /// through others), in the graph's order: where a sink finds the source whose tags it keeps.
    public var filesUpstream: [String] = []
    /// Every node this one feeds plays its sound from the first sample, with no edit list that
    /// could skip an encoder's priming (``PlaysEncoderPriming``: a stream, a live playlist): an
    /// audio encoder then leaves its priming's worth of input out, so that its sound is not late.
    public var feedsOnlyPrimingPlayers = false

    public init(id: String, parameters: Parameters, connectedInputs: Set<String> = [],
                connectedOutputs: Set<String> = [], inputDescriptions: [String: String] = [:]) {
        self.init(id: id, parameters: parameters, connectedInputs: connectedInputs, connectedOutputs: connectedOutputs,
                  inputDescriptions: inputDescriptions, filesRead: [])
    }

    public init(id: String, parameters: Parameters, connectedInputs: Set<String>,
                connectedOutputs: Set<String>, inputDescriptions: [String: String], filesRead: [String]) {
        self.id = id
        self.parameters = parameters
        self.connectedInputs = connectedInputs
        self.connectedOutputs = connectedOutputs
        self.inputDescriptions = inputDescriptions
        self.filesRead = filesRead
    }

    /// Where errors about this node point in a graph document.
    public func location(parameter: String? = nil) -> String {
        parameter.map { "nodes.\(id).params.\($0)" } ?? "nodes.\(id)"
    }
}

/// How a run ended.
public enum RunStatus: String, Sendable, Codable {
    /// Every source reached its end and every sink finalized.
    case completed
    /// Stopped early on request (SIGINT, `stop()`): sources sent end of stream, files finalized.
    case stopped
    case failed
    /// Abandoned (second SIGINT, `cancel()`): outputs removed.
    case cancelled
}

/// A file a sink wrote, and how writing ended (like `AVAssetWriter.status`).
public struct OutputReport: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable {
        case unknown, writing, completed, failed, cancelled
    }
    public var node: String
    public var path: String
    public var status: Status
    public init(node: String, path: String, status: Status) {
        self.node = node
        self.path = path
        self.status = status
    }
}
