import GraphKitCore
import GraphKitRuntime
import MediaContainers

// sink.hls's samples: from its inputs' streaming threads (a pipeline), or from the run's thread
// on the container path.

extension HLSSinkNode {
    // MARK: Streaming threads

    func receive(_ event: Element.EncodedSampleEvent, port: String, into targets: [(rendition: Int, track: Int)], sink: Element,
                 fail: @Sendable (GraphError, Element) -> Void) {
        var seen: Double?
        let failed: GraphError? = state.withLock { s in
            guard s.failure == nil, s.status == .writing else { return nil }
            do throws(GraphError) {
                switch event {
                case .format(let format, let codecData, _):
                    if let codec = DemuxNode.Codec(format), codec != (port == "audio" ? .aac : .h264) {
                        // A stream passed as it is (demux's): its codec named, with the way out.
                        throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)",
                                         "its \(port) input is \(codec.rawValue), and sink.hls takes \(port == "audio" ? "AAC" : "H.264"): encode it (\(port == "audio" ? "encode.aac" : "encode.h264")) first",
                                         node: context.id)
                    }
                    guard let f = MP4TrackFormat(format, codecData: codecData) else {
                        throw GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)",
                                         "its \(port) input's stream (\(format.map { "\($0)" } ?? "an unknown format")) does not say its size, rate or codec configuration",
                                         node: context.id)
                    }
                    try setFormat(f, port: port, into: targets, &s)
                    if f.isVideo { seen = 0 }
                case .sample(let buffer, let pts, let dts):
                    seen = try add(buffer, pts: pts, dts: dts, port: port, into: targets, &s)
                case .end:
                    for (r, t) in targets { try write(s.renditions[r].stream.end(track: t), rendition: r, &s) }
                case .flush:
                    break  // a stream packaged as it is encoded is not sought
                }
            } catch {
                s.failure = error
                return error
            }
            return nil
        }
        if let failed {
            fail(failed, sink)  // its own words and code: 73 for a segment that cannot be written
            return
        }
        if let seen { requestKeyFrames(port: port, into: targets, seen: seen, sink: sink) }
    }

    /// Input `port`'s format, for each rendition it goes into.
    func setFormat(_ f: MP4TrackFormat, port: String, into targets: [(rendition: Int, track: Int)], _ s: inout State) throws(GraphError) {
        for (r, t) in targets {
            let outputs: [HLSStream.Output]
            do throws(ContainerError) { outputs = try s.renditions[r].stream.setFormat(f, track: t) } catch { throw failure(error, port: port, rendition: r, s) }
            try write(outputs, rendition: r, &s)
        }
    }

    /// One sample of input `port` into each rendition it goes into, and the segments it completes
    /// written; the video's presentation time in seconds (what key frames are asked up to).
    func add(_ buffer: SampleBuffer, pts: MediaTime?, dts: MediaTime?, port: String, into targets: [(rendition: Int, track: Int)],
             _ s: inout State) throws(GraphError) -> Double? {
        var seen: Double?
        // One copy of the sample's bytes for every rendition it goes to (the audio goes to each
        // rung of a ladder): the renditions' samples share it.
        let data = buffer.bytes
        for (k, (r, t)) in targets.enumerated() {
            // Caps come before buffers: a sample's own track's format is known.
            guard let format = s.renditions[r].stream.formats[t],
                  let sample = HLSSegmenter.Sample(buffer, data: data, pts: pts, dts: dts, format: format) else { continue }
            if port == "audio", k == 0 {
                let end = sample.presentationTime + sample.duration
                s.audioSpan = (s.audioSpan?.start ?? sample.presentationTime, max(s.audioSpan?.end ?? end, end))
            }
            if format.isVideo, k == 0 { seen = Double(sample.presentationTime) / Double(format.timescale) }
            let outputs: [HLSStream.Output]
            do throws(ContainerError) { outputs = try s.renditions[r].stream.add(sample, track: t) } catch { throw failure(error, port: port, rendition: r, s) }
            try write(outputs, rendition: r, &s)
        }
        return seen
    }

    /// Asks the video's encoder for a key frame at every cut from the run's start (each multiple
    /// of the segment duration, the grid every rendition cuts on) up to a minute past the latest
    /// frame seen: an encoder keeps each request until a frame reaches its time, so requests far
    /// ahead reach it before the frames they are for, whatever it and the queues before this sink
    /// hold. Where nothing takes the first request (packets passed as they are), no more are
    /// sent, and the stream refuses key frames farther apart than a segment.
    func requestKeyFrames(port: String, into targets: [(rendition: Int, track: Int)], seen: Double, sink: Element) {
        let horizon = max(60, 3 * target)
        let times: [Double] = state.withLock { s in
            var asked = s.keyFrames[port] ?? KeyFrameRequests()
            guard asked.taken != false else { return [] }
            var times: [Double] = []
            while Double(asked.count + 1) * target <= seen + horizon {
                asked.count += 1
                times.append(Double(asked.count) * target)
            }
            s.keyFrames[port] = asked
            return times
        }
        guard let first = times.first else { return }
        // Outside the lock: the request travels upstream through the queues to the encoder.
        let taken = sink.requestKeyFrame(at: MediaTime(seconds: first))
        for time in times.dropFirst() where taken { sink.requestKeyFrame(at: MediaTime(seconds: time)) }
        state.withLock { s in
            guard s.keyFrames[port]?.taken == nil else { return }
            s.keyFrames[port]?.taken = taken
            if !taken { for (r, _) in targets { s.renditions[r].stream.limitsKeyFrameDistance = true } }
        }
    }

    /// Rendition `r`'s stream's error as the node's, naming the input (and the segment
    /// duration, when the key frames are too far apart for it).
    func failure(_ error: ContainerError, port: String, rendition r: Int, _ s: State) -> GraphError {
        guard s.renditions[r].stream.refusedSparseKeyFrames else {
            return GraphError(.runFailed, at: "node \"\(context.id)\" (sink.hls)", "its \(port) input: \(error.reason)", node: context.id)
        }
        return GraphError(.runFailed, at: context.location(parameter: "segmentDuration"), "its \(port) input's \(error.reason)", node: context.id)
    }
}

// MARK: The container path (the run's thread)

/// `source.file → demux → sink.hls` with an MP4 or MOV of H.264 and AAC packages it with no
/// pipeline, as `graphctl hls` does: the samples as stored, in decode order, through the same
/// segmenter; the sound's edit (its priming) written into the initialization segment as an
/// encoder's measured delay is. Nothing asks for key frames: segments cut at the video's own,
/// and key frames farther apart than a segment are refused, as for packets passed through a
/// pipeline.
extension HLSSinkNode: StoredSampleSink {
    package func takesStored(_ inputs: [String: MP4TrackFormat]) -> Bool {
        inputs.allSatisfy { port, format in
            switch format.codec {
            case .h264: port != "audio"
            case .aac: port == "audio"
            default: false
            }
        }
    }

    package func configureStored(_ inputs: [String: MP4TrackFormat]) throws(GraphError) {
        let targets = Dictionary(uniqueKeysWithValues: inputs.keys.map { ($0, destinations(of: $0)) })
        state.withLock { s in
            s.storedFormats = inputs
            s.storedTargets = targets
            s.audioDelay = inputs["audio"]?.encoderDelay
            for r in s.renditions.indices { s.renditions[r].stream.limitsKeyFrameDistance = true }
        }
    }

    package func writeStored(_ sample: SampleBuffer, port: String) throws(GraphError) -> Bool {
        try whileWriting { s throws(GraphError) in
            _ = try add(sample, pts: sample.presentationTime, dts: sample.decodeTime, port: port, into: s.storedTargets[port] ?? [], &s)
        }
        return true
    }

    package func endStored(port: String) throws(GraphError) {
        try whileWriting { s throws(GraphError) in
            for (r, t) in s.storedTargets[port] ?? [] { try write(s.renditions[r].stream.end(track: t), rendition: r, &s) }
        }
    }

    /// `body` under the lock, once every input's format is set, unless the node has failed or
    /// is not writing; what it throws is the node's failure.
    private func whileWriting(_ body: (inout State) throws(GraphError) -> Void) throws(GraphError) {
        let failed: GraphError? = state.withLock { s in
            guard s.failure == nil, s.status == .writing else { return nil }
            do throws(GraphError) {
                try setStoredFormats(&s)
                try body(&s)
            } catch {
                s.failure = error
                return error
            }
            return nil
        }
        if let failed { throw failed }
    }

    /// Every input's format, before the first sample or end (once the files are prepared), as
    /// caps come before buffers. The sound's priming goes into the initialization segment at the
    /// end, as an encoder's measured delay does.
    private func setStoredFormats(_ s: inout State) throws(GraphError) {
        guard !s.storedFormats.isEmpty else { return }
        let formats = s.storedFormats
        s.storedFormats = [:]
        for (port, format) in formats.sorted(by: { $0.key > $1.key }) {
            var f = format
            f.gapless = nil
            try setFormat(f, port: port, into: s.storedTargets[port] ?? [], &s)
        }
    }
}
