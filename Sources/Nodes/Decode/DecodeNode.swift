import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Synchronization

/// `decode`: demuxes and decodes a media file, like `AVAssetReader` with
/// `AVAssetReaderTrackOutput(outputSettings:)`. Each output exists only when the file has that
/// kind of track; connecting one the file lacks fails the run when it starts, naming the file.
///
/// Example:
/// ```json
/// "dec": { "type": "decode", "params": { "sampleFormat": "f32le", "sampleRate": 48000 } }
/// ```
public final class DecodeNode: ElementNode, DecodesVideo {
    public static let descriptor = NodeDescriptor(
        type: "decode",
        category: .decode,
        summary: "Demuxes and decodes a media file to PCM audio and raw video",
        inputs: [PortDescriptor("in", .container, help: "a media file's bytes, from source.file")],
        outputs: [
            // What each output carries follows from the parameters, so that the loader refuses
            // a graph whose decode gives what a node downstream cannot take, at the parameter.
            PortDescriptor("audio", .pcm(), presence: .sometimes,
                           carries: .decided(by: [.sampleFormat: sampleFormat, .sampleRate: sampleRate, .channels: channels]) { p in
                               let formats: Set<SampleFormat> = switch p[DecodeNode.sampleFormat] {
                               case .auto: [.s16le, .f32le]
                               case .value(let f): [f]
                               }
                               return .pcm(formats, sampleRates: p[DecodeNode.sampleRate].map { $0...$0 } ?? 1...768_000,
                                           channels: p[DecodeNode.channels].map { $0...$0 } ?? 1...64)
                           },
                           help: "the audio track selected by track, as PCM"),
            PortDescriptor("video", .rawVideo(Set(PixelFormat.allCases)), presence: .sometimes,
                           carries: .decided(by: [.pixelFormat: pixelFormat]) { p in .rawVideo([p[DecodeNode.pixelFormat]]) },
                           help: "the first video track, as raw frames"),
        ],
        parameters: [track, sampleFormat, sampleRate, channels, pixelFormat, autorotate, toneMap, exactColor, readOnlyFrames],
        rules: PixelFormat.tenBit.sorted { $0.rawValue < $1.rawValue }.map {
            .when(.equals(toneMap, true), require: !.equals(pixelFormat, $0),
                  because: "toneMap gives 8-bit SDR frames; \($0.rawValue) keeps the video's 10 bits (and its HDR) for encode.hevc's main10")
        },
        example: #"{ "type": "decode", "params": { "sampleFormat": "s16le" } }"#
    )

    public static let track = Parameter<Int>("track", 0...63, default: 0, help: "which audio track, counting from 0 among the file's audio tracks")
    public static let sampleFormat = AutoParameter<SampleFormat>("sampleFormat", default: .value(.s16le),
                                                          help: "audio sample format; auto keeps the decoder's own (16-bit or float) and converts only other formats")
    public static let sampleRate = OptionalParameter<Int>("sampleRate", 8_000...192_000, help: "resample audio to this rate (default: the file's)")
    public static let channels = OptionalParameter<Int>("channels", 1...8, help: "mix audio to this many channels (default: the file's)")
    public static let pixelFormat = Parameter<PixelFormat>("pixelFormat", default: .bgra,
                                                           help: "video pixel format; i420_10le or p010_10le (CoreVideo's 10-bit biplanar) keeps a 10-bit video's samples (HDR) for encode.hevc's main10, with no 8-bit step")
    public static let autorotate = Parameter<Bool>("autorotate", default: false,
                                                   help: "true turns the picture as the file says it is displayed (a phone's portrait video), as ffmpeg does; false (the default) gives frames as stored and passes the orientation on, so sink.mp4 writes it, as AVFoundation keeps a track's transform")

    public static let toneMap = Parameter<Bool>("toneMap", default: false,
                                                help: "true tone-maps HDR video (HLG, PQ) to SDR BT.709 as it is decoded, from the decoder's full bit depth (effect.toneMap's method at its defaults); SDR video is untouched")

    public static let exactColor = Parameter<Bool>("exactColor", default: false,
                                                   help: "true converts to bgra or rgba with the chroma interpolated where the file sites it and the file's matrix and range in 16 bits (through ARGB64): pictures as ffmpeg's zscale makes them, at about ten times the conversion's CPU (24 ms against 2 ms a 1080p frame); false (the default) takes GStreamer's fast path, which repeats each chroma sample over 2x2 pixels. AssetImageGenerator and analysis.thumbnails set it")

    public static let readOnlyFrames = Parameter<Bool>("readOnlyFrames", default: false,
                                                       help: "true hands H.264 and HEVC pictures on as the decoder made them, shared with it (GraphKit's gkavdec over libavcodec), with no copy of each frame: for graphs whose nodes read the video (analysis) or write their result into a frame of their own (effect.mirror); a node that writes into a frame in place gets a copy first")

    let context: NodeContext

    /// HDR frames leave as the file holds them unless `toneMap` maps them.
    public var keepsHDR: Bool { !context.parameters[Self.toneMap] }
    public var videoOutput: String { "video" }
    /// The decoded streams seen so far (pad-added runs on streaming threads).
    private struct Streams {
        var audioSeen = 0
        var videoSeen = 0
        var audioLinked = false
        var videoLinked = false
    }
    private let streams = Guarded(Streams())

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        // MP3: libav's decoder and mpg123's share a rank, and decodebin would take libav's by
        // name; mpg123's decodes 2.5 times as fast in a fifth of the memory (BENCHMARKS.md).
        GStreamer.prefer("mpg123audiodec", over: ["avdec_mp3", "avdec_mp3float"])
        let decodebin = try bin.make("decodebin", name: "decodebin")
        // GStreamer trims an MP3's encoder delay and padding when LAME wrote its tag, and not
        // when ffmpeg did (in the same layout): both are trimmed, as ffmpeg trims them.
        decodebin.trimFFmpegMP3Delay()
        decodebin.timeLiveTransportStreamsByTheirOwnTimes()
        // A kind of stream no edge takes is not decoded (a film's picture when only its sound is
        // read): it leaves decodebin encoded and goes to a fakesink.
        decodebin.decodeOnly(audio: context.connectedOutputs.contains("audio"), video: context.connectedOutputs.contains("video"))
        // decodebin pulls from the file (demuxers read in large blocks and seek). GStreamer
        // 1.22's decodebin may drop a demuxer's error in pull mode; BinBuilder keeps and reposts
        // it (gk_bin_keep_errors), so a truncated MP4 fails instead of stalling.
        try bin.expose(input: "in", decodebin)

        var audio: AudioBranch?
        var trim: Element?
        var orientation: Element?
        var videoTrim: Element?
        if context.connectedOutputs.contains("audio") {
            // No dither: float to 16-bit is a plain conversion, as a reader of samples expects.
            // The converter is linked to the output when the stream appears (DecodedAudio):
            // a stream it cannot take goes straight there, or is refused.
            let convert = try bin.make("audioconvert", ["dithering": "none"])
            let resample = p[Self.sampleRate] != nil ? try bin.make("audioresample") : nil
            if let resample { try bin.link(convert, resample) }  // else the file's own rate: nothing to resample
            let filter = try bin.makeCapsFilter("audio/x-raw")
            // Stamps that are presentation times, in time order (gkpresenttimes says why).
            let present = try bin.make("gkpresenttimes")
            try bin.link(filter, present)
            try bin.expose(output: "audio", present)
            // An MP4's sound track decodes to exactly its edit list's (or gapless tag's)
            // samples, trimmed here rather than by the demuxer (MP4AudioEdit and gkaudiotrim
            // say why); it keeps everything until the index is read.
            trim = try bin.make("gkaudiotrim")
            // GStreamer 1.24+'s demuxer marks AAC's priming for its decoder to cut: taken off
            // where gkaudiotrim cuts, so that it is not cut twice.
            decodebin.leaveTrimming(to: trim!)
            audio = AudioBranch(convert: convert, converted: resample ?? convert, filter: filter, trim: trim!)
        }
        var videoEntry: Element?
        var toneMapEntry: Element?
        if context.connectedOutputs.contains("video") {
            // 10-bit frames as the decoder gives them: no dither (videoconvert's Bayer dither
            // moves a P010 sample by a level), as 16-bit PCM gets none.
            let exact = p[Self.exactColor] && [.bgra, .rgba].contains(p[Self.pixelFormat])
            let convert = try bin.make("videoconvert", p[Self.pixelFormat].bitDepth > 8 || exact ? ["dither": "none"] : [:])
            let filter = try bin.makeCapsFilter("video/x-raw, format=(string)\(p[Self.pixelFormat].gstName)")
            // Frames stamped with where they show: an MP4 with B-frames has an edit list that
            // skips their composition offset, which the demuxer leaves in the stamps.
            let present = try bin.make("gkpresenttimes")
            if exact {
                // videoconvert's fast path from 4:2:0 to RGB repeats each chroma sample over 2×2
                // pixels, whatever the file's chroma siting, with an 8-bit matrix (24 dB PSNR
                // against zscale on a colourful picture); its general path, which a 16-bit RGB
                // step takes, interpolates chroma where the file sites it and rounds once (35.5-52
                // dB). RGB, not YUV: an RGB picture (a PNG) passes through it unchanged.
                let wide = try bin.makeCapsFilter("video/x-raw, format=(string)ARGB64")
                try bin.link(convert, wide, try bin.make("videoconvert", ["dither": "none"]), filter, present)
            } else {
                try bin.link(convert, filter, present)
            }
            try bin.expose(output: "video", present)
            if p[Self.readOnlyFrames] {
                // libavcodec's own pictures, their padded layout stated in a video meta, which
                // every GraphKit node reads (SampleBuffer's planes): said here, so that the
                // decoder hands them on rather than copying them into GStreamer's layout.
                // videoconvert passes them through when the format is the decoder's.
                decodebin.preferSharingDecoder()
                present.answerAllocationReadingVideoMeta()
            }
            if p[Self.autorotate] {
                // The display orientation (an MP4's matrix, as the image-orientation tag)
                // applied to the pixels, and the tag then says upright, so that a writer does
                // not turn them again. No orientation: passed through as is.
                let rotate = try bin.make("videoflip", ["video-direction": "auto"])
                if GStreamer.videoflipPassesOrientationOn {
                    // GStreamer 1.22's videoflip passes the tag on as it came (1.26's says
                    // rotate-0 itself): asked of videoflip at start-up, not of the version.
                    let upright = try bin.make("gkorientation", ["orientation": "rotate-0"])
                    try bin.link(rotate, upright, convert)
                } else {
                    try bin.link(rotate, convert)
                }
                videoEntry = rotate
            } else {
                videoEntry = convert
            }
            // The orientation an MP4's matrix says, mirrored ones too (GStreamer's demuxer
            // reads only the four turns, 1.22 to 1.26): set from the index, before any frame.
            let stated = try bin.make("gkorientation")
            try bin.link(stated, videoEntry!)
            orientation = stated
            // An edit list of several edits (a join's) shown after decoding: set from the index.
            let edited = try bin.make("gkvideotrim")
            try bin.link(edited, stated)
            videoTrim = edited
            videoEntry = edited
            if p[Self.toneMap] {
                // First, on the decoder's own frames: 10-bit HDR mapped before anything makes it
                // 8-bit (effect.toneMap after decode sees 8-bit frames). Linked when a stream
                // whose colour says HDR appears (gktonemap passes 8-bit SDR through but cannot
                // take 10-bit SDR); any other goes straight on to the orientation element.
                toneMapEntry = try bin.make("gktonemap", name: "tonemap")
            }
        }
        if trim != nil || orientation != nil {
            // The handler holds no node: the demuxer's probe keeps it as long as the pipeline.
            let track = p[Self.track], seen = FirstTime()
            decodebin.onMP4Index { [trim, orientation, videoTrim] moov in
                // The first index only: a second read would find the edit lists gone.
                guard seen.now() else { return }
                if let orientation, let movie = try? MP4Movie(parsing: moov[...]),
                   let stated = movie.tracks(handler: "vide").first?.track.orientation, stated != .rotate0 {
                    try? orientation.set("orientation", stated.rawValue)
                }
                if let videoTrim, let edits = MP4VideoEdits.take(from: &moov) {
                    // The timescale last: it turns the edits on.
                    try? videoTrim.set("edits", edits.text)
                    try? videoTrim.set("timescale", edits.timescale)
                }
                if let trim, let edit = MP4AudioEdit.take(from: &moov, track: track) {
                    // The timescale last: it turns the trim on.
                    try? trim.set("start", edit.start)
                    try? trim.set("end", edit.end)
                    try? trim.set("timescale", edit.timescale)
                }
            }
        }

        let track = p[Self.track]
        let (audioBranch, videoBranch, hdrBranch) = (audio, videoEntry, toneMapEntry)
        decodebin.onPadAdded { [self] pad in
            let type = pad.mediaType ?? ""
            let (target, audioTarget): (Element?, AudioBranch?) = streams.withLock { s in
                if type.hasPrefix("audio/") {
                    defer { s.audioSeen += 1 }
                    guard s.audioSeen == track, let audioBranch else { return (nil, nil) }
                    s.audioLinked = true
                    return (nil, audioBranch)
                } else if type.hasPrefix("video/") {
                    defer { s.videoSeen += 1 }
                    guard s.videoSeen == 0, let videoBranch else { return (nil, nil) }
                    s.videoLinked = true
                    return (videoBranch, nil)
                }
                return (nil, nil)
            }
            if let audioTarget {
                let input = context.inputDescriptions["in"] ?? "the input"
                let route = DecodedAudio.route(pad.audioShape, sampleFormat: p[Self.sampleFormat], sampleRate: p[Self.sampleRate],
                                               channels: p[Self.channels], input: input)
                if let failure = audioTarget.link(pad, route) { decodebin.postError(failure) }
            } else if var target {
                // HDR video into the tone mapper, when asked for, by the colour its caps state.
                if let hdrBranch, VideoColor(colorimetry: pad.capsField("colorimetry") ?? "", chromaFormat: "", bitDepth: 0,
                                             masteringDisplay: "", contentLightLevel: "").hdr != nil {
                    guard hdrBranch.link(to: target) else { return decodebin.postError("cannot link the tone mapper to the decoded video") }
                    target = hdrBranch
                }
                // Linked whatever the caps: a format nothing downstream takes is then refused as it
                // arrives, and the run names the node that refuses it.
                if !pad.link(to: target, checkingCaps: false) { decodebin.postError("cannot link the decoded \(type) stream") }
            } else {
                bin.discard(pad)
            }
        }
        decodebin.failIfEndingBeforeItsTracks(context.inputDescriptions["in"] ?? "the input") { [self] in
            let (aLinked, vLinked) = streams.withLock { ($0.audioLinked, $0.videoLinked) }
            return videoBranch != nil && !vLinked ? "video" : audioBranch != nil && !aLinked ? "audio" : nil
        }
        decodebin.onNoMorePads { [self] in
            let (audioCount, aLinked, vLinked) = streams.withLock { ($0.audioSeen, $0.audioLinked, $0.videoLinked) }
            let input = context.inputDescriptions["in"] ?? "the input"
            if audioBranch != nil, !aLinked {
                decodebin.postMissingStreamError(audioCount == 0 ? "\(input) has no audio track"
                                    : "\(input) has \(audioCount) audio track\(audioCount == 1 ? "" : "s"); track \(track) does not exist (tracks count from 0)")
            } else if videoBranch != nil, !vLinked {
                decodebin.postMissingStreamError("\(input) has no video track")
            }
        }
    }

    /// The audio output's elements: a converter (and a resampler when a rate is asked for)
    /// and the caps filter that is the output, linked to the decoded stream as it appears.
    private struct AudioBranch: Sendable {
        let convert: Element
        /// The last of the converting elements (the resampler, or the converter).
        let converted: Element
        let filter: Element
        /// gkaudiotrim, which the decoded stream enters first.
        let trim: Element

        /// Links the decoded stream's `pad` by `route`; the failure to post, if any.
        func link(_ pad: Pad, _ route: DecodedAudio) -> String? {
            let entry: Element
            switch route {
            case .refuse(let why):
                return why
            case .convert(let caps):
                try? filter.set("caps", caps)
                guard converted.link(to: filter) else { return "cannot link the audio converter to the output" }
                entry = convert
            case .direct(let caps):
                try? filter.set("caps", caps)
                entry = filter
            }
            entry.completeChannelMask()
            trim.completeChannelMask()
            guard trim.link(to: entry) else { return "cannot link the audio trim to the converter" }
            return pad.link(to: trim, checkingCaps: false) ? nil : "cannot link the decoded audio stream"
        }
    }

    /// True the first time only.
    private final class FirstTime: Sendable {
        private let done = Atomic(false)
        func now() -> Bool { !done.exchange(true, ordering: .relaxed) }
    }
}
