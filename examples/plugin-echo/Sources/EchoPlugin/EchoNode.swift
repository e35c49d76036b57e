import Foundation
import GraphKit

/// `effect.echo`: repeats the audio after `delay` milliseconds, each repeat `feedback` times the
/// one before, added to the input at `mix`. A feedback delay line per channel, like GStreamer's
/// audioecho: out = in + mix × d, and the line keeps in + feedback × d, where d is what the line
/// held `delay` ago. When the input ends, the echo's tail is emitted until it has faded below
/// 1/1000 (60 dB down), so the output is longer than the input.
///
/// Example:
/// ```json
/// "echo": { "type": "effect.echo", "params": { "delay": 250, "feedback": 0.4, "mix": 0.5 } }
/// ```
public final class EchoNode: ProcessingNode, @unchecked Sendable {
    public static let descriptor = NodeDescriptor(
        type: "effect.echo",
        category: .effect,
        summary: "Echo: the audio repeated after a delay, fading by a feedback factor",
        inputs: [PortDescriptor("in", .pcm(), help: "PCM audio, 16-bit or float")],
        outputs: [PortDescriptor("out", .pcm(), help: "the same PCM with the echo, and its tail after the input ends")],
        parameters: [delay, feedback, mix],
        example: #"{ "type": "effect.echo", "params": { "delay": 250, "feedback": 0.4, "mix": 0.5 } }"#
    )
    public static let bufferFlow = BufferFlow.passThrough
    public static let delay = Parameter<Int>("delay", 1...5_000, default: 250, help: "milliseconds between repeats")
    public static let feedback = Parameter<Double>("feedback", 0...0.95, default: 0.4, help: "each repeat's level against the one before")
    public static let mix = Parameter<Double>("mix", 0...1, default: 0.5, help: "the echo's level in the output (0: none)")

    let delayMilliseconds: Int
    let feedback: Float
    let mix: Float

    private var host: ProcessingHost?
    private var format: MediaFormat.PCMFormat?
    /// The delay line, interleaved like the audio: `delayFrames` frames of every channel.
    private var line: [Float] = []
    private var channels = 1
    private var position = 0
    private var delayFrames = 0
    /// Where the next buffer starts, in frames since the first one (for the tail's timestamps).
    private var start: MediaTime?
    private var framesSeen = 0

    public init(context: NodeContext) throws(GraphError) {
        let p = context.parameters
        delayMilliseconds = p[Self.delay]
        feedback = Float(p[Self.feedback])
        mix = Float(p[Self.mix])
    }

    public func attach(_ host: ProcessingHost) { self.host = host }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        guard case .pcm(let pcm) = format else {
            throw GraphError(.runFailed, "effect.echo takes PCM audio, got \(format)")
        }
        if pcm == self.format { return }
        self.format = pcm
        delayFrames = max(1, pcm.sampleRate * delayMilliseconds / 1000)
        channels = pcm.channels
        line = [Float](repeating: 0, count: delayFrames * pcm.channels)
        position = 0
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        guard let f = format else { return true }
        if start == nil { start = buffer.presentationTime ?? .zero }
        framesSeen += buffer.frameCount
        switch f.sampleFormat {
        case .s16le:
            buffer.withMutableAudioSamples(as: Int16.self) { s in
                for i in s.indices {
                    let y = echo(Float(s[i]) / 32768, channel: i % f.channels, lastOfFrame: i % f.channels == f.channels - 1)
                    s[i] = Int16(max(-32768, min(32767, (y * 32768).rounded())))
                }
            }
        case .f32le:
            buffer.withMutableAudioSamples(as: Float.self) { s in
                for i in s.indices { s[i] = echo(s[i], channel: i % f.channels, lastOfFrame: i % f.channels == f.channels - 1) }
            }
        }
        return true
    }

    /// One sample through the line; the position moves on after a frame's last channel.
    @inline(__always) private func echo(_ x: Float, channel: Int, lastOfFrame: Bool) -> Float {
        let slot = position * channels + channel
        let d = line[slot]
        line[slot] = x + feedback * d
        if lastOfFrame { position = position + 1 == delayFrames ? 0 : position + 1 }
        return x + mix * d
    }

    /// The input ended: what the line still holds, as silence echoed, until it fades out.
    public func endOfStream() throws(GraphError) {
        guard let f = format, let host, mix > 0, feedback >= 0 else { return }
        let repeats = feedback > 0 ? Int((log(0.001) / log(Double(feedback))).rounded(.up)) : 1
        var remaining = delayFrames * max(1, repeats)
        let chunk = 1024
        var time = (start ?? .zero) + MediaTime(value: Int64(framesSeen), timescale: Int32(f.sampleRate))
        while remaining > 0 {
            let frames = min(chunk, remaining)
            let duration = MediaTime(value: Int64(frames), timescale: Int32(f.sampleRate))
            var tail = SampleBuffer(format: .pcm(f), byteCount: frames * f.bytesPerFrame, presentationTime: time, duration: duration)
            _ = try process(&tail)
            try host.emit(tail)
            remaining -= frames
            time = time + duration
        }
    }
}
