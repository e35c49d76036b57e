@_spi(Engine) import GraphKitCore

/// How a composition's sound tracks are mixed, as AVFoundation's `AVAudioMix`: each track's
/// volume over time (1 where none is given), set at times or ramped linearly across ranges, by
/// composition time. Applied to the 16-bit PCM an export encodes, sample by sample.
public struct AudioMix: Sendable, Hashable {
    /// Each track's volume, by track ID.
    public var volumes: [Int: Timeline<Double>]

    public init(volumes: [Int: Timeline<Double>] = [:]) { self.volumes = volumes }

    /// Refuses a volume that is not a finite number from 0 up, naming the track.
    public func check() throws(GraphError) {
        for (track, volume) in volumes.sorted(by: { $0.key < $1.key }) {
            let values = [volume.before] + volume.points.flatMap { [$0.start, $0.end] }
            guard values.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
                throw GraphError(.usage, at: "audioMix.inputParameters[track \(track)]", "a volume is not a finite number from 0 up: \(values)")
            }
        }
    }

    /// `sample` (interleaved 16-bit or float PCM starting at `compositionTime`) with
    /// `trackID`'s volume applied; as it is where the track has no volume set or it is 1 throughout.
    package func apply(to sample: SampleBuffer, trackID: Int, at compositionTime: MediaTime) -> SampleBuffer {
        guard let volume = volumes[trackID], case .pcm(let f)? = sample.format, f.sampleRate > 0 else { return sample }
        let frames = sample.frameCount, channels = f.channels, rate = Double(f.sampleRate)
        let start = compositionTime.seconds
        let endTime = compositionTime + MediaTime(value: Int64(frames), timescale: Int32(clamping: f.sampleRate))
        // Unchanged where the volume is 1 at both ends and nothing is set between.
        if volume.value(at: compositionTime) == 1, volume.value(at: endTime) == 1,
           !volume.points.contains(where: { $0.range.start < endTime && $0.range.end > compositionTime }) { return sample }
        var out = sample
        // The volume moves slowly: taken every 64 samples, linear between.
        func gains(_ body: (_ sample: Int, _ gain: Double) -> Void) {
            var frame = 0
            while frame < frames {
                let n = min(64, frames - frame)
                let g0 = volume.value(at: MediaTime(seconds: start + Double(frame) / rate))
                let g1 = volume.value(at: MediaTime(seconds: start + Double(frame + n) / rate))
                for i in 0..<n {
                    let g = g0 + (g1 - g0) * Double(i) / Double(n)
                    for c in 0..<channels { body((frame + i) * channels + c, g) }
                }
                frame += n
            }
        }
        switch f.sampleFormat {
        case .s16le:
            out.withMutableAudioSamples(as: Int16.self) { s in gains { k, g in s[k] = Int16(clamping: Int((Double(s[k]) * g).rounded())) } }
        case .f32le:
            out.withMutableAudioSamples(as: Float.self) { s in gains { k, g in s[k] = Float(Double(s[k]) * g) } }
        }
        return out
    }
}
