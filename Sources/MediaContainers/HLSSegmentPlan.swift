// An MP4's samples cut into HLS media segments without re-encoding (RFC 8216): where each
// segment starts (a key frame of the video, at the first one past each multiple of the target
// duration, as ffmpeg's HLS muxer cuts), which samples of each track it holds, and the media
// playlist that lists them.

/// Where an MP4's samples go, segment by segment.
package struct HLSSegmentPlan: Sendable {
    /// A track taking part: its index in the movie's children, its samples, and where its media
    /// clock's 0 lies on the presentation timeline.
    package struct Track: Sendable {
        package var index: Int
        package var trackID: UInt32
        package var timescale: Int
        package var samples: [MP4Sample]
        /// The media time shown first (the first edit's), and the empty time before it (leading
        /// empty edits), in seconds.
        package var mediaStart: Int64
        package var delay: Double

        /// `ticks` of the media clock on the presentation timeline, in seconds.
        package func seconds(_ ticks: Int64) -> Double {
            let (since, overflow) = ticks.subtractingReportingOverflow(mediaStart)
            return (overflow ? Double(ticks) - Double(mediaStart) : Double(since)) / Double(timescale) + delay
        }

        /// `seconds` on the presentation timeline in ticks of the media clock, rounded; a time
        /// past what 64 bits count (a range's end of 1e300 s) saturates, past every sample still.
        package func ticks(_ seconds: Double) -> Int64 {
            let (t, overflow) = Int64(saturating: (seconds - delay) * Double(timescale)).addingReportingOverflow(mediaStart)
            return overflow ? (mediaStart > 0 ? .max : .min) : t
        }

        package init(index: Int, trackID: UInt32, timescale: Int, samples: [MP4Sample], mediaStart: Int64, delay: Double) {
            (self.index, self.trackID, self.timescale, self.samples, self.mediaStart, self.delay) = (index, trackID, timescale, samples, mediaStart, delay)
        }

        /// The longest a track's timeline may last, in seconds (about 31 years): what its edits'
        /// delay and its samples claim together. Past it, a file's times are damaged, and no
        /// time on its timeline is converted to ticks of any clock (at most 2^32 a second) or to
        /// nanoseconds without passing what 64 bits hold.
        package static let longestTimeline = 1e9

        /// `movie`'s track as a segmenter or a cut reads it: its samples, its clock, and where
        /// its media time 0 shows (after leading empty edits; from the first media edit).
        /// Throws, naming the track and the box, for timing the file cannot mean: a media clock
        /// of 0 Hz, an edit that starts past the end of the media (an `elst` media time of
        /// 2^63−1), or a timeline longer than ``longestTimeline`` (`stts` durations, empty edits).
        /// Every time read later stays within what 64 bits hold.
        package init(reading track: MP4Track, index: Int, movie: MP4Movie, fileSize: UInt64) throws(ContainerError) {
            let samples = try track.samples(fileSize: fileSize)
            try Self.checkCompositionOffsets(of: samples, track: track)
            // Where its media ends: every sample's decode time is at most mostSamples × 2^32
            // ticks, its presentation within 2^31 of it, so the sums below cannot overflow.
            let mediaEnd = samples.suffix(32).map { $0.presentationTime + Int64($0.duration) }.max() ?? 0
            let (mediaStart, delay) = try Self.timeline(of: track, mediaEnd: mediaEnd, hasSamples: !samples.isEmpty, movie: movie)
            self.init(index: index, trackID: track.trackID, timescale: track.mediaTimescale, samples: samples, mediaStart: mediaStart, delay: delay)
        }

        /// A composition offset (`ctts`) moves a sample's presentation from its decode time by
        /// a few frames (B-frames'); one that moves it by more than the track lasts (and more
        /// than a second), such as −2³¹ ticks, is damage, named as such: it had put the media's
        /// end before its start, which was blamed on the edit list.
        static func checkCompositionOffsets(of samples: [MP4Sample], track: MP4Track) throws(ContainerError) {
            guard let last = samples.last, track.mediaTimescale > 0 else { return }
            let lasts = Int64(last.decodeTime) + Int64(last.duration)
            let slack = max(lasts, Int64(track.mediaTimescale))
            guard let at = samples.firstIndex(where: { abs(Int64($0.compositionOffset)) > slack }) else { return }
            let offset = Int64(samples[at].compositionOffset), scale = Double(track.mediaTimescale)
            throw ContainerError("its track \(track.trackID)'s composition offsets (ctts) move sample \(at + 1) by \(offset) ticks of "
                                 + "\(track.mediaTimescale) Hz (\(HLSSegmenter.seconds(Double(offset) / scale)) s), more than the track lasts "
                                 + "(\(HLSSegmenter.seconds(Double(lasts) / scale)) s): the ctts box is damaged")
        }

        /// Where `track`'s media time 0 shows, given where its media ends (`mediaEnd` ticks):
        /// the first media edit's time, and the empty time before it in seconds. Throws, naming
        /// the track and the box, for timing the file cannot mean (``init(reading:index:movie:fileSize:)``).
        package static func timeline(of track: MP4Track, mediaEnd: Int64, hasSamples: Bool, movie: MP4Movie) throws(ContainerError) -> (mediaStart: Int64, delay: Double) {
            let id = track.trackID, timescale = track.mediaTimescale
            guard timescale > 0 else { throw ContainerError("its track \(id) has no media clock (its mdhd timescale is 0)") }
            let limit = Self.longestTimeline
            func seconds(_ ticks: Int64, _ scale: Int) -> String { HLSSegmenter.seconds(Double(ticks) / Double(scale)) }
            guard Double(mediaEnd) / Double(timescale) <= limit else {
                throw ContainerError("its track \(id)'s samples last \(seconds(mediaEnd, timescale)) s (its stts box, in a clock of \(timescale) Hz), "
                                     + "more than \(Int(limit)) s: its timing is damaged")
            }
            var mediaStart: Int64 = 0, emptyTicks: UInt64 = 0
            for edit in track.edits ?? [] {
                if edit.mediaTime < 0 {
                    let (sum, overflow) = emptyTicks.addingReportingOverflow(edit.duration)
                    emptyTicks = overflow ? .max : sum
                    continue
                }
                guard edit.mediaTime <= mediaEnd || !hasSamples else {
                    throw ContainerError("its track \(id)'s edit list (elst) starts its media at \(edit.mediaTime) ticks of \(timescale) Hz, "
                                         + "past the end of its samples at \(mediaEnd) (\(seconds(mediaEnd, timescale)) s): the edit list is damaged")
                }
                mediaStart = edit.mediaTime
                break
            }
            let delay = movie.timescale > 0 ? Double(emptyTicks) / Double(movie.timescale) : 0
            guard delay + Double(mediaEnd - mediaStart) / Double(timescale) <= limit else {
                throw ContainerError("its track \(id)'s edit list (elst) delays its media by \(emptyTicks) ticks of the movie's \(movie.timescale) Hz clock, "
                                     + "which with its samples makes a timeline of more than \(Int(limit)) s: the edit list is damaged")
            }
            return (mediaStart, delay)
        }
    }

    package struct Segment: Sendable, Equatable {
        /// Where it starts and how long it lasts on the presentation timeline, in seconds.
        package var start: Double
        package var duration: Double
        /// For each track (in ``HLSSegmentPlan/tracks`` order), the range of its samples.
        package var samples: [Range<Int>]
    }

    package var tracks: [Track]
    package var segments: [Segment]
    /// The video's longest stretch without a key frame, in seconds on the presentation timeline:
    /// between two key frames, or from the last one to the end (nil without video). No segment
    /// can be cut shorter than this where it lies.
    package var longestKeyFrameDistance: (seconds: Double, from: Double, to: Double, atEnd: Bool)?
    /// The video's longest frame (seconds): the leeway for comparing times that are whole frames.
    package var longestFrame = 0.0

    /// The plan for the first video track and first audio track of `movie` (either may be
    /// missing, not both), cut every `target` seconds at the video's key frames (the audio's
    /// samples when there is no video). Throws, naming the track, for a damaged sample table or
    /// timing, or a video track that does not start with a key frame. Its loops run over the
    /// samples the file holds (a cut is a sample), never over steps of `target`; `isCancelled`
    /// is asked at every sample, and when it says so this throws.
    package init(movie: MP4Movie, fileSize: UInt64, target: Double, isCancelled: () -> Bool = { false }) throws(ContainerError) {
        guard target.isFinite, target > 0 else { throw ContainerError("a segment duration of \(target) s is no duration") }
        let video = movie.tracks(handler: "vide").first, audio = movie.tracks(handler: "soun").first
        var tracks: [Track] = []
        for (index, track) in [video, audio].compactMap({ $0 }) {
            let read = try Track(reading: track, index: index, movie: movie, fileSize: fileSize)
            guard !read.samples.isEmpty else { continue }
            tracks.append(read)
        }
        guard !tracks.isEmpty else { throw ContainerError("it has no video or audio samples to segment") }
        self.tracks = tracks
        let lead = tracks[0]
        if video != nil, lead.trackID == video?.track.trackID, !lead.samples[0].isSync {
            throw ContainerError("its track \(lead.trackID)'s first sample is not a key frame, so no segment could start there")
        }
        // Cut points: indices into the lead track where a segment starts, and their times.
        var cuts: [(sample: Int, time: Double)] = [(0, 0)]
        var next = target
        for (i, s) in lead.samples.enumerated().dropFirst() {
            if isCancelled() { throw ContainerError("cancelled") }
            guard s.isSync else { continue }
            let time = lead.seconds(s.presentationTime)
            // A thousandth of a frame's leeway: 6 s of 30000/1001 video is not quite 6.0.
            if time >= next - 1e-6 {
                cuts.append((i, time))
                next = HLSSegmenter.nextCut(next, after: time, every: target)
            }
        }
        // Where the last sample shown ends (with B-frames, not the last decoded).
        let end = tracks.map { t in t.samples.suffix(32).map { t.seconds($0.presentationTime + Int64($0.duration)) }.max() ?? 0 }.max() ?? 0
        if video != nil, lead.trackID == video?.track.trackID {
            var last: Double?, longest: (seconds: Double, from: Double, to: Double, atEnd: Bool)?, frame = 0.0
            func stretch(to time: Double, atEnd: Bool = false) {
                guard let from = last, time - from > (longest?.seconds ?? -1) else { return }
                longest = (time - from, from, time, atEnd)
            }
            for s in lead.samples {
                frame = max(frame, Double(s.duration) / Double(lead.timescale))
                guard s.isSync else { continue }
                let time = lead.seconds(s.presentationTime)
                stretch(to: time)
                last = time
            }
            stretch(to: lead.samples.suffix(32).map { lead.seconds($0.presentationTime + Int64($0.duration)) }.max() ?? 0, atEnd: true)
            longestKeyFrameDistance = longest
            longestFrame = frame
        }
        var segments: [Segment] = []
        var taken = tracks.map { _ in 0 }
        for (k, cut) in cuts.enumerated() {
            let last = k == cuts.count - 1
            let until = last ? Double.infinity : cuts[k + 1].time
            var ranges: [Range<Int>] = []
            for (t, track) in tracks.enumerated() {
                let from = taken[t]
                var to = from
                if t == 0 {
                    to = last ? track.samples.count : cuts[k + 1].sample
                } else {
                    while to < track.samples.count, last || track.seconds(Int64(track.samples[to].decodeTime)) < until { to += 1 }
                }
                ranges.append(from..<to)
                taken[t] = to
            }
            let start = k == 0 ? 0 : cut.time
            segments.append(Segment(start: start, duration: (last ? max(end, start) : until) - start, samples: ranges))
        }
        self.segments = segments
    }
}
