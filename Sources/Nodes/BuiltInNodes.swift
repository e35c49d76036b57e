import GraphKit

extension NodeRegistry {
    /// Every node GraphKit ships, in one explicit list, plus the app endpoints of the core.
    public static let builtIn = NodeRegistry.core + NodeRegistry([
        CaptureAudioNode.self,
        FileSourceNode.self,
        DecodeNode.self,
        GainNode.self,
        WaveformNode.self,
        AACEncoderNode.self,
        MP4SinkNode.self,
    ])
}
