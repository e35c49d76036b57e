import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Synchronization

/// `sink.hls`: HTTP Live Streaming as it is encoded (RFC 8216): an initialization segment,
/// fragmented-MP4 media segments (CMAF) each starting on a key frame of the video, and a media
/// playlist, in one folder. GStreamer 1.22 has no CMAF muxer: the segments are written from the
/// encoded samples by GraphKit's own MP4 code (``HLSSegmenter``).
///
/// - `vod`: the playlist is written once, complete, when the stream ends.
/// - `event`: rewritten after each segment, every segment kept; `EXT-X-ENDLIST` at the end.
/// - `live`: rewritten after each segment, listing the last `windowSize`; a segment is deleted
///   once it has been out of the playlist for `windowSize` segments more (RFC 8216 6.2.2).
///
/// Several video inputs (`video`, `video1` … `video3`: a ladder of sizes from one decode) make
/// one rendition each, in its own folder (`v0`, `v1`, …, each with its segments and media
/// playlist, the audio muxed into every one), and a multivariant playlist (`multivariant`,
/// default master.m3u8) lists them with their peak bit rate (measured on the segments written,
/// as RFC 8216 4.3.4.2 asks), codecs and size.
///
/// A `vod` playlist's sound starts at the input's first sample: once the AAC encoder's priming is
/// measured (at the end of the stream), the initialization segment is written again with the
/// sound's edit list and iTunes' gapless tag (``CMAF/gaplessTag(_:)``).
///
/// `segmentFormat: "mpegts"` writes MPEG-2 transport stream segments (`.ts`, no initialization
/// segment) from the same cuts, by GraphKit's own TS writer (``MPEGTSWriter``), not hlssink2,
/// which opens its files by name itself (docs/GRAPH-FORMAT.md says why).
///
/// Every file is written by the output rule (``OutputFile``: a temporary name, renamed when
/// complete), so a reader never sees a half-written segment or playlist, and a segment is listed
/// only once it is complete. A failed `vod` run and any cancelled run remove what they wrote; a
/// failed `event` or `live` run keeps its playlist and segments, as a recording should.
///
/// Example:
/// ```json
/// "hls": { "type": "sink.hls", "params": { "folder": "out/hls", "segmentDuration": 4 } }
/// ```
public final class HLSSinkNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.hls",
        category: .sink,
        summary: "HLS: fragmented-MP4 (or MPEG-TS) segments and media playlists (a multivariant one for several videos), written as the stream is encoded",
        inputs: [
            PortDescriptor("audio", .aac, presence: .optional, help: "AAC audio, in every rendition"),
            PortDescriptor("video", .h264, presence: .optional, help: "H.264 video; segments start on its key frames"),
        ] + extraVideoPorts.map { PortDescriptor($0, .h264, presence: .optional, help: "H.264 video of another rendition (a ladder's rung)") },
        parameters: [folder, playlist, segmentDuration, playlistType, windowSize, multivariant, segmentFormat],
        requiresAnInput: true,
        example: #"{ "type": "sink.hls", "params": { "folder": "out/hls", "segmentDuration": 4 } }"#
    )

    static let extraVideoPorts = ["video1", "video2", "video3"]
    static let fileName = StringFormat.pattern(#"^[^/.][^/]*$"#, "a file name (no folder, not hidden)")
    public static let folder = RequiredParameter<String>("folder", format: .path, help: "the folder to write into; made if missing")
    public static let playlist = Parameter<String>("playlist", format: fileName, default: "playlist.m3u8", help: "each media playlist's file name")
    public static let segmentDuration = Parameter<Double>("segmentDuration", 0.5...60, default: 6,
                                                          help: "seconds each segment aims at: it ends at the first key frame at or after each multiple")
    public enum PlaylistType: String, ParameterEnum { case vod, event, live }
    public static let playlistType = Parameter<PlaylistType>("playlistType", default: .vod,
                                                             help: "vod: the playlist written once at the end; event: after each segment; live: after each segment, the last windowSize listed")
    public static let windowSize = Parameter<Int>("windowSize", 1...10_000, default: 6, help: "live: how many segments the playlist lists")
    public static let multivariant = Parameter<String>("multivariant", format: fileName, default: "master.m3u8",
                                                       help: "with several video inputs: the multivariant playlist's file name, in the folder")

    public enum SegmentFormat: String, ParameterEnum { case fmp4, mpegts }
    public static let segmentFormat = Parameter<SegmentFormat>("segmentFormat", default: .fmp4,
                                                               help: "fmp4: fragmented-MP4 segments (.m4s) after an initialization segment (init.mp4); mpegts: MPEG-2 transport stream segments (.ts), each whole by itself")

    static let initializationName = "init.mp4"

    let context: NodeContext
    let folderPath: String
    let playlistName: String
    let type: PlaylistType
    let window: Int
    let target: Double
    /// The renditions: each its video port (or none: audio alone) and its subfolder.
    let renditions: [(video: String?, folder: String)]
    let hasAudio: Bool
    let container: HLSSegmenter.Container

    /// One rendition's stream: its tracks (video first, the segments' lead; then the audio).
    private struct Rendition {
        var stream: HLSStream
        var segments: [(name: String, duration: Double)] = []
        var deletedBefore = 0
        var initialization: OutputFile?
        /// The highest bit rate of a segment so far (bits per second).
        var peakBitRate = 0.0
        var bytes = 0
    }

    private struct State {
        var renditions: [Rendition]
        var written: [(path: String, identity: FileIdentity)] = []
        var status: OutputReport.Status = .unknown
        var failure: GraphError?
        var multivariantWritten = false
        /// The AAC encoder's delay (gkencoderdelay's, at the end of the stream), and the span of
        /// the encoded sound (its first and last sample's ends, in samples).
        var audioDelay: EncoderDelay?
        var audioSpan: (start: Int64, end: Int64)?
    }
    private let state: Mutex<State>

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        folderPath = try context.parameters.value(Self.folder)
        playlistName = context.parameters[Self.playlist]
        type = context.parameters[Self.playlistType]
        window = context.parameters[Self.windowSize]
        target = context.parameters[Self.segmentDuration]
        let videos = (["video"] + Self.extraVideoPorts).filter { context.connectedInputs.contains($0) }
        hasAudio = context.connectedInputs.contains("audio")
        renditions = videos.isEmpty ? [(nil, "")] : videos.count == 1 ? [(videos[0], "")] : videos.enumerated().map { ($1, "v\($0)/") }
        let tracks = (renditions[0].video == nil ? 0 : 1) + (hasAudio ? 1 : 0)
        let target = target
        let container: HLSSegmenter.Container = context.parameters[Self.segmentFormat] == .mpegts ? .mpegts : .fmp4
        self.container = container
        state = Mutex(State(renditions: renditions.map { _ in Rendition(stream: HLSStream(trackCount: tracks, target: target, container: container)) }))
    }

    func path(_ name: String) -> String { folderPath.hasSuffix("/") ? folderPath + name : folderPath + "/" + name }
    var isLadder: Bool { renditions.count > 1 }
    var mainPlaylist: String { path(isLadder ? context.parameters[Self.multivariant] : playlistName) }

    public var output: OutputReport? {
        OutputReport(node: context.id, path: mainPlaylist, status: state.withLock { $0.status })
    }

    /// Where samples of `port` go: (rendition, track) pairs. The audio goes into every rendition.
    func destinations(of port: String) -> [(rendition: Int, track: Int)] {
        if port == "audio" { return renditions.indices.map { ($0, renditions[$0].video == nil ? 0 : 1) } }
        return renditions.indices.filter { renditions[$0].video == port }.map { ($0, 0) }
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        for port in renditions.compactMap(\.video) + (hasAudio ? ["audio"] : []) {
            // The inputs are as MP4 stores them (the .h264 and .aac formats' contract: AVC access
            // units, raw AAC, each with its configuration in the caps), as sink.mp4 takes them:
            // no parser, which could rewrite a packet (GStreamer 1.26's h264parse changed the
            // first one of a demuxed file).
            let sink = try bin.make("fakesink", ["sync": false])
            try bin.expose(input: port, sink)
            let targets = destinations(of: port)
            sink.onEncodedSamples { [self] event in receive(event, port: port, into: targets, sink: sink) }
            if port == "audio" {
                bin.onStreamFacts(input: port) { [self] fact in
                    if case .encoderDelay(let delay) = fact { state.withLock { $0.audioDelay = delay } }
                }
            }
        }
    }

    /// Before the run: the folders are made and found writable (each initialization segment's
    /// file is opened, written once the formats are known).
    public func prepare() throws(GraphError) {
        var files: [OutputFile] = []
        // MPEG-TS: no initialization segment; the folders are made with the first segment.
        for r in container == .fmp4 ? renditions : [] {
            let file = OutputFile(path: path(r.folder + Self.initializationName), location: context.location(parameter: "folder"), node: context.id)
            do throws(GraphError) { try file.prepare() } catch {
                files.forEach { $0.discard() }
                throw error
            }
            files.append(file)
        }
        if container == .mpegts {
            // The folder made and found writable now, as fMP4's initialization segment does.
            for r in renditions {
                let probe = OutputFile(path: path(r.folder + ".probe"), location: context.location(parameter: "folder"), node: context.id)
                try probe.prepare()
                probe.discard()
            }
        }
        state.withLock {
            for (r, file) in files.enumerated() { $0.renditions[r].initialization = file }
            $0.status = .writing
        }
    }

    // MARK: Streaming threads

    private func receive(_ event: Element.EncodedSampleEvent, port: String, into targets: [(rendition: Int, track: Int)], sink: Element) {
        let failed: GraphError? = state.withLock { s in
            guard s.failure == nil, s.status == .writing else { return nil }
            do throws(GraphError) {
                switch event {
                case .format(let format, let codecData):
                    guard let f = CMAFTrackFormat(format, codecData: codecData) else {
                        throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)",
                                         "its \(port) input's stream (\(format.map { "\($0)" } ?? "an unknown format")) does not say its size, rate or codec configuration",
                                         node: context.id)
                    }
                    for (r, t) in targets { try write(try packaged(port) { () throws(ContainerError) in try s.renditions[r].stream.setFormat(f, track: t) }, rendition: r, &s) }
                case .sample(let buffer, let pts, let dts):
                    // One copy of the sample's bytes for every rendition it goes to (the audio
                    // goes to each rung of a ladder): the renditions' samples share it.
                    let data = buffer.bytes
                    for (r, t) in targets {
                        // Caps come before buffers: a sample's own track's format is known.
                        guard let format = s.renditions[r].stream.formats[t],
                              let sample = HLSSegmenter.Sample(buffer, data: data, pts: pts, dts: dts, format: format) else { continue }
                        if port == "audio", r == 0 {
                            let end = sample.presentationTime + sample.duration
                            s.audioSpan = (s.audioSpan?.start ?? sample.presentationTime, max(s.audioSpan?.end ?? end, end))
                        }
                        try write(try packaged(port) { () throws(ContainerError) in try s.renditions[r].stream.add(sample, track: t) }, rendition: r, &s)
                    }
                case .end:
                    for (r, t) in targets { try write(s.renditions[r].stream.end(track: t), rendition: r, &s) }
                }
            } catch {
                s.failure = error
                return error
            }
            return nil
        }
        if let failed {
            if failed.code == .outputUnwritable { sink.postWriteError(failed.message) } else { sink.postError(failed.message) }
        }
    }

    /// What `body` gives out; its container error as the node's, naming the input.
    private func packaged(_ port: String, _ body: () throws(ContainerError) -> [HLSStream.Output]) throws(GraphError) -> [HLSStream.Output] {
        do {
            return try body()
        } catch {
            throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)", "its \(port) input: \(error.reason)", node: context.id)
        }
    }

    // MARK: Files

    private func commit(_ file: OutputFile, _ s: inout State) throws(GraphError) {
        var info = stat()
        let identity = fstat(file.descriptor, &info) == 0 ? FileIdentity(info) : nil
        try file.commit()
        if let identity { s.written.append((file.path, identity)) }
    }

    private func writeFile(_ name: String, _ bytes: [UInt8], _ s: inout State) throws(GraphError) {
        let file = OutputFile(path: path(name), location: context.location(parameter: "folder"), node: context.id)
        try file.prepare()
        try file.write(bytes)
        try commit(file, &s)
    }

    /// Writes the initialization segment, and each media segment then (event, live) the
    /// playlist that lists it.
    private func write(_ outputs: [HLSStream.Output], rendition r: Int, _ s: inout State) throws(GraphError) {
        for output in outputs {
            guard case .segment(let segment) = output else {
                if case .initialization(let bytes) = output, let file = s.renditions[r].initialization {
                    try file.write(bytes)
                    try commit(file, &s)
                    s.renditions[r].initialization = nil
                }
                continue
            }
            let name = "segment\(segment.sequenceNumber - 1).\(container == .fmp4 ? "m4s" : "ts")"
            try writeFile(renditions[r].folder + name, segment.bytes, &s)
            s.renditions[r].segments.append((name, segment.duration))
            s.renditions[r].bytes += segment.bytes.count
            if segment.duration > 0 {
                s.renditions[r].peakBitRate = max(s.renditions[r].peakBitRate, Double(segment.bytes.count * 8) / segment.duration)
            }
            if type != .vod {
                try writePlaylist(r, ended: false, &s)
                if isLadder, !s.multivariantWritten, s.renditions.allSatisfy({ !$0.segments.isEmpty }) { try writeMultivariant(&s) }
            }
        }
    }

    /// VOD: the initialization segment again, once the AAC encoder's priming is measured (at
    /// the end of the stream), with the sound's edit list and iTunes' gapless tag, so that
    /// players start at the input's first sample (ffmpeg reads the tag; AVFoundation and
    /// GStreamer the edit list). A playlist is listed only now, so no reader saw the first one.
    /// Event and live playlists are read while the stream goes on, before the priming is known:
    /// their sound keeps it.
    private func writeGaplessInitialization(_ r: Int, _ s: inout State) throws(GraphError) {
        guard type == .vod, container == .fmp4, hasAudio, let delay = s.audioDelay, let span = s.audioSpan else { return }
        var formats = s.renditions[r].stream.formats.compactMap { $0 }
        guard let a = formats.firstIndex(where: { !$0.isVideo }), delay.sampleRate == Int(formats[a].timescale) else { return }
        let encoded = Int(span.end - span.start)
        formats[a].gapless = CMAF.Gapless(priming: delay.priming, samples: delay.samples, padding: max(0, encoded - delay.priming - delay.samples))
        try writeFile(renditions[r].folder + Self.initializationName, CMAF.initializationSegment(of: formats), &s)
    }

    private func writePlaylist(_ r: Int, ended: Bool, _ s: inout State) throws(GraphError) {
        var list = HLSMediaPlaylist(initializationSegment: container == .fmp4 ? Self.initializationName : nil, kind: type == .vod ? .vod : type == .event ? .event : .live)
        let all = s.renditions[r].segments
        let first = type == .live ? max(0, all.count - window) : 0
        list.segments = all[first...].map { (uri: $0.name, duration: $0.duration) }
        list.mediaSequence = first
        list.ended = ended
        try writeFile(renditions[r].folder + playlistName, Array(list.text.utf8), &s)
        // Live: a segment out of the playlist for a window's worth more is deleted.
        while type == .live, s.renditions[r].deletedBefore < first - window {
            let gone = path(renditions[r].folder + all[s.renditions[r].deletedBefore].name)
            if let w = s.written.firstIndex(where: { $0.path == gone }) {
                if FileIdentity(path: gone) == s.written[w].identity { unlink(gone) }
                s.written.remove(at: w)
            }
            s.renditions[r].deletedBefore += 1
        }
    }

    /// The multivariant playlist: each rendition's media playlist with its peak bit rate, its
    /// codecs (RFC 6381) and its size.
    private func writeMultivariant(_ s: inout State) throws(GraphError) {
        var variants: [HLSMultivariantPlaylist.Variant] = []
        for (r, rendition) in s.renditions.enumerated() {
            let formats = rendition.stream.formats.compactMap { $0 }
            var size: (Int, Int)?
            for f in formats { if case .h264(_, let w, let h) = f.codec { size = (w, h) } }
            let average = rendition.segments.reduce(0) { $0 + $1.duration }
            variants.append(HLSMultivariantPlaylist.Variant(
                uri: renditions[r].folder + playlistName, bandwidth: Int(rendition.peakBitRate.rounded(.up)),
                averageBandwidth: average > 0 ? Int((Double(rendition.bytes * 8) / average).rounded()) : nil,
                codecs: formats.map(\.codecsName), resolution: size))
        }
        try writeFile(context.parameters[Self.multivariant], Array(HLSMultivariantPlaylist(variants: variants).text.utf8), &s)
        s.multivariantWritten = true
    }

    private func removeWritten(_ s: inout State) {
        for w in s.written.reversed() where FileIdentity(path: w.path) == w.identity { unlink(w.path) }
        s.written = []
        for r in s.renditions.indices {
            s.renditions[r].initialization?.discard()
            s.renditions[r].initialization = nil
        }
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        try state.withLock { (s) throws(GraphError) in
            guard s.status == .writing else { return }
            switch outcome {
            case .completed where s.failure == nil, .stopped where s.failure == nil:
                do throws(GraphError) {
                    for r in s.renditions.indices {
                        guard let last = s.renditions[r].stream.finish() else {
                            throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)", "the stream ended before any media reached it", node: context.id)
                        }
                        try write(last, rendition: r, &s)
                        try writeGaplessInitialization(r, &s)
                        try writePlaylist(r, ended: true, &s)
                    }
                    if isLadder { try writeMultivariant(&s) }
                    s.status = .completed
                } catch {
                    if type == .vod { removeWritten(&s) }
                    s.status = .failed
                    throw error
                }
            case .completed, .stopped, .failed:
                if type == .vod { removeWritten(&s) } else {
                    for r in s.renditions.indices { s.renditions[r].initialization?.discard() }
                }
                s.status = .failed
            case .cancelled:
                removeWritten(&s)
                s.status = .cancelled
            }
        }
    }
}

extension CMAFTrackFormat {
    /// A track's format from its encoder's caps (as ``Element/onEncodedSamples(_:)`` gives them):
    /// H.264 with its size and `avcC`, AAC with its rate, channels and AudioSpecificConfig; nil
    /// when the caps do not say them.
    package init?(_ format: MediaFormat?, codecData: [UInt8]) {
        switch format {
        case .h264(let width?, let height?)? where !codecData.isEmpty:
            self.init(trackID: 1, codec: .h264(avcC: codecData, width: width, height: height))
        case .aac(let rate?, let channels?)? where !codecData.isEmpty:
            self.init(trackID: 1, codec: .aac(audioSpecificConfig: codecData, sampleRate: rate, channels: channels))
        default:
            return nil
        }
    }
}

extension HLSSegmenter.Sample {
    /// An encoded sample in `format`'s ticks; nil without a time. Every audio sample is a sync
    /// sample; a video one when flagged a key frame.
    /// `buffer` as a segmenter's sample; `data` is its bytes when the caller has them already.
    package init?(_ buffer: SampleBuffer, data: [UInt8]? = nil, pts: MediaTime?, dts: MediaTime?, format: CMAFTrackFormat) {
        guard let time = pts ?? dts else { return nil }
        let scale = Double(format.timescale)
        func ticks(_ m: MediaTime) -> Int64 { Int64((m.seconds * scale).rounded()) }
        self.init(data: data ?? buffer.bytes, decodeTime: ticks(dts ?? time), presentationTime: ticks(time),
                  duration: buffer.duration.map(ticks) ?? 0, isSync: !format.isVideo || buffer.flags.contains(.keyframe))
    }
}
