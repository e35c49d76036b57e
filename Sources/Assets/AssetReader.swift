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
///
/// Its state is a value, ``ReaderState`` (status, time range, which outputs have ended, and so
/// what a pull does), kept under one `Mutex` with the outputs and the run.
public final class AssetReader: Sendable {
    /// Where reading is, like `AVAssetReader.Status`.
    public enum Status: String, Sendable {
        case unknown, reading, completed, failed, cancelled
    }

    /// The file read; nil for a reader of a ``Composition``.
    public let asset: Asset?
    /// The composition read, for a reader made with ``init(composition:)``.
    public let composition: Composition?

    private struct Locked {
        var state = ReaderState()
        var outputs: [AssetReaderTrackOutput] = []
        var run: GraphRun?
        /// A composition's outputs' sequences of pieces, once reading started.
        var pieces: [CompositionPieces] = []

        /// A run that has ended on its own says how reading ended.
        mutating func refresh() {
            guard let report = run?.finalReport else { return }
            state.runEnded(report.status, error: report.error)
        }

        /// The state once the run's end is taken in: what `status` and `error` read.
        mutating func current() -> ReaderState {
            refresh()
            return state
        }
    }

    private let locked = Guarded(Locked())

    public init(asset: Asset) throws(GraphError) {
        self.asset = asset
        composition = nil
    }

    /// A reader of a composition, as `AVAssetReader(asset:)` given an `AVComposition`: each output,
    /// made with ``AssetReaderTrackOutput/init(compositionTrack:outputSettings:)``, gives its
    /// track's pieces decoded one after another as one stream, each piece's samples moved to where
    /// it plays (see ``CompositionPieces``); a gap gives no sample. Throws for a composition with
    /// nothing in it.
    public init(composition: Composition) throws(GraphError) {
        guard composition.tracks.contains(where: { !$0.pieces.isEmpty }) else {
            throw GraphError(.usage, at: "composition", "the composition has no piece to read: insert a time range of an asset first")
        }
        asset = nil
        self.composition = composition
    }

    /// How long what is read lasts: the asset's or the composition's duration.
    private var duration: MediaTime { asset?.duration ?? composition?.duration ?? .zero }

    /// The part of the file to read (by default, all of it): samples are given from `start`
    /// (audio to the sample, video from the frame showing then) up to `end`. Set it before
    /// ``startReading()``.
    public var timeRange: MediaTimeRange {
        get { locked.withLock { $0.state.range } ?? MediaTimeRange(start: .zero, duration: duration) }
        set { locked.withLock { $0.state.setRange(newValue) } }
    }

    public var status: Status {
        locked.withLock { $0.current().status }
    }

    /// Why reading failed, once ``status`` is `.failed`.
    public var error: GraphError? {
        locked.withLock { $0.current().error }
    }

    // MARK: Outputs

    public func canAdd(_ output: AssetReaderTrackOutput) -> Bool {
        (try? check(adding: output)) != nil
    }

    /// Adds an output; throws, saying why, when ``canAdd(_:)`` would say no.
    public func add(_ output: AssetReaderTrackOutput) throws(GraphError) {
        try check(adding: output)
        try locked.withLock { l throws(GraphError) in
            try l.state.checkAdding()
            try output.attach(to: self, number: l.state.outputCount)  // the output's lock inside the reader's: never the other way
            _ = l.state.add()
            l.outputs.append(output)
        }
    }

    private func check(adding output: AssetReaderTrackOutput) throws(GraphError) {
        try locked.withLock { l throws(GraphError) in try l.state.checkAdding() }
        let track = output.track
        guard !output.isAttached else {
            throw GraphError(.usage, at: "\(track)", "this output belongs to a reader already; make a new AssetReaderTrackOutput")
        }
        if let composition {
            try check(adding: output, of: composition)
            return
        }
        guard let asset else { return }
        if let piece = output.compositionTrack {
            throw GraphError(.usage, at: "composition track \(piece.trackID)", "this output reads a composition track; add it to a reader made with AssetReader(composition:)")
        }
        for track in [track] + output.mixedTracks where track.assetPath != asset.path {
            throw GraphError(.usage, at: "\(track)", "this track is of \"\(track.assetPath)\", not of this reader's \"\(asset.path)\"")
        }
        if !output.mixedTracks.isEmpty {
            if let other = output.mixedTracks.first(where: { $0.mediaType != .audio }) {
                throw GraphError(.usage, at: "\(other)", "only audio tracks can be mixed; read a video track with an output of its own")
            }
            guard output.mixedTracks.count <= 8 else {
                throw GraphError(.usage, at: "\(track)", "at most 8 tracks can be mixed in one output (this has \(output.mixedTracks.count))")
            }
            if case .stored? = output.outputSettings {
                throw GraphError(.usage, at: "\(track)", "mixed tracks are decoded: use .linearPCM(sampleFormat: .s16le) or .f32le, not samples as stored")
            }
        }
        if let settings = output.outputSettings, settings.mediaType != track.mediaType {
            let fix = track.mediaType == .audio ? ".linearPCM(sampleFormat: .s16le) or .f32le" : ".pixels(.bgra)"
            throw GraphError(.usage, at: "\(track)", "a \(track.mediaType.rawValue) track cannot be read as \(settings.mediaType.rawValue); use \(fix)")
        }
        if case .linearPCM(_, let rate, let channels)? = output.outputSettings {
            // decode's own ranges: it resamples and mixes.
            let rates = DeclaredRange(DecodeNode.sampleRate), counts = DeclaredRange(DecodeNode.channels)
            if let rate, !rates.allows(rate) {
                throw GraphError(.usage, at: "\(track)", "sampleRate \(rate) is out of range: choose \(rates.span) Hz")
            }
            if let channels, !counts.allows(channels) {
                throw GraphError(.usage, at: "\(track)", "channels \(channels) is out of range: choose \(counts.span)")
            }
        }
        if track.mediaType == .video, track.indexInType > 0 {
            throw GraphError(.usage, at: "\(track)", "only a file's first video track can be read; this is its video track \(track.indexInType + 1)")
        }
    }

    /// A composition reader's outputs read one of its tracks, and decode to one format all its
    /// pieces can be given in.
    private func check(adding output: AssetReaderTrackOutput, of composition: Composition) throws(GraphError) {
        guard let track = output.compositionTrack else {
            throw GraphError(.usage, at: "\(output.track)", "this reader reads a composition: make its outputs with AssetReaderTrackOutput(compositionTrack:outputSettings:)")
        }
        let at = "composition track \(track.trackID)"
        guard composition.track(withTrackID: track.trackID) == track else {
            throw GraphError(.usage, at: at, "this track is not one of the reader's composition (or was edited since): take the track from the composition read")
        }
        guard !track.pieces.isEmpty else { throw GraphError(.usage, at: at, "the track has no piece to read") }
        if let settings = output.outputSettings {
            if case .stored = settings {
                // Joined as stored: every piece of one codec and parameters, else refused by name.
                try track.checkPassthrough()
            }
            guard settings.mediaType == track.mediaType else {
                throw GraphError(.usage, at: at, "a \(track.mediaType.rawValue) track cannot be read as \(settings.mediaType.rawValue)")
            }
        }
        if track.mediaType == .video {
            // Frames of every piece go out in one format: one size, the track's natural size (a
            // piece of another size is fitted to it as it is read: CompositionPieces).
            for (n, piece) in track.pieces.enumerated() {
                guard let source = piece.sourceTrack else { continue }
                if source.indexInType > 0 {
                    throw GraphError(.usage, at: "\(at), piece \(n + 1)", "only a file's first video track can be read; \(piece) is its video track \(source.indexInType + 1)")
                }
            }
        }
    }

    // MARK: Reading

    /// Builds the graph and starts decoding. A file that has become unreadable throws here.
    public func startReading() throws(GraphError) {
        let (outputs, range) = try locked.withLock { l throws(GraphError) in
            try l.state.startReading()
            return (l.outputs, l.state.range)
        }
        guard let asset else { return try startReading(composition: outputs, range: range) }
        // Samples as stored from an MP4 or MOV's own index, each at the time its edit list
        // shows it (the priming packet, a B-frame's decode before 0), all stamped one lead later.
        var indexed: [Int: IndexedTrackSamples] = [:]
        for output in outputs where output.mixedTracks.isEmpty && output.readsIndex {
            if case .stored? = output.outputSettings, let samples = IndexedTrackSamples(path: asset.path, track: output.track) {
                indexed[output.number] = samples
            }
        }
        let lead = IndexedTrackSamples.lead(Array(indexed.values))
        let run: GraphRun?
        do {
            var b = GraphBuilder(name: "AssetReader", description: "reads \(asset.path)")
            for output in outputs where indexed[output.number] == nil {
                let n = output.number
                if let format = output.mixFormat {
                    // Each track decoded to the mix's format and summed (AVAssetReaderAudioMixOutput).
                    let mix = b.add("mix\(n)", AudioMixNode.self) { p in
                        p[\.sampleFormat] = format.sampleFormat
                        p[\.sampleRate] = format.sampleRate
                        p[\.channels] = format.channels
                    }
                    for (i, track) in output.mixedTracks.enumerated() {
                        let file = b.add("file\(n)-\(i)", FileSourceNode.self) { $0[\.path] = asset.path }
                        let decode = b.add("decode\(n)-\(i)", DecodeNode.self) { p in
                            p[\.sampleFormat] = .value(format.sampleFormat)
                            p[\.sampleRate] = format.sampleRate
                            p[\.channels] = format.channels
                            p[\.track] = track.indexInType
                        }
                        b.connect(file.output(), to: decode.input())
                        b.connect(decode.output("audio"), to: mix.input("in\(i)"))
                    }
                    let sink = b.add("out\(n)", AppSinkNode.self) { $0[\.maxBuffers] = 64 }
                    b.connect(mix.output(), to: sink.input())
                    continue
                }
                let file = b.add("file\(n)", FileSourceNode.self) { $0[\.path] = asset.path }
                if case .stored(let type)? = output.outputSettings {
                    // As stored: demuxed, not decoded.
                    let demux = b.add("demux\(n)", DemuxNode.self) { p in
                        if type == .audio { p[\.track] = output.track.indexInType }
                    }
                    let sink = b.add("out\(n)", AppSinkNode.self) { p in
                        if type == .audio { p[\.maxBuffers] = 64 }
                    }
                    b.connect(file.output(), to: demux.input())
                    b.connect(demux.output(type.rawValue), to: sink.input())
                    continue
                }
                let decode = b.add("decode\(n)", DecodeNode.self) { p in
                    switch output.outputSettings {
                    case .linearPCM(let format, let rate, let channels)?:
                        p[\.sampleFormat] = .value(format)
                        p[\.sampleRate] = rate
                        p[\.channels] = channels
                    case .pixels(let format)?:
                        p[\.pixelFormat] = format
                        // HDR frames tone-mapped when asked, by decode, from their full bit depth;
                        // 10-bit frames are asked for to keep them as they are.
                        p[\.toneMap] = output.toneMapsHDR && format.bitDepth == 8
                    case .stored?, nil:
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
                let decoded = decode.output(output.track.mediaType.rawValue)
                if let size = output.renderSize, output.track.mediaType == .video {
                    // Fitted to the size asked (a composition's piece of another size).
                    let scale = b.add("scale\(n)", ScaleNode.self) { p in
                        p[\.width] = size.width
                        p[\.height] = size.height
                        p[\.mode] = .fit
                    }
                    b.connect(decoded, to: scale.input())
                    b.connect(scale.output(), to: sink.input())
                    continue
                }
                b.connect(decoded, to: sink.input())
            }
            if indexed.count < outputs.count {
                let made = try GraphRun(try b.build(registry: .builtIn))
                try made.start()
                run = made
            } else {
                run = nil  // every output reads the index: nothing to demux or decode
            }
        } catch {
            locked.withLock { $0.state.startFailed(error) }
            throw error
        }
        let goesOn = locked.withLock { l in
            l.run = run
            return l.state.started()
        }
        guard goesOn else {
            run?.cancel()
            throw GraphError(.usage, at: "AssetReader", "reading was cancelled (cancelReading()) while it started; make a new AssetReader")
        }
        do {
            for output in outputs {
                if let samples = indexed[output.number] {
                    samples.start(lead: lead)
                    output.start(with: samples, lead: lead, range: range)
                } else if let run {
                    output.start(with: try run.output("out\(output.number)"), range: range)
                }
            }
        } catch {
            locked.withLock { $0.state.startFailed(error) }
            run?.cancel()
            throw error
        }
    }

    /// A composition's outputs: each reads its pieces in turn (``CompositionPieces``), each piece
    /// by a reader of its own made when the one before has ended, so nothing runs yet.
    private func startReading(composition outputs: [AssetReaderTrackOutput], range: MediaTimeRange?) throws(GraphError) {
        if range != nil, outputs.contains(where: { if case .stored? = $0.outputSettings { true } else { false } }) {
            // Cut by a time range, samples as stored would lose the keyframes their frames need.
            let error = GraphError(.usage, at: "timeRange", "a composition read as stored is cut where its pieces' ranges say: edit the composition (removeTimeRange) instead of setting timeRange")
            locked.withLock { $0.state.startFailed(error) }
            throw error
        }
        // Samples as stored are stamped from where the first video piece's first frame shows
        // (its decode delay: GStreamer's stamps cannot go below 0), every output alike.
        let lead = outputs.compactMap { output -> MediaTime? in
            guard case .stored(.video)? = output.outputSettings, let first = output.compositionTrack?.pieces.first else { return nil }
            return max(first.mediaOffset, .zero)
        }.max() ?? .zero
        let sequences = outputs.map { output in
            let track = output.compositionTrack!
            let pieces = track.pieces.filter { piece in
                guard let range else { return true }
                return piece.destinationRange.end > range.start && piece.destinationRange.start < range.end
            }
            return CompositionPieces(pieces: pieces, settings: Self.settings(output.outputSettings, for: track), lead: lead,
                                     renderSize: track.naturalSize, toneMapsHDR: output.toneMapsHDR)
        }
        let goesOn = locked.withLock { l in
            l.pieces = sequences
            return l.state.started()
        }
        guard goesOn else {
            throw GraphError(.usage, at: "AssetReader", "reading was cancelled (cancelReading()) while it started; make a new AssetReader")
        }
        for (output, sequence) in zip(outputs, sequences) { output.start(with: sequence, range: range) }
    }

    /// The settings every piece of `track` is decoded with, so that they join: audio at the
    /// rate and channel count asked for, else the first piece's (decoding resamples and mixes
    /// the others), 16-bit unless asked otherwise; frames in BGRA unless asked otherwise.
    static func settings(_ asked: ReaderOutputSettings?, for track: CompositionTrack) -> ReaderOutputSettings {
        let first = track.pieces.first?.sourceTrack?.stream
        switch (asked, track.mediaType) {
        case (.linearPCM(let format, let rate, let channels)?, _):
            return .linearPCM(sampleFormat: format, sampleRate: rate ?? first?.sampleRate, channels: channels ?? first?.channels)
        case (let asked?, _): return asked
        case (nil, .audio): return .linearPCM(sampleFormat: .s16le, sampleRate: first?.sampleRate, channels: first?.channels)
        case (nil, .video): return .pixels(.bgra)
        }
    }

    /// A composition output's sequence, or a file track read from its index, failed: reading
    /// fails with its error (the piece or track named).
    func pieceFailed(_ error: GraphError) {
        locked.withLock { $0.state.runEnded(.failed, error: error) }
    }

    /// Stops reading: every output returns nil from now on, and a pull waiting wakes.
    public func cancelReading() {
        let (cancels, run, pieces) = locked.withLock { l in (l.state.cancel(), l.run, l.pieces) }
        if cancels {
            run?.cancel()
            for sequence in pieces { sequence.cancel() }
        }
    }

    // MARK: For the outputs

    /// What output `number`'s copyNextSampleBuffer() does now.
    func pull(output number: Int) -> ReaderState.Pull {
        locked.withLock { l in
            l.refresh()
            return l.state.pull(output: number)
        }
    }

    /// Output `number` has given its last sample: once all have, reading is complete, and what
    /// is left of the file (past the time range) is not decoded.
    func outputEnded(_ number: Int) {
        let run: GraphRun? = locked.withLock { l in
            l.refresh()
            return l.state.outputEnded(number) ? l.run : nil
        }
        if let run, run.finalReport == nil { run.cancel() }
    }

    /// The reader's outcome for an output that got nil: its error when reading failed or was
    /// cancelled.
    var endError: GraphError? {
        locked.withLock { l in
            l.refresh()
            return l.state.endError
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
