import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `sink.hls`: HTTP Live Streaming as it is encoded (RFC 8216): an initialization segment,
/// fragmented-MP4 media segments (CMAF) each starting on a key frame of the video, and a media
/// playlist, in one folder. GStreamer 1.22 has no CMAF muxer: the segments are written from the
/// encoded samples by GraphKit's own MP4 code (`HLSSegmenter`).
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
/// sound's edit list and iTunes' gapless tag (`CMAF.gaplessTag(_:)`). It keeps the source's
/// tags, as `sink.mp4` keeps them but the chapters (`sourceTags`).
///
/// `segmentFormat: "mpegts"` writes MPEG-2 transport stream segments (`.ts`, no initialization
/// segment) from the same cuts, by GraphKit's own TS writer (`MPEGTSWriter`), not hlssink2,
/// which opens its files by name itself (docs/GRAPH-FORMAT.md says why).
///
/// Every file is written by the output rule (`OutputFile`: a temporary name, renamed when
/// complete), so a reader never sees a half-written segment or playlist, and a segment is listed
/// only once it is complete. A package is replaced as a whole (`HLSGeneration`): everything but
/// the top playlist (the media playlist, or the multivariant one of a ladder) goes into a folder
/// of this run's own beside it (`playlist.3f9a0c61d2e4/init.mp4`, `…/segment0.m4s`, a ladder's
/// `master.3f9a0c61d2e4/v0/playlist.m3u8`), and the top playlist's rename switches the package
/// in: an earlier package in the folder stays whole and playable until then, and its generation
/// is removed only after. A failed `vod` run and any cancelled run remove what they wrote; a
/// failed `event` or `live` run keeps its playlist and segments, as a recording should.
///
/// Example:
/// ```json
/// "hls": { "type": "sink.hls", "params": { "folder": "out/hls", "segmentDuration": 4 } }
/// ```
public final class HLSSinkNode: ElementNode, PlaysEncoderPriming, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.hls",
        category: .sink,
        summary: "HLS: fragmented-MP4 (or MPEG-TS) segments and media playlists (a multivariant one for several videos or a separate sound), written as the stream is encoded",
        inputs: [
            PortDescriptor("audio", .aac, presence: .optional, help: "AAC audio, in every rendition (or in one of its own: audio separate)"),
            PortDescriptor("video", .h264, presence: .optional, help: "H.264 video; segments start on its key frames, which its encoder is asked for at each cut"),
        ] + extraVideoPorts.map { PortDescriptor($0, .h264, presence: .optional, help: "H.264 video of another rendition (a ladder's rung)") },
        parameters: [folder, playlist, segmentDuration, playlistType, windowSize, multivariant, segmentFormat, audio, sourceTags],
        requiresAnInput: true,
        writtenFilesInFolders: { p, inputs in playlists(p, connectedInputs: inputs).map { WrittenFile(parameter: "folder", path: $0) } },
        example: #"{ "type": "sink.hls", "params": { "folder": "out/hls", "segmentDuration": 4 } }"#
    )

    /// The playlists a node with `p` and the inputs `connectedInputs` names in its folder, which a
    /// graph's check sees as outputs (never a file the run reads, never another output): the
    /// media playlist, and the multivariant one when it is asked for by name, for a separate
    /// sound or by a ladder (several video inputs). Everything else goes into a generation folder
    /// made new (`HLSGeneration`).
    static func playlists(_ p: Parameters, connectedInputs: Set<String>) -> [String] {
        guard case .string(let folder)? = p[Self.folder.name] else { return [] }
        var names = [p[Self.playlist]]
        let ladder = (["video"] + extraVideoPorts).filter(connectedInputs.contains).count > 1
        if p.explicit.contains(Self.multivariant.name) || p[Self.audio] == .separate || ladder { names.append(p[Self.multivariant]) }
        return names.map { WrittenFile.path($0, in: folder) }
    }

    static let extraVideoPorts = ["video1", "video2", "video3"]
    public static let folder = RequiredParameter<String>("folder", format: .path, help: "the folder to write into; made if missing")
    public static let playlist = Parameter<String>("playlist", format: .fileName, default: "playlist.m3u8", help: "each media playlist's file name")
    /// The segment durations HLS output takes, in seconds, here and in `graphctl hls`
    /// (`HLSPackager`): below half a second a playlist is all overhead (Apple's authoring
    /// spec asks for 6), above a minute no player buffers a segment. Bounded up front, so that
    /// no cut is computed for a duration like 1e-20 s.
    public static let segmentDurations: ClosedRange<Double> = 0.5...60
    public static let segmentDuration = Parameter<Double>("segmentDuration", segmentDurations, default: 6,
                                                          help: "seconds each segment lasts: the video's encoder is asked for a key frame at each multiple, where the segment ends; packets passed as they are (demux) must have key frames at least this often")
    public enum PlaylistType: String, ParameterEnum { case vod, event, live }
    public static let playlistType = Parameter<PlaylistType>("playlistType", default: .vod,
                                                             help: "vod: the playlist written once at the end; event: after each segment; live: after each segment, the last windowSize listed")
    public static let windowSize = Parameter<Int>("windowSize", 1...10_000, default: 6, help: "live: how many segments the playlist lists")
    public static let multivariant = Parameter<String>("multivariant", format: .fileName, default: "master.m3u8",
                                                       help: "with several video inputs or a separate sound: the multivariant playlist's file name, in the folder")

    public enum SegmentFormat: String, ParameterEnum { case fmp4, mpegts }
    public static let segmentFormat = Parameter<SegmentFormat>("segmentFormat", default: .fmp4,
                                                               help: "fmp4: fragmented-MP4 segments (.m4s) after an initialization segment (init.mp4); mpegts: MPEG-2 transport stream segments (.ts), each whole by itself")

    public enum AudioLayout: String, ParameterEnum { case muxed, separate }
    public static let audio = Parameter<AudioLayout>("audio", default: .muxed,
                                                     help: "muxed: the sound in every video rendition's segments; separate: in a rendition of its own (audio/), named by every video rendition (EXT-X-MEDIA, AUDIO=)")

    public static let sourceTags = Parameter<Bool>(
        "sourceTags", default: true,
        help: "the initialization segment (init.mp4) keeps the text tags, cover, place, track languages and creation time of the file the graph reads, as sink.mp4 does; false writes none")

    static let initializationName = "init.mp4"
    /// The audio rendition group's ID in the multivariant playlist.
    static let audioGroup = "audio"

    /// Event and live playlists are read before the priming is measured, and transport stream
    /// segments have no edit list: their sound plays from its first sample (``PlaysEncoderPriming``).
    /// A `vod` playlist of fragmented MP4 writes the edit list at the end instead.
    public static func playsEncoderPriming(input: String, parameters: Parameters) -> Bool {
        parameters[playlistType] != .vod || parameters[segmentFormat] == .mpegts
    }

    let context: NodeContext
    let folderPath: String
    let playlistName: String
    let type: PlaylistType
    let window: Int
    let target: Double
    /// An event or live playlist's target duration, for its whole life (RFC 8216 6.2.1).
    let targetDuration: Int
    /// The renditions: each its video port (or none: audio alone), whether it holds the sound,
    /// and its subfolder.
    let renditions: [(video: String?, hasAudio: Bool, folder: String)]
    let hasAudio: Bool
    let container: HLSSegmenter.Container
    /// This run's generation folder: every file but the top playlist (the media playlist, or the
    /// multivariant one) goes into it, so that a run never writes over a file an earlier package
    /// lists; the top playlist's rename switches the package in (`HLSGeneration`).
    let generation: HLSGeneration
    /// What each initialization segment keeps of the source's tags (``sourceTags``).
    let tags: [(key: FourCC, text: String)]
    let extraTags: MP4ExtraTags

    /// A media segment written: its file name, duration and size, where it ends on the
    /// stream's clock (its duration and all before it), and where the stream was when it left a
    /// live playlist.
    struct Written {
        var name: String
        var duration: Double
        var bytes: Int
        var end: Double
        var leftAt: Double?
    }

    /// One rendition's stream: its tracks (video first, the segments' lead; then the audio).
    struct Rendition {
        var stream: HLSStream
        var segments: [Written] = []
        /// Live: the first segment listed, and the first not deleted yet.
        var listedFrom = 0
        var deletedBefore = 0
        /// Live: the longest a playlist listing its segments lasted.
        var longestPlaylist = 0.0
        var initialization: OutputFile?
        var rates: HLSBitRates
    }

    /// What has been asked of a video input's encoder: key frames at the cuts' times up to
    /// `count × target`, and whether it took the first request (nil: none sent yet).
    struct KeyFrameRequests {
        var count = 0
        var taken: Bool?
    }

    struct State {
        var renditions: [Rendition]
        var written: [(path: String, identity: FileIdentity)] = []
        var status: OutputReport.Status = .unknown
        var failure: GraphError?
        /// The multivariant playlist as last written (rewritten when a bit rate changes).
        var multivariantText: String?
        /// The AAC encoder's delay (gkencoderdelay's, at the end of the stream), and the span of
        /// the encoded sound (its first and last sample's ends, in samples).
        var audioDelay: EncoderDelay?
        var audioSpan: (start: Int64, end: Int64)?
        var keyFrames: [String: KeyFrameRequests] = [:]
        /// The files the graph reads, found when the run is prepared: a retired generation keeps them.
        var filesRead: Set<FileIdentity> = []
        /// On the container path: each input's format, until its first sample, and the
        /// renditions and tracks it goes into.
        var storedFormats: [String: MP4TrackFormat] = [:]
        var storedTargets: [String: [(rendition: Int, track: Int)]] = [:]
    }
    let state: Guarded<State>

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
        folderPath = try context.parameters.value(Self.folder)
        playlistName = context.parameters[Self.playlist]
        type = context.parameters[Self.playlistType]
        window = context.parameters[Self.windowSize]
        target = context.parameters[Self.segmentDuration]
        targetDuration = HLSMediaPlaylist.targetDuration(aimingAt: target)
        let videos = (["video"] + Self.extraVideoPorts).filter { context.connectedInputs.contains($0) }
        let hasAudio = context.connectedInputs.contains("audio")
        self.hasAudio = hasAudio
        if context.parameters[Self.audio] == .separate {
            guard hasAudio, !videos.isEmpty else {
                throw GraphError(.invalidGraph, at: context.location(parameter: "audio"),
                                 "audio \"separate\" puts the sound in a rendition of its own beside the video ones: connect both the audio input and a video input, or leave the sound muxed",
                                 node: context.id)
            }
            renditions = videos.enumerated().map { ($1, false, "v\($0)/") } + [(nil, true, "audio/")]
        } else {
            renditions = videos.isEmpty ? [(nil, hasAudio, "")]
                : videos.count == 1 ? [(videos[0], hasAudio, "")] : videos.enumerated().map { ($1, hasAudio, "v\($0)/") }
        }
        let container: HLSSegmenter.Container = context.parameters[Self.segmentFormat] == .mpegts ? .mpegts : .fmp4
        self.container = container
        let top = renditions.count > 1 ? context.parameters[Self.multivariant] : playlistName
        generation = HLSGeneration(folder: folderPath, playlist: top)
        let (target, targetDuration) = (target, targetDuration)
        let source = container == .fmp4 && context.parameters[Self.sourceTags] ? MP4SinkNode.sourceMetadata(upstreamOf: context) : nil
        tags = MP4SinkNode.textTags(source: source)
        extraTags = MP4SinkNode.extraTags(MP4ExtraTags(), keeping: source, context: context, fragmented: false, chapters: false)
        let (tags, extraTags) = (tags, extraTags)
        state = Guarded(State(renditions: renditions.map { r in
            var stream = HLSStream(trackCount: (r.video == nil ? 0 : 1) + (r.hasAudio ? 1 : 0), target: target, container: container)
            // Every rendition cuts on one grid from the run's start, where the encoders are asked
            // for key frames: a ladder's rungs and a separate sound cut at the same times.
            stream.origin = 0
            stream.keyFrameSetting = "segmentDuration"
            stream.tags = tags
            stream.extraTags = extraTags
            return Rendition(stream: stream, rates: HLSBitRates(targetDuration: targetDuration))
        }))
    }

    func path(_ name: String) -> String { folderPath.hasSuffix("/") ? folderPath + name : folderPath + "/" + name }
    /// Where rendition `r`'s file `name` is, from the package's folder: in the generation.
    func inGeneration(_ r: Int, _ name: String) -> String { generation.uri(renditions[r].folder + name) }
    var isMultivariant: Bool { renditions.count > 1 }
    var mainPlaylist: String { path(isMultivariant ? context.parameters[Self.multivariant] : playlistName) }

    public var output: OutputReport? {
        OutputReport(node: context.id, path: mainPlaylist, status: state.withLock { $0.status })
    }

    /// Where samples of `port` go: (rendition, track) pairs. The sound goes into every rendition
    /// that holds it.
    func destinations(of port: String) -> [(rendition: Int, track: Int)] {
        if port == "audio" { return renditions.indices.filter { renditions[$0].hasAudio }.map { ($0, renditions[$0].video == nil ? 0 : 1) } }
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
            let targets = destinations(of: port), fail = bin.nodeFailure()
            sink.onEncodedSamples { [self] event in receive(event, port: port, into: targets, sink: sink, fail: fail) }
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
            let file = OutputFile(path: generation.path(r.folder + Self.initializationName), location: context.location(parameter: "folder"), node: context.id)
            do throws(GraphError) { try file.prepare() } catch {
                files.forEach { $0.discard() }
                throw error
            }
            files.append(file)
        }
        if container == .mpegts {
            // The folder made and found writable now, as fMP4's initialization segment does.
            for r in renditions {
                let probe = OutputFile(path: generation.path(r.folder + ".probe"), location: context.location(parameter: "folder"), node: context.id)
                try probe.prepare()
                probe.discard()
            }
        }
        generation.hold()  // made with the first file: no other packaging removes it now
        let filesRead = Set(context.filesRead.compactMap { FileIdentity(path: $0) })
        state.withLock {
            $0.filesRead = filesRead
            for (r, file) in files.enumerated() { $0.renditions[r].initialization = file }
            $0.status = .writing
        }
    }

    private func commit(_ file: OutputFile, _ s: inout State) throws(GraphError) {
        var info = stat()
        let identity = fstat(file.descriptor, &info) == 0 ? FileIdentity(info) : nil
        try file.commit()
        if let identity { s.written.append((file.path, identity)) }
    }

    /// Writes `bytes` into `file` (prepared) and renames it into place once they are on the
    /// disk; on any failure the temporary file is removed.
    private func complete(_ file: OutputFile, _ bytes: [UInt8], _ s: inout State) throws(GraphError) {
        do throws(GraphError) {
            try Self.writeDurably(bytes, to: file)
            try commit(file, &s)
        } catch {
            file.discard()
            throw error
        }
    }

    /// Writes all of `bytes` and flushes them to the disk (`fsync`), so that once the file is
    /// renamed into place its name never stands for blocks not yet written, even after a crash
    /// (as MuxedFile does). Throws 73 naming the file.
    package static func writeDurably(_ bytes: [UInt8], to file: OutputFile) throws(GraphError) {
        try file.write(bytes)
        guard fsync(file.descriptor) == 0 else {
            throw GraphError(.outputUnwritable, at: file.location, "cannot write \"\(file.path)\": \(String(cString: strerror(errno)))", node: file.node)
        }
    }

    /// Writes `name` (from the package's folder). The top playlist (`top`) is exchanged with the
    /// one it replaces in one step, and the generations that one listed are removed then, once
    /// this run's package is in place.
    private func writeFile(_ name: String, _ bytes: [UInt8], top: Bool = false, _ s: inout State) throws(GraphError) {
        let file = OutputFile(path: path(name), location: context.location(parameter: "folder"), node: context.id)
        try file.prepare()
        guard top else { return try complete(file, bytes, &s) }
        do throws(GraphError) {
            try Self.writeDurably(bytes, to: file)
            var info = stat()
            let identity = fstat(file.descriptor, &info) == 0 ? FileIdentity(info) : nil
            let replaced = try file.commitReplacing()
            if let identity { s.written.append((file.path, identity)) }
            // What the graph reads stays, wherever it is (an input in an earlier generation).
            generation.retire(replaced: replaced, sparing: s.filesRead)
        } catch {
            file.discard()
            throw error
        }
    }

    /// Writes the initialization segment, and each media segment then (event, live) the
    /// playlist that lists it.
    func write(_ outputs: [HLSStream.Output], rendition r: Int, _ s: inout State) throws(GraphError) {
        for output in outputs {
            guard case .segment(let segment) = output else {
                if case .initialization(let bytes) = output, let file = s.renditions[r].initialization {
                    s.renditions[r].initialization = nil
                    try complete(file, bytes, &s)
                }
                continue
            }
            let name = "segment\(segment.sequenceNumber - 1).\(container == .fmp4 ? "m4s" : "ts")"
            if type != .vod, Int(segment.duration.rounded()) > targetDuration {
                let lasts = HLSSegmenter.seconds(segment.duration), from = HLSSegmenter.seconds(segment.start), every = HLSSegmenter.seconds(target)
                let what = "\(renditions[r].folder)\(name) would last \(lasts) s from the key frame at \(from) s, which rounds past the playlist's "
                    + "target duration (\(targetDuration) s)"
                let why = "an \(type.rawValue) playlist's target duration cannot change while players read it (RFC 8216 6.2.1), so the segment is "
                    + "not listed: its video needs a key frame at least every \(every) s (an encoder upstream makes them when asked; packets "
                    + "passed as they are must have them)"
                throw GraphError(.runFailed, at: context.location(parameter: "segmentDuration"), what + "; " + why, node: context.id)
            }
            try writeFile(inGeneration(r, name), segment.bytes, &s)
            s.renditions[r].segments.append(Written(name: name, duration: segment.duration, bytes: segment.bytes.count,
                                                    end: (s.renditions[r].segments.last?.end ?? 0) + segment.duration))
            s.renditions[r].rates.add(bytes: segment.bytes.count, duration: segment.duration)
            if type != .vod {
                try writePlaylist(r, ended: false, &s)
                if isMultivariant, s.renditions.allSatisfy({ !$0.segments.isEmpty }) { try writeMultivariant(&s) }
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
        guard type == .vod, container == .fmp4, renditions[r].hasAudio, let delay = s.audioDelay, let span = s.audioSpan else { return }
        var formats = s.renditions[r].stream.formats.compactMap { $0 }
        guard let a = formats.firstIndex(where: { !$0.isVideo }), delay.sampleRate == Int(formats[a].timescale) else { return }
        let encoded = Int(span.end - span.start)
        formats[a].gapless = CMAF.Gapless(priming: delay.priming, samples: delay.samples, padding: max(0, encoded - delay.priming - delay.samples))
        try writeFile(inGeneration(r, Self.initializationName), CMAF.initializationSegment(of: formats, tags: tags, extraTags: extraTags), &s)
    }

    private func writePlaylist(_ r: Int, ended: Bool, _ s: inout State) throws(GraphError) {
        // A ladder's media playlists are in the generation with their segments; a single one is
        // the top playlist, beside the generation, naming its files through it.
        let uri: (String) -> String = isMultivariant ? { $0 } : { self.generation.uri($0) }
        var list = HLSMediaPlaylist(initializationSegment: container == .fmp4 ? uri(Self.initializationName) : nil,
                                    kind: type == .vod ? .vod : type == .event ? .event : .live)
        let all = s.renditions[r].segments
        var first = 0
        if type == .live {
            // The last windowSize segments, but never less than three target durations of them
            // (RFC 8216 6.2.2), and never a segment taken back once it left.
            first = max(0, all.count - window)
            while first > 0, all[first...].reduce(0, { $0 + $1.duration }) < 3 * Double(targetDuration) { first -= 1 }
            first = max(first, s.renditions[r].listedFrom)
            let now = all.last?.end ?? 0
            for k in s.renditions[r].listedFrom..<first { s.renditions[r].segments[k].leftAt = now }
            s.renditions[r].listedFrom = first
            s.renditions[r].longestPlaylist = max(s.renditions[r].longestPlaylist, all[first...].reduce(0) { $0 + $1.duration })
        }
        list.segments = all[first...].map { (uri: uri($0.name), duration: $0.duration) }
        list.mediaSequence = first
        list.ended = ended
        if type != .vod { list.declaredTargetDuration = targetDuration }
        if isMultivariant {
            try writeFile(inGeneration(r, playlistName), Array(list.text.utf8), &s)
        } else {
            try writeFile(playlistName, Array(list.text.utf8), top: true, &s)
        }
        // Live: a segment that left the playlist stays for its own duration and the longest
        // playlist's more (RFC 8216 6.2.2: a player that read the playlist just before it left
        // may still ask for it), then it is deleted.
        while type == .live, s.renditions[r].deletedBefore < first {
            let k = s.renditions[r].deletedBefore, segment = s.renditions[r].segments[k]
            guard let left = segment.leftAt, (all.last?.end ?? 0) - left >= segment.duration + s.renditions[r].longestPlaylist - 1e-9 else { break }
            let gone = path(inGeneration(r, segment.name))
            if let w = s.written.firstIndex(where: { $0.path == gone }) {
                if FileIdentity(path: gone) == s.written[w].identity { unlink(gone) }
                s.written.remove(at: w)
            }
            s.renditions[r].deletedBefore += 1
        }
    }

    /// The multivariant playlist: each video rendition's media playlist with its peak and
    /// average bit rates (RFC 8216 4.1, measured on the segments written; with a separate sound,
    /// the sound's added, as the variant plays both), its codecs (RFC 6381: the sound's too) and
    /// its size; a separate sound as an audio rendition every variant names. Rewritten when a
    /// figure changes (a live stream's peak rises as busier segments come).
    private func writeMultivariant(_ s: inout State) throws(GraphError) {
        let soundIndex = renditions.firstIndex { $0.video == nil && $0.hasAudio }
        let separate = isMultivariant ? soundIndex : nil
        var variants: [HLSMultivariantPlaylist.Variant] = []
        var audio: [HLSMultivariantPlaylist.AudioRendition] = []
        for (r, rendition) in s.renditions.enumerated() where r != separate {
            var formats = rendition.stream.formats.compactMap { $0 }
            var peak = rendition.rates.peak, average = rendition.rates.average
            if let a = separate {
                formats += s.renditions[a].stream.formats.compactMap { $0 }
                peak += s.renditions[a].rates.peak
                average = average.map { $0 + (s.renditions[a].rates.average ?? 0) }
            }
            var size: (Int, Int)?
            for f in formats { if case .h264(_, let w, let h) = f.codec { size = (w, h) } }
            variants.append(HLSMultivariantPlaylist.Variant(uri: inGeneration(r, playlistName), bandwidth: peak, averageBandwidth: average,
                                                            codecs: formats.map(\.codecsName), resolution: size,
                                                            audioGroup: separate == nil ? nil : Self.audioGroup))
        }
        if let a = separate {
            var channels: Int?
            for f in s.renditions[a].stream.formats.compactMap({ $0 }) { if case .aac(_, _, let c) = f.codec { channels = c } }
            audio.append(HLSMultivariantPlaylist.AudioRendition(group: Self.audioGroup, name: "audio", uri: inGeneration(a, playlistName), channels: channels))
        }
        let text = HLSMultivariantPlaylist(variants: variants, audio: audio).text
        guard text != s.multivariantText else { return }
        try writeFile(context.parameters[Self.multivariant], Array(text.utf8), top: true, &s)
        s.multivariantText = text
    }

    private func removeWritten(_ s: inout State) {
        for w in s.written.reversed() where FileIdentity(path: w.path) == w.identity { unlink(w.path) }
        s.written = []
        for r in s.renditions.indices {
            s.renditions[r].initialization?.discard()
            s.renditions[r].initialization = nil
        }
        generation.discard()
    }

    public func finish(_ outcome: RunStatus) throws(GraphError) {
        try state.withLock { (s) throws(GraphError) in
            guard s.status == .writing else { return }
            defer { generation.release() }  // the packaging is over, whatever its outcome
            switch outcome {
            case .completed where s.failure == nil, .stopped where s.failure == nil:
                do throws(GraphError) {
                    for r in s.renditions.indices {
                        guard s.renditions[r].stream.isStarted else {
                            throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)", "the stream ended before any media reached it", node: context.id)
                        }
                        let last: [HLSStream.Output]
                        do throws(ContainerError) { last = try s.renditions[r].stream.finish(stopped: outcome == .stopped) ?? [] } catch {
                            throw failure(error, port: renditions[r].video ?? "audio", rendition: r, s)
                        }
                        try write(last, rendition: r, &s)
                        try writeGaplessInitialization(r, &s)
                        try writePlaylist(r, ended: true, &s)
                    }
                    if type == .vod {
                        // The bit rates over the segments' own target duration, now known.
                        for r in s.renditions.indices {
                            var rates = HLSBitRates(targetDuration: HLSMediaPlaylist.targetDuration(of: s.renditions[r].segments.map(\.duration)))
                            for segment in s.renditions[r].segments { rates.add(bytes: segment.bytes, duration: segment.duration) }
                            s.renditions[r].rates = rates
                        }
                    }
                    if isMultivariant { try writeMultivariant(&s) }
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
