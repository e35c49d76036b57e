import GraphKitCore
import GraphKitRuntime

/// `encode.alac`: Apple Lossless encoder (FFmpeg's, through gst-libav), like an
/// `AVAssetWriterInput` with `kAudioFormatAppleLossless`.
///
/// Lossless and exact: the decoded samples are the input's, bit for bit and count for count
/// (16-bit input in 16 bits, float in 24, as AVFoundation's `AVEncoderBitDepthHintKey`). ALAC has
/// no priming; its last frame is short. The span is measured around the encoder all the same and
/// told to `sink.mp4`, so that the writer's edit list ends where the input does.
///
/// Example:
/// ```json
/// "alac": { "type": "encode.alac" }
/// ```
public final class ALACEncoderNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "encode.alac",
        category: .encode,
        summary: "Encodes PCM audio to Apple Lossless (ALAC)",
        inputs: [PortDescriptor("in", .pcm(channels: 1...63), help: "PCM audio")],
        outputs: [PortDescriptor("out", .audio(.alac), help: "ALAC frames, for sink.mp4")],
        parameters: [bitDepth, sampleRate, channels],
        example: #"{ "type": "encode.alac" }"#
    )

    public static let bitDepth = OptionalParameter<Int>("bitDepth", 16...24, multipleOf: 8,
                                                 help: "bits a sample, 16 or 24 (default: 16 for 16-bit input, 24 for float)")
    /// gst-libav's ALAC encoder takes 4 to 96 kHz.
    public static let sampleRate = OptionalParameter<Int>("sampleRate", 4_000...96_000,
                                                   help: "resample to this rate before encoding (default: the input's, which must be 4 to 96 kHz)")
    /// gst-libav 1.22's ALAC encoder takes mono and stereo only (and MP4's muxer takes no more).
    public static let channels = OptionalParameter<Int>("channels", 1...2, help: "mix to this many channels before encoding (default: the input's)")

    public static let mostChannels = 2

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        // FFmpeg's ALAC encoder codes 16 bits from S16 and 24 bits from S32 (its low byte unused).
        let format = p[Self.bitDepth].map { $0 == 16 ? "S16LE" : "S32LE" }
        let (input, converted) = try AudioEncoderInput.build(in: bin, encoder: "avenc_alac", channels: Self.mostChannels,
                                                             mixTo: p[Self.channels], sampleRate: p[Self.sampleRate], sampleFormat: format)
        input.onInputFormat { [input, converted] format in
            guard case .pcm(let pcm) = format else { return }
            if p[Self.sampleRate] == nil, !(4_000...96_000).contains(pcm.sampleRate) {
                input.postError("\(pcm.sampleRate) Hz audio cannot be encoded: avenc_alac takes 4000 to 96000 Hz; "
                                + "resample it first (the node's \"sampleRate\" parameter, for example 48000)")
                return
            }
            guard p[Self.bitDepth] == nil else { return }
            let caps = AudioEncoderInput.caps(sampleFormat: pcm.sampleFormat == .s16le ? "S16LE" : "S32LE",
                                              sampleRate: p[Self.sampleRate], channels: p[Self.channels])
            try? converted.set("caps", caps)
        }
        let encoder = try bin.make("avenc_alac", name: "encoder", ["perfect-timestamp": true])
        let measured = try bin.measuringDelay(of: encoder)
        try bin.link(converted, measured)
        try bin.expose(input: "in", input)
        try bin.expose(output: "out", measured)
    }
}
