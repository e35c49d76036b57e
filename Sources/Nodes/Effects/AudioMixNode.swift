import GraphKitCore
import GraphKitRuntime

/// `effect.mix`: sums up to eight PCM streams into one, sample by sample, at unity gain
/// (GStreamer's `audiomixer`): the sound tracks of a film mixed for AVAssetReaderAudioMixOutput,
/// a voice over music. The mix lasts as long as the longest input; an input that starts later
/// (its first sample's time) joins the mix there. Its format is the parameters' (by default
/// 16-bit, 48 kHz, stereo), and every input is converted to it on the way in, whatever its own:
/// the output never depends on which input's format arrived first. 16-bit samples saturate;
/// float ones do not clip.
///
/// Example:
/// ```json
/// "mix": { "type": "effect.mix", "params": { "sampleRate": 44100, "channels": 2 } }
/// ```
/// with `"music.audio -> mix.in0"`, `"voice.audio -> mix.in1"`, `"mix.out -> enc.in"`.
public final class AudioMixNode: ElementNode, Sendable {
    static let inputNames = (0..<8).map { "in\($0)" }

    public static let descriptor = NodeDescriptor(
        type: "effect.mix",
        category: .effect,
        summary: "Mixes up to eight PCM streams into one, at unity gain",
        inputs: inputNames.map { PortDescriptor($0, .pcm(), presence: .optional, help: "a PCM stream to mix (any of in0…in7), converted to the mix's format") },
        outputs: [
            PortDescriptor("out", .pcm(), carries: .decided(by: [.sampleFormat: sampleFormat, .sampleRate: sampleRate, .channels: channels]) { p in
                .pcm([p[AudioMixNode.sampleFormat]], sampleRates: p[AudioMixNode.sampleRate]...p[AudioMixNode.sampleRate],
                     channels: p[AudioMixNode.channels]...p[AudioMixNode.channels])
            }, help: "the streams summed, as long as the longest"),
        ],
        parameters: [sampleFormat, sampleRate, channels],
        requiresAnInput: true,
        example: #"{ "type": "effect.mix", "params": { "sampleRate": 44100, "channels": 2 } }"#
    )

    public static let sampleFormat = Parameter<SampleFormat>("sampleFormat", default: .s16le, help: "the mix's sample format (f32le does not clip)")
    public static let sampleRate = Parameter<Int>("sampleRate", 8_000...192_000, default: 48_000, help: "the mix's rate; inputs are resampled to it")
    public static let channels = Parameter<Int>("channels", 1...8, default: 2, help: "the mix's channels; inputs are mixed up or down to it")

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let format = MediaFormat.pcm(.init(sampleRate: p[Self.sampleRate], channels: p[Self.channels], sampleFormat: p[Self.sampleFormat]))
        let mixer = try bin.make("audiomixer", name: "mixer")
        for port in Self.inputNames where context.connectedInputs.contains(port) {
            let convert = try bin.make("audioconvert", name: "convert-\(port)")
            let resample = try bin.make("audioresample", name: "resample-\(port)")
            let filter = try bin.make("capsfilter", name: "format-\(port)", ["caps": format.capsString])
            convert.completeChannelMask()
            try bin.link(convert, resample, filter, mixer)
            try bin.expose(input: port, convert)
        }
        let output = try bin.make("capsfilter", name: "format", ["caps": format.capsString])
        try bin.link(mixer, output)
        try bin.expose(output: "out", output)
    }
}
