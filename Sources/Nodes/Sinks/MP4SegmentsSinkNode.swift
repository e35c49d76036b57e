import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `sink.mp4segments`: a recording as a series of MP4 (or MOV) files of `segmentDuration` each,
/// the recorder's pattern (an NVR's hourly files; GStreamer's `splitmuxsink`, ffmpeg's segment
/// muxer): `path` `out/cam/rec-%05d.mp4` gives `rec-00000.mp4`, `rec-00001.mp4` …, each a whole
/// file that plays alone from 0.
///
/// - **Cuts.** A file ends at the video's first key frame at or after each multiple of
///   `segmentDuration` from the stream's first picture, which starts the next file (so every
///   file starts with a key frame); the sound before that picture's time stays in the file
///   before, the rest goes on in the next. Sound that arrives ahead of the pictures waits for
///   them to decide (at most ``holdLimit`` of it). Without video, the sound is cut at the
///   multiples themselves.
/// - **Files.** Each is written by GraphKit's one MP4 writer (``MP4Writer``) under a temporary
///   name beside its own and renamed into place when complete (its index last unless
///   `faststart`: moving the media up would hold the recording's thread at every cut), so a name in the series holds a
///   whole file or nothing. The numbers go on after the highest of the series already in the
///   folder, and a number whose name (or temporary name) is taken by anything is skipped: a
///   recorder started again never replaces a recording, and a name planted ahead (a link, a
///   pipe) is passed over, not followed.
/// - **Ends.** A run that completes or is stopped finishes the file under way. A failure keeps
///   the files already complete (what a recorder recorded) and removes the one under way; a
///   cancel removes every file of this run's.
///
/// - **Tags.** Each file keeps the text tags, cover, place, track languages and creation time of
///   the file the graph reads (`sourceTags`, on by default, as ffmpeg's `-map_metadata 0` and
///   `sink.mp4`); not its chapters, which are on the whole recording's timeline.
///
/// Memory: one file's index entries and chunk buffers at a time (as `sink.mp4`), and the held
/// sound.
public final class MP4SegmentsSinkNode: ElementNode, PlaysEncoderPriming, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.mp4segments",
        category: .sink,
        summary: "A recording as numbered MP4 / MOV files of segmentDuration each, every one starting on a key frame and playing alone",
        inputs: [
            PortDescriptor("audio", FormatSet([.aac, .audio(.opus), .audio(.alac)]), presence: .optional, help: "AAC, Opus or ALAC audio track"),
            PortDescriptor("video", FormatSet([.h264, .video(.hevc), .video(.vp9), .video(.av1)]), presence: .optional,
                           help: "H.264, HEVC, VP9 or AV1 video track: each file starts at one of its key frames"),
        ],
        parameters: [path, segmentDuration, faststart, sourceTags],
        requiresAnInput: true,
        example: #"{ "type": "sink.mp4segments", "params": { "path": "out/cam/rec-%05d.mp4", "segmentDuration": 300 } }"#
    )

    public static let path = RequiredParameter<String>(
        "path", format: .path, writesFile: true,
        help: "the files' path with one number in the name, %d or %05d (padded to five digits): out/cam/rec-%05d.mp4; .mov writes QuickTime; missing folders are created")
    public static let segmentDuration = Parameter<Double>("segmentDuration", 1...86_400, default: 300,
                                                          help: "seconds per file: each file ends at the first video key frame at or after each multiple of it")
    public static let faststart = Parameter<Bool>("faststart", default: false,
        help: "each file's index (moov) before its media data, for progressive playback; moving the media up takes a moment at every cut, on the recording's thread (seconds for a large file), so it is off by default")

    public static let sourceTags = Parameter<Bool>(
        "sourceTags", default: true,
        help: "give every file the tags, cover, place, track languages and creation time of the file the graph reads (the first upstream whose tags GraphKit reads: MP4, M4A, MOV, MP3, FLAC, Ogg), as ffmpeg's -map_metadata 0 does; false writes none")

    /// The most sound held while the video decides where a file ends: past it (the pictures
    /// stalled), the sound goes into the file under way, and the cut comes later.
    static let holdLimit = 2.0

    /// The files are cut before the encoder's priming is measured (at the stream's end): their
    /// sound plays from its first sample (``PlaysEncoderPriming``).
    public static func playsEncoderPriming(input: String, parameters: Parameters) -> Bool { true }

    let context: NodeContext
    let names: SegmentNames
    let target: Double
    let brand: MP4Writer.Brand
    let layout: MP4Writer.Layout
    /// The inputs connected, in track order: audio first, as `sink.mp4`; the lead (which decides
    /// the cuts) is the video when there is one.
    let ports: [String]
    let lead: Int
    /// What every file's index gets of the source's tags (``sourceTags``).
    let tags: [(key: FourCC, text: String)]
    let extraTags: MP4ExtraTags

    private struct Held { var buffer: SampleBuffer; var pts: MediaTime?; var dts: MediaTime?; var time: Double }

    private struct State {
        var status: OutputReport.Status = .unknown
        var failure: GraphError?
        /// The file under way: its number, its output file and writer.
        var number = 0
        var file: OutputFile?
        var writer: MP4Writer?
        /// The file before, after a cut and until every other track has reached the cut's time:
        /// what the lead had passed before the cut may still arrive from the others (the sound
        /// comes up to ``MuxInterleave/lead`` behind the pictures).
        var closing: (number: Int, file: OutputFile, writer: MP4Writer, cut: Double)?
        /// The files this run completed, and each one's identity (a cancel removes only those).
        var done: [(path: String, identity: FileIdentity?)] = []
        /// Each track's latest format, given to every new file's writer.
        var formats: [Int: MP4TrackFormat] = [:]
        /// Where the next cut may be (seconds on the run's clock); nil before the lead's first sample.
        var boundary: Double?
        /// Sound at or past ``boundary`` waiting for the video to decide which file it is in.
        var held: [Held] = []
        /// How the tracks wait for each other, and how far each has come (``MuxInterleave``).
        var interleave = MuxInterleave(inputs: 0)
        var edits = MP4Index.Edits()

        func isAhead(_ t: Int, _ time: Double) -> Bool {
            failure == nil && status == .writing && interleave.isAhead(t, time)
        }
    }
    private let state = Condition(State())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        let pattern = try context.parameters.value(Self.path)
        let parsed = SegmentNames.parse(pattern)
        guard let names = parsed.names else {
            throw GraphError(.invalidGraph, at: context.location(parameter: "path"), parsed.problem ?? "", node: context.id)
        }
        self.names = names
        target = context.parameters[Self.segmentDuration]
        let fileExtension = names.suffix.split(separator: ".").last.map { $0.lowercased() } ?? ""
        ports = ["audio", "video"].filter(context.connectedInputs.contains)
        brand = fileExtension == "mov" ? .mov : (fileExtension == "m4a" && !ports.contains("video") ? .m4a : .mp4)
        layout = context.parameters[Self.faststart] ? .indexFirst : .indexLast
        lead = ports.firstIndex(of: "video") ?? 0
        let source = context.parameters[Self.sourceTags] ? MP4SinkNode.sourceMetadata(upstreamOf: context) : nil
        tags = MP4SinkNode.textTags(source: source)
        extraTags = MP4SinkNode.extraTags(MP4ExtraTags(), keeping: source, context: context, fragmented: false, chapters: false)
        state.withLock { s in
            s.interleave = MuxInterleave(inputs: ports.count)
        }
    }

    public var outputs: [OutputReport] {
        state.withLock { s in
            var reports = s.done.map { OutputReport(node: context.id, path: $0.path, status: s.status == .cancelled ? .cancelled : .completed) }
            if s.file != nil || reports.isEmpty {
                reports.append(OutputReport(node: context.id, path: names.path(s.number), status: s.status == .completed && s.file == nil ? .completed : s.status))
            }
            return reports
        }
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let fail = bin.nodeFailure()
        for (track, port) in ports.enumerated() {
            let rising = try bin.make("gkrisingtimes", ["input": port])
            let accepted = try bin.makeCapsFilter(port == "audio" ? MP4SinkNode.audioCaps : MP4SinkNode.videoCaps)
            let sink = try bin.make("fakesink", ["sync": false])
            try bin.link(rising, accepted)
            try bin.link(accepted, sink)
            sink.onEncodedSamples { [self] event in receive(event, track: track, port: port, sink: sink, fail: fail) }
            try bin.expose(input: port, rising)
            bin.onStreamFacts(input: port) { [self] fact in
                state.withLock { s in
                    switch fact {
                    case .encoderDelay(let delay) where port == "audio": s.edits.audioDelay = delay
                    case .orientation(let orientation) where port == "video": s.edits.orientation = orientation
                    default: break
                    }
                }
            }
        }
    }

    public func prepare() throws(GraphError) {
        let first = names.next()
        let failure: GraphError? = state.withLock { s in
            s.status = .writing
            do throws(GraphError) { try open(&s, from: first) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }

    /// Opens the next file of the series from number `n` on (names taken are skipped), and gives
    /// its writer the formats known.
    private func open(_ s: inout State, from n: Int) throws(GraphError) {
        var n = n
        var skipped = 0
        while names.isTaken(n) {
            skipped += 1
            n += 1
            guard skipped < 10_000 else {
                throw GraphError(.outputUnwritable, at: context.location(parameter: "path"),
                                 "cannot start a file of the series \"\(names.path(0))\": 10000 names after \"\(names.path(n - skipped))\" are taken", node: context.id)
            }
        }
        let file = OutputFile(path: names.path(n), location: context.location(parameter: "path"), node: context.id)
        try file.prepare()
        var writer = MP4Writer(descriptor: file.descriptor, brand: brand, layout: layout, trackNames: ports)
        do throws(ContainerError) {
            for (track, format) in s.formats.sorted(by: { $0.key < $1.key }) { try writer.setFormat(format, track: track) }
        } catch {
            file.discard()
            throw writeError(error, path: names.path(n), failedWriting: writer.failedWriting)
        }
        (s.number, s.file, s.writer) = (n, file, writer)
    }

    private func writeError(_ error: ContainerError, path: String, failedWriting: Bool) -> GraphError {
        failedWriting
            ? GraphError(.outputUnwritable, at: "node \"\(context.id)\" (sink.mp4segments, writing \"\(path)\")",
                         "cannot write \"\(path)\": \(error.reason.lowercasedFirst)", node: context.id)
            : GraphError(.runFailed, at: "node \"\(context.id)\" (sink.mp4segments, writing \"\(path)\")", error.reason, node: context.id)
    }

    // MARK: Streaming threads

    /// Takes what reaches input `track` into the file under way, waiting (as `sink.mp4`'s inputs
    /// do) while it is ahead of the others; the lead's key frame past the boundary starts the next file.
    private func receive(_ event: Element.EncodedSampleEvent, track: Int, port: String, sink: Element,
                         fail: @Sendable (GraphError, Element) -> Void) {
        let time: Double? = if case .sample(_, let pts, let dts) = event, let t = (dts ?? pts)?.seconds, t.isFinite { t } else { nil }
        let failed: GraphError? = state.wait(until: { s in time.map { !s.isAhead(track, $0) } ?? true },
                                             atMost: MuxInterleave.wait, wakingWaiters: true) { s in
            if let time { s.interleave.waited(track, at: time) }
            guard s.failure == nil, s.status == .writing, s.writer != nil else { return nil }
            do throws(GraphError) {
                switch event {
                case .format(let format, let codecData, let details):
                    guard let f = MP4TrackFormat(format, codecData: codecData, details: details) else {
                        throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.mp4segments)",
                                         "its \(port) input's stream (\(format.map { "\($0)" } ?? "an unknown format")) does not say its size, rate or codec configuration", node: context.id)
                    }
                    s.formats[track] = f
                    try writing(&s) { (w) throws(ContainerError) in try w.setFormat(f, track: track) }
                case .sample(let buffer, let pts, let dts):
                    if let time { s.interleave.reach(track, time) }
                    try place(Held(buffer: buffer, pts: pts, dts: dts, time: time ?? s.interleave.latest(track)), track: track, in: &s)
                case .end:
                    s.interleave.end(track)
                    if track == lead { try release(&s) { _ in true } } else { try finishClosing(&s) }
                    // A track's end waits for its held samples: they still go into a file.
                    if track == lead || s.held.isEmpty { try writing(&s) { (w) throws(ContainerError) in try w.endTrack(track) } }
                case .flush:
                    // A seek's (a run started at a time prerolls, then seeks): what this input gave
                    // before it is stale, as in `sink.mp4`; the cuts start again from the lead's next sample.
                    s.writer?.restart(track: track)
                    s.interleave.restart(track)
                    if track == lead { s.boundary = nil } else { s.held.removeAll() }
                }
            } catch {
                s.failure = error
                return error
            }
            return nil
        }
        if let failed { fail(failed, sink) }
    }

    /// Puts a sample in the file it belongs to: the lead's sync sample at or past the boundary
    /// cuts; another track's sample at or past it waits for the lead (``State/held``).
    private func place(_ sample: Held, track: Int, in s: inout State) throws(GraphError) {
        let pts = (sample.pts ?? sample.dts)?.seconds ?? sample.time
        if track == lead {
            let isSync = ports[lead] != "video" || sample.buffer.flags.contains(.keyframe)
            if s.boundary == nil { s.boundary = pts + target }
            if isSync, let boundary = s.boundary, pts >= boundary - 1e-6 {
                try cut(&s, at: pts)
                s.boundary = HLSSegmenter.nextCut(boundary, after: pts, every: target)
            }
            try append(sample, track: track, &s)
            // What the lead has passed in decode order cannot follow a later cut: it stays here.
            try release(&s) { $0.time <= sample.time }
            return
        }
        if let closing = s.closing {
            if sample.time < closing.cut - 1e-6 { return try appendClosing(sample, track: track, &s) }
            try finishClosing(&s)
        }
        guard let boundary = s.boundary, !s.interleave.hasEnded(lead), sample.time >= boundary - 1e-6 else {
            return try append(sample, track: track, &s)
        }
        s.held.append(sample)
        if let first = s.held.first, sample.time - first.time > Self.holdLimit { try release(&s) { _ in true } }
    }

    /// Ends the file under way at the lead's sync sample shown at `time`: the held sound before
    /// it goes in first; then the next file is opened, and the rest of the held sound goes in it.
    /// The file before is finished once every other track has reached `time` (``State/closing``),
    /// at once when they all have.
    private func cut(_ s: inout State, at time: Double) throws(GraphError) {
        try finishClosing(&s)
        try release(&s) { $0.time < time - 1e-6 }
        guard let writer = s.writer, let file = s.file else { return }
        s.closing = (s.number, file, writer, time)
        (s.writer, s.file) = (nil, nil)
        do throws(GraphError) { try open(&s, from: s.number + 1) } catch {
            // The file before is whole: it is kept, though the next cannot be made.
            try? finishClosing(&s)
            throw error
        }
        try release(&s) { _ in true }
        if s.interleave.othersReached(time, besides: lead) {
            try finishClosing(&s)
        }
    }

    private func appendClosing(_ sample: Held, track: Int, _ s: inout State) throws(GraphError) {
        guard var closing = s.closing else { return }
        s.closing = nil
        defer { s.closing = closing }
        do throws(ContainerError) {
            try MP4SinkNode.append(sample.buffer, pts: sample.pts, dts: sample.dts, track: track, to: &closing.writer)
        } catch {
            throw writeError(error, path: names.path(closing.number), failedWriting: closing.writer.failedWriting)
        }
    }

    /// Finishes the file before the last cut, if it is still open.
    private func finishClosing(_ s: inout State) throws(GraphError) {
        guard let closing = s.closing else { return }
        s.closing = nil
        try finishFile(number: closing.number, file: closing.file, writer: closing.writer, &s)
    }

    /// Appends the held samples that `which` selects (they come first, in order) to the file under way.
    private func release(_ s: inout State, _ which: (Held) -> Bool) throws(GraphError) {
        let count = s.held.prefix(while: which).count
        guard count > 0 else { return }
        let taken = s.held.prefix(count)
        s.held.removeFirst(count)
        let track = ports.firstIndex(of: "audio") ?? 0
        for sample in taken { try append(sample, track: track, &s) }
        if s.held.isEmpty, s.interleave.hasEnded(track) { try writing(&s) { (w) throws(ContainerError) in try w.endTrack(track) } }
    }

    private func append(_ sample: Held, track: Int, _ s: inout State) throws(GraphError) {
        try writing(&s) { (w) throws(ContainerError) in try MP4SinkNode.append(sample.buffer, pts: sample.pts, dts: sample.dts, track: track, to: &w) }
    }

    private func writing(_ s: inout State, _ body: (inout MP4Writer) throws(ContainerError) -> Void) throws(GraphError) {
        guard s.writer != nil else { return }
        do throws(ContainerError) { try body(&s.writer!) } catch {
            throw writeError(error, path: names.path(s.number), failedWriting: s.writer!.failedWriting)
        }
    }

    /// Writes file `number`'s index and renames it into place.
    private func finishFile(number: Int, file: OutputFile, writer: MP4Writer, _ s: inout State) throws(GraphError) {
        var writer = writer
        var ending = MP4Writer.Ending()
        ending.edits = s.edits
        ending.tags = tags
        ending.extraTags = extraTags
        // The encoder's priming is at the stream's start: the first file's, when it is known by
        // then (an encoder's is measured at the stream's end), never a later file's.
        if !s.done.isEmpty { ending.edits.audioDelay = nil }
        do throws(ContainerError) { try writer.finish(ending) } catch {
            file.discard()
            throw writeError(error, path: names.path(number), failedWriting: writer.failedWriting)
        }
        try file.commit()
        s.done.append((names.path(number), FileIdentity(path: names.path(number))))
    }

    /// Discards the files under way (the closing one too).
    private func discardOpen(_ s: inout State) {
        s.closing?.file.discard()
        s.file?.discard()
        (s.closing, s.writer, s.file) = (nil, nil, nil)
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        let failure: GraphError? = state.withLock(wakingWaiters: true) { s in
            guard s.status == .writing else { return nil }
            switch outcome {
            case .completed, .stopped:
                do throws(GraphError) {
                    try finishClosing(&s)
                    try release(&s) { _ in true }
                    if let writer = s.writer, let file = s.file, !writer.tracksWithSamples.isEmpty {
                        (s.writer, s.file) = (nil, nil)
                        try finishFile(number: s.number, file: file, writer: writer, &s)
                    }
                    discardOpen(&s)
                    s.status = .completed
                } catch {
                    discardOpen(&s)
                    s.status = .failed
                    return error
                }
            case .failed:
                discardOpen(&s)
                s.status = .failed
            case .cancelled:
                discardOpen(&s)
                for done in s.done where done.identity != nil && FileIdentity(path: done.path) == done.identity { unlink(done.path) }
                s.status = .cancelled
            }
            return nil
        }
        if let failure { throw failure }
    }
}
