import Foundation
import GraphKit
import Synchronization

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
public final class EchoNode: ProcessingNode, Sendable {
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

    /// What changes as the audio goes through. GraphKit calls a node from one streaming thread
    /// at a time, so the lock is never contended; it is what lets the compiler check that the
    /// node is Sendable (taken once per buffer, not per sample).
    private struct State {
        var host: ProcessingHost?
        var format: MediaFormat.PCMFormat?
        /// The delay line, interleaved like the audio: `delayFrames` frames of every channel.
        var line: [Float] = []
        var channels = 1
        var position = 0
        var delayFrames = 0
        /// Where the next buffer starts, in frames since the first one (for the tail's timestamps).
        var start: MediaTime?
        var framesSeen = 0

        /// One sample through the line; the position moves on after a frame's last channel.
        @inline(__always) mutating func echo(_ x: Float, channel: Int, lastOfFrame: Bool, feedback: Float, mix: Float) -> Float {
            let slot = position * channels + channel
            let d = line[slot]
            line[slot] = x + feedback * d
            if lastOfFrame { position = position + 1 == delayFrames ? 0 : position + 1 }
            return x + mix * d
        }

        /// `buffer`'s samples through the line, in place.
        mutating func process(_ buffer: inout SampleBuffer, feedback: Float, mix: Float) {
            guard let f = format else { return }
            if start == nil { start = buffer.presentationTime ?? .zero }
            framesSeen += buffer.frameCount
            let n = f.channels
            switch f.sampleFormat {
            case .s16le:
                buffer.withMutableAudioSamples(as: Int16.self) { s in
                    for i in s.indices {
                        let y = echo(Float(s[i]) / 32768, channel: i % n, lastOfFrame: i % n == n - 1, feedback: feedback, mix: mix)
                        s[i] = Int16(max(-32768, min(32767, (y * 32768).rounded())))
                    }
                }
            case .f32le:
                buffer.withMutableAudioSamples(as: Float.self) { s in
                    for i in s.indices { s[i] = echo(s[i], channel: i % n, lastOfFrame: i % n == n - 1, feedback: feedback, mix: mix) }
                }
            }
        }
    }
    private let state = Mutex(State())

    public init(context: NodeContext) throws(GraphError) {
        let p = context.parameters
        delayMilliseconds = p[Self.delay]
        feedback = Float(p[Self.feedback])
        mix = Float(p[Self.mix])
    }

    public func attach(_ host: ProcessingHost) { state.withLock { $0.host = host } }

    public func formatDidChange(to format: MediaFormat) throws(GraphError) {
        guard case .pcm(let pcm) = format else {
            throw GraphError(.runFailed, "effect.echo takes PCM audio, got \(format)")
        }
        state.withLock { s in
            if pcm == s.format { return }
            s.format = pcm
            s.delayFrames = max(1, pcm.sampleRate * delayMilliseconds / 1000)
            s.channels = pcm.channels
            s.line = [Float](repeating: 0, count: s.delayFrames * pcm.channels)
            s.position = 0
        }
    }

    public func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        state.withLock { $0.process(&buffer, feedback: feedback, mix: mix) }
        return true
    }

    /// The input ended: what the line still holds, as silence echoed, until it fades out.
    public func endOfStream() throws(GraphError) {
        guard mix > 0, feedback >= 0,
              let plan = state.withLock({ s -> (MediaFormat.PCMFormat, ProcessingHost, Int, MediaTime)? in
                  guard let f = s.format, let host = s.host else { return nil }
                  let repeats = feedback > 0 ? Int((log(0.001) / log(Double(feedback))).rounded(.up)) : 1
                  let start = (s.start ?? .zero) + MediaTime(value: Int64(s.framesSeen), timescale: Int32(f.sampleRate))
                  return (f, host, s.delayFrames * max(1, repeats), start)
              })
        else { return }
        let (f, host, total, first) = plan
        // A chunk at a time, each made under the lock and emitted after it: emit() hands the
        // buffer on downstream, which must not run while this node holds its own lock, and a
        // long tail (seconds of delay, feedback near 1) is never all in memory.
        var remaining = total
        var time = first
        while remaining > 0 {
            let frames = min(1024, remaining)
            let duration = MediaTime(value: Int64(frames), timescale: Int32(f.sampleRate))
            var tail = SampleBuffer(format: .pcm(f), byteCount: frames * f.bytesPerFrame, presentationTime: time, duration: duration)
            state.withLock { $0.process(&tail, feedback: feedback, mix: mix) }
            try host.emit(tail)
            remaining -= frames
            time = time + duration
        }
    }
}
