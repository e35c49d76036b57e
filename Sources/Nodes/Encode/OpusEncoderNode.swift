import GraphKitCore
import GraphKitRuntime

/// `encode.opus`: Opus encoder (libopus), like an `AVAssetWriterInput` with `kAudioFormatOpus`.
///
/// Opus runs at 48 kHz: audio at another rate is resampled first. The encoder's lookahead (its
/// pre-skip, 312 samples at the default settings) is written in the stream's header (`OpusHead`,
/// the caps' `streamheader`), which a muxer turns into the container's own pre-skip (MP4's
/// `dOps`, Ogg's `OpusHead`): decoders drop those samples, so the decoded audio lines up with
/// the input sample for sample. The span the encoder adds is also measured around it (as
/// `encode.aac`'s priming) and told to the writer downstream.
///
/// Example:
/// ```json
/// "opus": { "type": "encode.opus", "params": { "bitrate": 128000 } }
/// ```
public final class OpusEncoderNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "encode.opus",
        category: .encode,
        summary: "Encodes PCM audio to Opus (48 kHz)",
        inputs: [PortDescriptor("in", .pcm(channels: 1...63), help: "PCM audio, any rate (resampled to 48 kHz)")],
        outputs: [PortDescriptor("out", .audio(.opus), help: "Opus packets with their OpusHead, for sink.mp4")],
        parameters: [bitrate, bitrateMode, complexity, frameDuration, application, channels],
        example: #"{ "type": "encode.opus", "params": { "bitrate": 128000 } }"#
    )

    /// Opus's own limits: 6 kb/s mono at the least, 510 kb/s a stream at the most (opusenc takes 650,000 in all).
    public static let bitrate = Parameter<Int>("bitrate", 6_000...650_000, default: 96_000, help: "bits per second, all channels together")
    public enum BitrateMode: String, ParameterEnum { case vbr, cvbr, cbr }
    public static let bitrateMode = Parameter<BitrateMode>("bitrateMode", default: .vbr,
                                                    help: "vbr (variable, the default, as ffmpeg's libopus), cvbr (constrained variable) or cbr (constant)")
    public static let complexity = Parameter<Int>("complexity", 0...10, default: 10, help: "encoder effort: 0 fastest, 10 best (libopus's default)")
    public static let frameDuration = Parameter<Int>("frameDuration", oneOf: [5, 10, 20, 40, 60], default: 20,
                                              help: "milliseconds of audio in a packet (20 as ffmpeg's libopus)")
    public enum Application: String, ParameterEnum { case audio, voip, lowdelay }
    public static let application = Parameter<Application>("application", default: .audio,
                                                    help: "what to tune for: audio (music and mixed content), voip (speech) or lowdelay")
    /// Opus's channel mapping family 1 (Vorbis order) covers 1 to 8 channels, and MP4 takes that many.
    public static let channels = OptionalParameter<Int>("channels", 1...8, help: "mix to this many channels before encoding (default: the input's)")

    /// The channels Opus takes here (mapping family 1, as MP4 and Ogg carry it).
    public static let mostChannels = 8
    /// Opus codes at 48 kHz whatever the input's rate.
    public static let sampleRate = 48_000

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let (input, converted) = try AudioEncoderInput.build(in: bin, encoder: "opusenc", channels: Self.mostChannels,
                                                             mixTo: p[Self.channels], sampleRate: Self.sampleRate)
        let audioType = switch p[Self.application] {
        case .audio: "generic"
        case .voip: "voice"
        case .lowdelay: "restricted-lowdelay"
        }
        let mode = switch p[Self.bitrateMode] {
        case .vbr: "vbr"
        case .cvbr: "constrained-vbr"
        case .cbr: "cbr"
        }
        let encoder = try bin.make("opusenc", name: "encoder", [
            "bitrate": p[Self.bitrate], "bitrate-type": mode, "complexity": p[Self.complexity],
            "frame-size": p[Self.frameDuration], "audio-type": audioType, "perfect-timestamp": true,
        ])
        let measured = try bin.measuringDelay(of: encoder)
        try bin.link(converted, measured)
        try bin.expose(input: "in", input)
        try bin.expose(output: "out", measured)
    }
}
