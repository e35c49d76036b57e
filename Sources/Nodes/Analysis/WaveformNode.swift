import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `analysis.waveform`: reduces PCM to waveform peaks as it streams, and writes them as
/// audiowaveform JSON/.dat data and PNG/SVG pictures when the stream ends. Memory grows with the
/// number of bins, never with the number of samples, so it works inside a live recording.
///
/// Each file is made when the run starts and written through its descriptor when the stream
/// ends (`OutputFile`: never reopened by name), then renamed into place if the run succeeds.
/// The run reports each file it writes (`Node.outputs`).
///
/// Example:
/// ```json
/// "wave": { "type": "analysis.waveform", "params": { "samplesPerPixel": 256, "json": "out/waveform.json", "png": "out/waveform.png" } }
/// ```
public final class WaveformNode: ProcessingNode, Sendable {
    /// PCM ends here; the peaks go out through the host, in a format of their own.
    public static let bufferFlow = BufferFlow.consume

    public static let samplesPerPixel = OptionalParameter<Int>("samplesPerPixel", 2...10_000_000, help: "frames per bin (256 when no bin size is given)")
    public static let pixelsPerSecond = OptionalParameter<Int>("pixelsPerSecond", 1...100_000,
                                                        help: "bins per second: a bin is floor(sampleRate / pixelsPerSecond) frames")
    public static let width = OptionalParameter<Int>("width", 1...1_000_000,
                                              help: "fit the whole stream in at most this many bins (needs a stream of known length)")
    public static let mode = Parameter<WaveformReducer.Mode>("mode", default: .minmax,
                                                      help: "minmax: min and max per bin; maxabs: the largest magnitude; rms: root mean square")
    public static let bits = Parameter<Int>("bits", oneOf: [8, 16], default: 16, help: "bits per value in json and dat")
    public static let splitChannels = Parameter<Bool>("splitChannels", default: false, help: "one waveform per channel instead of the channels combined")
    public static let json = OptionalParameter<String>("json", format: .path, writesFile: true, help: "write audiowaveform JSON here")
    public static let dat = OptionalParameter<String>("dat", format: .path, writesFile: true, help: "write audiowaveform binary .dat here")
    public static let png = OptionalParameter<String>("png", format: .path, writesFile: true, help: "draw a PNG here")
    public static let svg = OptionalParameter<String>("svg", format: .path, writesFile: true, help: "draw an SVG here")
    public static let imageWidth = Parameter<Int>("imageWidth", 16...20_000, default: 1000, help: "picture width in pixels")
    public static let imageHeight = Parameter<Int>("imageHeight", 16...10_000, default: 200, help: "picture height in pixels")
    static let defaultWaveColor = "#3465a4", defaultBackgroundColor = "#ffffff"
    static let color = StringFormat.pattern("^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$", "#rrggbb or #rrggbbaa")
    public static let waveColor = Parameter<String>("waveColor", format: color, default: defaultWaveColor, help: "the waveform's colour")
    public static let backgroundColor = Parameter<String>("backgroundColor", format: color, default: defaultBackgroundColor, help: "the background's colour")
    public static let style = Parameter<WaveformRenderer.Style>("style", default: .filled, help: "filled outline, or one bar per bin")

    /// The bin sizes, of which one at most may be given; the files the node may write.
    static let binParameters = [samplesPerPixel, pixelsPerSecond, width]
    static let files = [json, dat, png, svg]

    public static let descriptor = NodeDescriptor(
        type: "analysis.waveform",
        category: .analysis,
        summary: "Reduces PCM to waveform peaks: audiowaveform JSON/.dat data and PNG/SVG pictures",
        inputs: [PortDescriptor("in", .pcm(), help: "PCM audio")],
        outputs: [PortDescriptor("out", .peaks, presence: .optional,
                                 help: "the peaks as they are computed: 16-bit min/max pairs per bin per channel")],
        parameters: binParameters + [mode, bits, splitChannels] as [any ParameterDeclaration] + files
            + [imageWidth, imageHeight, waveColor, backgroundColor, style] as [any ParameterDeclaration],
        rules: [.exclusive(samplesPerPixel, pixelsPerSecond, width)],
        needsBoundedInputWhen: .given(width),
        example: #"{ "type": "analysis.waveform", "params": { "samplesPerPixel": 256, "json": "out/waveform.json", "png": "out/waveform.png" } }"#
    )

    let context: NodeContext
    let files: [(kind: String, file: OutputFile)]
    /// What the stream has made so far, shared by the streaming thread and the run's.
    private struct State {
        var reducer: WaveformReducer?
        var format: MediaFormat.PCMFormat?
        var host: ProcessingHost?
        var emittedBins = 0
        var written: [String] = []
        var status: [String: OutputReport.Status] = [:]
    }
    private let state = Guarded(State())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        files = Self.files.compactMap { file in
            context.parameters[file].map { (file.name, OutputFile(path: $0, location: context.location(parameter: file.name), node: context.id)) }
        }
    }

    public func attach(_ host: ProcessingHost) { state.withLock { $0.host = host } }

    public func prepare() throws(GraphError) {
        for (kind, file) in files {
            try file.prepare()
            state.withLock { $0.status[kind] = .writing }
        }
    }

    public var outputs: [OutputReport] {
        state.withLock { s in files.map { OutputReport(node: context.id, path: $0.file.path, status: s.status[$0.kind] ?? .unknown) } }
    }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        guard case .pcm(let pcm) = format else {
            throw GraphError(.runFailed, "analysis.waveform takes PCM audio, got \(format)")
        }
        try state.withLock { (s) throws(GraphError) in
            if let old = s.format, old != pcm, s.reducer != nil {
                throw GraphError(.runFailed, "the audio format changed mid-stream (\(old.sampleRate) Hz \(old.channels) ch to \(pcm.sampleRate) Hz \(pcm.channels) ch)")
            }
            s.format = pcm
            if s.reducer == nil {
                s.reducer = WaveformReducer(samplesPerPixel: try samplesPerPixel(pcm, host: s.host), inputChannels: pcm.channels,
                                            splitChannels: context.parameters[Self.splitChannels], mode: context.parameters[Self.mode])
            }
        }
    }

    func samplesPerPixel(_ pcm: MediaFormat.PCMFormat, host: ProcessingHost?) throws(GraphError) -> Int {
        let p = context.parameters
        if let pps = p[Self.pixelsPerSecond] {
            let spp = pcm.sampleRate / pps
            guard spp >= 2 else {
                throw GraphError(.runFailed, at: context.location(parameter: "pixelsPerSecond"),
                                 "\(pps) pixels per second leaves fewer than 2 frames per bin at \(pcm.sampleRate) Hz", node: context.id)
            }
            return spp
        }
        if let width = p[Self.width] {
            guard let duration = host?.upstreamDuration() else {
                throw GraphError(.runFailed, at: context.location(parameter: "width"),
                                 "width needs a stream of known length, and this one does not say how long it is; use samplesPerPixel or pixelsPerSecond",
                                 node: context.id)
            }
            let frames = Int((duration.seconds * Double(pcm.sampleRate)).rounded())
            return max(2, (frames + width - 1) / width)
        }
        return p[Self.samplesPerPixel] ?? 256
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        try state.withLock { (s) throws(GraphError) in
            guard s.reducer != nil, let f = s.format else { throw GraphError(.runFailed, "PCM arrived before its format") }
            // Mutated where it is stored: no copy of the reducer (and its arrays) per buffer.
            switch f.sampleFormat {
            case .s16le: buffer.withAudioSamples(as: Int16.self) { s.reducer?.add($0) }
            case .f32le: buffer.withAudioSamples(as: Float.self) { s.reducer?.add($0) }
            }
            try emitNewBins(&s)
        }
        return false
    }

    public func endOfStream() throws(GraphError) {
        try state.withLock { (s) throws(GraphError) in try finishFiles(&s) }
    }

    /// The last bins sent, and every file written (not yet under its name), at the end of the stream.
    private func finishFiles(_ s: inout State) throws(GraphError) {
        guard s.reducer != nil, let f = s.format else { return }
        s.reducer?.finish()
        // `width` bins, however many more samples came than the stream said it had.
        if let width = context.parameters[Self.width] { s.reducer?.keepBins(width) }
        try emitNewBins(&s, final: true)
        guard let r = s.reducer else { return }
        let data = WaveformData(sampleRate: f.sampleRate, samplesPerPixel: r.samplesPerPixel, channels: r.outputChannels,
                                bits: context.parameters[Self.bits], data: r.data)
        let p = context.parameters
        // The colours were checked when the graph loaded; the defaults are valid by construction.
        let renderer = WaveformRenderer(width: p[Self.imageWidth], height: p[Self.imageHeight],
                                        waveColor: .init(hex: p[Self.waveColor]) ?? .init(hex: Self.defaultWaveColor) ?? .black,
                                        backgroundColor: .init(hex: p[Self.backgroundColor]) ?? .init(hex: Self.defaultBackgroundColor) ?? .black,
                                        style: p[Self.style])
        for (kind, file) in files {
            let write = { (bytes: [UInt8]) throws(GraphError) in try file.write(bytes) }
            switch kind {
            case "json": try data.encodeJSON(write)
            case "dat": try data.encodeDat(write)
            case "png": try renderer.encodePNG(data, write)
            default: try renderer.encodeSVG(data, write)
            }
            s.written.append(kind)
        }
    }

    /// Sends the bins finished since the last call downstream, as one peaks buffer: their values
    /// copied once, straight into it. Nothing is copied when nothing is connected.
    private func emitNewBins(_ s: inout State, final: Bool = false) throws(GraphError) {
        guard let host = s.host, host.isOutputConnected, let r = s.reducer, let f = s.format else { return }
        let emittedBins = s.emittedBins
        var total = r.binCount
        // With `width`, the last bin may take in samples past the stream's stated end: it goes
        // at the end, with them.
        if !final, let width = context.parameters[Self.width] { total = min(total, width - 1) }
        guard total > emittedBins else { return }
        let start = MediaTime(value: Int64(emittedBins * r.samplesPerPixel), timescale: Int32(f.sampleRate))
        let buffer = r.data[(emittedBins * 2 * r.outputChannels)..<(total * 2 * r.outputChannels)].withUnsafeBytes { values in
            SampleBuffer(format: .peaks(samplesPerPixel: r.samplesPerPixel, channels: r.outputChannels), bytes: values, presentationTime: start,
                         duration: MediaTime(value: Int64((total - emittedBins) * r.samplesPerPixel), timescale: Int32(f.sampleRate)))
        }
        s.emittedBins = total
        try host.emit(buffer)
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        let done = state.withLock { $0.written }
        var firstError: GraphError?
        for (kind, file) in files {
            var final: OutputReport.Status = outcome == .cancelled ? .cancelled : .failed
            if (outcome == .completed || outcome == .stopped) && done.contains(kind) {
                do {
                    try file.commit()
                    final = .completed
                } catch {
                    if firstError == nil { firstError = error }
                }
            } else {
                file.discard()
            }
            state.withLock { if $0.status[kind] != nil { $0.status[kind] = final } }
        }
        if let firstError { throw firstError }
    }
}
