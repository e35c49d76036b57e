import GraphKitCore
import GraphKitRuntime
import MediaContainers

extension MP4TrackFormat {
    /// A track's format from its encoder's caps (as ``Element/onEncodedSamples(_:)`` gives them):
    /// H.264 with its size and `avcC`, AAC with its rate, channels and AudioSpecificConfig; nil
    /// when the caps do not say them.
    package init?(_ format: MediaFormat?, codecData: [UInt8]) {
        switch format {
        case .h264(let width?, let height?)? where !codecData.isEmpty:
            self.init(trackID: 1, codec: .h264(avcC: codecData, width: width, height: height))
        case .aac(let rate?, let channels?)? where !codecData.isEmpty:
            self.init(trackID: 1, codec: .aac(audioSpecificConfig: codecData, sampleRate: rate, channels: channels))
        default:
            return nil
        }
    }
}

extension HLSSegmenter.Sample {
    /// An encoded sample in `format`'s ticks; nil without a time. Every audio sample is a sync
    /// sample; a video one when flagged a key frame.
    /// `buffer` as a segmenter's sample; `data` is its bytes when the caller has them already.
    package init?(_ buffer: SampleBuffer, data: [UInt8]? = nil, pts: MediaTime?, dts: MediaTime?, format: MP4TrackFormat) {
        guard let time = pts ?? dts else { return nil }
        let scale = Double(format.timescale)
        func ticks(_ m: MediaTime) -> Int64 { Int64((m.seconds * scale).rounded()) }
        self.init(data: data ?? buffer.bytes, decodeTime: ticks(dts ?? time), presentationTime: ticks(time),
                  duration: buffer.duration.map(ticks) ?? 0, isSync: !format.isVideo || buffer.flags.contains(.keyframe))
    }
}
