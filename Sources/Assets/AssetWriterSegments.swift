import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// A writer of segments (``AssetWriter/init(contentType:)``), as AVFoundation's writes HLS: the
/// encoders' output cut into a fragmented-MP4 initialization segment and media segments, each
/// media segment starting on a key frame of the video (every audio sample is one), cut at the
/// first key frame at or after each multiple of ``AssetWriter/preferredOutputSegmentInterval``
/// (or, with an indefinite interval, where ``AssetWriter/flushSegment()`` asks). No file is
/// written: the app gets each segment's bytes, type and report from its delegate or from
/// ``AssetWriter/segments``, and writes the segments and a playlist itself.
///
/// Segments start only on key frames, so no segment is shorter than the distance between two
/// of them: with an interval shorter than the video's key-frame interval, each segment runs to
/// the first key frame past the interval (its report says how long it is). Ask the encoder for
/// key frames at the interval (``VideoSettings/keyframeInterval``, in frames, at most the
/// interval times the frame rate) to get segments of the interval.
struct SegmentSettings: Sendable {
    var profile: FileTypeProfile?
    /// nil: 6 s (Apple's HLS authoring specification's target); `.positiveInfinity`: indefinite.
    var interval: MediaTime?
    var initialStart: MediaTime?
    weak var delegate: (any AssetWriterDelegate)?
    /// Made with a writer of segments.
    var delivery: SegmentDelivery?

    static let defaultInterval = MediaTime(value: 6, timescale: 1)

    /// A writer of segments is ready to start: it has a profile.
    func check() throws(GraphError) {
        guard profile != nil else {
            throw GraphError(.usage, at: "AssetWriter.outputFileTypeProfile",
                             "a writer made with init(contentType:) writes segments: set outputFileTypeProfile (.mpeg4AppleHLS or .mpeg4CMAFCompliant) before startWriting()")
        }
    }

    /// A writer of a file was given no segment settings.
    func checkUnused() throws(GraphError) {
        if profile != nil {
            throw GraphError(.usage, at: "AssetWriter.outputFileTypeProfile",
                             "segments are written by a writer made with init(contentType:), which writes no file; this one writes a file")
        }
    }
}

extension AssetWriter {
    /// The segments' form (`AVAssetWriter.outputFileTypeProfile`); nil writes a file. Set it
    /// before ``startWriting()``, on a writer made with ``init(contentType:)``.
    public var outputFileTypeProfile: FileTypeProfile? {
        get { locked.withLock { $0.segments.profile } }
        set { locked.withLock { $0.segments.profile = newValue } }
    }

    /// How long each segment aims to be (`preferredOutputSegmentInterval`): nil chooses 6 s;
    /// `.positiveInfinity` (AVFoundation's `.indefinite`) cuts only where ``flushSegment()``
    /// asks. Set it before ``startWriting()``; a time that is not positive fails
    /// `startWriting()`.
    public var preferredOutputSegmentInterval: MediaTime? {
        get { locked.withLock { $0.segments.interval } }
        set { locked.withLock { $0.segments.interval = newValue } }
    }

    /// Where the segments' clock starts (`initialSegmentStartTime`): the session's start is at
    /// this time in the segments (their `tfdt` decode times and the reports' times); nil: 0.
    public var initialSegmentStartTime: MediaTime? {
        get { locked.withLock { $0.segments.initialStart } }
        set { locked.withLock { $0.segments.initialStart = newValue } }
    }

    /// Receives each segment (held weakly, as AVFoundation's delegate). Set it before
    /// ``startWriting()``; without one, take the segments from ``segments``.
    public var delegate: (any AssetWriterDelegate)? {
        get { locked.withLock { $0.segments.delegate } }
        set { locked.withLock { $0.segments.delegate = newValue } }
    }

    /// The segments, in order, for a writer without a delegate: the initialization segment,
    /// then each media segment as it completes; the sequence ends after the last (once
    /// ``finishWriting()`` has finished the inputs) and throws the writer's error if writing
    /// fails or is cancelled. Iterate it in a task of its own while appending: a few segments
    /// are held for it, then the encoders wait for it (and so do the appends).
    public var segments: Segments { Segments(delivery: locked.withLock { $0.segments.delivery }) }

    public struct Segments: AsyncSequence, Sendable {
        public typealias Element = Segment
        let delivery: SegmentDelivery?

        public struct AsyncIterator: AsyncIteratorProtocol {
            let delivery: SegmentDelivery?
            /// The next segment; nil after the last. Throws a ``GraphError``.
            public mutating func next() async throws -> Segment? {
                guard let delivery else {
                    throw GraphError(.usage, at: "AssetWriter.segments", "this writer writes a file; a writer made with init(contentType:) gives segments")
                }
                return try await delivery.next()
            }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(delivery: delivery) }
    }

    /// Ends the segment being gathered (`flushSegment()`): it ends before the first key frame of
    /// the video (any sample of an audio-only writer) appended after this call, and is handed over
    /// once that sample reaches the segmenter (or at ``finishWriting()``). For a writer whose
    /// ``preferredOutputSegmentInterval`` is indefinite, as in AVFoundation; with another
    /// interval, or on a writer that is not writing segments, it throws `usage`.
    public func flushSegment() throws(GraphError) {
        let (run, lead) = try locked.withLock { l throws(GraphError) in
            guard writesSegments, l.segments.interval == .positiveInfinity else {
                throw GraphError(.usage, at: "AssetWriter.flushSegment()",
                                 "flushSegment() is for a writer of segments whose preferredOutputSegmentInterval is indefinite (.positiveInfinity); this one cuts by itself")
            }
            guard l.state.takesSamples, let run = l.run else {
                throw GraphError(.usage, at: "AssetWriter.flushSegment()", "flushSegment() is called while writing; this writer is \(l.state.status.rawValue)")
            }
            let lead = l.inputs.first { $0.input.mediaType == .video } ?? l.inputs.first
            return (run, lead.flatMap { l.appended[$0.input.name] })
        }
        (run.node(Self.segmentsNode) as? SegmentSinkNode)?.flush(after: lead?.seconds ?? -.infinity)
    }

    // MARK: Internals

    static let segmentsNode = "segments"

    /// The graph of a writer of segments: each input's source and encoder into the segment sink.
    func makeSegmentGraph(_ inputs: [InputSlot]) throws(GraphError) -> Graph {
        var b = GraphBuilder(name: "AssetWriter", description: "writes segments")
        let sink = b.add(Self.segmentsNode, SegmentSinkNode.self)
        for slot in inputs {
            let input = slot.input
            let source = b.add(input.nodeID, AppSourceNode.self) {
                $0[\.live] = slot.state.expectsMediaDataInRealTime
                if let passthrough = input.outputSettings as? PassthroughSettings {
                    $0[\.format] = passthrough.mediaType == .audio ? "audio/aac" : "video/h264"
                }
            }
            if let encoder = try WriterEncoders.add(for: input.outputSettings, id: "\(input.nodeID)-encoder", at: input.name, to: &b) {
                b.connect(source.output(), to: encoder.input)
                b.connect(encoder.output, to: sink.input(input.mediaType.rawValue), capacity: Self.intoTheMuxer)
            } else {
                b.connect(source.output(), to: sink.input(input.mediaType.rawValue), capacity: Self.intoTheMuxer)
            }
        }
        var registry = NodeRegistry.builtIn
        registry.register(SegmentSinkNode.self)
        return try b.build(registry: registry)
    }

    /// Before the run starts: the sink's interval, clock and delivery, and the delegate's thread.
    func startSegments(_ settings: SegmentSettings, in run: GraphRun) throws(GraphError) {
        let interval = settings.interval ?? SegmentSettings.defaultInterval
        guard interval == .positiveInfinity || (interval.isFinite && interval > .zero) else {
            throw GraphError(.usage, at: "AssetWriter.preferredOutputSegmentInterval",
                             "the segment interval must be a positive time or .positiveInfinity (indefinite: flushSegment() cuts), not \(interval)")
        }
        guard let delivery = settings.delivery, let sink = run.node(Self.segmentsNode) as? SegmentSinkNode else { return }
        sink.configure(.init(interval: interval == .positiveInfinity ? .infinity : interval.seconds,
                             offset: settings.initialStart ?? .zero, delivery: delivery))
        guard let held = settings.delegate else { return }
        delivery.startDelegateThread({ [weak self, weak held] segment in
            let delegate = held
            guard let self else { return }
            guard let delegate else {
                throw GraphError(.runFailed, at: "AssetWriter.delegate", "the delegate is gone (the writer holds it weakly): hold it until finishWriting() returns")
            }
            try delegate.assetWriter(self, didOutput: segment)
        }, failure: { error in
            (error as? GraphError) ?? GraphError(.runFailed, at: "AssetWriter.delegate", "the delegate failed: \(error)")
        }, failed: { [weak self] reason in self?.delegateFailed(reason) })
    }

    /// The delegate threw: writing fails with its error; the inputs close and the run is cancelled.
    private func delegateFailed(_ reason: GraphError) {
        let (fails, run, closing) = locked.withLock { l -> (Bool, GraphRun?, [Closing]) in
            guard l.state.fail(because: reason) else { return (false, nil, []) }
            return (true, l.run, l.closeInputs())
        }
        guard fails else { return }
        for c in closing { c.media.close(because: reason) }
        run?.cancel()
    }
}
