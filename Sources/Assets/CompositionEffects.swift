@_spi(Engine) import GraphKitCore

/// What an export does to a track's samples between the reader and the encoder: a video
/// composition's frames drawn at its frame rate, an audio mix's volume applied. Times in and out
/// are the exported range's (from 0); `offset` is where that range starts in the composition,
/// which the instructions and ramps are timed by.
package struct CompositionEffects {
    let offset: MediaTime
    private let renderer: VideoCompositionRenderer?
    private let mix: (AudioMix, trackID: Int)?
    /// Video: the next output frame's time.
    private var next = MediaTime.zero

    /// `from`: the first output frame's time (the exported range's start: 0; a reader's range's).
    package init(offset: MediaTime, from start: MediaTime = .zero, video: (VideoComposition, trackID: Int)? = nil, audio: (AudioMix, trackID: Int)? = nil) {
        self.offset = offset
        next = start
        renderer = video.map { VideoCompositionRenderer($0.0, trackID: $0.trackID) }
        mix = audio
    }

    var isEmpty: Bool { renderer == nil && mix == nil }

    /// What `sample` becomes, up to `end` (where the track ends in the exported range): sound
    /// with its volume; for video, every output frame due while the sample shows (none when
    /// output frames come faster than the source's, several when slower).
    package mutating func process(_ sample: SampleBuffer, end: MediaTime) throws(GraphError) -> [SampleBuffer] {
        guard let pts = sample.presentationTime else { return [sample] }
        if let mix { return [mix.0.apply(to: sample, trackID: mix.trackID, at: pts + offset)] }
        guard let renderer else { return [sample] }
        let step = renderer.composition.frameDuration
        let shownUntil = min(end, pts + (sample.duration ?? step))
        var out: [SampleBuffer] = []
        while next < shownUntil {
            let length = min(step, end - next)
            guard length > .zero else { break }
            out.append(try renderer.render(sample, at: next + offset, duration: length, stampedAt: next))
            next = next + step
        }
        return out
    }
}
