import GraphKitCore
import GraphKitRuntime
import MediaContainers
import Nodes

/// The end of an ``AssetWriter``'s graph in segment mode (not a node of graphs: the writer's own
/// registry has it): the encoders' output, taken as `sink.hls` takes it, cut into an
/// initialization segment and media segments by the same ``HLSStream`` and handed to the
/// writer's ``SegmentDelivery``; it writes no file.
final class SegmentSinkNode: ElementNode, Sendable {
    static let descriptor = NodeDescriptor(
        type: "writer.segments",
        category: .sink,
        summary: "an AssetWriter's segments (fragmented MP4), handed to its delegate",
        inputs: [
            PortDescriptor("audio", .aac, presence: .optional, help: "AAC audio"),
            PortDescriptor("video", .h264, presence: .optional, help: "H.264 video; segments start on its key frames"),
        ],
        parameters: [],
        requiresAnInput: true,
        example: #"{ "type": "writer.segments" }"#
    )

    /// What the writer sets before the run starts.
    struct Configuration: Sendable {
        /// Seconds each segment aims at; infinite: only where flushSegment() asks.
        var interval: Double
        /// Added to every time written (``AssetWriter/initialSegmentStartTime``).
        var offset: MediaTime
        var delivery: SegmentDelivery
    }

    let context: NodeContext
    /// The ports in track order: the video first (it leads the cuts), then the audio.
    let ports: [String]

    private struct State {
        var configuration: Configuration?
        var stream: HLSStream?
        var failure: GraphError?
        /// Key frames asked of the video's encoder: at the cuts up to `count × interval`; whether
        /// it took the first request (nil: none sent yet).
        var requested = 0
        var requestsTaken: Bool?
    }
    private let state = Guarded(State())

    init(context: NodeContext) throws(GraphError) {
        self.context = context
        ports = ["video", "audio"].filter { context.connectedInputs.contains($0) }
    }

    func configure(_ configuration: Configuration) {
        state.withLock {
            $0.configuration = configuration
            var stream = HLSStream(trackCount: ports.count, target: configuration.interval)
            // The cuts on a grid from the session's start (at the offset on the segments' clock),
            // where the video's encoder is asked for key frames.
            stream.origin = configuration.offset.seconds
            stream.keyFrameSetting = "preferredOutputSegmentInterval"
            $0.stream = stream
        }
    }

    /// Ends the segment being gathered at the first key frame shown after `time` (seconds on the
    /// segments' clock, before the offset).
    func flush(after time: Double) {
        state.withLock { s in
            let offset = s.configuration?.offset.seconds ?? 0
            s.stream?.flush(after: time + offset)
        }
    }

    func build(in bin: BinBuilder) throws(GraphError) {
        for (t, port) in ports.enumerated() {
            let sink = try bin.make("fakesink", ["sync": false])
            try bin.expose(input: port, sink)
            sink.onEncodedSamples { [self] event in receive(event, port: port, track: t, sink: sink) }
        }
    }

    private func receive(_ event: Element.EncodedSampleEvent, port: String, track t: Int, sink: Element) {
        var seen: Double?
        let (failed, delivery): (GraphError?, SegmentDelivery?) = state.withLock { s in
            guard s.failure == nil, s.stream != nil, let configuration = s.configuration else { return (nil, nil) }
            do throws(GraphError) {
                let outputs: [HLSStream.Output]
                switch event {
                case .format(let format, let codecData, _):
                    guard let f = MP4TrackFormat(format, codecData: codecData) else {
                        throw GraphError(.runFailed, at: "AssetWriter's \(port) input",
                                         "its encoder's stream (\(format.map { "\($0)" } ?? "an unknown format")) does not say its size, rate or codec configuration")
                    }
                    outputs = try packaged(port, &s) { (stream) throws(ContainerError) in try stream.setFormat(f, track: t) }
                    if f.isVideo { seen = 0 }
                case .sample(let buffer, let pts, let dts):
                    guard let format = s.stream!.formats[t],
                          var sample = HLSSegmenter.Sample(buffer, pts: pts, dts: dts, format: format) else { return (nil, nil) }
                    if format.isVideo { seen = Double(sample.presentationTime) / Double(format.timescale) }
                    let shift = Int64((configuration.offset.seconds * Double(format.timescale)).rounded())
                    sample.decodeTime += shift
                    sample.presentationTime += shift
                    outputs = try packaged(port, &s) { (stream) throws(ContainerError) in try stream.add(sample, track: t) }
                case .end:
                    outputs = s.stream!.end(track: t)
                case .flush:
                    outputs = []  // a writer's segments are not sought
                }
                configuration.delivery.enqueue(outputs.map(Self.segment))
                return (nil, configuration.delivery)
            } catch {
                s.failure = error
                return (error, nil)
            }
        }
        if let failed {
            sink.postError(failed.message)
            return
        }
        if let seen { requestKeyFrames(seen: seen, sink: sink) }
        // Backpressure, with no lock held: the taker is slower than the encoders.
        delivery?.waitForRoom()
    }

    /// Asks the video's encoder for a key frame at each cut (every interval from the session's
    /// start) up to a minute past the latest frame seen, as sink.hls does: requests far ahead
    /// reach the encoder before the frames they are for, whatever the queue into this sink holds
    /// (up to ``AssetWriter/intoTheMuxer``). Where nothing takes the first request (samples
    /// appended as they are, PassthroughSettings), no more are sent, and the stream refuses key
    /// frames farther apart than the interval.
    private func requestKeyFrames(seen: Double, sink: Element) {
        let times: [Double] = state.withLock { s in
            guard s.requestsTaken != false, let interval = s.configuration?.interval, interval.isFinite else { return [] }
            var times: [Double] = []
            while Double(s.requested + 1) * interval <= seen + max(60, 3 * interval) {
                s.requested += 1
                times.append(Double(s.requested) * interval)
            }
            return times
        }
        guard let first = times.first else { return }
        let taken = sink.requestKeyFrame(at: MediaTime(seconds: first))
        for time in times.dropFirst() where taken { sink.requestKeyFrame(at: MediaTime(seconds: time)) }
        state.withLock { s in
            guard s.requestsTaken == nil else { return }
            s.requestsTaken = taken
            if !taken { s.stream?.limitsKeyFrameDistance = true }
        }
    }

    private func packaged(_ port: String, _ s: inout State,
                          _ body: (inout HLSStream) throws(ContainerError) -> [HLSStream.Output]) throws(GraphError) -> [HLSStream.Output] {
        do throws(ContainerError) {
            return try body(&s.stream!)
        } catch {
            guard s.stream?.refusedSparseKeyFrames == true else { throw GraphError(.runFailed, at: "AssetWriter's \(port) input", error.reason) }
            throw GraphError(.runFailed, at: "AssetWriter.preferredOutputSegmentInterval", "the \(port) input's " + error.reason)
        }
    }

    static func segment(_ output: HLSStream.Output) -> AssetWriter.Segment {
        switch output {
        case .initialization(let bytes): AssetWriter.Segment(initialization: bytes)
        case .segment(let segment): AssetWriter.Segment(segment)
        }
    }

    func finish(_ outcome: RunStatus) throws(GraphError) {
        let delivery = state.withLock { $0.configuration?.delivery }
        guard let delivery else { return }
        switch outcome {
        case .completed, .stopped:
            let finished: Result<[HLSStream.Output]?, GraphError> = state.withLock { s in
                guard s.failure == nil, s.stream != nil else { return .success([]) }
                do throws(GraphError) {
                    return .success(s.stream!.isStarted ? try packaged(ports.first ?? "video", &s) { (stream) throws(ContainerError) in try stream.finish() ?? [] } : nil)
                } catch {
                    s.failure = error
                    return .failure(error)
                }
            }
            if case .failure(let error) = finished {
                delivery.close(because: error)
                throw error
            }
            guard case .success(let last?) = finished else {
                let error = GraphError(.runFailed, at: "AssetWriter", "writing ended before any media reached the segments: append samples to every input")
                delivery.close(because: error)
                throw error
            }
            delivery.enqueue(last.map(Self.segment))
            delivery.finishProducing()
        case .failed:
            delivery.close(because: state.withLock { $0.failure } ?? GraphError(.runFailed, at: "AssetWriter", "writing failed"))
        case .cancelled:
            delivery.close(because: GraphError(.cancelled, at: "AssetWriter", "writing was cancelled"))
        }
    }
}
