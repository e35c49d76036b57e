import GraphKitCore
import GraphKitRuntime
import Synchronization

/// `demux`: a media file's compressed samples as they are stored, not decoded: AAC audio and
/// H.264 video, each with its codec configuration and its file's timing (decode and
/// presentation times, so B-frames keep their composition offsets). What a remux needs
/// (`source.file → demux → sink.mp4`, no re-encoding) and what `AVAssetReaderTrackOutput` with
/// `outputSettings: nil` gives.
///
/// Why a node of its own rather than a `decode` parameter: its outputs carry another format
/// (`.aac`, `.h264` instead of PCM and raw frames), which the loader checks at each edge; a
/// parameter that changed decode's output formats would make every graph with `decode` depend
/// on it. A track of another codec (MP3, HEVC) fails the run when it appears, naming the file.
///
/// Example:
/// ```json
/// "demux": { "type": "demux", "params": { "track": 0 } }
/// ```
public final class DemuxNode: ElementNode, @unchecked Sendable {
    // Unchecked: it keeps the bin's BinBuilder (not Sendable, a build-time type) to discard unused
    // streams from pad-added on a streaming thread, which the compiler cannot follow.
    public static let descriptor = NodeDescriptor(
        type: "demux",
        category: .decode,
        summary: "Demuxes a media file without decoding: AAC audio and H.264 video as stored",
        inputs: [PortDescriptor("in", .container, help: "a media file's bytes, from source.file")],
        outputs: [
            PortDescriptor("audio", .aac, presence: .sometimes, help: "the audio track selected by track, as AAC"),
            PortDescriptor("video", .h264, presence: .sometimes, help: "the first video track, as H.264"),
        ],
        parameters: [track],
        example: #"{ "type": "demux", "params": { "track": 0 } }"#
    )

    public static let track = Parameter<Int>("track", 0...63, default: 0, help: "which audio track, counting from 0 among the file's audio tracks")

    let context: NodeContext
    private let seen = Mutex((audio: 0, video: 0, audioLinked: false, videoLinked: false))
    private var builder: BinBuilder?

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        builder = bin
        // decodebin stops at the compressed streams (its caps): the demuxer's own output, so
        // an MP4's samples pass exactly as stored. A parser after each makes what MP4 stores
        // (raw AAC access units, AVC H.264 by access unit) of other framings (ADTS, Annex B).
        // H.264 already so framed goes round its parser: GStreamer 1.26's h264parse writes the
        // SPS and PPS into the first access unit (39 bytes more in the test's file; 1.22's left
        // it as it was), and parsebin's parser did the same on 1.22.
        let demuxer = try bin.make("decodebin", name: "demuxer", ["caps": "audio/mpeg; video/x-h264; audio/x-raw; video/x-raw"])
        try bin.expose(input: "in", demuxer)
        var audioParser: Element?, videoParser: (parse: Element, filter: Element)?
        if context.connectedOutputs.contains("audio") {
            let parse = try bin.make("aacparse")
            let filter = try bin.makeCapsFilter("audio/mpeg, mpegversion=(int)4, stream-format=(string)raw")
            try bin.link(parse, filter)
            try bin.expose(output: "audio", filter)
            audioParser = parse
        }
        if context.connectedOutputs.contains("video") {
            let parse = try bin.make("h264parse")
            let filter = try bin.makeCapsFilter("video/x-h264, stream-format=(string)avc, alignment=(string)au")
            try bin.link(parse, filter)
            try bin.expose(output: "video", filter)
            videoParser = (parse, filter)
        }
        let (audio, video) = (audioParser, videoParser)
        let track = context.parameters[Self.track]
        let input = context.inputDescriptions["in"] ?? "the input"
        demuxer.onPadAdded { [self] pad in
            let type = pad.mediaType ?? ""
            let target: (Element, String)? = seen.withLock { s in
                if type.hasPrefix("audio/") {
                    defer { s.audio += 1 }
                    if s.audio == track, let audio { s.audioLinked = true; return (audio, "AAC") }
                } else if type.hasPrefix("video/") {
                    defer { s.video += 1 }
                    if s.video == 0, let video {
                        s.videoLinked = true
                        guard pad.capsField("stream-format") == "avc", pad.capsField("alignment") == "au" else { return (video.parse, "H.264") }
                        video.parse.unlink(from: video.filter)
                        return (video.filter, "H.264")
                    }
                }
                return nil
            }
            if let (element, codec) = target {
                if !(type.hasPrefix("audio/mpeg") || type.hasPrefix("video/x-h264")) || !pad.link(to: element) {
                    demuxer.postError("\(input)'s \(type.hasPrefix("audio/") ? "audio" : "video") track is \(type), not \(codec): demux passes AAC and H.264 as they are; use decode for other codecs")
                }
            } else {
                discard(pad)
            }
        }
        demuxer.onNoMorePads { [self] in
            let s = seen.withLock { $0 }
            if audio != nil, !s.audioLinked {
                demuxer.postError(s.audio == 0 ? "\(input) has no audio track"
                                   : "\(input) has \(s.audio) audio track\(s.audio == 1 ? "" : "s"); track \(track) does not exist (tracks count from 0)")
            } else if video != nil, !s.videoLinked {
                demuxer.postError("\(input) has no video track")
            }
        }
    }

    /// Streams nobody asked for go to a fakesink, so they never stall the ones in use.
    private func discard(_ pad: Pad) {
        guard let builder, let sink = try? builder.make("fakesink", ["sync": false, "async": false]) else { return }
        sink.syncStateWithParent()
        pad.link(to: sink)
    }
}
