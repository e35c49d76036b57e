import Dispatch
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// Decoded samples of one track, like `AVAssetReaderTrackOutput`: pull them one by one with
/// ``copyNextSampleBuffer()`` on a thread of your own, or iterate ``samples`` in a task.
///
/// `outputSettings` say what to decode to: `.linearPCM(sampleFormat:sampleRate:channels:)` for
/// audio, `.pixels(_:)` for video; nil gives audio in the decoder's own sample format (16-bit or
/// float) and BGRA frames.
public final class AssetReaderTrackOutput: Sendable {
    /// The track read; for an output that mixes, the first of ``mixedTracks``; for an output
    /// of a composition track, its first piece's source track.
    public let track: AssetTrack
    /// The composition track read, for an output made with ``init(compositionTrack:outputSettings:)``.
    public let compositionTrack: CompositionTrack?
    /// The audio tracks an output made with ``init(mixing:outputSettings:)`` sums into one
    /// stream (`AVAssetReaderAudioMixOutput`); empty for an output of one track.
    public let mixedTracks: [AssetTrack]
    public let outputSettings: ReaderOutputSettings?
    /// Frames scaled to this size, the picture fitted with black bars (`effect.scale`'s `fit`):
    /// a composition's piece of another size than its track's first (see
    /// ``AssetReader/init(composition:)``). Nil: frames at their own size.
    let renderSize: (width: Int, height: Int)?

    /// Whether HDR frames (an HLG or PQ track's) are tone-mapped to SDR BT.709 by `decode`
    /// (its `toneMap`, on the decoder's own frames) before they reach the output, as an export to
    /// an SDR codec wants them:
    /// AVFoundation's H.264 presets give SDR. Off by default (Apple's readers give the frames as
    /// they are); set before reading starts. SDR tracks are not touched.
    package var toneMapsHDR: Bool {
        get { locked.withLock { $0.toneMapsHDR } }
        set { locked.withLock { $0.toneMapsHDR = newValue } }
    }

    /// What the reader gave this output (when it was added, and when reading started). Its
    /// state, what a pull does and whether it has ended, is the reader's: ``ReaderState``.
    private struct Locked {
        weak var reader: AssetReader?
        var number: Int?
        var output: MediaOutput?
        var range: MediaTimeRange?
        /// A composition track's pieces, read in turn.
        var pieces: CompositionPieces?
        /// A file track's samples as stored, read from its index, and how much later they are stamped.
        var indexed: IndexedTrackSamples?
        var lead = MediaTime.zero
        var readsIndex = false
        var toneMapsHDR = false
        /// A decoded frame waiting for the next one, which says how long it lasts.
        var held: SampleBuffer?
    }

    private let locked = Guarded(Locked())
    /// One pull at a time for ``samples``, off the concurrency threads.
    private let puller = DispatchQueue(label: "graphkit.asset-reader-output")

    public init(track: AssetTrack, outputSettings: ReaderOutputSettings?) {
        self.track = track
        mixedTracks = []
        compositionTrack = nil
        self.outputSettings = outputSettings
        renderSize = nil
    }

    /// An output of a video track whose frames are fitted to `renderSize` (a composition's piece),
    /// HDR ones tone-mapped when `toneMapsHDR`.
    init(track: AssetTrack, outputSettings: ReaderOutputSettings?, renderSize: (width: Int, height: Int)?, toneMapsHDR: Bool = false) {
        self.track = track
        mixedTracks = []
        compositionTrack = nil
        self.outputSettings = outputSettings
        self.renderSize = renderSize
        locked.withLock { $0.toneMapsHDR = toneMapsHDR }
    }

    /// The pieces of a composition track decoded one after another as one stream, for a reader
    /// made with ``AssetReader/init(composition:)``: `AVAssetReaderTrackOutput(track:)` given an
    /// `AVCompositionTrack`. Settings that leave the rate or channels open take the first
    /// piece's (the others are converted); nil settings are 16-bit PCM so, or BGRA frames.
    /// Frames are of one size, the track's ``CompositionTrack/naturalSize`` (its first piece's,
    /// as an `AVCompositionTrack`'s `naturalSize`): a piece of another size is scaled to fit it,
    /// its shape kept, with black bars where it does not fill it (`effect.scale`'s `fit`).
    /// `.stored` joins the pieces' compressed samples without decoding, when every piece has the
    /// same codec and parameters (else the reader refuses the output, naming the piece and what
    /// differs): video cut at keyframes, AAC by whole packets (see ``CompositionPieces``).
    /// Throws for a track with no piece.
    public init(compositionTrack: CompositionTrack, outputSettings: ReaderOutputSettings?) throws(GraphError) {
        guard let first = compositionTrack.pieces.first?.sourceTrack else {
            throw GraphError(.usage, at: "composition track \(compositionTrack.trackID)", "the track has no piece to read: insert a time range of an asset first")
        }
        track = first
        mixedTracks = []
        self.compositionTrack = compositionTrack
        self.outputSettings = outputSettings
        renderSize = nil
    }

    /// The sum of several audio tracks of one asset (up to eight: a film's dialogue, music and
    /// effects), as `AVAssetReaderAudioMixOutput` gives it, at unity gain, as long as the longest.
    /// Decoded to `.linearPCM`, whose rate and channel count, when not given, are the highest
    /// among the tracks (up to 8 channels); nil settings are 16-bit PCM so. A reader refuses it
    /// (``AssetReader/canAdd(_:)``) with no track, a track that is not audio or not of its
    /// asset, more than eight, or settings that are not PCM.
    public init(mixing tracks: [AssetTrack], outputSettings: ReaderOutputSettings?) {
        precondition(!tracks.isEmpty, "an audio mix output needs at least one track")
        track = tracks[0]
        mixedTracks = tracks
        compositionTrack = nil
        self.outputSettings = outputSettings
        renderSize = nil
    }

    /// What a mixing output decodes each track to, and so mixes in.
    var mixFormat: MediaFormat.PCMFormat? {
        guard !mixedTracks.isEmpty else { return nil }
        var sampleFormat = SampleFormat.s16le, rate: Int?, channels: Int?
        if case .linearPCM(let f, let r, let c)? = outputSettings { (sampleFormat, rate, channels) = (f, r, c) }
        return .init(sampleRate: rate ?? mixedTracks.compactMap(\.stream.sampleRate).max() ?? 48_000,
                     channels: channels ?? min(mixedTracks.compactMap(\.stream.channels).max() ?? 2, 8),
                     sampleFormat: sampleFormat)
    }

    /// The next sample, blocking until it is decoded; nil at the end of the track or of the
    /// reader's time range, before reading starts, and at once once reading has failed or was
    /// cancelled (then read the reader's `status` and `error`). Never waits once reading has ended.
    @available(*, noasync, message: "blocks the thread; iterate samples in a task")
    public func copyNextSampleBuffer() -> SampleBuffer? {
        let (reader, number, output, range, pieces, indexed) = locked.withLock { ($0.reader, $0.number, $0.output, $0.range, $0.pieces, $0.indexed) }
        if let reader, let number, let pieces { return copyNextSample(of: pieces, reader: reader, number: number, range: range) }
        if let reader, let number, let indexed { return copyNextSample(of: indexed, reader: reader, number: number, range: range) }
        guard let reader, let number, let output else { return nil }
        pulling: while reader.pull(output: number) == .pull {
            guard let sample = nextTimed(from: output, of: reader) else { break }
            guard let range else { return sample }
            switch Self.clip(sample, to: range) {
            case .before: continue pulling
            case .within(let clipped): return clipped
            case .after: break pulling
            }
        }
        reader.outputEnded(number)
        return nil
    }

    /// The output's next sample; a decoded frame lasting until the next one starts. GStreamer's
    /// parsers stamp each frame with the nominal frame length, which a variable frame rate (a
    /// phone's video) belies, as the file's own sample durations say: a frame is given when the
    /// next one comes (the last keeps its own length).
    @available(*, noasync)
    private func nextTimed(from output: MediaOutput, of reader: AssetReader) -> SampleBuffer? {
        guard case .pixels? = outputSettings else { return output.copyNextSampleBuffer() }
        while true {
            guard let sample = output.copyNextSampleBuffer() else {
                let last = locked.withLock { l in defer { l.held = nil }; return l.held }
                return reader.status == .cancelled || reader.status == .failed ? nil : last  // nothing after a cancel or failure
            }
            guard let pts = sample.presentationTime else { return sample }
            guard var previous = locked.withLock({ l in defer { l.held = sample }; return l.held }) else { continue }
            if let start = previous.presentationTime, pts > start { previous.duration = pts - start }
            return previous
        }
    }

    /// A composition track's next sample: the pieces' in turn, within the reader's time range.
    @available(*, noasync)
    private func copyNextSample(of pieces: CompositionPieces, reader: AssetReader, number: Int, range: MediaTimeRange?) -> SampleBuffer? {
        copyNextSample(reader: reader, number: number, range: range, next: pieces.next, ending: pieces.cancel)
    }

    /// A file track's next sample as stored, read from its index, within the reader's time range
    /// (moved by the lead, as the samples are).
    @available(*, noasync)
    private func copyNextSample(of indexed: IndexedTrackSamples, reader: AssetReader, number: Int, range: MediaTimeRange?) -> SampleBuffer? {
        let lead = storedLead
        return copyNextSample(reader: reader, number: number, range: range.map { MediaTimeRange(start: $0.start + lead, duration: $0.duration) }) {
            switch indexed.next() {
            case .sample(let sample): .sample(sample)
            case .end: .end
            case .failed(let message): .failed(GraphError(.runFailed, at: "\(self.track)", message))
            }
        }
    }

    /// The next sample `next` gives within the reader's time range; at its end (or the range's),
    /// `ending` runs and the output ends; a failure fails the reader.
    @available(*, noasync)
    private func copyNextSample(reader: AssetReader, number: Int, range: MediaTimeRange?, next: () -> CompositionPieces.Next,
                                ending: () -> Void = {}) -> SampleBuffer? {
        pulling: while reader.pull(output: number) == .pull {
            switch next() {
            case .sample(let sample):
                guard let range else { return sample }
                switch Self.clip(sample, to: range) {
                case .before: continue pulling
                case .within(let clipped): return clipped
                case .after: break pulling
                }
            case .end: break pulling
            case .failed(let error):
                reader.pieceFailed(error)
                return nil
            }
        }
        ending()
        reader.outputEnded(number)
        return nil
    }

    /// Whether samples as stored of an MP4 or MOV track are read from the file's index, each at
    /// the time its edit list shows it, every one there (``IndexedTrackSamples``: the priming
    /// packet, the last packet whole), stamped ``storedLead`` later; false (the default), they are
    /// demuxed by GStreamer and stamped with the media's own times, as a graph's `demux` gives
    /// them. AVFoundation's reader sets it, and takes the lead off. Set it before reading starts.
    package var readsIndex: Bool {
        get { locked.withLock { $0.readsIndex } }
        set { locked.withLock { $0.readsIndex = newValue } }
    }

    /// How much later than the track's time line samples as stored are stamped: a file track's
    /// first samples are decoded or shown before 0 (an AAC encoder's priming packet, B-frames'
    /// decode), which a ``SampleBuffer`` cannot stamp, so a reader stamps every output's samples
    /// this much later, together. Zero for decoded samples, and before reading starts.
    /// AVFoundation's reader takes it off, giving the times before 0 as Apple's does.
    public var storedLead: MediaTime { locked.withLock { $0.lead } }

    /// The samples, for `for try await sample in output.samples`: pulled one at a time as the
    /// loop asks (no more are decoded ahead than the graph holds). The loop ends at the end of the
    /// track, and throws the reader's error when reading fails or is cancelled. Cancelling the
    /// task that iterates cancels the reader, and the loop throws `cancelled` at its next step,
    /// whether the cancel came while it waited for a sample or while its body ran: a cancelled
    /// loop never ends as a track that was read to its end does.
    public var samples: Samples { Samples(output: self) }

    /// The samples of an output, one pull per step (``samples``).
    public struct Samples: AsyncSequence, Sendable {
        public typealias Element = SampleBuffer
        let output: AssetReaderTrackOutput

        public struct AsyncIterator: AsyncIteratorProtocol {
            let output: AssetReaderTrackOutput
            /// The next sample; nil at the end of the track. Throws a ``GraphError``.
            public mutating func next() async throws -> SampleBuffer? { try await output.nextSample() }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(output: output) }
    }

    /// A step of ``samples``. A task cancelled before it (while the loop's body ran) cancels the
    /// reader at once too: the handler runs straight away for a task already cancelled. An
    /// `AsyncThrowingStream(unfolding:)` did not: it ended without calling again, and a
    /// cancelled loop looked like the end of the track.
    func nextSample() async throws(GraphError) -> SampleBuffer? {
        let sample = await withTaskCancellationHandler {
            await withHandOff { (c: HandOff<SampleBuffer?, Never>) in
                puller.async { [self] in c.resume(returning: copyNextSampleBuffer()) }
            }
        } onCancel: { [weak self] in
            self?.locked.withLock { $0.reader }?.cancelReading()
        }
        if sample == nil, let error = locked.withLock({ $0.reader })?.endError { throw error }
        return sample
    }

    // MARK: For the reader

    var isAttached: Bool { locked.withLock { $0.number != nil } }
    var number: Int { locked.withLock { $0.number ?? 0 } }

    func attach(to reader: AssetReader, number: Int) throws(GraphError) {
        try locked.withLock { l throws(GraphError) in
            guard l.number == nil else { throw GraphError(.usage, at: "\(track)", "this output belongs to a reader already") }
            l.reader = reader
            l.number = number
        }
    }

    func start(with output: MediaOutput, range: MediaTimeRange?) {
        locked.withLock { l in
            l.output = output
            l.range = range
        }
    }

    func start(with indexed: IndexedTrackSamples, lead: MediaTime, range: MediaTimeRange?) {
        locked.withLock { l in
            l.indexed = indexed
            l.lead = lead
            l.range = range
        }
    }

    func start(with pieces: CompositionPieces, range: MediaTimeRange?) {
        locked.withLock { l in
            l.pieces = pieces
            l.range = range
        }
    }

    // MARK: Time range

    enum Clipped {
        case before
        case within(SampleBuffer)
        case after
    }

    /// A sample against the time range: wholly before it, at least partly in it (PCM cut to
    /// the range, to the sample), or at or after its end.
    static func clip(_ sample: SampleBuffer, to range: MediaTimeRange) -> Clipped {
        guard let pts = sample.presentationTime else { return .within(sample) }
        if pts >= range.end { return .after }
        guard case .pcm(let f)? = sample.format else {
            // A frame is shown until the next: the one showing at the start is the first.
            if let duration = sample.duration, pts + duration <= range.start { return .before }
            return .within(sample)
        }
        let rate = Int32(clamping: f.sampleRate)
        let frames = sample.frameCount
        let first = pts < range.start ? Int((range.start - pts).converted(to: rate).value) : 0
        let last = min(frames, Int((range.end - pts).converted(to: rate).value))
        if first >= frames { return .before }
        if first == 0 && last == frames { return .within(sample) }
        guard last > first else { return .after }
        let bytes = sample.withUnsafeBytes { Array($0[(first * f.bytesPerFrame)..<(last * f.bytesPerFrame)]) }
        let start = pts + MediaTime(value: Int64(first), timescale: rate)
        return .within(SampleBuffer(format: sample.format, bytes: bytes, presentationTime: start,
                                    duration: MediaTime(value: Int64(last - first), timescale: rate)))
    }
}
