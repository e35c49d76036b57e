import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `sink.mp4`: writes MP4, M4A or MOV, like `AVAssetWriter`.
///
/// Status runs unknown → writing → completed | failed | cancelled. Without fragments the file is
/// written beside the target under a temporary name and renamed when complete, so an existing
/// file is only ever replaced by a complete one and a failed run leaves nothing under the target
/// name. With `fragmentInterval` the file is written under its name from the start, so a crash
/// keeps every fragment written (`movieFragmentInterval`).
///
/// The file is written by GraphKit's one MP4 writer (`MP4Writer`, in the container library),
/// from the encoded samples as they reach this node's inputs (each input ends in a `fakesink`
/// whose samples the writer takes under one lock, each copied once, into its chunk): GStreamer
/// schedules and encodes, the writer muxes. Each sample entry comes from the
/// stream's caps (avcC, hvcC, av1C, vpcC, esds, dOps, alac, and FLAC's dfLa from the header
/// gkmp4flac keeps), the video's colour (`colr`, and `mdcv`/`clli` for HDR) from its caps; the
/// tracks interleave in chunks of a quarter of a second; the index is built once at the end with what the
/// run learnt: an AAC track's edit list from its measured encoder delay (gapless: decoders give
/// back the input's samples, aligned), the display matrix from `videoTransform` or the video's
/// orientation tag, where `AVAssetWriter.endSession` ends the presentation, the tags, cover,
/// location and chapters. With `faststart` the index goes first: the media is written from the
/// file's start and moved up in place after it at the end, as ffmpeg's faststart moves it (the
/// file is under its temporary name until then: nothing half-written under the output's).
///
/// FLAC (MP4 and M4A; not MOV, which xiph's mapping leaves out and ffmpeg refuses; not
/// fragmented) is written as ffmpeg writes it: one frame a sample, the media clock at the
/// stream's rate, each sample's duration its frame's block size, a `fLaC` sample entry whose
/// `dfLa` holds the stream's metadata blocks, STREAMINFO first, with its sample count and MD5 as
/// the encoder rewrote them at the end (flacenc seeks back in bytes to do so: gkmp4flac answers
/// that seek and keeps the header), and an edit list exact to the sample.
///
/// Example:
/// ```json
/// "file": { "type": "sink.mp4", "params": { "path": "out/capture.m4a", "faststart": true } }
/// ```
///
/// The tags, cover, place, chapters, track languages and creation time of the file the graph
/// reads (`sourceTags`, on by default, as ffmpeg's `-map_metadata 0`) are kept where a parameter
/// does not set them: read from that file by the container library (`MediaMetadata`), the same
/// on a pipeline and on the container path (MP4SinkTags.swift).
///
/// Fed by stored streams alone (`source.concat`), it needs no pipeline: on the container path
/// (``RunPlan/containerPath``) the run's thread hands it their samples in decode order, which it
/// writes as it writes a pipeline's.
public final class MP4SinkNode: ElementNode, StoredSampleSink, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.mp4",
        category: .sink,
        summary: "MP4 / M4A / MOV writer",
        inputs: [
            PortDescriptor("audio", FormatSet([.aac, .audio(.opus), .audio(.alac), .audio(.flac)]), presence: .optional,
                           help: "AAC, Opus, ALAC or FLAC audio track (FLAC in MP4 and M4A, not MOV)"),
            PortDescriptor("video", FormatSet([.h264, .video(.hevc), .video(.vp9), .video(.av1)]), presence: .optional,
                           help: "H.264, HEVC (hvc1), VP9 or AV1 video track"),
        ],
        parameters: [path, container, faststart, fragmentInterval, videoTransform, fileLengthLimit] + tags.map(\.parameter) + [cover, location, chapters, sourceTags],
        requiresAnInput: true,
        example: #"{ "type": "sink.mp4", "params": { "path": "out/capture.m4a", "faststart": true } }"#
    )

    public static let path = RequiredParameter<String>("path", format: .path, writesFile: true, help: "the file to write; missing folders are created")
    public enum Container: String, ParameterEnum { case auto, mp4, m4a, mov }
    public static let container = Parameter<Container>("container", default: .auto,
                                                help: "file type; auto takes it from the extension (.mov is QuickTime, anything else MP4)")
    public static let faststart = Parameter<Bool>("faststart", default: true, help: "index (moov) before the media data, for progressive playback")
    public static let fragmentInterval = Parameter<Double>("fragmentInterval", 0...3600, default: 0,
                                                    help: "seconds per fragment; 0 writes one unfragmented file")
    public static let fileLengthLimit = OptionalParameter<Int>(
        "fileLengthLimit", 4096...Int.max,
        help: "the most bytes the file may have (AVAssetExportSession.fileLengthLimit, ffmpeg's -fs): the file ends, complete, with the samples before the one that would pass it")
    /// What a file with a `fileLengthLimit` keeps for its boxes besides the samples and their
    /// index entries (ftyp, the movie and track headers, sample descriptions, tags): an upper
    /// bound, counted before the first sample.
    public static let boxReserve = 16 << 10

    public static let videoTransform = OptionalParameter<String>(
        "videoTransform", format: .pattern(#"^\s*[-+0-9.eE]+([ ,]+[-+0-9.eE]+){5}\s*$"#, "six numbers \"a b c d tx ty\", such as \"0 1 -1 0 0 0\""),
        help: "the video track's display matrix (AVAssetWriterInput.transform), \"a b c d tx ty\": \"0 1 -1 0 0 0\" shows it turned 90° clockwise; without it, the video's orientation tag, if any")

    // The tag parameters are declared here, in the type, and not in an extension in another
    // file: a key path to a static property declared in an extension (`p[\.title]`, as the
    // export session sets them) crashed the Swift 6.3 runtime (_walkKeyPathPattern, null pointer).
    public static let title = OptionalParameter<String>("title", help: "the file's title tag (©nam)")
    public static let artist = OptionalParameter<String>("artist", help: "the artist tag (©ART)")
    public static let album = OptionalParameter<String>("album", help: "the album tag (©alb)")
    public static let albumArtist = OptionalParameter<String>("albumArtist", help: "the album artist tag (aART)")
    public static let genre = OptionalParameter<String>("genre", help: "the genre tag (©gen)")
    public static let comment = OptionalParameter<String>("comment", help: "the comment tag (©cmt)")
    public static let encoder = OptionalParameter<String>("encoder", help: "the software that made the file (©too), as ffmpeg writes its own name")
    public static let date = OptionalParameter<String>(
        "date", format: .pattern(#"^[0-9]{4}(-[0-9]{2}(-[0-9]{2}(T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[-+][0-9]{2}:?[0-9]{2})?)?)?)?$"#,
                                 "an ISO 8601 date, such as \"2024-05-01\" or \"2024-05-01T12:00:00Z\""),
        help: "the date tag (©day), ISO 8601, written as given")

    public static let cover = OptionalParameter<String>(
        "cover", format: .path, help: "a JPEG or PNG file: the cover picture (covr), as iTunes and AVFoundation write it")
    public static let location = OptionalParameter<String>(
        "location", format: .pattern(#"^[-+][0-9]{1,2}(\.[0-9]+)?[-+][0-9]{1,3}(\.[0-9]+)?([-+][0-9]+(\.[0-9]+)?)?/?$"#,
                                     "an ISO 6709 point, such as \"+48.8583+002.2945/\""),
        help: "where it was recorded (©xyz), ISO 6709: \"+48.8583+002.2945/\"")
    public static let chapters = OptionalParameter<String>(
        "chapters", format: .pattern(#"^\s*[0-9]+(\.[0-9]+)?[ \t]+[^\n]*(\n\s*[0-9]+(\.[0-9]+)?[ \t]+[^\n]*)*\s*$"#,
                                     "one chapter a line, its start in seconds and its title: \"0 Intro\\n62.5 Part two\""),
        help: "chapters (Nero chpl, as ffmpeg writes them), one a line: the start in seconds, a space, the title")

    /// The file's own tags (`moov/udta/meta/ilst`, as iTunes and AVFoundation write them): each
    /// parameter, named as `MediaMetadata`'s field, and its item's key.
    static let tags: [(parameter: OptionalParameter<String>, key: FourCC)] = [
        (title, FourCC(0xA96E_616D)), (artist, FourCC(0xA941_5254)), (album, FourCC(0xA961_6C62)), (albumArtist, "aART"),
        (genre, FourCC(0xA967_656E)), (comment, FourCC(0xA963_6D74)), (date, FourCC(0xA964_6179)), (encoder, FourCC(0xA974_6F6F)),
    ]

    public static let sourceTags = Parameter<Bool>(
        "sourceTags", default: true,
        help: "keep the tags, cover, chapters, place, track languages and creation time of the file the graph reads (the first upstream whose tags GraphKit reads: MP4, M4A, MOV, MP3, FLAC, Ogg) where this node's parameters do not set them, as ffmpeg's -map_metadata 0 does; false writes only the parameters'")

    let context: NodeContext
    let path: String
    let fragmentInterval: Double
    let file: OutputFile
    /// Set while the graph is built, then read and written from the run's threads.
    private struct State {
        var brand: MP4Writer.Brand = .mp4
        var faststart = false
        /// The file's writer, made when the file is (prepare); every input's samples go through
        /// it under this lock.
        var writer: MP4Writer?
        /// The audio input's gkmp4flac: what it kept of a FLAC stream's header.
        var flac: Element?
        var flacInput = false
        /// An input's codec the file cannot hold failed the run: nothing written stays, even in
        /// a fragmented file (written under its name), which keeps what it wrote otherwise.
        var refusedInput = false
        var failure: GraphError?
        var status: OutputReport.Status = .unknown
        /// What the index gets at the end: the edits, tags and a FLAC header.
        var ending = MP4Writer.Ending()
        /// The cover, place, chapters, languages and creation time, written into the index.
        var extraTags = MP4ExtraTags()
        /// The tags of the file read upstream, kept where the parameters set none (`sourceTags`).
        var source: MediaMetadata?
        /// The length limit's count of bytes, when the file has one.
        var budget: ByteBudget?
        /// How the inputs wait for each other (``MuxInterleave``).
        var interleave = MuxInterleave(inputs: 0)
        /// On the container path: each track's format, known before the file is made, given to the
        /// writer as it is made.
        var storedFormats: [Int: MP4TrackFormat] = [:]

        /// Whether input `t`'s sample at `time` waits for the others (``MuxInterleave``): only
        /// while the file is being written.
        func isAhead(_ t: Int, _ time: Double) -> Bool {
            failure == nil && status == .writing && writer != nil && interleave.isAhead(t, time)
        }
    }
    private let state = Condition(State())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        path = try context.parameters.value(Self.path)
        fragmentInterval = context.parameters[Self.fragmentInterval]
        if let text = context.parameters[Self.videoTransform] {
            guard let m = DisplayMatrix(text: text), m.isStorable else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "videoTransform"),
                                 "\"\(text)\" is not a display matrix a file holds: write six numbers \"a b c d tx ty\", each within ±32768",
                                 node: context.id)
            }
            guard fragmentInterval == 0 else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "videoTransform"),
                                 "a display matrix is written into the index once the file is finished, and a fragmented file (fragmentInterval) is written as it goes: leave out one of the two",
                                 node: context.id)
            }
            guard context.connectedInputs.contains("video") else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "videoTransform"),
                                 "a display matrix is for a video track, and the video input is not connected", node: context.id)
            }
            state.withLock { $0.ending.edits.videoMatrix = m }
        }
        file = OutputFile(path: path, location: context.location(parameter: "path"), node: context.id)
        let extra = try Self.extraTags(context)
        if !extra.isEmpty, fragmentInterval != 0 {
            throw GraphError(.invalidGraph, at: context.location(parameter: "fragmentInterval"),
                             "a cover, location or chapters are written into the index once the file is finished, and a fragmented file (fragmentInterval) is written as it goes: leave out one of the two",
                             node: context.id)
        }
        let source = Self.sourceMetadata(context)
        let kept = Self.extraTags(extra, keeping: source, context: context, fragmented: fragmentInterval != 0)
        state.withLock {
            $0.extraTags = kept
            $0.source = source
        }
    }

    /// Adds a cover, a location, chapters, languages or a creation time (the export session's and writer's metadata) to
    /// what the finished index gets; call it before the run starts. Throws, naming the tag, for
    /// a cover that is not a JPEG or PNG picture (the run then writes nothing).
    package func addExtraTags(_ more: MP4ExtraTags) throws(GraphError) {
        if let problem = more.problem {
            let parameter = more.artwork.map { MP4ExtraTags.pictureType($0) == nil } == true ? "cover" : more.location != nil && more.chapters.isEmpty ? "location" : "chapters"
            throw GraphError(.usage, at: context.location(parameter: parameter), problem, node: context.id)
        }
        state.withLock { s in
            if let artwork = more.artwork { s.extraTags.artwork = artwork }
            if let location = more.location { s.extraTags.location = location }
            if !more.chapters.isEmpty { s.extraTags.chapters = more.chapters }
            if !more.languages.isEmpty { s.extraTags.languages = more.languages }
            if let made = more.creationTime { s.extraTags.creationTime = made }
        }
    }

    var writesInPlace: Bool { fragmentInterval > 0 }

    /// The streams the writer takes as they are: MP4's stored forms (AVC and HEVC access units
    /// with their configuration in the caps, raw AAC), and gkmp4flac's stand-in for FLAC.
    static let audioCaps = "audio/mpeg, mpegversion=(int)4, stream-format=(string)raw; audio/x-opus; audio/x-alac"
    /// Pictures of 16x16 or more (one macroblock), as mp4mux took them: a smaller one (a file
    /// claiming 1x1) is refused before the encoder, naming this node and the size it takes.
    static let videoCaps = ["video/x-h264, stream-format=(string){ avc, avc3 }, alignment=(string)au",
                            "video/x-h265, stream-format=(string){ hvc1, hev1 }, alignment=(string)au", "video/x-vp9", "video/x-av1"]
        .map { $0 + ", width=(int)[\(smallestPicture), 2147483647], height=(int)[\(smallestPicture), 2147483647]" }.joined(separator: "; ")
    /// The least width and height a picture may have (one macroblock).
    static let smallestPicture = 16

    public var output: OutputReport? {
        OutputReport(node: context.id, path: path, status: state.withLock { $0.status })
    }

    /// The inputs connected, in track order (the writer's tracks: audio first, as before).
    var ports: [String] { ["audio", "video"].filter(context.connectedInputs.contains) }

    /// The file's type, layout, tags and length limit, from the parameters: what both paths set up.
    private func configure() throws(GraphError) -> (isMov: Bool, budget: ByteBudget?) {
        let container = context.parameters[Self.container]
        let fileExtension = file.target.pathExtension.lowercased()
        let isMov = container == .mov || (container == .auto && fileExtension == "mov")
        var brand: MP4Writer.Brand = isMov ? .mov : .mp4
        if container == .m4a || (container == .auto && fileExtension == "m4a") {
            if context.connectedInputs.contains("video") {
                if container == .m4a {
                    throw GraphError(.invalidGraph, at: context.location(parameter: "container"),
                                     "an M4A file holds sound only, and the video input is connected: write an MP4 (container mp4) or leave the video out",
                                     node: context.id)
                }
            } else {
                brand = .m4a
            }
        }
        let faststart = !writesInPlace && context.parameters[Self.faststart]
        state.withLock {
            $0.brand = brand
            $0.faststart = faststart
            $0.ending.tags = Self.textTags(source: $0.source) { context.parameters[$0] }
        }
        // A length limit: every input's samples count against one budget, each with what its
        // index entries may take (an upper bound: 32 bytes a sample, the tables' most), and the
        // index's fixed part and tags; the first sample that would pass it ends every input.
        let budget = context.parameters[Self.fileLengthLimit].map { ByteBudget(limit: Int64($0)) }
        state.withLock { $0.budget = budget }
        return (isMov, budget)
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let (isMov, budget) = try configure()
        let fail = bin.nodeFailure()
        for (track, port) in ports.enumerated() {
            // An index cannot hold samples whose decode times go back: such a stream fails the
            // run at gkrisingtimes, naming the input, before anything of it is written.
            let rising = try bin.make("gkrisingtimes", ["input": port])
            if let budget { rising.passWhile { budget.admit($0) } }
            // What the writer holds, as the port's formats say: a stream of another codec (or
            // described otherwise) is not negotiated, and demux names it before the run writes.
            let accepted = try bin.makeCapsFilter(port == "audio" ? Self.audioCaps : Self.videoCaps)
            let sink = try bin.make("fakesink", ["sync": false])
            try bin.link(rising, accepted)
            try bin.link(accepted, sink)
            sink.onEncodedSamples { [self] event in receive(event, track: track, port: port, sink: sink, fail: fail) }
            if port == "audio" {
                // FLAC: flacenc rewrites its header (STREAMINFO's sample count and MD5) at the end
                // by seeking back in bytes, which gkmp4flac answers, keeping the header for the
                // sample entry; the frames reach the writer under stand-in caps of the rate and
                // channels. Every other stream passes untouched.
                let flac = try bin.make("gkmp4flac")
                try bin.link(flac, rising)
                try bin.expose(input: port, flac)
                state.withLock { $0.flac = flac }
                flac.onInputFormat { [self] format in
                    guard case .audio(.flac, _, _) = format else { return }
                    if let problem = Self.refusal(ofFLACIn: isMov ? .mov : .mp4, fragmented: writesInPlace) {
                        state.withLock { $0.refusedInput = true }
                        flac.postError("\(problem) (\(path))")
                    }
                    state.withLock { $0.flacInput = true }
                }
            } else {
                try bin.expose(input: port, rising)
            }
            bin.onStreamFacts(input: port) { [self] fact in
                state.withLock { state in
                    switch fact {
                    case .encoderDelay(let delay) where port == "audio": state.ending.edits.audioDelay = delay
                    case .orientation(let orientation) where port == "video": state.ending.edits.orientation = orientation
                    default: break
                    }
                }
            }
        }
    }

    public func prepare() throws(GraphError) {
        try file.prepare(inPlace: writesInPlace)
        let (brand, faststart) = state.withLock { ($0.brand, $0.faststart) }
        let layout: MP4Writer.Layout = writesInPlace ? .fragmented(seconds: fragmentInterval) : faststart ? .indexFirst : .indexLast
        let writer = MP4Writer(descriptor: file.descriptor, brand: brand, layout: layout, trackNames: ports)
        // (A failure here ends the run before it plays: its finish(.failed) removes the file.)
        let refused: GraphError? = state.withLock { s in
            s.writer = writer
            s.status = .writing
            s.interleave = MuxInterleave(inputs: ports.count)
            do throws(ContainerError) {
                for (track, format) in s.storedFormats.sorted(by: { $0.key < $1.key }) { try s.writer!.setFormat(format, track: track) }
            } catch {
                return writeError(error, s.writer!)
            }
            return nil
        }
        if let refused { throw refused }
    }

    /// The run's error for what `writer` threw: a write that failed (a full disk: 73) names the
    /// file as the run names a node writing it, and the system's reason; anything else (times
    /// that go back, a format the file cannot hold) fails the run naming this node.
    private func writeError(_ error: ContainerError, _ writer: MP4Writer) -> GraphError {
        writer.failedWriting
            ? GraphError(.outputUnwritable, at: "node \"\(context.id)\" (sink.mp4, writing \"\(path)\")",
                         "cannot write \"\(path)\": \(error.reason.lowercasedFirst)", node: context.id)
            : GraphError(.runFailed, at: "node \"\(context.id)\" (sink.mp4)", error.reason, node: context.id)
    }

    // MARK: Streaming threads

    /// Takes what reaches input `track`'s end on its streaming thread into the writer. A sample
    /// ahead of another input first waits for it, as a muxer's pads wait (``MuxInterleave``):
    /// each sample, every end and failure wakes it. One acquisition of the lock a sample that
    /// does not wait.
    private func receive(_ event: Element.EncodedSampleEvent, track: Int, port: String, sink: Element,
                         fail: @Sendable (GraphError, Element) -> Void) {
        let time: Double? = if case .sample(_, let pts, let dts) = event, let t = (dts ?? pts)?.seconds, t.isFinite { t } else { nil }
        let failed: GraphError? = state.wait(until: { s in time.map { !s.isAhead(track, $0) } ?? true },
                                             atMost: MuxInterleave.wait, wakingWaiters: true) { s in
            if let time { s.interleave.waited(track, at: time) }
            guard s.failure == nil, s.status == .writing, s.writer != nil else { return nil }
            do throws(ContainerError) {
                switch event {
                case .format(let format, let codecData, let details):
                    guard let f = MP4TrackFormat(format, codecData: codecData, details: details, flac: port == "audio" && s.flacInput) else {
                        throw ContainerError("its \(port) input's stream (\(format.map { "\($0)" } ?? "an unknown format")) does not say its size, rate or codec configuration")
                    }
                    try s.writer!.setFormat(f, track: track)
                case .sample(let buffer, let pts, let dts):
                    if let time { s.interleave.reach(track, time) }
                    try Self.append(buffer, pts: pts, dts: dts, track: track, to: &s.writer!)
                case .end:
                    s.interleave.end(track)
                    try s.writer!.endTrack(track)
                case .flush:
                    // A seek's (a run started at a time prerolls, then seeks): what this input
                    // gave before it is stale.
                    s.interleave.restart(track)
                    s.writer!.restart(track: track)
                }
            } catch {
                let e = writeError(error, s.writer!)
                s.failure = e
                return e
            }
            return nil
        }
        if let failed { fail(failed, sink) }
    }

    /// Appends `buffer` (presented at `pts`, decoded at `dts`) to track `track`'s samples.
    static func append(_ buffer: SampleBuffer, pts: MediaTime?, dts: MediaTime?, track: Int, to writer: inout MP4Writer) throws(ContainerError) {
        guard let f = writer.format(track: track), let time = pts ?? dts else { return }
        let scale = Double(f.timescale)
        func ticks(_ m: MediaTime) -> Int64 { Int64(saturating: (m.seconds * scale).rounded()) }
        // A sample wholly before the run's start (a demuxer's before its track's edit) is not
        // presented: left out, as GStreamer's muxers clip it.
        if let pts, let duration = buffer.duration, duration.seconds > 0, (pts + duration).seconds <= 0 { return }
        try buffer.withUnsafeBytes { (bytes) throws(ContainerError) in
            try writer.append(track: track, bytes: bytes, decodeTime: ticks(dts ?? time), presentationTime: ticks(time),
                              duration: buffer.duration.map(ticks), isSync: !f.isVideo || buffer.flags.contains(.keyframe))
        }
    }

    // MARK: The container path (the run's thread)

    package func configureStored(_ inputs: [String: MP4TrackFormat]) throws(GraphError) {
        _ = try configure()
        // As the video input's caps (videoCaps) refuse them on a pipeline.
        let least = Self.smallestPicture
        if let video = inputs["video"], video.isVideo, video.size.width < least || video.size.height < least {
            throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.mp4, writing \"\(path)\")",
                             "its video input's pictures are \(video.size.width)x\(video.size.height), and it takes pictures of \(least)x\(least) or more", node: context.id)
        }
        var formats: [Int: MP4TrackFormat] = [:]
        for (track, port) in ports.enumerated() { formats[track] = inputs[port] }
        // A copied sound's edit (its encoder's priming and length) is written as an encoder's.
        let delay = inputs["audio"]?.encoderDelay
        state.withLock { s in
            s.storedFormats = formats
            if let delay { s.ending.edits.audioDelay = delay }
        }
    }

    package func writeStored(_ sample: SampleBuffer, port: String) throws(GraphError) -> Bool {
        guard let track = ports.firstIndex(of: port) else { return false }
        return try writingStored { (s) throws(ContainerError) -> Bool in
            if let budget = s.budget, !budget.admit(sample.byteCount) { return false }
            try Self.append(sample, pts: sample.presentationTime, dts: sample.decodeTime, track: track, to: &s.writer!)
            return true
        }
    }

    package func endStored(port: String) throws(GraphError) {
        guard let track = ports.firstIndex(of: port) else { return }
        _ = try writingStored { (s) throws(ContainerError) -> Bool in
            try s.writer!.endTrack(track)
            return true
        }
    }

    /// `body` with the writer: whether the track takes more. A writer's error fails the run as a
    /// pipeline's would.
    private func writingStored(_ body: (inout State) throws(ContainerError) -> Bool) throws(GraphError) -> Bool {
        let outcome: Result<Bool, GraphError> = state.withLock { s in
            guard s.failure == nil, s.status == .writing, s.writer != nil else { return .success(false) }
            do throws(ContainerError) {
                return .success(try body(&s))
            } catch {
                let e = writeError(error, s.writer!)
                s.failure = e
                return .failure(e)
            }
        }
        return try outcome.get()
    }

    /// Ends the file's presentation at `end` from its start (`AVAssetWriter.endSession`): each
    /// track's edit list stops there. Call it before the run finishes. A fragmented file,
    /// written as it goes, is not cut.
    public func endPresentation(at end: MediaTime) {
        guard end.isFinite, end.value >= 0, end.timescale > 0 else { return }
        state.withLock { $0.ending.edits.presentationEnd = (UInt64(end.value), UInt64(end.timescale)) }
    }

    /// Starts the file's presentation at `start` on input `port`'s clock
    /// (`AVAssetWriter.startSession` for samples that keep their source's times, as a
    /// passthrough input's do): its samples before it are written and edited out, and a track
    /// that begins after it begins with an empty edit. Call it before the run finishes. A
    /// fragmented file, written as it goes, is not cut.
    public func startPresentation(at start: MediaTime, onInput port: String) {
        guard start.isFinite, start.value >= 0, start.timescale > 0 else { return }
        state.withLock { $0.ending.presentationStarts[port] = (UInt64(start.value), UInt64(start.timescale)) }
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        try MuxedFile.end(writing: state.withLock { $0.status == .writing }, setting: { status in state.withLock { $0.status = status } }) { () throws(GraphError) in
            switch outcome {
            case .completed, .stopped:
                try completeFile()
                if !writesInPlace { try file.commit() }
                return .completed
            case .failed:
                // A fragmented recording keeps what it wrote: surviving failure is its purpose
                // (but not a file refused for what it was given, nor an empty one: a source that
                // failed before its first sample, such as a camera that refused the password).
                if !writesInPlace {
                    file.discard()
                } else if state.withLock({ $0.refusedInput }) || file.isEmpty {
                    file.removeTarget()
                } else {
                    // The fragments gathered are written: the file plays to its last one.
                    _ = try? completeFile()
                }
                return .failed
            case .cancelled:
                if writesInPlace { file.removeTarget() } else { file.discard() }
                return .cancelled
            }
        }
    }

    /// Why a FLAC stream cannot go into a file of `container` (`fragmented` or not): FLAC is
    /// written in MP4 and M4A files that are not fragmented; nil when it can.
    public static func refusal(ofFLACIn container: Container, fragmented: Bool) -> String? {
        if container == .mov {
            // xiph's mapping is ISO-BMFF's; QuickTime is out of its scope, and ffmpeg refuses it too.
            return "FLAC is written in MP4 and M4A files, not QuickTime (.mov): write .mp4 or .m4a, or put FLAC in sink.mkv"
        }
        if fragmented {
            return "FLAC's sample entry is written into the index once the file is finished, and a fragmented file (fragmentInterval) is written as it goes: leave out fragmentInterval for FLAC"
        }
        return nil
    }

    /// The FLAC stream's header gkmp4flac kept (GStreamer writes it as hex), when the audio was FLAC.
    private func flacHeader() throws(GraphError) -> FLACStreamHeader? {
        guard state.withLock({ $0.flacInput }), let text = state.withLock({ $0.flac })?.property("header"), !text.isEmpty, text.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.count / 2)
        var digits = text.utf8.makeIterator()
        while let high = digits.next(), let low = digits.next() {
            guard let h = Self.hexValue(high), let l = Self.hexValue(low) else { return nil }
            bytes.append(h << 4 | l)
        }
        do { return try FLACStreamHeader(native: bytes) } catch {
            throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.mp4)", "the FLAC stream's header cannot be read: \(error.reason)", node: context.id)
        }
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Writes the file's end: the index of a whole file (its edit lists, display matrix, tags,
    /// a FLAC stream's sample entry), the last fragment of a fragmented one.
    private func completeFile() throws(GraphError) {
        let header: FLACStreamHeader?
        do throws(GraphError) { header = try flacHeader() } catch {
            if !writesInPlace { file.discard() }
            throw error
        }
        let failure: GraphError? = state.withLock { s in
            guard var writer = s.writer else { return nil }
            var ending = s.ending
            ending.extraTags = s.extraTags
            // The limit stopped each input where it was: one that ran ahead of the others (sound
            // encodes faster than pictures) is cut where the shortest ends.
            ending.endWithShortestTrack = s.budget?.isFull == true
            if let header {
                ending.flacHeader = header
                // No priming: the edit, exact to the sample, ends where the stream does.
                let delay = ending.edits.audioDelay
                ending.edits.audioDelay = EncoderDelay(priming: 0, samples: delay?.samples ?? .max, sampleRate: header.sampleRate)
            }
            defer { s.writer = writer }
            do throws(ContainerError) { try writer.finish(ending) } catch {
                return writeError(error, writer)
            }
            return nil
        }
        if let failure {
            if !writesInPlace { file.discard() }
            throw failure
        }
    }
}
