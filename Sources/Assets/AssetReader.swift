import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// Reads decoded samples out of a file, like `AVAssetReader`.
///
/// ```swift
/// let asset = try Asset(path: "talk.m4a")
/// let reader = try AssetReader(asset: asset)
/// let output = AssetReaderTrackOutput(track: try asset.track(withMediaType: .audio),
///                                     outputSettings: .linearPCM(sampleFormat: .f32le))
/// try reader.add(output)
/// try reader.startReading()
/// while let sample = output.copyNextSampleBuffer() { … }
/// if reader.status == .failed { throw reader.error! }
/// ```
///
/// Underneath it is a graph: per output, `source.file` → `decode` → `sink.app`. Each output
/// reads the file on its own, so one output read to its end while another is not read at all
/// cannot hold either back. A consumer that stops pulling makes its branch wait (the outputs are
/// bounded); ``cancelReading()`` or letting the reader go ends everything.
public final class AssetReader: @unchecked Sendable {
    /// Where reading is, like `AVAssetReader.Status`.
    public enum Status: String, Sendable {
        case unknown, reading, completed, failed, cancelled
    }

    public let asset: Asset
    private let lock = Lock()
    private var range: MediaTimeRange?
    private var outputs: [AssetReaderTrackOutput] = []
    private var run: GraphRun?
    private var state: Status = .unknown
    private var failure: GraphError?

    public init(asset: Asset) throws(GraphError) {
        self.asset = asset
    }

    /// The part of the file to read (by default, all of it): samples are given from `start`
    /// (audio to the sample, video from the frame showing then) up to `end`. Set it before
    /// ``startReading()``.
    public var timeRange: MediaTimeRange {
        get { lock.withLock { range ?? MediaTimeRange(start: .zero, duration: asset.duration) } }
        set { lock.withLock { if state == .unknown { range = newValue } } }
    }

    var requestedRange: MediaTimeRange? { lock.withLock { range } }

    public var status: Status {
        lock.withLock {
            refreshLocked()
            return state
        }
    }

    /// Why reading failed, once ``status`` is `.failed`.
    public var error: GraphError? {
        lock.withLock {
            refreshLocked()
            return failure
        }
    }

    private func refreshLocked() {
        guard state == .reading, let report = run?.finalReport else { return }
        switch report.status {
        case .failed:
            state = .failed
            failure = report.error
        case .completed, .stopped:
            state = .completed
        case .cancelled:
            break
        }
    }

    // MARK: Outputs

    public func canAdd(_ output: AssetReaderTrackOutput) -> Bool {
        (try? lock.withLock { () throws(GraphError) in try checkLocked(adding: output) }) != nil
    }

    /// Adds an output; throws, saying why, when ``canAdd(_:)`` would say no.
    public func add(_ output: AssetReaderTrackOutput) throws(GraphError) {
        try lock.withLock { () throws(GraphError) in
            try checkLocked(adding: output)
            try output.attach(to: self, number: outputs.count)
            outputs.append(output)
        }
    }

    private func checkLocked(adding output: AssetReaderTrackOutput) throws(GraphError) {
        let track = output.track
        guard state == .unknown else {
            throw GraphError(.usage, at: "AssetReader", "outputs are added before startReading(); this reader is \(state.rawValue)")
        }
        guard !output.isAttached else {
            throw GraphError(.usage, at: "\(track)", "this output belongs to a reader already; make a new AssetReaderTrackOutput")
        }
        guard track.assetPath == asset.path else {
            throw GraphError(.usage, at: "\(track)", "this track is of \"\(track.assetPath)\", not of this reader's \"\(asset.path)\"")
        }
        if let settings = output.outputSettings, settings.mediaType != track.mediaType {
            let fix = track.mediaType == .audio ? ".linearPCM(sampleFormat: .s16le) or .f32le" : ".pixels(.bgra)"
            throw GraphError(.usage, at: "\(track)", "a \(track.mediaType.rawValue) track cannot be read as \(settings.mediaType.rawValue); use \(fix)")
        }
        if case .linearPCM(_, let rate, let channels)? = output.outputSettings {
            if let rate, !(8_000...192_000).contains(rate) {
                throw GraphError(.usage, at: "\(track)", "sampleRate \(rate) is out of range: choose 8000 to 192000 Hz")
            }
            if let channels, !(1...8).contains(channels) {
                throw GraphError(.usage, at: "\(track)", "channels \(channels) is out of range: choose 1 to 8")
            }
        }
        if track.mediaType == .video, track.indexInType > 0 {
            throw GraphError(.usage, at: "\(track)", "only a file's first video track can be read; this is its video track \(track.indexInType + 1)")
        }
    }

    // MARK: Reading

    /// Builds the graph and starts decoding. A file that has become unreadable throws here.
    public func startReading() throws(GraphError) {
        let outputs = try lock.withLock { () throws(GraphError) -> [AssetReaderTrackOutput] in
            switch state {
            case .unknown: break
            case .cancelled: throw GraphError(.usage, at: "AssetReader", "reading was cancelled; make a new AssetReader")
            default: throw GraphError(.usage, at: "AssetReader", "startReading() was called already")
            }
            guard !self.outputs.isEmpty else { throw GraphError(.usage, at: "AssetReader", "add an output (add(_:)) before startReading()") }
            if let range, range.duration <= .zero || range.start < .zero {
                throw GraphError(.usage, at: "timeRange", "the time range \(range) is empty or starts before 0")
            }
            return self.outputs
        }
        do {
            var b = GraphBuilder(name: "AssetReader", description: "reads \(asset.path)")
            for output in outputs {
                let n = output.number
                let file = b.add("file\(n)", FileSourceNode.self) { $0[\.path] = asset.path }
                let decode = b.add("decode\(n)", DecodeNode.self) { p in
                    switch output.outputSettings {
                    case .linearPCM(let format, let rate, let channels)?:
                        p[\.sampleFormat] = .value(format)
                        p[\.sampleRate] = rate
                        p[\.channels] = channels
                    case .pixels(let format)?:
                        p[\.pixelFormat] = format
                    case nil:
                        p[\.sampleFormat] = .auto  // the decoder's own
                    }
                    if output.track.mediaType == .audio { p[\.track] = output.track.indexInType }
                }
                // Decoded audio comes in small samples (7 KB for 40 ms of 44.1 kHz stereo): 64 of
                // them hold little, and let a puller faster than the decoder be woken once per 32
                // (appqueue.c). Frames are big: the default 16.
                let sink = b.add("out\(n)", AppSinkNode.self) { p in
                    if output.track.mediaType == .audio { p[\.maxBuffers] = 64 }
                }
                b.connect(file.output(), to: decode.input())
                b.connect(decode.output(output.track.mediaType.rawValue), to: sink.input())
            }
            let run = try GraphRun(try b.build(registry: .builtIn))
            try run.start()
            lock.withLock {
                self.run = run
                state = .reading
            }
            for output in outputs { output.start(with: try run.output("out\(output.number)")) }
        } catch {
            lock.withLock {
                state = .failed
                failure = error
            }
            throw error
        }
    }

    /// Stops reading: every output returns nil from now on, and a pull waiting wakes.
    public func cancelReading() {
        let run: GraphRun? = lock.withLock {
            guard state == .unknown || state == .reading else { return nil }
            state = .cancelled
            return self.run
        }
        run?.cancel()
    }

    /// An output has given its last sample: once all have, reading is complete, and what is
    /// left of the file (past the time range) is not decoded.
    func outputEnded() {
        let run: GraphRun? = lock.withLock {
            guard state == .reading, outputs.allSatisfy(\.hasEnded) else { return nil }
            refreshLocked()
            if state == .reading { state = .completed }
            return state == .completed ? self.run : nil
        }
        if let run, run.finalReport == nil { run.cancel() }
    }

    /// The reader's outcome for an output that got nil: its error when reading failed or was
    /// cancelled.
    var endError: GraphError? {
        lock.withLock {
            refreshLocked()
            switch state {
            case .failed: return failure
            case .cancelled: return GraphError(.cancelled, at: "AssetReader", "reading was cancelled")
            default: return nil
            }
        }
    }
}

extension Asset {
    /// The first track of `mediaType`; throws, naming the file and what it holds, when it has none.
    public func track(withMediaType mediaType: MediaType) throws(GraphError) -> AssetTrack {
        guard let track = tracks(withMediaType: mediaType).first else {
            let has = tracks.isEmpty ? "no audio or video track" : tracks.map(\.description).joined(separator: ", ")
            throw GraphError(.usage, at: path, "\"\(path)\" has no \(mediaType.rawValue) track (it has \(has)); read another type, or another file")
        }
        return track
    }
}
