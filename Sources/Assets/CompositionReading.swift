import GraphKitCore

/// One ``AssetReaderTrackOutput``'s way through a composition track: its pieces read one after
/// another, each by a reader of its own file over its source range (audio cut to the sample,
/// video from the frame showing at the range's start), each sample moved to where the piece
/// plays. One piece is read at a time; the next one's reader is started as soon as the
/// current one's, so that its start-up overlaps the reading.
///
/// Times: a piece's samples keep their spacing and are moved by (destination start − source
/// start); a frame that began before its range starts at the range's start, and one that lasts
/// past the range's end stops there, so stamps rise from piece to piece and tile each range.
/// A gap (an empty segment) gives no sample, as AVFoundation's reader gives none: the next
/// piece's stamps simply start later.
///
/// Decoded frames are of one size, the track's ``CompositionTrack/naturalSize``: a piece of
/// another size is scaled to fit it as it is decoded, its shape kept, with black bars around it.
///
/// Samples as stored (`.stored`, a join without re-encoding) are cut where they can be decoded:
/// video from the last keyframe at or before the range's start (as AVFoundation's passthrough
/// cuts), up to the first frame, in decode order, shown at or past its end (a B-frame shown
/// before the end may be predicted from it); AAC by whole packets (1,024 samples) that
/// overlap the range, with the packet before (the decoder needs it; at a file's start, the
/// encoder's priming, which an edit list would hide and sink.mp4 does not write for a join).
/// Each piece's samples land where the piece plays, but never over the samples before: a piece
/// that starts between keyframes plays from its keyframe, and pushes what follows that much
/// later (``StoredCut``).
final class CompositionPieces: Sendable {
    let pieces: [CompositionTrackSegment]
    let settings: ReaderOutputSettings
    /// Decoded frames' one size (the track's natural size): a piece of another is fitted to it.
    let renderSize: (width: Int, height: Int)?
    /// HDR pieces' frames tone-mapped to SDR (``AssetReaderTrackOutput/toneMapsHDR``).
    let toneMapsHDR: Bool

    private struct Reading {
        var next = 0
        var current: Opened?
        /// The current piece's track: how far its media times run ahead of its presentation times.
        var mediaOffset = MediaTime.zero
        /// The next piece's reader, started ahead (or why it could not be).
        var ahead: Result<(Opened, MediaTime), GraphError>?
        var cancelled = false
        /// Samples as stored: the cut of the piece being read, and where the next begins.
        var cut = StoredCut()
    }

    private let reading: Guarded<Reading>

    /// `lead`: how much later than the composition's time line samples as stored are stamped,
    /// the same for every output of a reader (see ``StoredCut/lead``).
    init(pieces: [CompositionTrackSegment], settings: ReaderOutputSettings, lead: MediaTime = .zero,
         renderSize: (width: Int, height: Int)? = nil, toneMapsHDR: Bool = false) {
        self.pieces = pieces
        self.settings = settings
        self.renderSize = renderSize
        self.toneMapsHDR = toneMapsHDR
        reading = Guarded(Reading(cut: StoredCut(lead: lead)))
    }

    enum Next {
        case sample(SampleBuffer)
        case end
        case failed(GraphError)
    }

    /// The next sample, blocking while it is decoded; `.end` after the last piece or once
    /// cancelled, `.failed` with the error of the piece that failed, naming it.
    @available(*, noasync)
    func next() -> Next {
        while true {
            if case .stored = settings, let ready = reading.withLock({ $0.cut.takeReady() }) { return .sample(ready) }
            let current: Opened
            switch open() {
            case .success(let c?): current = c
            case .success(nil): return .end
            case .failure(let error): return .failed(error)
            }
            if let sample = current.output.copyNextSampleBuffer() {
                guard case .stored = settings else {
                    if let moved = Self.move(sample, of: current.piece) { return .sample(moved) }
                    continue
                }
                let done = reading.withLock { $0.cut.add(sample, of: current.piece, mediaOffset: $0.mediaOffset) }
                if done { current.reader.cancelReading() }
                continue
            }
            if current.reader.status == .failed, let error = current.reader.error {
                return .failed(Self.naming(current.piece, error))
            }
            let goesOn = reading.withLock { r in
                r.current = nil
                r.cut.pieceEnded()
                return !r.cancelled
            }
            if !goesOn { return .end }
        }
    }

    typealias Opened = (reader: AssetReader, output: AssetReaderTrackOutput, piece: CompositionTrackSegment)

    /// The reader of the piece being read, made (and started) when there is none; nil after
    /// the last piece or once cancelled. The next piece's reader is started as soon as this one
    /// is (its pipeline finds its way into the file meanwhile: ten pieces' start-ups are not paid
    /// one after another); what that one holds stays bounded by its output.
    private func open() -> Result<Opened?, GraphError> {
        enum Step { case reading(Opened), open(CompositionTrackSegment, Result<(Opened, MediaTime), GraphError>?), end }
        let step = reading.withLock { r -> Step in
            if r.cancelled { return .end }
            if let current = r.current { return .reading(current) }
            guard r.next < pieces.count else { return .end }
            defer { r.next += 1; r.ahead = nil }
            return .open(pieces[r.next], r.ahead)
        }
        let piece: CompositionTrackSegment, made: Result<(Opened, MediaTime), GraphError>
        switch step {
        case .end: return .success(nil)
        case .reading(let current): return .success(current)
        case .open(let next, let ahead):
            piece = next
            made = ahead ?? start(next)
        }
        guard case .success(let (opened, offset)) = made else {
            if case .failure(let error) = made { return .failure(error) }
            return .success(nil)
        }
        let kept = reading.withLock { r -> Bool in
            guard !r.cancelled else { return false }
            r.current = opened
            r.mediaOffset = offset
            return true
        }
        guard kept else {
            opened.reader.cancelReading()
            return .success(nil)
        }
        prepareNext(after: piece)
        return .success(opened)
    }

    /// Starts the reader of the piece after `piece`, kept until ``open()`` takes it.
    private func prepareNext(after piece: CompositionTrackSegment) {
        let next = reading.withLock { r in r.cancelled || r.next >= pieces.count ? nil : pieces[r.next] }
        guard let next else { return }
        let made = start(next)
        let kept = reading.withLock { r -> Bool in
            guard !r.cancelled else { return false }
            r.ahead = made
            return true
        }
        if !kept, case .success(let (opened, _)) = made { opened.reader.cancelReading() }
    }

    /// A reader of `piece`, reading; and how far its track's media times run ahead of its
    /// presentation times (samples as stored only).
    private func start(_ piece: CompositionTrackSegment) -> Result<(Opened, MediaTime), GraphError> {
        guard let asset = piece.asset, let track = piece.sourceTrack else {
            return .failure(GraphError(.usage, at: "composition piece \(piece)", "an empty segment has nothing to read"))
        }
        guard !piece.isScaled else {
            return .failure(GraphError(.usage, at: "composition piece \(piece)",
                                       "it is scaled (scaleTimeRange: \(piece.sourceRange.duration.seconds) s shown over \(piece.destinationRange.duration.seconds) s), and a reader gives samples at their own speed: it does not retime them (yet); read the pieces unscaled"))
        }
        do throws(GraphError) {
            let reader = try AssetReader(asset: asset)
            var fit: (width: Int, height: Int)?
            if case .pixels = settings, let size = renderSize, track.stream.width != size.width || track.stream.height != size.height {
                fit = size
            }
            let output = AssetReaderTrackOutput(track: track, outputSettings: settings, renderSize: fit, toneMapsHDR: toneMapsHDR)
            try reader.add(output)
            // Samples as stored are cut here (StoredCut), where keyframes are known.
            if case .stored = settings {} else { reader.timeRange = piece.sourceRange }
            try reader.startReading()
            let offset: MediaTime
            if case .stored = settings { offset = piece.mediaOffset } else { offset = .zero }
            return .success(((reader, output, piece), offset))
        } catch {
            return .failure(Self.naming(piece, error))
        }
    }

    /// Stops: the piece being read is cancelled (a pull waiting in it wakes), and the one
    /// started ahead, and no other is opened.
    func cancel() {
        let (current, ahead) = reading.withLock { r in
            r.cancelled = true
            defer { r.ahead = nil }
            return (r.current?.reader, r.ahead)
        }
        current?.cancelReading()
        if case .success(let (opened, _))? = ahead { opened.reader.cancelReading() }
    }

    /// `sample` of `piece` moved to where the piece plays, held within its range; nil for a
    /// sample that falls wholly outside it (a frame the source's range only touches).
    static func move(_ sample: SampleBuffer, of piece: CompositionTrackSegment) -> SampleBuffer? {
        guard let pts = sample.presentationTime else { return sample }
        let destination = piece.destinationRange
        var start = pts - piece.sourceRange.start + destination.start
        var end = sample.duration.map { start + $0 }
        if start < destination.start { start = destination.start }
        if let e = end, e > destination.end { end = destination.end }
        if let end, end <= start { return nil }
        guard start < destination.end else { return nil }
        var moved = sample
        moved.presentationTime = start
        moved.decodeTime = nil
        if let end { moved.duration = end - start }
        return moved
    }

    /// The error of a piece's reader, saying which piece.
    static func naming(_ piece: CompositionTrackSegment, _ error: GraphError) -> GraphError {
        GraphError(error.code, at: "composition piece \(piece)", error.description, cause: error.cause)
    }
}

/// Where samples as stored are cut, piece by piece, and where each lands (see
/// ``CompositionPieces``). Samples come in decode order.
struct StoredCut {
    /// How much later than the composition's time line every sample is stamped: GStreamer's
    /// stamps cannot go below 0, and a first video piece with B-frames decodes its first frame
    /// before it shows it (its edit list's start, 2 frames for x264's defaults). Every output
    /// of a reader is given the same lead, so sound stays with pictures.
    let lead: MediaTime

    init(lead: MediaTime = .zero) { self.lead = lead }

    /// Video: the group of pictures from the last keyframe at or before the range's start, held
    /// until a later keyframe (or the piece's end) shows it is the one the range starts in.
    private var held: [SampleBuffer] = []
    /// The piece's cut start is found: samples from here pass until the range's end.
    private var started = false
    /// A frame shown at or past the range's end has come: nothing more of the piece passes.
    private var passedEnd = false
    /// Given samples, moved, waiting to be taken.
    private var ready: [SampleBuffer] = []
    private var readyIndex = 0
    /// The piece being cut, and its move (added to each stamp), fixed by its first sample.
    private var piece: CompositionTrackSegment?
    private var offset: MediaTime?
    /// Where this piece's first sample lands: where the samples before end, plus any gap.
    private var base = MediaTime.zero
    /// Where the samples given so far end, and where the piece before ended on the time line.
    private var end = MediaTime.zero
    private var previousEnd = MediaTime.zero
    private var mediaOffset = MediaTime.zero
    private var rawRangeStart: MediaTime { (piece?.sourceRange.start ?? .zero) + mediaOffset }
    /// The last decode time given: the next must be later.
    private var lastDecode: MediaTime?

    mutating func takeReady() -> SampleBuffer? {
        guard readyIndex < ready.count else { return nil }
        defer {
            readyIndex += 1
            if readyIndex == ready.count { ready.removeAll(keepingCapacity: true); readyIndex = 0 }
        }
        return ready[readyIndex]
    }

    /// A sample of `piece`, whose stamps are its track's media times, `mediaOffset` after its
    /// presentation times (an MP4 edit list's start: ffmpeg's files with B-frames start showing
    /// at media time 0.08 s, which GStreamer stamps as it is); true once the piece has nothing
    /// more to give (its reader can stop).
    mutating func add(_ sample: SampleBuffer, of piece: CompositionTrackSegment, mediaOffset: MediaTime) -> Bool {
        if self.piece != piece { begin(piece, mediaOffset: mediaOffset) }
        guard !passedEnd else { return true }
        guard let pts = sample.presentationTime else { return false }
        let range = MediaTimeRange(start: piece.sourceRange.start + mediaOffset, duration: piece.sourceRange.duration)
        guard piece.sourceTrack?.mediaType == .video else {
            // AAC: whole packets that overlap the range, and the one before the first (a packet
            // decodes only after the one before it: the encoder's priming at a file's start).
            if pts >= range.end { return true }
            let duration = sample.duration ?? .zero
            if pts + duration + duration > range.start { give(sample) }
            return false
        }
        let key = sample.flags.contains(.keyframe)
        if !started {
            if key && pts <= range.start {
                held = [sample]
                return false
            }
            if !key {
                guard let first = held.first?.presentationTime else { return false }
                if pts >= range.end {
                    // The group held holds the whole range (no keyframe after its start): it ends
                    // here, as below.
                    flushHeld()
                    started = true
                    passedEnd = true
                    return true
                }
                // A frame shown before its group's keyframe (an open GOP's) needs the group before.
                if pts >= first { held.append(sample) }
                return false
            }
            // A keyframe after the range's start: the group held is the one it starts in.
            flushHeld()
            started = true
        }
        if pts >= range.end {
            // Past the end: the piece ends here, in decode order. A frame decoded after this one
            // though shown before the end (a B-frame) may be predicted from it, so it goes too.
            passedEnd = true
            return true
        }
        give(sample)
        return false
    }

    /// The piece ended: a group still held is the one its range starts in.
    mutating func pieceEnded() {
        flushHeld()
        started = true
    }

    private mutating func begin(_ next: CompositionTrackSegment, mediaOffset: MediaTime) {
        if piece != nil { pieceEnded() }
        self.mediaOffset = mediaOffset
        let gap = next.destinationRange.start - previousEnd
        base = gap > .zero ? end + gap : end
        previousEnd = next.destinationRange.end
        piece = next
        held = []
        started = false
        passedEnd = false
        offset = nil
    }

    private mutating func flushHeld() {
        let group = held
        held = []
        guard let piece else { return }
        let range = MediaTimeRange(start: piece.sourceRange.start + mediaOffset, duration: piece.sourceRange.duration)
        for sample in group where (sample.presentationTime ?? .zero) < range.end { give(sample) }
    }

    /// `sample` moved to where its piece plays (on the output's media clock, which starts as the
    /// first piece's does: its first decode time at 0).
    private mutating func give(_ sample: SampleBuffer) {
        guard let pts = sample.presentationTime else { return }
        let move: MediaTime
        if let offset {
            move = offset
        } else {
            // Where the sample plays on the composition's time line, so that every track of a
            // piece starts where the piece does and tracks of different lengths (AAC's whole
            // packets) do not drift apart from join to join; but never over the samples before
            // (a keyframe before the range's start pushes the piece later), nor before 0 (a
            // first piece with B-frames keeps its decode delay).
            let natural = lead + (piece?.destinationRange.start ?? .zero) + (pts - rawRangeStart)
            var m = max(natural, base) - pts
            if let dts = sample.decodeTime, dts + m < .zero { m = .zero - dts }
            if pts + m < .zero { m = .zero - pts }
            move = m
        }
        offset = move
        var moved = sample
        moved.presentationTime = pts + move
        if let dts = sample.decodeTime {
            // A piece whose decode delay is longer than the one before's would decode before it ends.
            var shifted = dts + move
            if let last = lastDecode, shifted <= last { shifted = last + MediaTime(value: 1, timescale: 1_000_000) }
            moved.decodeTime = shifted
            lastDecode = shifted
        }
        let sampleEnd = pts + move + (sample.duration ?? .zero)
        if sampleEnd > end { end = sampleEnd }
        ready.append(moved)
    }
}
