import GraphKitCore
import GraphKitRuntime
import Nodes

/// The engine under an AAC AudioConverter: a graph `source.app` (the converter's PCM) →
/// `encode.aac` → `sink.app` (its packets), both ends unbounded, so pushing never waits on
/// pulling; the converter bounds what is in flight by asking its callback only for what the
/// packets it owes need. Pulls wait at most the time given, and wake when the run ends (failed,
/// cancelled by ``cancel()``, or at end of stream).
final class AACEncoderSession: Sendable {
    let run: GraphRun
    let input: MediaInput
    let output: MediaOutput
    let pcm: MediaFormat.PCMFormat

    init(pcm: MediaFormat.PCMFormat, outputSampleRate: Int, outputChannels: Int, bitRate: Int) throws(GraphError) {
        self.pcm = pcm
        let format = "audio/pcm \(pcm.sampleFormat.rawValue) \(pcm.sampleRate) Hz \(pcm.channels) ch"
        let json = #"""
        { "version": 1, "name": "AudioConverter",
          "nodes": { "pcm": { "type": "source.app", "params": { "maxBuffers": 0, "format": "\#(format)" } },
                     "aac": { "type": "encode.aac", "params": { "bitrate": \#(bitRate), "sampleRate": \#(outputSampleRate), "channels": \#(outputChannels) } },
                     "packets": { "type": "sink.app", "params": { "maxBuffers": 0 } } },
          "edges": ["pcm.out -> aac.in", "aac.out -> packets.in"] }
        """#
        let graph = try GraphLoader(registry: .builtIn).load(json: json)
        run = try GraphRun(graph)
        try run.start()
        input = try run.input("pcm")
        output = try run.output("packets")
    }

    /// Pushes `frames` frames of interleaved PCM starting at frame `position`.
    func push(_ bytes: UnsafeRawBufferPointer, frames: Int, at position: Int64) throws(GraphError) {
        let rate = Int32(pcm.sampleRate)
        let sample = SampleBuffer(format: .pcm(pcm), bytes: bytes, presentationTime: MediaTime(value: position, timescale: rate),
                                  duration: MediaTime(value: Int64(frames), timescale: rate))
        try input.appendWaiting(sample)
    }

    /// Ends the input: the encoder flushes what it holds, then the output ends.
    func finish() { input.markAsFinished() }

    /// The next packet, waiting at most `timeout` seconds; nil on timeout, at end, or when the run ended.
    func next(timeout: Double) -> SampleBuffer? { output.copyNextSampleBuffer(timeout: timeout) }

    /// Whether every packet has been pulled and the stream ended.
    var isAtEnd: Bool { output.isAtEnd }

    /// The run's error once it has ended with one.
    var failure: GraphError? { run.finalReport?.error }

    /// Whether the run has ended (by end of stream, failure or cancel).
    var hasEnded: Bool { run.isFinished }

    /// Stops the run: a waiting pull wakes.
    func cancel() { run.cancel() }

    deinit { run.cancel() }
}
