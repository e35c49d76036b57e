import GraphKitCore

/// A measurement that takes interleaved PCM as it comes (``LoudnessMeter``, ``SilenceDetector``).
public protocol PCMMeasuring: Sendable {
    mutating func add(_ samples: UnsafeBufferPointer<Float>)
    mutating func add(_ samples: UnsafeBufferPointer<Int16>)
}


/// What an audio analysis node keeps of its input: the format, and the measurement made for it
/// when the first format comes. A later format of another rate or channel count fails the run:
/// a measurement spans one stream.
struct PCMAnalysisInput<Measure: PCMMeasuring>: Sendable {
    var format: MediaFormat.PCMFormat?
    var measure: Measure?

    mutating func setFormat(_ format: MediaFormat, node: NodeContext, type: String,
                            make: (MediaFormat.PCMFormat) throws(GraphError) -> Measure) throws(GraphError) {
        guard case .pcm(let pcm) = format else {
            throw GraphError(.runFailed, "\(type) takes PCM audio, got \(format)", node: node.id)
        }
        if let old = self.format, old.sampleRate != pcm.sampleRate || old.channels != pcm.channels, measure != nil {
            throw GraphError(.runFailed, "the audio format changed mid-stream (\(old.sampleRate) Hz \(old.channels) ch to \(pcm.sampleRate) Hz \(pcm.channels) ch)",
                             node: node.id)
        }
        self.format = pcm
        if measure == nil { measure = try make(pcm) }
    }

    mutating func add(_ buffer: SampleBuffer, node: NodeContext) throws(GraphError) {
        guard measure != nil, let f = format else { throw GraphError(.runFailed, "PCM arrived before its format", node: node.id) }
        switch f.sampleFormat {
        case .s16le: buffer.withAudioSamples(as: Int16.self) { measure?.add($0) }
        case .f32le: buffer.withAudioSamples(as: Float.self) { measure?.add($0) }
        }
    }
}
