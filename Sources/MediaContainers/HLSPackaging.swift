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
            let id = track.trackID, timescale = track.mediaTimescale
            guard timescale > 0 else { throw ContainerError("its track \(id) has no media clock (its mdhd timescale is 0)") }
            let samples = try track.samples(fileSize: fileSize)
            // Where its media ends: every sample's decode time is at most mostSamples × 2^32
            // ticks, its presentation within 2^31 of it, so the sums below cannot overflow.
            let mediaEnd = samples.suffix(32).map { $0.presentationTime + Int64($0.duration) }.max() ?? 0
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
                guard edit.mediaTime <= mediaEnd || samples.isEmpty else {
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
            self.init(index: index, trackID: id, timescale: timescale, samples: samples, mediaStart: mediaStart, delay: delay)
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

/// A media playlist (RFC 8216 4.3.3): fMP4 segments after their initialization segment.
package struct HLSMediaPlaylist: Sendable, Equatable {
    package enum Kind: String, Sendable { case vod = "VOD", event = "EVENT", live }
    package var kind: Kind = .vod
    /// fMP4's initialization segment; nil for MPEG-TS segments.
    package var initializationSegment: String?
    package var segments: [(uri: String, duration: Double)] = []
    package var mediaSequence = 0
    package var ended = true
    /// The target duration an event or live playlist keeps for its whole life (RFC 8216 6.2.1:
    /// it must not change); nil: the longest segment's, rounded (a VOD playlist, written once).
    package var declaredTargetDuration: Int?

    package init(initializationSegment: String?, segments: [(uri: String, duration: Double)] = [], kind: Kind = .vod) {
        self.initializationSegment = initializationSegment
        self.segments = segments
        self.kind = kind
        ended = kind == .vod
    }

    package static func == (a: Self, b: Self) -> Bool {
        a.kind == b.kind && a.initializationSegment == b.initializationSegment && a.mediaSequence == b.mediaSequence
            && a.ended == b.ended && a.declaredTargetDuration == b.declaredTargetDuration && a.segments.map(\.uri) == b.segments.map(\.uri) && a.segments.map(\.duration) == b.segments.map(\.duration)
    }

    /// The target duration: every segment's duration, rounded to the nearest integer, is at most
    /// it (RFC 8216 4.3.3.1); at least 1. The declared one when there is one (the writer keeps
    /// its segments within it).
    package var targetDuration: Int { declaredTargetDuration ?? Self.targetDuration(of: segments.map(\.duration)) }

    /// The smallest target duration that `durations` keep: the longest, rounded; at least 1.
    package static func targetDuration(of durations: [Double]) -> Int { max(1, durations.map { Int($0.rounded()) }.max() ?? 1) }

    /// The target duration of a playlist whose segments aim at `seconds`: rounded up, so a
    /// segment may run up to half a second past it and still round within (RFC 8216 4.3.3.1).
    package static func targetDuration(aimingAt seconds: Double) -> Int { max(1, Int(seconds.rounded(.up))) }

    package var text: String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(targetDuration)", "#EXT-X-MEDIA-SEQUENCE:\(mediaSequence)"]
        if kind != .live { lines.append("#EXT-X-PLAYLIST-TYPE:\(kind.rawValue)") }
        lines.append("#EXT-X-INDEPENDENT-SEGMENTS")
        if let initializationSegment { lines.append("#EXT-X-MAP:URI=\"\(initializationSegment)\"") }
        for s in segments {
            lines.append("#EXTINF:\(Self.decimal(s.duration)),")
            lines.append(s.uri)
        }
        if ended { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Six decimals, as ffmpeg writes them; no exponent.
    static func decimal(_ seconds: Double) -> String {
        let micro = Int64((max(0, seconds) * 1_000_000).rounded())
        let fraction = String(micro % 1_000_000)
        return "\(micro / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction)"
    }
}

/// Cuts streams into media segments as their samples arrive (a live or encoded stream, not a
/// file): the lead track (the video, else the first) is cut at its first sync sample at or past
/// each multiple of the target duration, and a segment is given out once every other track has
/// reached the cut (a sample at or past it) or ended, so each segment holds every track's
/// samples for its span. Memory: the samples of the segment being gathered.
package struct HLSSegmenter: Sendable {
    /// A sample as it arrives: times in its track's ticks (``CMAFTrackFormat/timescale``).
    package struct Sample: Sendable {
        package var data: [UInt8]
        package var decodeTime: Int64
        package var presentationTime: Int64
        /// Its own duration, used when no later sample gives it.
        package var duration: Int64
        package var isSync: Bool

        package init(data: [UInt8], decodeTime: Int64, presentationTime: Int64, duration: Int64, isSync: Bool) {
            self.data = data
            self.decodeTime = decodeTime
            self.presentationTime = presentationTime
            self.duration = duration
            self.isSync = isSync
        }
    }

    package struct Segment: Sendable {
        package var sequenceNumber: UInt32
        /// Its start on the stream's clock and duration, in seconds.
        package var start: Double
        package var duration: Double
        package var bytes: [UInt8]
        /// Each track's part of it, in ``HLSSegmenter/tracks`` order (a track with no sample in
        /// this segment is left out).
        package var tracks: [TrackSpan] = []
    }

    /// What one track holds in a segment, as written (times in the track's ticks, on the
    /// segments' clock: the decode times written in `tfdt` and the presentation times they give).
    package struct TrackSpan: Sendable, Equatable {
        package var trackID: UInt32
        package var isVideo: Bool
        package var timescale: UInt32
        /// The earliest presentation time of its samples.
        package var earliestPresentationTime: Int64
        /// The sum of its samples' durations.
        package var duration: Int64
        package var sampleCount: Int
        /// Whether its first sample (in decode order) is a sync sample.
        package var startsWithSyncSample: Bool
        /// Its first sample's presentation time, offset in the segment's bytes and size.
        package var firstSamplePresentationTime: Int64
        package var firstSampleOffset: Int
        package var firstSampleSize: Int
    }

    /// What a media segment is: fragmented MP4 (after an initialization segment) or an MPEG-2
    /// transport stream (each segment whole by itself).
    package enum Container: String, Sendable { case fmp4, mpegts }

    package let tracks: [CMAFTrackFormat]
    package let target: Double
    package let container: Container
    private var transportStream: MPEGTSWriter?
    private var pending: [[Sample]]
    private var ended: [Bool]
    /// Where the next cut may be, and the cuts found: a lead sample index and its time.
    private var nextCut: Double
    private var cuts: [(index: Int, time: Double)] = []
    private var segmentStart: Double?
    private var sequence: UInt32 = 0
    /// The next fragment's sequence number (`mfhd`): a segment holds several, numbered on.
    private var nextFragment: UInt32 = 1
    /// The decode time (ticks) each track's next sample must not go below.
    private var lastDecode: [Int64?]
    /// Seconds added to every time written: fragments' decode times cannot be negative, and a
    /// stream with B-frames decodes its first frames before its clock starts.
    private var shift = 0.0
    /// The cuts asked for (``flush(after:)``), in order: each at the lead's first sync sample
    /// shown after its time. A list, not the latest: an app appends ahead of what is segmented,
    /// so a second flush can come before the sample that ends the first's segment.
    private var flushes: [Double] = []
    /// Where the cuts' grid lies on the lead's clock (seconds): the cuts are at the lead's first
    /// sync sample at or after each `origin + k × target` past the stream's start, so streams cut
    /// on one origin (a ladder's rungs, a separate audio rendition) cut at the same times, and an
    /// encoder asked for key frames at those times (before any sample comes out of it) makes
    /// segments of the target. nil: the lead's first sample (the grid starts with the stream).
    package var origin: Double?
    /// Whether the lead's key frames must come within the target of each other (and of the
    /// stream's end): where nothing upstream can make key frames (packets passed as they are), a
    /// stretch without one longer than the target would make a segment longer than asked, and
    /// that is refused (``refusedSparseKeyFrames``) rather than written.
    package var limitsKeyFrameDistance = false
    /// The setting a refusal of key frames too far apart names as the one to change.
    package var keyFrameSetting = "the segment duration"
    /// Whether ``add(_:track:)`` or ``finish()`` threw because the lead's key frames were
    /// farther apart than the target (``limitsKeyFrameDistance``).
    package private(set) var refusedSparseKeyFrames = false
    /// The lead's last sync sample's presentation time, the longest frame seen (seconds), and
    /// where the lead's samples shown so far end.
    private var lastSync: Double?
    private var frame = 0.0
    private var leadEnd: Double?

    /// `tracks` in the order their samples are given (video first makes it the lead).
    package init(tracks: [CMAFTrackFormat], target: Double, container: Container = .fmp4) {
        precondition(!tracks.isEmpty && target > 0)
        self.tracks = tracks
        self.target = target
        self.container = container
        transportStream = container == .mpegts ? MPEGTSWriter(tracks: tracks) : nil
        pending = tracks.map { _ in [] }
        ended = tracks.map { _ in false }
        lastDecode = tracks.map { _ in nil }
        nextCut = target
    }

    private func seconds(_ ticks: Int64, _ t: Int) -> Double { Double(ticks) / Double(tracks[t].timescale) }

    /// Adds a sample of track `t`; the segments it completes. Throws when decode times go back.
    package mutating func add(_ sample: Sample, track t: Int) throws(ContainerError) -> [Segment] {
        if let last = lastDecode[t], sample.decodeTime < last {
            throw ContainerError("track \(tracks[t].trackID)'s decode times go back (\(sample.decodeTime) after \(last))")
        }
        lastDecode[t] = sample.decodeTime
        if segmentStart == nil, t == 0 {
            // The stream starts at the lead's first sample, which a decoder must be able to start at.
            guard sample.isSync else { return [] }
            let start = seconds(sample.presentationTime, 0)
            segmentStart = start
            if let origin, target.isFinite {
                // The first point of the grid after the start.
                nextCut = origin + ((start - origin) / target + 1e-9).rounded(.down) * target + target
                while nextCut <= start + 1e-6 { nextCut += target }
            } else {
                nextCut = start + target
            }
        }
        if t == 0, segmentStart != nil {
            let time = seconds(sample.presentationTime, 0)
            frame = max(frame, seconds(sample.duration, 0))
            leadEnd = max(leadEnd ?? -.infinity, time + seconds(sample.duration, 0))
            if sample.isSync {
                try checkKeyFrameDistance(to: time, what: "the next one")
                lastSync = max(lastSync ?? time, time)
            }
        }
        if t == 0, sample.isSync, !pending[0].isEmpty {
            let time = seconds(sample.presentationTime, 0)
            let flushed = flushes.first.map { time > $0 + 1e-9 } ?? false
            if time >= nextCut - 1e-6 || flushed {
                cuts.append((pending[0].count, time))
                nextCut = Self.nextCut(nextCut, after: time, every: target)
                if flushed {
                    flushes.removeAll { time > $0 + 1e-9 }
                    // The regular cuts go on from the one asked for.
                    if target.isFinite { nextCut = time + target }
                }
            }
        }
        // The other tracks' samples before the lead's first go in the first segment.
        if t != 0 || segmentStart != nil { pending[t].append(sample) }
        return emitReady()
    }

    /// Ends the segment being gathered at the lead track's first sync sample shown after `time`
    /// (seconds, on the lead's clock), whatever the target: `AVAssetWriter.flushSegment()`. With
    /// an infinite target, the only cuts are these.
    package mutating func flush(after time: Double) {
        flushes.insert(time, at: flushes.firstIndex { $0 > time } ?? flushes.endIndex)
    }

    /// The first of `next`, `next + target`, `next + 2 × target`, … past `time` (with a
    /// millionth of a second's leeway): where the cut after one at `time` may be. Computed in
    /// one step, not stepped to: a target of 1e-9 s took billions of steps, and one of 1e-20 s,
    /// which adding to a time of seconds leaves unchanged, never ended. No target (0, infinite,
    /// NaN): no further cut.
    package static func nextCut(_ next: Double, after time: Double, every target: Double) -> Double {
        let past = time + 1e-6
        guard next <= past else { return next }
        guard target.isFinite, target > 0 else { return .infinity }
        var cut = next + ((past - next) / target).rounded(.down) * target + target
        // Rounding may leave it a hair short; past it by one target (or the next number).
        if cut <= past { cut = max(cut + target, past.nextUp) }
        return cut
    }

    /// Track `t` has ended; the segments that completes.
    package mutating func end(track t: Int) -> [Segment] {
        ended[t] = true
        return emitReady()
    }

    /// With ``limitsKeyFrameDistance``: throws when the lead's key frame (or end) at `time`
    /// comes more than the target after the last key frame. Half a frame's leeway: 60 frames of
    /// 30000/1001 video are 2.002 s, which is a 2-second segment to anyone.
    private mutating func checkKeyFrameDistance(to time: Double, what: String) throws(ContainerError) {
        guard limitsKeyFrameDistance, target.isFinite, let last = lastSync, time - last > target + max(1e-3, frame / 2) else { return }
        refusedSparseKeyFrames = true
        throw ContainerError(Self.sparseKeyFrames(from: last, to: time, what: what, target: target, setting: keyFrameSetting))
    }

    /// Why key frames `from` … `to` seconds apart cannot be cut into segments of `target`, and
    /// what to do: the words of every refusal of it (packaging a file, a graph's, a writer's).
    package static func sparseKeyFrames(from: Double, to: Double, what: String = "the next one", target: Double, setting: String) -> String {
        func s(_ v: Double) -> String { seconds(v) }
        return "key frames are \(s(to - from)) s apart (from \(s(from)) s to \(what) at \(s(to)) s), farther apart than the "
            + "segment duration (\(s(target)) s): a segment starts only on a key frame, and the packets are passed as they are "
            + "(nothing can make a key frame), so no segment can be cut that short; set \(setting) to "
            + "\(s((to - from).rounded(.up))) s or more, or encode the video with a key frame at least every \(s(target)) s"
    }

    /// Seconds as text for messages: at most three decimals, no trailing zeros.
    package static func seconds(_ v: Double) -> String {
        let ms = Int64((v * 1000).rounded())
        let whole = "\(ms / 1000)", fraction = ms % 1000
        guard fraction != 0 else { return whole }
        var digits = String(abs(fraction))
        digits = String(repeating: "0", count: 3 - digits.count) + digits
        while digits.hasSuffix("0") { digits.removeLast() }
        return (ms < 0 && ms / 1000 == 0 ? "-" : "") + whole + "." + digits
    }

    /// The last segments: every track taken as ended, the cuts still waiting made, and
    /// everything still held in one last segment (at the end of the stream, or when it stops).
    /// Throws, with ``limitsKeyFrameDistance``, when the stream ends more than the target after
    /// the lead's last key frame.
    ///
    /// `stopped`: the stream was stopped (SIGINT) rather than ending: what the other tracks hold
    /// from the video lead's end on ran ahead of the picture (the sound's encoder is quicker than
    /// the video's, so it is seconds further when the sources stop) and is left out, so the last
    /// segment ends with the last picture instead of lasting past the target duration.
    package mutating func finish(stopped: Bool = false) throws(ContainerError) -> [Segment] {
        if stopped, tracks[0].isVideo, let end = leadEnd {
            for t in tracks.indices.dropFirst() {
                let scale = Double(tracks[t].timescale)
                pending[t].removeAll { Double($0.presentationTime) / scale >= end - 1e-6 }
            }
        }
        if let end = leadEnd { try checkKeyFrameDistance(to: end, what: "the end of the stream") }
        ended = ended.map { _ in true }
        var out = emitReady()
        if pending.contains(where: { !$0.isEmpty }), let start = segmentStart {
            let ends = pending.indices.compactMap { t in pending[t].map { seconds($0.presentationTime + $0.duration, t) }.max() }
            out.append(make(counts: pending.map(\.count), start: start, end: max(start, ends.max() ?? start)))
            pending = tracks.map { _ in [] }
        }
        return out
    }

    private mutating func emitReady() -> [Segment] {
        var out: [Segment] = []
        while let cut = cuts.first, let start = segmentStart {
            // Every other track must have reached the cut (or ended) before its samples are known.
            var counts = [cut.index]
            for t in tracks.indices.dropFirst() {
                let before = pending[t].firstIndex { seconds($0.decodeTime, t) >= cut.time - 1e-6 }
                guard let before = before ?? (ended[t] ? pending[t].count : nil) else { return out }
                counts.append(before)
            }
            out.append(make(counts: counts, start: start, end: cut.time))
            for t in tracks.indices { pending[t].removeFirst(counts[t]) }
            cuts.removeFirst()
            cuts = cuts.map { ($0.index - counts[0], $0.time) }
            segmentStart = cut.time
        }
        return out
    }

    /// A segment of the first `counts[t]` pending samples of each track.
    private mutating func make(counts: [Int], start: Double, end: Double) -> Segment {
        if sequence == 0 {
            // The earliest decode time of any track, when before the clock's start, becomes 0.
            let earliest = pending.indices.compactMap { t in pending[t].first.map { seconds($0.decodeTime, t) } }.min() ?? 0
            shift = max(0, -earliest)
        }
        sequence += 1
        var runs: [FragmentRun] = []
        var spans: [TrackSpan] = []
        for (t, n) in counts.enumerated() where n > 0 {
            let samples = pending[t]
            let ticks = Int64((shift * Double(tracks[t].timescale)).rounded(.up))
            var entries: [MP4Sample] = []
            var data: [UInt8] = []
            for i in 0..<n {
                let s = samples[i]
                // A sample lasts until the next one's decode (when it has come), else its own.
                let duration = i + 1 < samples.count ? samples[i + 1].decodeTime - s.decodeTime : s.duration
                entries.append(MP4Sample(offset: 0, size: UInt32(s.data.count), decodeTime: UInt64(max(0, s.decodeTime + ticks)),
                                         duration: UInt32(clamping: max(0, duration)),
                                         compositionOffset: Int32(clamping: s.presentationTime - s.decodeTime), isSync: s.isSync))
                data += s.data
            }
            runs.append(FragmentRun(trackID: tracks[t].trackID, timescale: tracks[t].timescale, baseDecodeTime: entries[0].decodeTime,
                                    samples: entries, data: data))
            let shown = entries.map { Int64($0.decodeTime) + Int64($0.compositionOffset) }
            spans.append(TrackSpan(trackID: tracks[t].trackID, isVideo: tracks[t].isVideo, timescale: tracks[t].timescale,
                                   earliestPresentationTime: shown.min() ?? 0, duration: entries.reduce(0) { $0 + Int64($1.duration) },
                                   sampleCount: n, startsWithSyncSample: entries[0].isSync, firstSamplePresentationTime: shown[0],
                                   firstSampleOffset: 0, firstSampleSize: Int(entries[0].size)))
        }
        let bytes: [UInt8]
        if container == .mpegts {
            bytes = transportStream!.segment(runs)
        } else {
            let written = CMAF.mediaSegment(firstSequenceNumber: nextFragment, runs: runs)
            nextFragment &+= written.fragmentCount
            bytes = written.bytes
            for k in spans.indices { spans[k].firstSampleOffset = written.firstSampleOffsets[k] }
        }
        return Segment(sequenceNumber: sequence, start: start, duration: max(0, end - start), bytes: bytes, tracks: spans)
    }
}

extension CMAFTrackFormat {
    /// The codec as HLS's CODECS attribute names it (RFC 6381): `avc1.PPCCLL` from the
    /// configuration's profile, constraints and level; `mp4a.40.N`, N the AAC object type.
    package var codecsName: String {
        switch codec {
        case .h264(let avcC, _, _):
            guard avcC.count >= 4 else { return "avc1" }
            return "avc1." + avcC[1...3].map { byte in
                let hex = String(byte, radix: 16)
                return hex.count == 1 ? "0" + hex : hex
            }.joined()
        case .aac(let config, _, _):
            guard let first = config.first else { return "mp4a.40.2" }
            return "mp4a.40.\(first >> 3)"
        }
    }
}

/// A multivariant playlist (RFC 8216 4.3.4.2): each variant stream's media playlist, its peak
/// and average bit rates, codecs and picture size.
package struct HLSMultivariantPlaylist: Sendable {
    package struct Variant: Sendable {
        package var uri: String
        package var bandwidth: Int
        package var averageBandwidth: Int?
        package var codecs: [String]
        package var resolution: (width: Int, height: Int)?

        /// The audio rendition group the variant plays its sound from (`AUDIO=`), when the sound
        /// is not in its own segments.
        package var audioGroup: String?

        package init(uri: String, bandwidth: Int, averageBandwidth: Int?, codecs: [String], resolution: (Int, Int)?, audioGroup: String? = nil) {
            self.uri = uri
            self.bandwidth = bandwidth
            self.averageBandwidth = averageBandwidth
            self.codecs = codecs
            self.resolution = resolution.map { (width: $0.0, height: $0.1) }
            self.audioGroup = audioGroup
        }
    }

    /// An alternative rendition (RFC 8216 4.3.4.1, `EXT-X-MEDIA`): a sound in its own media
    /// playlist, which the variants of its group play beside their video.
    package struct AudioRendition: Sendable {
        package var group: String
        package var name: String
        package var uri: String
        package var channels: Int?
        package var isDefault = true

        package init(group: String, name: String, uri: String, channels: Int?) {
            self.group = group
            self.name = name
            self.uri = uri
            self.channels = channels
        }
    }

    package var variants: [Variant]
    package var audio: [AudioRendition]
    package init(variants: [Variant], audio: [AudioRendition] = []) {
        self.variants = variants
        self.audio = audio
    }

    package var text: String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        for a in audio {
            var attributes = ["TYPE=AUDIO", "GROUP-ID=\"\(a.group)\"", "NAME=\"\(a.name)\"", "DEFAULT=\(a.isDefault ? "YES" : "NO")", "AUTOSELECT=YES"]
            if let c = a.channels { attributes.append("CHANNELS=\"\(c)\"") }
            attributes.append("URI=\"\(a.uri)\"")
            lines.append("#EXT-X-MEDIA:" + attributes.joined(separator: ","))
        }
        // Highest bit rate first: the order players try first when they have no estimate.
        for v in variants.sorted(by: { $0.bandwidth > $1.bandwidth }) {
            var attributes = ["BANDWIDTH=\(max(1, v.bandwidth))"]
            if let a = v.averageBandwidth { attributes.append("AVERAGE-BANDWIDTH=\(max(1, a))") }
            attributes.append("CODECS=\"\(v.codecs.joined(separator: ","))\"")
            if let r = v.resolution { attributes.append("RESOLUTION=\(r.width)x\(r.height)") }
            if let g = v.audioGroup { attributes.append("AUDIO=\"\(g)\"") }
            lines.append("#EXT-X-STREAM-INF:" + attributes.joined(separator: ","))
            lines.append(v.uri)
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// A media playlist's bit rates as its segments come (RFC 8216 4.1): the peak segment bit rate,
/// the largest bit rate of any run of consecutive segments lasting 0.5 to 1.5 times the target
/// duration (a run's bit rate: its bytes over its duration); and the average, every segment's
/// bytes over their duration. Kept as the segments come, in constant memory: only the runs
/// ending at the newest segment are new.
package struct HLSBitRates: Sendable {
    package let targetDuration: Double
    /// The segments a run ending at the next one may still start at: (bits, seconds).
    private var recent: [(bits: Double, seconds: Double)] = []
    private var runPeak: Double?
    private var segmentPeak = 0.0
    private var bits = 0.0, seconds = 0.0

    package init(targetDuration: Int) { self.targetDuration = Double(targetDuration) }

    package mutating func add(bytes: Int, duration exact: Double) {
        // The duration a player reads (EXTINF, to the microsecond): a rate from the exact one
        // could fall a bit per second below what a player measures from the playlist.
        let duration = (max(0, exact) * 1_000_000).rounded() / 1_000_000
        let b = Double(bytes) * 8
        bits += b
        seconds += duration
        if duration > 0 { segmentPeak = max(segmentPeak, b / duration) }
        recent.append((b, duration))
        var runBits = 0.0, runSeconds = 0.0
        for s in recent.reversed() {
            runBits += s.bits
            runSeconds += s.seconds
            if runSeconds > 1.5 * targetDuration + 1e-9 { break }
            if runSeconds >= 0.5 * targetDuration - 1e-9 { runPeak = max(runPeak ?? 0, runBits / runSeconds) }
        }
        // What no later run can start at any more: runs longer than 1.5 times the target.
        var kept = 0.0, keep = 0
        for s in recent.reversed() {
            keep += 1
            kept += s.seconds
            if kept > 1.5 * targetDuration { break }
        }
        recent.removeFirst(recent.count - keep)
    }

    /// The peak segment bit rate (bits per second, rounded up); with no run long enough yet
    /// (a stream shorter than half the target), the busiest segment's.
    package var peak: Int { Int((runPeak ?? segmentPeak).rounded(.up)) }
    /// The average segment bit rate; nil before any time has passed.
    package var average: Int? { seconds > 0 ? Int((bits / seconds).rounded()) : nil }
}
