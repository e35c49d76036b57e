import GraphKitCore
import GraphKitRuntime

/// `demux`: a media file's compressed samples as they are stored, not decoded: AAC, Opus, FLAC
/// or ALAC audio and H.264, HEVC, VP9 or AV1 video, each with its codec configuration (caps'
/// `codec_data` and `streamheader`: an Opus stream's pre-skip, FLAC's STREAMINFO) and its file's
/// timing (decode and presentation times, so B-frames keep their composition offsets). What a
/// remux needs (`source.file → demux → sink.mp4 | sink.mkv | sink.webm | sink.ogg`, no
/// re-encoding) and what `AVAssetReaderTrackOutput` with `outputSettings: nil` gives.
///
/// An MP4 or MOV remuxed into `sink.mp4` needs no pipeline: the graph runs on the container path,
/// the file's index read and every sample copied with its edits (DemuxStored.swift).
///
/// Why a node of its own rather than a `decode` parameter: its outputs carry another format
/// (compressed, not PCM and raw frames), which the loader checks at each edge; a parameter that
/// changed decode's output formats would make every graph with `decode` depend on it.
///
/// Each output is a set of codecs: which one a file holds is known only when its stream appears.
/// The loader takes an edge whose input takes any of them (demux.audio → sink.mp4, which takes
/// AAC, Opus and ALAC); a track whose codec the input does not take fails the run when it
/// appears, naming the file, the codec and what the input takes (a FLAC track into sink.mp4). A
/// track of a codec demux does not pass (MP3, Vorbis, MPEG-2) fails the run the same way.
///
/// Timing: Matroska and WebM store presentation times only; an H.264 or HEVC stream's decode
/// times are worked out from them (`h264timestamper`, `h265timestamper`, from the stream's
/// reorder depth), as an MP4 needs them. Opus, FLAC and ALAC pass with their headers; an Opus
/// stream is framed by `opusparse`, which gives each packet its time and duration (Ogg stores
/// only a page's end) and keeps its comment header (OpusTags), FLAC by `flacparse` (a bare
/// .flac file's frames, STREAMINFO as header).
///
/// Example:
/// ```json
/// "demux": { "type": "demux", "params": { "track": 0 } }
/// ```
public final class DemuxNode: ElementNode {
    public static let descriptor = NodeDescriptor(
        type: "demux",
        category: .decode,
        summary: "Demuxes a media file without decoding: its audio and video as stored",
        inputs: [PortDescriptor("in", .container, help: "a media file's bytes, from source.file")],
        outputs: [
            PortDescriptor("audio", audioFormats, presence: .sometimes, help: "the audio track selected by track, as stored: AAC, Opus, FLAC or ALAC"),
            PortDescriptor("video", videoFormats, presence: .sometimes, help: "the first video track, as stored: H.264, HEVC, VP9 or AV1"),
        ],
        parameters: [track],
        example: #"{ "type": "demux", "params": { "track": 0 } }"#
    )

    static let audioFormats = FormatSet([.aac, .audio(.opus), .audio(.flac), .audio(.alac)])
    static let videoFormats = FormatSet([.h264, .video(.hevc), .video(.vp9), .video(.av1)])

    public static let track = Parameter<Int>("track", 0...63, default: 0, help: "which audio track, counting from 0 among the file's audio tracks")

    /// A codec demux passes as stored.
    enum Codec: String {
        case aac = "AAC", opus = "Opus", flac = "FLAC", alac = "ALAC"
        case h264 = "H.264", hevc = "HEVC", vp9 = "VP9", av1 = "AV1"

        /// The codec of a stream's format.
        init?(_ format: MediaFormat?) {
            switch format {
            case .aac?: self = .aac
            case .audio(.opus, _, _)?: self = .opus
            case .audio(.flac, _, _)?: self = .flac
            case .audio(.alac, _, _)?: self = .alac
            case .h264?: self = .h264
            case .video(.hevc, _, _)?: self = .hevc
            case .video(.vp9, _, _)?: self = .vp9
            case .video(.av1, _, _)?: self = .av1
            default: return nil
            }
        }

        /// The codecs of an output.
        static func all(_ kind: String) -> [Codec] { kind == "audio" ? [.aac, .opus, .flac, .alac] : [.h264, .hevc, .vp9, .av1] }

        /// The codec's caps, as an input that takes it names them.
        var caps: String {
            switch self {
            case .aac: "audio/mpeg, mpegversion=(int)4"
            case .h264: "video/x-h264"
            case .opus: AudioCoding.opus.capsName
            case .flac: AudioCoding.flac.capsName
            case .alac: AudioCoding.alac.capsName
            case .hevc: VideoCoding.hevc.capsName
            case .vp9: VideoCoding.vp9.capsName
            case .av1: VideoCoding.av1.capsName
            }
        }

        /// Whether the stream reaches the output as its demuxer gives it, with no parser.
        var passesAsStored: Bool { [.alac, .vp9, .av1].contains(self) }
    }

    let context: NodeContext
    /// The streams seen of each kind in the demuxer's current group of streams, whether one was
    /// linked, and the first element of each kind's route (for a later group).
    private let seen = Guarded((audio: 0, video: 0, audioLinked: false, videoLinked: false, heads: [String: Element]()))

    /// The length of the file's tracks, when the container path read them: what the progress
    /// line runs to.
    let storedDuration = Guarded<Double?>(nil)

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public var expectedDuration: MediaTime? { storedDuration.withLock { $0 }.map { MediaTime(seconds: $0) } }

    public func build(in bin: BinBuilder) throws(GraphError) {
        // decodebin stops at the compressed streams (its caps): the demuxer's own output, so a
        // file's samples pass exactly as stored. Each output is a caps filter of the port's
        // formats; what a stream goes through before it is made when the stream appears.
        let stopAt = ["audio/mpeg", "video/x-h264"] + AudioCoding.allCases.map(\.capsName) + VideoCoding.allCases.map(\.capsName)
            + ["audio/x-raw", "video/x-raw"]
        let demuxer = try bin.make("decodebin", name: "demuxer", ["caps": stopAt.joined(separator: "; ")])
        try bin.expose(input: "in", demuxer)
        demuxer.timeLiveTransportStreamsByTheirOwnTimes()
        var outputs: [String: Element] = [:]
        for port in Self.descriptor.outputs where context.connectedOutputs.contains(port.name) {
            let filter = try bin.make("capsfilter", name: port.name, ["caps": Self.outputCaps(port.formats)])
            try bin.expose(output: port.name, filter)
            outputs[port.name] = filter
        }
        let (audio, video) = (outputs["audio"], outputs["video"])
        let track = context.parameters[Self.track]
        let input = context.inputDescriptions["in"] ?? "the input"
        demuxer.onPadAdded { [self] (pad: Pad) in
            let type = pad.mediaType ?? ""
            let kind = type.hasPrefix("audio/") ? "audio" : type.hasPrefix("video/") ? "video" : nil
            let (output, head): (Element?, Element?) = seen.withLock { s in
                if kind == "audio" {
                    defer { s.audio += 1 }
                    if s.audio == track, let audio { s.audioLinked = true; return (audio, s.heads["audio"]) }
                } else if kind == "video" {
                    defer { s.video += 1 }
                    if s.video == 0, let video { s.videoLinked = true; return (video, s.heads["video"]) }
                }
                return (nil, nil)
            }
            guard let output, let kind else { bin.discard(pad); return }
            // A later group of streams (a live transport stream that started again after a gap:
            // its demuxer makes new pads, the old ones go): the stream takes its predecessor's
            // route, so what the output feeds sees one stream go on.
            if let head {
                if !pad.relink(to: head) { demuxer.postError("\(input)'s \(kind) track could not be linked again after the stream started again") }
                return
            }
            guard let codec = Codec(pad.format) else {
                return demuxer.postError("\(input)'s \(kind) track is \(Self.describe(type)), not \(Self.list(Codec.all(kind))), "
                                         + "which demux passes as stored: use decode for other codecs")
            }
            // What the output feeds must take this codec: a FLAC track into sink.mp4 is refused
            // here, by name, rather than as the muxer's bare "not negotiated".
            let taken = Codec.all(kind).filter { output.downstreamTakes($0.caps) != false }
            if !taken.contains(codec) {
                return demuxer.postError("\(input)'s \(kind) track is \(codec.rawValue), which what \(context.id).\(kind) feeds does not take "
                                         + "(it takes \(Self.list(taken))): \(Self.advice(codec))")
            }
            // A stream passed as it is must be described as the input needs it: GStreamer 1.22's
            // MP4 muxer takes VP9 only with its profile and chroma format, which Matroska's
            // demuxer does not give.
            if codec.passesAsStored, output.downstreamTakes(streamOf: pad) == false {
                let why = codec == .vp9 ? " (GStreamer's MP4 muxer needs a VP9 stream's profile and chroma format, which a Matroska or WebM file's demuxer does not give)" : ""
                return demuxer.postError("\(input)'s \(kind) track is \(codec.rawValue) described as \(pad.formatDescription), which what "
                                         + "\(context.id).\(kind) feeds does not take as it is\(why): \(Self.advice(codec))")
            }
            do throws(GraphError) {
                let head = try Self.route(codec, pad: pad, to: output, in: bin, storesNoDecodeTimes: Self.matroska.contains(demuxer.foundType ?? ""))
                seen.withLock { $0.heads[kind] = head }
                if !pad.link(to: head) { demuxer.postError("\(input)'s \(kind) track (\(codec.rawValue)) could not be linked") }
            } catch {
                demuxer.postError(error.message)
            }
        }
        demuxer.failIfEndingBeforeItsTracks(input) { [self] in
            let s = seen.withLock { $0 }
            return video != nil && !s.videoLinked ? "video" : audio != nil && !s.audioLinked ? "audio" : nil
        }
        demuxer.onNoMorePads { [self] in
            // The group's streams are all there; a later group counts its own from 0.
            let s = seen.withLock { s in
                defer { (s.audio, s.video) = (0, 0) }
                return s
            }
            if audio != nil, !s.audioLinked {
                demuxer.postMissingStreamError(s.audio == 0 ? "\(input) has no audio track"
                                   : "\(input) has \(s.audio) audio track\(s.audio == 1 ? "" : "s"); track \(track) does not exist (tracks count from 0)")
            } else if video != nil, !s.videoLinked {
                demuxer.postMissingStreamError("\(input) has no video track")
            }
        }
    }

    /// The caps of an output: each codec as the outputs carry it (AAC raw; H.264 and HEVC by
    /// access unit, their parameter sets in the caps (avc, hvc1), as MP4 and Matroska store them).
    static func outputCaps(_ formats: FormatSet) -> String {
        formats.patterns.map { pattern in
            switch pattern {
            case .aac: "audio/mpeg, mpegversion=(int)4, stream-format=(string)raw"
            case .h264: "video/x-h264, stream-format=(string)avc, alignment=(string)au"
            case .video(.hevc): "video/x-h265, stream-format=(string)hvc1, alignment=(string)au"
            case .audio(let coding): coding.capsName
            case .video(let coding): coding.capsName
            default: ""
            }
        }.joined(separator: "; ")
    }

    /// Makes the elements `codec`'s stream goes through to `output` and returns the first, for the
    /// demuxer's pad to link to (`output` itself when the stream passes as it is).
    ///
    /// - AAC: `aacparse` makes raw access units of other framings (ADTS).
    /// - H.264 and HEVC: a parser only when the stream is not already framed as MP4 and Matroska
    ///   store it (avc/hvc1 by access unit): GStreamer 1.26's h264parse writes the SPS and PPS into
    ///   the first access unit (39 bytes more in the test's file; 1.22's left it as it was). Then,
    ///   for a Matroska or WebM file, which stores no decode times, the timestamper, which works
    ///   them out from the presentation times and the stream's reorder depth. Only there: it loses
    ///   the samples of a seek's range (a composition's passthrough join wrote nothing with it).
    /// - Opus and FLAC: their parsers, which time each packet and carry the headers in the caps.
    /// - ALAC, VP9, AV1: as they are (VP9's parser of 1.22 adds no chroma format, which MP4 needs,
    ///   so it would not help; each sample is one frame or temporal unit already).
    private static func route(_ codec: Codec, pad: Pad, to output: Element, in builder: BinBuilder, storesNoDecodeTimes: Bool) throws(GraphError) -> Element {
        var chain: [Element] = []
        func framed(_ field: String, _ values: [String]) -> Bool {
            pad.capsField(field).map(values.contains) == true && pad.capsField("alignment") == "au"
        }
        switch codec {
        case .aac:
            chain = [try builder.make("aacparse")]
        case .opus:
            let parse = try builder.make("opusparse")
            parse.keepOpusComments()
            chain = [parse]
        case .flac:
            chain = [try builder.make("flacparse")]
        case .alac, .vp9, .av1:
            break
        case .h264:
            if !framed("stream-format", ["avc"]) {
                chain = [try builder.make("h264parse"), try builder.makeCapsFilter("video/x-h264, stream-format=(string)avc, alignment=(string)au")]
            }
            if storesNoDecodeTimes { chain.append(try builder.make("h264timestamper")) }
        case .hevc:
            if !framed("stream-format", ["hvc1"]) {
                chain = [try builder.make("h265parse"), try builder.makeCapsFilter("video/x-h265, stream-format=(string)hvc1, alignment=(string)au")]
            }
            if storesNoDecodeTimes { chain.append(try builder.make("h265timestamper")) }
        }
        guard let first = chain.first else { return output }
        for (a, b) in zip(chain, chain.dropFirst() + [output]) { try builder.link(a, b) }
        for element in chain.reversed() { element.syncStateWithParent() }
        return first
    }

    /// The types of files that store presentation times only (Matroska, WebM).
    static let matroska: Set<String> = ["video/x-matroska", "audio/x-matroska", "video/webm", "audio/webm", "video/x-matroska-3d"]

    /// "AAC, Opus or ALAC".
    static func list(_ codecs: [Codec]) -> String {
        let names = codecs.map(\.rawValue)
        return names.count < 2 ? names.first ?? "none of them" : names.dropLast().joined(separator: ", ") + " or " + names.last!
    }

    /// What a media type is, in words, for a codec demux does not pass.
    static func describe(_ type: String) -> String {
        switch type {
        case "audio/mpeg": "MPEG audio (MP3)"
        case "audio/x-vorbis": "Vorbis"
        case "audio/x-raw", "video/x-raw": "\(type) (decoded by its demuxer: uncompressed)"
        default: type
        }
    }

    /// What to do about a codec the output's node does not take.
    static func advice(_ codec: Codec) -> String {
        switch codec {
        case .flac: "a FLAC track goes to sink.mkv or sink.ogg, or through decode and an encoder"
        case .alac: "an ALAC track goes to sink.mp4, or through decode and an encoder"
        case .aac, .h264, .hevc: "write it with sink.mkv or sink.mp4, or decode and encode it"
        case .opus: "write it with sink.webm, sink.mkv, sink.ogg or sink.mp4, or decode and encode it"
        case .vp9, .av1: "write it with sink.webm or sink.mkv, or decode and encode it"
        }
    }
}
