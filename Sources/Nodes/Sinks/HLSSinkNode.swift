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
        summary: "HLS: fragmented-MP4 segments and a media playlist, written as the stream is encoded",
        inputs: [
            PortDescriptor("audio", .aac, presence: .optional, help: "AAC audio"),
            PortDescriptor("video", .h264, presence: .optional, help: "H.264 video; segments start on its key frames"),
        ],
        parameters: [folder, playlist, segmentDuration, playlistType, windowSize],
        requiresAnInput: true,
        example: #"{ "type": "sink.hls", "params": { "folder": "out/hls", "segmentDuration": 4 } }"#
    )

    public static let folder = RequiredParameter<String>("folder", format: .path, help: "the folder to write into; made if missing")
    public static let playlist = Parameter<String>("playlist", format: .pattern(#"^[^/.][^/]*$"#, "a file name (no folder, not hidden)"),
                                                   default: "playlist.m3u8", help: "the media playlist's file name")
    public static let segmentDuration = Parameter<Double>("segmentDuration", 0.5...60, default: 6,
                                                          help: "seconds each segment aims at: it ends at the first key frame at or after each multiple")
    public enum PlaylistType: String, ParameterEnum { case vod, event, live }
    public static let playlistType = Parameter<PlaylistType>("playlistType", default: .vod,
                                                             help: "vod: the playlist written once at the end; event: after each segment; live: after each segment, the last windowSize listed")
    public static let windowSize = Parameter<Int>("windowSize", 1...10_000, default: 6, help: "live: how many segments the playlist lists")

    static let initializationName = "init.mp4"

    let context: NodeContext
    let folderPath: String
    let playlistName: String
    let type: PlaylistType
    let window: Int
    let target: Double
    /// The inputs connected, video first (the segments' lead).
    let ports: [String]

    private struct State {
        var formats: [CMAFTrackFormat?]
        /// Samples that came before every track's format was known.
        var early: [[HLSSegmenter.Sample]]
        var segmenter: HLSSegmenter?
        var ended: Set<Int> = []
        /// Each segment written: its name and duration, and whether it is still on disk.
        var segments: [(name: String, duration: Double)] = []
        var deletedBefore = 0
        var written: [(path: String, identity: FileIdentity)] = []
        var initialization: OutputFile?
        var sinks: [Element] = []
        var status: OutputReport.Status = .unknown
        var failure: GraphError?
    }
    private let state: Mutex<State>

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        folderPath = try context.parameters.value(Self.folder)
        playlistName = context.parameters[Self.playlist]
        type = context.parameters[Self.playlistType]
        window = context.parameters[Self.windowSize]
        target = context.parameters[Self.segmentDuration]
        ports = ["video", "audio"].filter { context.connectedInputs.contains($0) }
        state = Mutex(State(formats: ports.map { _ in nil }, early: ports.map { _ in [] }))
    }

    func path(_ name: String) -> String { folderPath.hasSuffix("/") ? folderPath + name : folderPath + "/" + name }

    public var output: OutputReport? {
        OutputReport(node: context.id, path: path(playlistName), status: state.withLock { $0.status })
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        for (t, port) in ports.enumerated() {
            let parse = try bin.make(port == "video" ? "h264parse" : "aacparse")
            let caps = try bin.makeCapsFilter(port == "video" ? "video/x-h264,stream-format=avc,alignment=au" : "audio/mpeg,mpegversion=4,stream-format=raw")
            let sink = try bin.make("fakesink", ["sync": false])
            try bin.link(parse, caps, sink)
            try bin.expose(input: port, parse)
            state.withLock { $0.sinks.append(sink) }
            sink.onEncodedSamples { [self] event in receive(event, track: t, sink: sink) }
        }
    }

    /// Before the run: the folder is made and found writable (the initialization segment's
    /// file is opened there, written once the formats are known).
    public func prepare() throws(GraphError) {
        let file = OutputFile(path: path(Self.initializationName), location: context.location(parameter: "folder"), node: context.id)
        try file.prepare()
        state.withLock {
            $0.initialization = file
            $0.status = .writing
        }
    }

    // MARK: Streaming threads

    private func receive(_ event: Element.EncodedSampleEvent, track t: Int, sink: Element) {
        let failed: GraphError? = state.withLock { s in
            guard s.failure == nil, s.status == .writing else { return nil }
            do throws(GraphError) {
                switch event {
                case .format(let format, let codecData):
                    s.formats[t] = try trackFormat(format, codecData: codecData, track: t)
                    try startIfReady(&s)
                case .sample(let buffer, let pts, let dts):
                    guard let sample = sample(buffer, pts: pts, dts: dts, track: t, format: s.formats[t]) else { return nil }
                    if s.segmenter == nil {
                        s.early[t].append(sample)
                    } else {
                        try add(sample, track: t, &s)
                    }
                case .end:
                    s.ended.insert(t)
                    if s.segmenter != nil { try write(s.segmenter!.end(track: t), &s) }
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

    private func trackFormat(_ format: MediaFormat?, codecData: [UInt8], track t: Int) throws(GraphError) -> CMAFTrackFormat {
        let id = UInt32(t + 1)
        switch format {
        case .h264(let width?, let height?)? where !codecData.isEmpty:
            return CMAFTrackFormat(trackID: id, codec: .h264(avcC: codecData, width: width, height: height))
        case .aac(let rate?, let channels?)? where !codecData.isEmpty:
            return CMAFTrackFormat(trackID: id, codec: .aac(audioSpecificConfig: codecData, sampleRate: rate, channels: channels))
        default:
            throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)",
                             "its \(ports[t]) input's stream (\(format.map { "\($0)" } ?? "an unknown format")) does not say its size, rate or codec configuration",
                             node: context.id)
        }
    }

    private func sample(_ buffer: SampleBuffer, pts: MediaTime?, dts: MediaTime?, track t: Int, format: CMAFTrackFormat?) -> HLSSegmenter.Sample? {
        guard let format, let time = pts ?? dts else { return nil }
        let scale = Double(format.timescale)
        func ticks(_ m: MediaTime) -> Int64 { Int64((m.seconds * scale).rounded()) }
        return HLSSegmenter.Sample(data: buffer.bytes, decodeTime: ticks(dts ?? time), presentationTime: ticks(time),
                                   duration: buffer.duration.map(ticks) ?? 0,
                                   isSync: ports[t] == "audio" || buffer.flags.contains(.keyframe))
    }

    /// Once every track's format is known: the initialization segment, then the samples held.
    private func startIfReady(_ s: inout State) throws(GraphError) {
        guard s.segmenter == nil, s.formats.allSatisfy({ $0 != nil }), let file = s.initialization else { return }
        s.segmenter = HLSSegmenter(tracks: s.formats.map { $0! }, target: target)
        try file.write(CMAF.initializationSegment(of: s.formats.map { $0! }))
        try commit(file, &s)
        s.initialization = nil
        for t in s.early.indices {
            for sample in s.early[t] { try add(sample, track: t, &s) }
            s.early[t] = []
        }
        for t in s.ended.sorted() { try write(s.segmenter!.end(track: t), &s) }
    }

    private func add(_ sample: HLSSegmenter.Sample, track t: Int, _ s: inout State) throws(GraphError) {
        do {
            try write(s.segmenter!.add(sample, track: t), &s)
        } catch let error as ContainerError {
            throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)", "its \(ports[t]) input: \(error.reason)", node: context.id)
        } catch let error as GraphError {
            throw error
        } catch {
            throw GraphError(error, node: context.id)
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

    /// Writes each segment, then (event, live) the playlist that lists it.
    private func write(_ segments: [HLSSegmenter.Segment], _ s: inout State) throws(GraphError) {
        for segment in segments {
            let name = "segment\(segment.sequenceNumber - 1).m4s"
            try writeFile(name, segment.bytes, &s)
            s.segments.append((name, segment.duration))
            if type != .vod { try writePlaylist(ended: false, &s) }
        }
    }

    private func writePlaylist(ended: Bool, _ s: inout State) throws(GraphError) {
        var list = HLSMediaPlaylist(initializationSegment: Self.initializationName, kind: type == .vod ? .vod : type == .event ? .event : .live)
        var first = 0
        if type == .live { first = max(0, s.segments.count - window) }
        list.segments = Array(s.segments[first...]).map { (uri: $0.name, duration: $0.duration) }
        list.mediaSequence = first
        list.ended = ended
        try writeFile(playlistName, Array(list.text.utf8), &s)
        // Live: a segment out of the playlist for a window's worth more is deleted.
        if type == .live {
            while s.deletedBefore < first - window {
                let gone = path(s.segments[s.deletedBefore].name)
                if let w = s.written.firstIndex(where: { $0.path == gone }) {
                    if FileIdentity(path: gone) == s.written[w].identity { unlink(gone) }
                    s.written.remove(at: w)
                }
                s.deletedBefore += 1
            }
        }
    }

    private func removeWritten(_ s: inout State) {
        for w in s.written.reversed() where FileIdentity(path: w.path) == w.identity { unlink(w.path) }
        s.written = []
        s.initialization?.discard()
        s.initialization = nil
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        try state.withLock { (s) throws(GraphError) in
            guard s.status == .writing else { return }
            switch outcome {
            case .completed, .stopped where s.failure == nil:
                do throws(GraphError) {
                    guard s.segmenter != nil else {
                        throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)", "the stream ended before any media reached it", node: context.id)
                    }
                    try write(s.segmenter!.finish(), &s)
                    try writePlaylist(ended: true, &s)
                    s.status = .completed
                } catch {
                    if type == .vod { removeWritten(&s) }
                    s.status = .failed
                    throw error
                }
            case .completed, .stopped:
                if type == .vod { removeWritten(&s) } else { s.initialization?.discard() }
                s.status = .failed
            case .failed:
                if type == .vod { removeWritten(&s) } else { s.initialization?.discard() }
                s.status = .failed
            case .cancelled:
                removeWritten(&s)
                s.status = .cancelled
            }
        }
    }
}
