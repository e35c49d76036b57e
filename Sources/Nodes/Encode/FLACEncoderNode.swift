import GraphKitCore
import GraphKitRuntime

/// `encode.flac`: FLAC encoder (libFLAC), like an `AVAssetWriterInput` with `kAudioFormatFLAC`.
///
/// Lossless and exact: the decoded samples are the input's, bit for bit and count for count
/// (16-bit input is coded in 16 bits, float input in 24). The output is a native FLAC stream:
/// the `fLaC` marker and metadata blocks first (the caps' `streamheader`, also sent as the first
/// buffers), then the frames, so its buffers written one after another are a `.flac` file.
/// Its containers: `sink.mkv`, `sink.ogg`, and `sink.mp4` (MP4 and M4A, as ffmpeg writes FLAC
/// there: see ``MP4SinkNode``).
///
/// Example:
/// ```json
/// "flac": { "type": "encode.flac", "params": { "compressionLevel": 8 } }
/// ```
public final class FLACEncoderNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "encode.flac",
        category: .encode,
        summary: "Encodes PCM audio to FLAC (lossless)",
        inputs: [PortDescriptor("in", .pcm(channels: 1...63), help: "PCM audio")],
        outputs: [PortDescriptor("out", .audio(.flac), help: "FLAC frames after the stream's header, for sink.mkv, sink.ogg or sink.mp4 (MP4 and M4A)")],
        parameters: [compressionLevel, bitDepth, sampleRate, channels],
        example: #"{ "type": "encode.flac", "params": { "compressionLevel": 8 } }"#
    )

    public static let compressionLevel = Parameter<Int>("compressionLevel", 0...8, default: 5,
                                                 help: "libFLAC's level: 0 fastest, 8 smallest (5, flac's and ffmpeg's default); every level is lossless")
    public static let bitDepth = OptionalParameter<Int>("bitDepth", 16...24, multipleOf: 8,
                                                 help: "bits a sample, 16 or 24 (default: 16 for 16-bit input, 24 for float)")
    public static let sampleRate = OptionalParameter<Int>("sampleRate", 1...655_350, help: "resample to this rate before encoding (default: the input's)")
    /// libFLAC's channel layouts: 1 to 8.
    public static let channels = OptionalParameter<Int>("channels", 1...8, help: "mix to this many channels before encoding (default: the input's)")

    public static let mostChannels = 8

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        let p = context.parameters
        let format = p[Self.bitDepth].map { $0 == 16 ? "S16LE" : "S24_32LE" }
        let (input, converted) = try AudioEncoderInput.build(in: bin, encoder: "flacenc", channels: Self.mostChannels,
                                                             mixTo: p[Self.channels], sampleRate: p[Self.sampleRate], sampleFormat: format)
        if format == nil {
            // Float input is coded in 24 bits (FLAC has no float), 16-bit in 16: nothing added, nothing lost.
            input.onInputFormat { [converted] format in
                guard case .pcm(let pcm) = format else { return }
                let caps = AudioEncoderInput.caps(sampleFormat: pcm.sampleFormat == .s16le ? "S16LE" : "S24_32LE",
                                                  sampleRate: p[Self.sampleRate], channels: p[Self.channels])
                try? converted.set("caps", caps)
            }
        }
        let encoder = try bin.make("flacenc", name: "encoder", ["quality": p[Self.compressionLevel], "perfect-timestamp": true])
        let measured = try bin.measuringDelay(of: encoder)
        try bin.link(converted, measured)
        try bin.expose(input: "in", input)
        try bin.expose(output: "out", measured)
    }
}
