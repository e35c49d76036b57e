// HLS media segments cut as samples arrive (a live run, or a file read in order), and the codec
// names HLS playlists give each track.

/// Cuts streams into media segments as their samples arrive (a live or encoded stream, not a
/// file): the lead track (the video, else the first) is cut at its first sync sample at or past
/// each multiple of the target duration, and a segment is given out once every other track has
/// reached the cut (a sample at or past it) or ended, so each segment holds every track's
/// samples for its span. Memory: the samples of the segment being gathered.
package struct HLSSegmenter: Sendable {
    /// A sample as it arrives: times in its track's ticks (``MP4TrackFormat/timescale``).
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

    package let tracks: [MP4TrackFormat]
    package let target: Double
    package let container: Container
    private var transportStream: MPEGTSWriter?
    private var pending: [[Sample]]
    /// The bytes of the samples in `pending`.
    private var pendingBytes = 0
    /// The most a segment being gathered may hold (issue 73, class 4): a live stream whose key
    /// frames stop coming (a camera that sent one) held everything since the last in memory
    /// (663 MB); past this, ``add(_:track:)`` throws, naming the key frames.
    package static let mostHeldBytes = 256 << 20
    package var heldBytesLimit = HLSSegmenter.mostHeldBytes
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
    package init(tracks: [MP4TrackFormat], target: Double, container: Container = .fmp4) {
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
            } else {
                // Refused as soon as a frame shows the key frame is late, not when (if ever) it comes.
                try checkKeyFrameDistance(to: time, what: nil)
            }
        }
        if segmentStart != nil, pendingBytes + sample.data.count > heldBytesLimit {
            let since = lastSync.map { " (the last key frame at \(Self.seconds($0)) s)" } ?? ""
            throw ContainerError("a segment would hold more than \(heldBytesLimit >> 20) MiB: the video's key frames, where segments "
                                 + "are cut, have not come for that long\(since); set \(keyFrameSetting) lower, or encode the video with key frames more often")
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
        if t != 0 || segmentStart != nil {
            pending[t].append(sample)
            pendingBytes += sample.data.count
        }
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
    /// `what` names what came at `time`; nil: a frame that is not a key frame (none has come).
    private mutating func checkKeyFrameDistance(to time: Double, what: String?) throws(ContainerError) {
        guard limitsKeyFrameDistance, target.isFinite, let last = lastSync, time - last > target + max(1e-3, frame / 2) else { return }
        refusedSparseKeyFrames = true
        throw ContainerError(Self.sparseKeyFrames(from: last, to: time, what: what, target: target, setting: keyFrameSetting))
    }

    /// Why key frames `from` … `to` seconds apart cannot be cut into segments of `target`, and
    /// what to do: the words of every refusal of it (packaging a file, a graph's, a writer's).
    /// `what` nil: no key frame has come since `from`, by a frame at `to` (how far apart they
    /// are is not known yet).
    package static func sparseKeyFrames(from: Double, to: Double, what: String? = "the next one", target: Double, setting: String) -> String {
        func s(_ v: Double) -> String { seconds(v) }
        let apart: String, advice: String
        if let what {
            apart = "key frames are \(s(to - from)) s apart (from \(s(from)) s to \(what) at \(s(to)) s)"
            advice = "\(s((to - from).rounded(.up))) s or more"
        } else {
            apart = "key frames are more than \(s(to - from)) s apart (none since the one at \(s(from)) s, by the frame at \(s(to)) s)"
            advice = "the key frames' distance or more"
        }
        return "\(apart), farther apart than the "
            + "segment duration (\(s(target)) s): a segment starts only on a key frame, and the packets are passed as they are "
            + "(nothing can make a key frame), so no segment can be cut that short; set \(setting) to "
            + "\(advice), or encode the video with a key frame at least every \(s(target)) s"
    }

    /// Seconds as text for messages: at most three decimals, no trailing zeros.
    package static func seconds(_ v: Double) -> String {
        // A file's times may claim anything: past what milliseconds in 64 bits hold, as is.
        guard v.isFinite, (v * 1000).magnitude < 9e18 else { return "\(v)" }
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
            pendingBytes = 0
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
            for t in tracks.indices {
                pendingBytes -= pending[t].prefix(counts[t]).reduce(0) { $0 + $1.data.count }
                pending[t].removeFirst(counts[t])
            }
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

extension MP4TrackFormat {
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
        case .hevc: return "hvc1"
        case .av1: return "av01"
        case .vp9: return "vp09"
        case .opus: return "Opus"
        case .alac: return "alac"
        case .flac: return "fLaC"
        }
    }
}
