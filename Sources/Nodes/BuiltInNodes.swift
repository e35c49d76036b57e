import GraphKitCore
import GraphKitRuntime
import MediaContainers

extension NodeRegistry {
    /// Every node GraphKit ships, in one explicit list, plus the app endpoints of the core.
    public static let builtIn = NodeRegistry.core + NodeRegistry([
        CaptureAudioNode.self,
        CaptureVideoNode.self,
        FileSourceNode.self,
        ConcatSourceNode.self,
        SRTSourceNode.self,
        FrameGeneratorNode.self,
        DecodeNode.self,
        DemuxNode.self,
        GainNode.self,
        AudioMixNode.self,
        DropChannelNode.self,
        GrayscaleNode.self,
        ColorMatrixNode.self,
        MirrorNode.self,
        CropNode.self,
        ScaleNode.self,
        RotateNode.self,
        OverlayNode.self,
        WaveformNode.self,
        LoudnessNode.self,
        SilenceNode.self,
        BlackNode.self,
        ScenesNode.self,
        ThumbnailsNode.self,
        AACEncoderNode.self,
        H264EncoderNode.self,
        HEVCEncoderNode.self,
        VP9EncoderNode.self,
        AV1EncoderNode.self,
        OpusEncoderNode.self,
        FLACEncoderNode.self,
        ALACEncoderNode.self,
        MP4SinkNode.self,
        HLSSinkNode.self,
        MatroskaSinkNode.self,
        WebMSinkNode.self,
        OggSinkNode.self,
        PreviewSinkNode.self,
        SRTSinkNode.self,
        RTMPSinkNode.self,
    ])
}
