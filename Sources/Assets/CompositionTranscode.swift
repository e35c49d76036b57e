@_spi(Engine) import GraphKitCore
import Dispatch
import GraphKitRuntime
import Nodes

extension Composition {
    /// The track of `mediaType` an export re-encodes: the first with a piece.
    func encodedTrack(_ mediaType: MediaType) -> CompositionTrack? {
        tracks.first { $0.mediaType == mediaType && !$0.pieces.isEmpty }
    }

    /// Throws `usage` (64), naming the track, when the composition has more than one track of a
    /// media type with pieces: an export that re-encodes writes one video and one sound track.
    func checkOneTrackPerType() throws(GraphError) {
        for type in MediaType.allCases {
            let tracks = tracks.filter { $0.mediaType == type && !$0.pieces.isEmpty }
            if tracks.count > 1 {
                throw GraphError(.usage, at: "composition track \(tracks[1].trackID)",
                                 "a re-encoding export writes one \(type.rawValue) track, and the composition has \(tracks.count) with pieces (tracks \(tracks.map { String($0.trackID) }.joined(separator: ", "))): put the pieces in one track, or remove the others")
            }
        }
    }
}

/// A composition exported by decoding and encoding once (every preset but passthrough, or
/// settings of one's own): each track's pieces read in turn by ``AssetReader/init(composition:)``
/// (video fitted to the track's natural size, sound resampled to the encoder's rate and
/// channels), moved so the exported range starts at 0, and appended to a graph's `source.app`
/// inputs, whose encoders and `sink.mp4` write the file (so a length limit, tags, the index's
/// place and the file type are `sink.mp4`'s, as for an asset's export).
///
/// A gap (an empty segment) is filled as AVFoundation's export fills it: silence in the sound,
/// a black picture in the video. The sound is restamped sample by sample, so it runs on without a
/// hole or an overlap from piece to piece (a piece's stamps are rounded to GStreamer's
/// nanoseconds, which can leave a fraction of a sample between pieces).
///
/// One thread per track pulls from the reader and appends (the muxer interleaves by time, so
/// one track must be able to run ahead while the other waits); each ends when its track does,
/// when the run ends (its appends then throw), or when the reader is cancelled.
final class CompositionTranscode: Sendable {
    let reader: AssetReader
    let range: MediaTimeRange
    private let feeds: [Feed]

    /// One track: the reader's output, the graph's input node, and where the track ends in the
    /// exported range (a gap at its end is filled up to there).
    struct Feed: Sendable {
        var output: AssetReaderTrackOutput
        var node: String
        var mediaType: MediaType
        var end: MediaTime
        var settings: any OutputSettings
        /// A video composition's drawing or an audio mix's volume, when the export has one.
        var effects: CompositionEffects
    }

    private struct State {
        /// Why reading a piece failed: the export fails with it.
        var failure: GraphError?
    }
    private let state = Guarded(State())
    private let running = DispatchGroup()

    /// Reads `range` of `composition`'s video track (when `video` is given) and sound track
    /// (when `audio` is), decoded for those settings; drawn by `videoComposition` and mixed by
    /// `audioMix` when given (the video settings then encode the render size).
    init(_ composition: Composition, range: MediaTimeRange, video: VideoSettings?, audio: AudioSettings?,
         videoComposition: VideoComposition? = nil, audioMix: AudioMix? = nil) throws(GraphError) {
        reader = try AssetReader(composition: composition)
        if range != MediaTimeRange(start: .zero, duration: composition.duration) { reader.timeRange = range }
        self.range = range
        var feeds: [Feed] = []
        if var video, let track = composition.encodedTrack(.video) {
            // I420: what every video encoder codes, so nothing converts it again. An HEVC export
            // of pieces that are all 10-bit (or HDR) stays 10-bit, as an asset's does, unless a
            // video composition draws the frames (its renderer draws 8-bit ones).
            let tenBit = videoComposition == nil && video.keepsTenBits(track.pieces.map { $0.sourceTrack?.stream.color })
            if tenBit { video.tenBit = true }
            let effects = CompositionEffects(offset: range.start, video: videoComposition.map { ($0, trackID: track.trackID) })
            // BGRA for a composition's frame filter, which takes it so; the encoder converts it.
            let output = try AssetReaderTrackOutput(compositionTrack: track, outputSettings: .pixels(tenBit ? .i420_10le : effects.drawsBGRA ? .bgra : .i420))
            output.toneMapsHDR = video.codec.encodesHDRAsSDR
            try reader.add(output)
            feeds.append(Feed(output: output, node: "video-in", mediaType: .video, end: min(track.duration, range.end) - range.start, settings: video,
                              effects: effects))
        }
        if let audio, let track = composition.encodedTrack(.audio) {
            let output = try AssetReaderTrackOutput(compositionTrack: track, outputSettings: .linearPCM(sampleFormat: .s16le, sampleRate: audio.sampleRate,
                                                                                                       channels: audio.channels))
            try reader.add(output)
            let effects = CompositionEffects(offset: range.start, audio: audioMix.map { ($0, trackID: track.trackID) })
            feeds.append(Feed(output: output, node: "audio-in", mediaType: .audio, end: min(track.duration, range.end) - range.start, settings: audio,
                              effects: effects))
        }
        guard !feeds.isEmpty else {
            throw GraphError(.usage, at: "composition", "the composition has no track this export encodes (its settings encode \(video == nil ? "no video" : "video")\(audio == nil ? " and no sound" : " and sound"))")
        }
        self.feeds = feeds
    }

    /// Adds each track's input and encoder to `b`, feeding `file`.
    func addInputs(to b: inout GraphBuilder, file: BuiltNode<MP4SinkNode>) throws(GraphError) {
        for feed in feeds {
            // A few samples held: the reader's own outputs are bounded, and the encoders hold more.
            let source = b.add(feed.node, AppSourceNode.self) { $0[\.maxBuffers] = feed.mediaType == .audio ? 16 : 4 }
            guard let encoder = try WriterEncoders.add(for: feed.settings, id: "\(feed.node)-encoder", at: feed.node, to: &b) else { continue }
            b.connect(source.output(), to: encoder.input)
            b.connect(encoder.output, to: file.input(feed.mediaType.rawValue), capacity: AssetWriter.intoTheMuxer)
        }
    }

    /// Starts reading, and a thread per track that appends what it reads to `run`'s inputs.
    /// A piece that fails to read cancels `run` (nothing is written), and ``failure`` says why.
    func start(feeding run: GraphRun) throws(GraphError) {
        let inputs = try feeds.map { (feed) throws(GraphError) in try run.input(feed.node) }
        try reader.startReading()
        for (feed, input) in zip(feeds, inputs) {
            running.enter()
            // A queue of its own (overcommitting): the thread blocks in pulls and appends.
            DispatchQueue(label: "graphkit.export.\(feed.mediaType.rawValue)").async { [self] in
                defer { running.leave() }
                if let failure = pump(feed, into: input) {
                    state.withLock { if $0.failure == nil { $0.failure = failure } }
                    run.cancel()
                    reader.cancelReading()
                }
            }
        }
    }

    /// Why reading failed, once the pumps have ended; nil when it did not.
    var failure: GraphError? { state.withLock { $0.failure } }

    /// Stops reading: a thread waiting for a sample wakes and ends.
    func cancel() { reader.cancelReading() }

    /// Waits (without blocking a thread of the pool) until every track's thread has ended.
    func ended() async {
        await withHandOff { (done: HandOff<Void, Never>) in
            running.notify(queue: .global()) { done.resume() }
        }
    }

    /// Appends `feed`'s samples to `input`, then finishes it. Returns the reader's error when a
    /// piece failed; nil when the track ended or the run did (an append that throws because the
    /// run ended, completed by a length limit or cancelled, is the run's to report).
    @available(*, noasync)
    private func pump(_ feed: Feed, into input: MediaInput) -> GraphError? {
        var filler = GapFiller(mediaType: feed.mediaType)
        var effects = feed.effects
        // A drawing that fails fails the export with its own error, not the run's.
        var drawingFailure: GraphError?
        func drawn(_ piece: SampleBuffer) throws(GraphError) -> [SampleBuffer] {
            do { return try effects.process(piece, end: feed.end, stopped: { [reader] in reader.status == .cancelled }) } catch {
                // A filter that gave up because reading stopped is the cancel (or the run's own
                // end, a length limit), not a failure.
                if reader.status != .cancelled, error.code != .cancelled { drawingFailure = error }
                throw error
            }
        }
        do throws(GraphError) {
            while let sample = feed.output.copyNextSampleBuffer() {
                for piece in filler.take(sample, movedBy: range.start) {
                    for out in try drawn(piece) { try input.appendWaiting(out) }
                }
            }
            if reader.status == .failed { return reader.error }
            if reader.status == .cancelled { return nil }
            for piece in filler.fill(upTo: feed.end) {
                for out in try drawn(piece) { try input.appendWaiting(out) }
            }
            input.markAsFinished()
        } catch {
            return drawingFailure ?? (reader.status == .failed ? reader.error : nil)
        }
        return nil
    }
}

/// A track's samples made continuous for its encoder: each moved to the exported range's time
/// line, in one format (the first's), and each gap filled. Sound is stamped by its sample count
/// from the first sample on (a gap of more than a sample becomes silence, an overlap is cut);
/// video keeps its stamps, and a gap before a frame shows a black frame over it.
struct GapFiller {
    let mediaType: MediaType
    private var format: MediaFormat?
    /// Where what was given so far ends.
    private var end = MediaTime.zero
    /// Sound: samples given so far, at the format's rate.
    private var frames: Int64 = 0

    init(mediaType: MediaType) { self.mediaType = mediaType }

    /// `sample` moved back by `offset`, with what fills the gap before it.
    mutating func take(_ sample: SampleBuffer, movedBy offset: MediaTime) -> [SampleBuffer] {
        guard let pts = sample.presentationTime else { return [] }
        var moved = sample
        moved.presentationTime = pts - offset
        moved.decodeTime = nil
        if format == nil { format = sample.format }
        if let format, moved.format != format, Self.sameLayout(moved.format, format) { moved.format = format }
        return mediaType == .audio ? sound(moved) : picture(moved)
    }

    /// What fills the track from where it ends to `limit` (a gap at the track's end).
    mutating func fill(upTo limit: MediaTime) -> [SampleBuffer] {
        guard format != nil, limit > end else { return [] }
        return mediaType == .audio ? silence(until: limit) : [black(from: end, to: limit)].compactMap { $0 }
    }

    /// Only the frame rate (or the caps' detail) may differ: a frame of another size or pixel
    /// format keeps its own.
    private static func sameLayout(_ a: MediaFormat?, _ b: MediaFormat) -> Bool {
        switch (a, b) {
        case (.rawVideo(let x)?, .rawVideo(let y)): x.pixelFormat == y.pixelFormat && x.width == y.width && x.height == y.height
        case (.pcm(let x)?, .pcm(let y)): x == y
        default: false
        }
    }

    private mutating func picture(_ frame: SampleBuffer) -> [SampleBuffer] {
        guard let pts = frame.presentationTime else { return [] }
        var out: [SampleBuffer] = []
        // More than a millisecond with no picture: a gap (stamps between pieces are exact to the
        // nanosecond otherwise).
        if pts - end > MediaTime(value: 1, timescale: 1000), let black = black(from: end, to: pts) { out.append(black) }
        out.append(frame)
        end = max(end, pts + (frame.duration ?? .zero))
        return out
    }

    /// A black frame of the track's format shown from `start` to `stop`.
    private mutating func black(from start: MediaTime, to stop: MediaTime) -> SampleBuffer? {
        guard case .rawVideo(let v)? = format, let size = v.defaultFrameSize else { return nil }
        var frame = SampleBuffer(format: .rawVideo(v), byteCount: size, presentationTime: start, duration: stop - start)
        // Y 16, chroma 128: black in video range (I420 and NV12; 64 and 512 in 10 bits); BGRA and RGBA opaque black.
        _ = try? frame.withMutablePixelPlanes { planes in
            for (i, plane) in planes.enumerated() {
                let value: UInt8 = switch v.pixelFormat {
                case .i420, .nv12: i == 0 ? 16 : 128
                case .bgra, .rgba, .i420_10le, .p010_10le: 0
                }
                for row in 0..<plane.height {
                    let line = plane.baseAddress + row * plane.bytesPerRow
                    switch v.pixelFormat {
                    case .bgra, .rgba:
                        for x in 0..<plane.width { (line + 4 * x).storeBytes(of: UInt32(0xFF00_0000).littleEndian, as: UInt32.self) }
                    case .i420:
                        line.initializeMemory(as: UInt8.self, repeating: value, count: plane.width)
                    case .nv12:
                        line.initializeMemory(as: UInt8.self, repeating: value, count: i == 0 ? plane.width : plane.width * 2)
                    case .i420_10le:
                        line.initializeMemory(as: UInt16.self, repeating: UInt16(i == 0 ? 64 : 512).littleEndian, count: plane.width)
                    case .p010_10le:
                        // In a word's high 10 bits.
                        line.initializeMemory(as: UInt16.self, repeating: UInt16(i == 0 ? 64 << 6 : 512 << 6).littleEndian, count: i == 0 ? plane.width : plane.width * 2)
                    }
                }
            }
        }
        end = max(end, stop)
        return frame
    }

    private mutating func sound(_ sample: SampleBuffer) -> [SampleBuffer] {
        guard let pts = sample.presentationTime, case .pcm(let f)? = format, f.sampleRate > 0 else { return [sample] }
        let rate = Int32(clamping: f.sampleRate)
        let at = pts.converted(to: rate).value  // where the sample says it starts, in samples
        var out: [SampleBuffer] = []
        if at > frames { out += silence(until: MediaTime(value: at, timescale: rate)) }
        // What overlaps the sound given already (a fraction of a sample's rounding, or more) is cut.
        let skip = Int(max(0, frames - at))
        let count = sample.frameCount
        guard skip < count else { return out }
        var kept = sample
        if skip > 0 {
            let bytes = sample.withUnsafeBytes { Array($0[(skip * f.bytesPerFrame)...]) }
            kept = SampleBuffer(format: format, bytes: bytes)
        }
        kept.presentationTime = MediaTime(value: frames, timescale: rate)
        kept.duration = MediaTime(value: Int64(count - skip), timescale: rate)
        kept.decodeTime = nil
        frames += Int64(count - skip)
        end = MediaTime(value: frames, timescale: rate)
        out.append(kept)
        return out
    }

    /// Silence from where the sound ends to `limit`, in buffers of at most a tenth of a second.
    private mutating func silence(until limit: MediaTime) -> [SampleBuffer] {
        guard case .pcm(let f)? = format, f.sampleRate > 0 else { return [] }
        let rate = Int32(clamping: f.sampleRate)
        let target = limit.converted(to: rate).value
        var out: [SampleBuffer] = []
        while frames < target {
            let n = Int(min(target - frames, Int64(max(1, f.sampleRate / 10))))
            out.append(SampleBuffer(format: format, byteCount: n * f.bytesPerFrame, presentationTime: MediaTime(value: frames, timescale: rate),
                                    duration: MediaTime(value: Int64(n), timescale: rate)))
            frames += Int64(n)
        }
        end = MediaTime(value: frames, timescale: rate)
        return out
    }
}
