import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `encode.aac`: AAC-LC encoder, like an `AVAssetWriterInput` with `kAudioFormatMPEG4AAC`.
///
/// Example:
/// ```json
/// "aac": { "type": "encode.aac", "params": { "bitrate": 96000 } }
/// ```
public final class AACEncoderNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "encode.aac",
        category: .encode,
        summary: "Encodes PCM audio to AAC-LC",
        inputs: [PortDescriptor("in", .pcm(channels: 1...63), help: "PCM audio (GStreamer's converter, which mixes and resamples first, takes at most 63 channels)")],
        outputs: [PortDescriptor("out", .aac, help: "AAC access units, for sink.mp4")],
        parameters: [bitrate, encoder, sampleRate, channels],
        example: #"{ "type": "encode.aac", "params": { "bitrate": 96000 } }"#
    )

    public static let bitrate = Parameter<Int>("bitrate", 8_000...512_000, default: 96_000, help: "bits per second")
    public enum Encoder: String, ParameterEnum { case avenc_aac, voaacenc }
    public static let encoder = Parameter<Encoder>("encoder", default: .avenc_aac,
                                            help: "the GStreamer encoder: avenc_aac (FFmpeg's) or voaacenc (VisualOn)")

    public static let sampleRate = OptionalParameter<Int>("sampleRate", 8_000...96_000, help: "resample to this rate before encoding (default: the input's if AAC takes it, else the nearest standard rate AAC takes: 96000 above 96 kHz, as ffmpeg)")
    public static let channels = OptionalParameter<Int>("channels", 1...6, help: "mix to this many channels before encoding (default: the input's)")

    /// avenc_aac's priming, in samples at any rate: FFmpeg's AAC encoder's initial padding.
    static let avencPriming = 1024

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let convert = try bin.make("audioconvert")
        // GStreamer 1.22's audioconvert takes at most 63 channels (with 64 it fails an assertion
        // and the process crashes): the input is held to that, and the check below fires first.
        let converterChannels = 63
        let input = try bin.makeCapsFilter("audio/x-raw, channels=(int)[ 1, \(converterChannels) ]")
        // GStreamer 1.22's avenc_aac takes at most 6 channels (voaacenc 2), and audioconvert
        // would mix 7.1 down to 5.1 without a word: more channels than the encoder takes fail
        // the run instead, saying how to mix down on purpose.
        let name = p[Self.encoder].rawValue, most = p[Self.encoder] == .avenc_aac ? 6 : 2
        let mixesDown = (p[Self.channels] ?? Int.max) <= most
        input.onInputFormat { [input] format in
            guard case .pcm(let pcm) = format, pcm.channels > most, !mixesDown || pcm.channels > converterChannels else { return }
            if pcm.channels > converterChannels {
                input.postError("\(pcm.channels)-channel audio cannot be encoded: \(name) takes 1 to \(most) channels, and audio of "
                                + "more than \(converterChannels) channels cannot be mixed down (GStreamer's converter takes at most \(converterChannels))")
            } else {
                input.postError("\(pcm.channels)-channel audio cannot be encoded: \(name) takes 1 to \(most) channels; "
                                + "mix it down first (decode's \"channels\" parameter, for example \(most == 2 ? "2" : "2 or \(most)"))")
            }
        }
        let encoder: Element
        switch p[Self.encoder] {
        case .avenc_aac:
            // FFmpeg's encoder forces mid/side stereo by default, and FFmpeg 5.1 gets it wrong:
            // every stereo file decodes as (L-R)/2 and (L+R)/2. Without forcing, it chooses
            // per band and the channels come out as they went in. Written 0, not false:
            // gst-libav 1.22 makes the option a boolean, 1.24+ an enum (FFmpeg's tri-state:
            // auto -1, off 0, on 1) that refuses "false"; both read 0 as off.
            encoder = try bin.make("avenc_aac", name: "encoder", ["bitrate": p[Self.bitrate], "aac-ms": 0, "perfect-timestamp": true])
        case .voaacenc:
            encoder = try bin.make("voaacenc", name: "encoder", ["bitrate": p[Self.bitrate], "perfect-timestamp": true])
        }
        // Stamped from the samples it took (perfect-timestamp), not from its input's stamps:
        // those jitter (Matroska's are to the millisecond) and the encoder would follow them,
        // making its output's span, and so the priming measured from it, off by the jitter of
        // the last buffer (1,037 for 1,024 from a FLAC in Matroska).
        // The priming it adds, measured around it (gkencoderdelay holds it), so that sink.mp4
        // writes an edit list (gapless).
        let measured = try bin.measuringDelay(of: encoder)
        // Feeding only streams, which play the sound from its first sample (no edit list), the
        // priming takes the place of as much input (PlaysEncoderPriming): the sound is not late
        // there by it. avenc_aac's is 1,024 samples (FFmpeg's initial padding, and what is
        // measured); voaacenc's output spans its input (none measured), so it skips nothing.
        if context.feedsOnlyPrimingPlayers, p[Self.encoder] == .avenc_aac { try measured.set("skip-priming", Self.avencPriming) }
        // AAC takes 7.35 to 96 kHz, and only the standard rates between: audio at another rate
        // (a 192 kHz WAV, a 176.4 kHz FLAC) is resampled to the encoder's nearest rate, 96 kHz
        // above it, as FFmpeg's command line does. At a rate the encoder takes, audioresample
        // passes the buffers through untouched.
        let resample = try bin.make("audioresample")
        if p[Self.sampleRate] != nil || p[Self.channels] != nil {
            // As AVAssetWriter converts to its output settings' AVSampleRateKey and AVNumberOfChannelsKey.
            var caps = "audio/x-raw"
            if let rate = p[Self.sampleRate] { caps += ", rate=(int)\(rate)" }
            if let channels = p[Self.channels] { caps += ", channels=(int)\(channels)" }
            try bin.link(input, convert, resample, try bin.makeCapsFilter(caps), measured)
        } else {
            try bin.link(input, convert, resample, measured)
        }
        try bin.expose(input: "in", input)
        try bin.expose(output: "out", measured)
    }
}
