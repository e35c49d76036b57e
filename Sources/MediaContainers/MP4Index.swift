/// The index edits GraphKit's MP4 writer (``MP4Writer``) makes once a file's samples are
/// written, as ffmpeg and AVFoundation write them:
///
/// - An AAC track's encoder delay becomes its edit list: the edit starts after the priming and
///   lasts exactly the input's samples, so players and decoders that honour edit lists give
///   back the input, sample-aligned, and the file's duration is the input's. The movie's clock
///   becomes the audio's rate so that the edit is exact to the sample.
/// - A video track's display orientation becomes its track header's matrix
///   (`AVAssetTrack.preferredTransform`), so a phone's portrait video stays portrait.
/// - Where the presentation ends (`AVAssetWriter.endSession(atSourceTime:)`).
package enum MP4Index {
    package struct Edits {
        package var audioDelay: EncoderDelay?
        package var orientation: DisplayOrientation?
        /// A video track's display matrix as given (`AVAssetWriterInput.transform`, sink.mp4's
        /// `videoTransform`): it takes the place of ``orientation``.
        package var videoMatrix: DisplayMatrix?
        /// Where the presentation ends, `ticks` of `timescale` a second from the file's start
        /// (`AVAssetWriter.endSession(atSourceTime:)`): every track's edit list stops there, so
        /// samples appended past it are in the file and not played.
        package var presentationEnd: (ticks: UInt64, timescale: UInt64)?
        package init(audioDelay: EncoderDelay? = nil, orientation: DisplayOrientation? = nil) {
            self.audioDelay = audioDelay
            self.orientation = orientation
        }
    }

    /// Makes `edits`' changes of the index on `movie` (the one ``MP4Writer`` writes): the
    /// sound's edit list from its encoder delay, the video's display matrix or orientation, the
    /// presentation's end.
    package static func edit(_ movie: inout MP4Movie, with edits: Edits) {
        if let delay = edits.audioDelay { describe(delay, in: &movie) }
        if let matrix = edits.videoMatrix, matrix != .identity {
            for (t, track) in movie.tracks(handler: "vide") {
                var turned = track
                turned.setDisplayMatrix(matrix)
                movie.setTrack(t, turned)
            }
        } else if let orientation = edits.orientation, orientation != .rotate0 {
            for (t, track) in movie.tracks(handler: "vide") {
                var turned = track
                turned.setOrientation(orientation)
                movie.setTrack(t, turned)
            }
        }
        if let end = edits.presentationEnd { self.end(movie: &movie, at: end) }
    }

    /// An edit list for the sound track that skips the priming and ends after the input's
    /// samples, on a movie clock at the audio's rate.
    package static func describe(_ delay: EncoderDelay, in movie: inout MP4Movie) {
        guard let (i, track) = movie.tracks(handler: "soun").first, delay.sampleRate > 0 else { return }
        let mediaScale = track.mediaTimescale
        guard mediaScale > 0 else { return }
        movie.rescale(to: delay.sampleRate)
        var edited = movie.track(i)
        var edits = edited.edits ?? []
        // Keep an empty edit that starts the track later; the media edit is replaced.
        edits.removeAll { $0.mediaTime >= 0 }
        let priming = Int64((delay.priming * mediaScale + delay.sampleRate / 2) / delay.sampleRate)
        // A track cut short (a length limit ended the file while the encoder was still given
        // samples) holds fewer than the encoder was given: the edit stops where its samples do.
        let held = Int(clamping: MP4StreamFacts.scale(track.sampleTableDuration, UInt64(delay.sampleRate), UInt64(mediaScale)))
        let samples = min(delay.samples, max(0, held - delay.priming))
        edits.append(MP4Track.Edit(duration: UInt64(samples), mediaTime: priming))
        edited.setEdits(edits)
        movie.setTrack(i, edited)
        movie.updateDuration()
    }

    /// Ends every track's presentation at `end`: its edits are cut there (a track with none gets
    /// one, from its media's start), so a player and a decoder that honours edit lists stop at
    /// `end`; a track that ends sooner is left as it is. The movie's duration follows.
    package static func end(movie: inout MP4Movie, at end: (ticks: UInt64, timescale: UInt64)) {
        let scale = UInt64(max(0, movie.timescale))
        guard scale > 0, end.timescale > 0 else { return }
        let (product, overflow) = end.ticks.multipliedReportingOverflow(by: scale)
        guard !overflow else { return }
        let endTicks = (product + end.timescale / 2) / end.timescale
        for i in movie.trackIndices {
            var track = movie.track(i)
            let edits = track.edits ?? [MP4Track.Edit(duration: track.duration, mediaTime: 0)]
            guard edits.reduce(UInt64(0), { $0 &+ $1.duration }) > endTicks else { continue }
            var remaining = endTicks, cut: [MP4Track.Edit] = []
            for e in edits where remaining > 0 {
                let d = min(e.duration, remaining)
                cut.append(MP4Track.Edit(duration: d, mediaTime: e.mediaTime, rate: e.rate))
                remaining -= d
            }
            track.setEdits(cut)
            movie.setTrack(i, track)
        }
        movie.updateDuration()
    }
}
