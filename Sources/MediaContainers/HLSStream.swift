/// One stream's tracks packaged for HLS as they are encoded: what `sink.hls` does for each
/// rendition and `AssetWriter` does in segment mode, in one place. Each track's format becomes
/// known (from its encoder's caps) in any order and its samples may come before the others'
/// formats are known: they are held, and once every format is known the initialization segment
/// comes out, then the media segments (``HLSSegmenter``) as they complete.
package struct HLSStream: Sendable {
    /// What the stream gives out, in order: the initialization segment first, then media segments.
    package enum Output: Sendable {
        case initialization([UInt8])
        case segment(HLSSegmenter.Segment)
    }

    package private(set) var formats: [MP4TrackFormat?]
    package let target: Double
    private var early: [[HLSSegmenter.Sample]]
    private var ended: Set<Int> = []
    private var segmenter: HLSSegmenter?
    /// Flushes asked for before the segmenter existed.
    private var flushes: [Double] = []
    /// Where the cuts' grid lies (``HLSSegmenter/origin``); set before the first format.
    package var origin: Double?
    /// Whether the lead's key frames must come within the target (``HLSSegmenter/limitsKeyFrameDistance``).
    package var limitsKeyFrameDistance = false {
        didSet { segmenter?.limitsKeyFrameDistance = limitsKeyFrameDistance }
    }
    /// What the initialization segment's index holds of a source's tags (``CMAF/initializationSegment(of:tags:extraTags:)``);
    /// set before the first format.
    package var tags: [(key: FourCC, text: String)] = []
    package var extraTags = MP4ExtraTags()
    /// The setting a refusal of key frames too far apart names (``HLSSegmenter/keyFrameSetting``).
    package var keyFrameSetting = "the segment duration"
    /// Whether the stream failed because the lead's key frames were farther apart than the target.
    package var refusedSparseKeyFrames: Bool { segmenter?.refusedSparseKeyFrames ?? false }

    /// A stream of `trackCount` tracks (the first leads: the video when there is one), cut every
    /// `target` seconds (infinite: only where ``flush(after:)`` asks).
    package init(trackCount: Int, target: Double, container: HLSSegmenter.Container = .fmp4) {
        precondition(trackCount > 0 && target > 0)
        formats = Array(repeating: nil, count: trackCount)
        early = Array(repeating: [], count: trackCount)
        self.target = target
        self.container = container
    }

    package let container: HLSSegmenter.Container

    /// Whether the initialization segment has come out.
    package var isStarted: Bool { segmenter != nil }

    /// Track `t`'s format (its track ID is `t + 1`). Once every track's is known: the
    /// initialization segment, and the segments the samples held complete. A format that comes
    /// again once started (a renegotiation with the same codec) changes nothing.
    package mutating func setFormat(_ format: MP4TrackFormat, track t: Int) throws(ContainerError) -> [Output] {
        guard segmenter == nil else { return [] }
        var f = format
        f.trackID = UInt32(t + 1)
        formats[t] = f
        guard formats.allSatisfy({ $0 != nil }) else { return [] }
        let tracks = formats.map { $0! }
        segmenter = HLSSegmenter(tracks: tracks, target: target, container: container)
        segmenter!.origin = origin
        segmenter!.limitsKeyFrameDistance = limitsKeyFrameDistance
        segmenter!.keyFrameSetting = keyFrameSetting
        for time in flushes { segmenter!.flush(after: time) }
        flushes = []
        // MPEG-TS segments need none: each carries its tables.
        var out: [Output] = container == .fmp4 ? [.initialization(CMAF.initializationSegment(of: tracks, tags: tags, extraTags: extraTags))] : []
        for t in early.indices {
            let held = early[t]
            early[t] = []
            for sample in held { out += try segmenter!.add(sample, track: t).map(Output.segment) }
        }
        for t in ended.sorted() { out += segmenter!.end(track: t).map(Output.segment) }
        return out
    }

    /// A sample of track `t`; the segments it completes. Throws when its decode times go back.
    package mutating func add(_ sample: HLSSegmenter.Sample, track t: Int) throws(ContainerError) -> [Output] {
        guard segmenter != nil else {
            early[t].append(sample)
            return []
        }
        return try segmenter!.add(sample, track: t).map(Output.segment)
    }

    /// Track `t` has ended; the segments that completes.
    package mutating func end(track t: Int) -> [Output] {
        ended.insert(t)
        return segmenter?.end(track: t).map(Output.segment) ?? []
    }

    /// Ends the segment being gathered at the lead's first sync sample shown after `time`
    /// (seconds on the lead's clock): ``HLSSegmenter/flush(after:)``.
    package mutating func flush(after time: Double) {
        if segmenter != nil { segmenter!.flush(after: time) } else { flushes.append(time) }
    }

    /// The last segments (``HLSSegmenter/finish()``); nil when the stream never started (a
    /// track's format never came).
    package mutating func finish(stopped: Bool = false) throws(ContainerError) -> [Output]? {
        guard segmenter != nil else { return nil }
        return try segmenter!.finish(stopped: stopped).map(Output.segment)
    }
}
