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

    /// Whether the video composition's frames are BGRA: a frame filter takes them so. The
    /// track is then read as BGRA (the renderer draws the format it is given).
    package var drawsBGRA: Bool { renderer?.composition.frameFilter != nil }

    /// What `sample` becomes, up to `end` (where the track ends in the exported range): sound
    /// with its volume; for video, every output frame due while the sample shows (none when
    /// output frames come faster than the source's, several when slower), or, for a
    /// composition that follows its source's timing, one frame at the sample's own time; each
    /// through the composition's frame filter when it has one. `stopped` says the reading has
    /// stopped: a filter waiting on its caller's code gives up then.
    package mutating func process(_ sample: SampleBuffer, end: MediaTime,
                                  stopped: @escaping @Sendable () -> Bool = { false }) throws(GraphError) -> [SampleBuffer] {
        guard let pts = sample.presentationTime else { return [sample] }
        if let mix { return [mix.0.apply(to: sample, trackID: mix.trackID, at: pts + offset)] }
        guard let renderer else { return [sample] }
        let step = renderer.composition.frameDuration
        if renderer.composition.followsSourceTiming {
            // From where the last frame ended, should this one overlap it or start before the
            // range (shown from the range's start).
            let from = max(pts, next), until = min(end, pts + (sample.duration ?? step))
            guard until > from else { return [] }
            next = until
            return [try frame(of: sample, at: from, length: until - from, stopped: stopped)]
        }
        let shownUntil = min(end, pts + (sample.duration ?? step))
        var out: [SampleBuffer] = []
        while next < shownUntil {
            let length = min(step, end - next)
            guard length > .zero else { break }
            out.append(try frame(of: sample, at: next, length: length, stopped: stopped))
            next = next + step
        }
        return out
    }

    /// The output frame at `time` (the exported range's) drawn from `sample`, filtered.
    private func frame(of sample: SampleBuffer, at time: MediaTime, length: MediaTime,
                       stopped: @escaping @Sendable () -> Bool) throws(GraphError) -> SampleBuffer {
        guard let renderer else { return sample }
        let frame = try renderer.render(sample, at: time + offset, duration: length, stampedAt: time)
        guard let filter = renderer.composition.frameFilter else { return frame }
        let filtered = try filter.apply(frame, time + offset, stopped)
        guard case .rawVideo(let want)? = frame.format, case .rawVideo(let got)? = filtered.format,
              got.pixelFormat == want.pixelFormat, got.width == want.width, got.height == want.height,
              filtered.byteCount == frame.byteCount else {
            throw GraphError(.runFailed, at: "videoComposition", "the frame filter gave \(filtered.format.map { "\($0)" } ?? "a buffer of no format") (\(filtered.byteCount) bytes) for a frame of \(frame.format.map { "\($0)" } ?? "no format") (\(frame.byteCount) bytes)")
        }
        var shown = filtered
        shown.format = frame.format
        shown.presentationTime = time
        shown.duration = length
        return shown
    }
}
