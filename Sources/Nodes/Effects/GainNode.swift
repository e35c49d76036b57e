import FoundationEssentials
import Glibc
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `effect.gain`: multiplies PCM audio by a gain, in Swift, in place when the buffer is not
/// shared. 16-bit samples saturate instead of wrapping.
///
/// Example:
/// ```json
/// "louder": { "type": "effect.gain", "params": { "db": 6 } }
/// ```
public final class GainNode: ProcessingNode, Sendable {
    /// Each buffer is scaled in place and passed on.
    public static let bufferFlow = BufferFlow.passThrough

    public static let descriptor = NodeDescriptor(
        type: "effect.gain",
        category: .effect,
        summary: "Audio gain, linear or in decibels",
        inputs: [PortDescriptor("in", .pcm(), help: "PCM audio")],
        outputs: [PortDescriptor("out", .pcm(), carries: .input("in"), help: "the same PCM, scaled")],
        parameters: [gain, db],
        rules: [.exclusive(gain, db)],
        example: #"{ "type": "effect.gain", "params": { "db": 6 } }"#
    )

    public static let gain = OptionalParameter<Double>("gain", 0...1000, help: "linear factor (1 leaves the audio as it is)")
    public static let db = OptionalParameter<Double>("db", -120...60, help: "gain in decibels (20·log10 of the factor)")

    /// The linear factor.
    public let factor: Float

    public init(context: NodeContext) throws(GraphError) {
        let p = context.parameters
        if let db = p[Self.db] {
            factor = Float(pow(10, db / 20))
        } else {
            factor = Float(p[Self.gain] ?? 1)
        }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        guard factor != 1, case .pcm(let f)? = buffer.format else { return true }
        let k = factor
        switch f.sampleFormat {
        case .s16le:
            buffer.withMutableAudioSamples(as: Int16.self) { samples in
                for i in samples.indices {
                    samples[i] = Int16(max(-32768, min(32767, (Float(samples[i]) * k).rounded())))
                }
            }
        case .f32le:
            buffer.withMutableAudioSamples(as: Float.self) { samples in
                for i in samples.indices { samples[i] *= k }
            }
        }
        return true
    }
}
