@_spi(Engine) import GraphKitCore
@_spi(Engine) import GraphKitRuntime
import MediaContainers

/// The writer session's transitions for its inputs: an ``AssetWriterInput`` added to a writer is
/// a handle (the writer and its slot), and each of its calls comes here, takes the session's one
/// lock once, and performs what the transition returned outside it (pushing into the graph,
/// handing a request block on, arming the stall rule's alarm). Nothing here calls back into the
/// input.
extension AssetWriter {
    /// What an append pushes, once admitted: the graph input, the samples to push now (none: a
    /// frame held, or before the session) and where the sample is in time order.
    struct Admitted {
        let media: MediaInput
        let push: [SampleBuffer]
        let stamp: AppendOrder.Stamp?
    }

    /// Whether input `slot` takes another sample now: writing, neither it nor the writer
    /// finishing, and its graph input ready.
    func isReady(_ slot: Int) -> Bool {
        let media = locked.withLock { l -> MediaInput? in
            l.refresh()
            guard l.state.takesSamples, l.inputs.indices.contains(slot), !l.inputs[slot].state.isFinished else { return nil }
            return l.inputs[slot].media
        }
        return media?.isReadyForMoreMediaData ?? false
    }

    /// requestMediaDataWhenReady(on:using:) on input `slot`: the block is handed to the graph input
    /// now, or once writing and the session have started.
    func request(_ slot: Int, _ request: WriterInputState.Request) {
        let (handOn, media, action) = locked.withLock { l -> (WriterInputState.Request?, MediaInput?, StallWatch.Action) in
            guard l.inputs.indices.contains(slot) else { return (nil, nil, .none) }
            let handOn = l.inputs[slot].state.requestRegistered(request)
            return (handOn, l.inputs[slot].media, l.state.note(.requested, input: slot, at: clock.now))
        }
        perform(action)
        if let handOn, let media { media.requestMediaDataWhenReady(on: handOn.queue, using: handOn.block) }
    }

    /// An append on input `slot` begins (the session's first acquisition of it): the writer's
    /// admission (writing, a session), the sample's checks and its shaping into what the file
    /// takes. Throws, saying why, when the sample cannot go in; the stall rule counts the append
    /// as begun and, if it throws after that, as ended.
    func admit(_ buffer: SampleBuffer, to slot: Int) throws(GraphError) -> Admitted {
        let (result, actions) = locked.withLock { l -> (Result<Admitted, GraphError>, [StallWatch.Action]) in
            l.refresh()
            guard l.inputs.indices.contains(slot) else {
                return (.failure(GraphError(.usage, at: "AssetWriter", "this input is not one of this writer's")), [])
            }
            let session: MediaTime
            do throws(GraphError) {
                session = try l.state.admission(for: l.inputs[slot].input.name)
            } catch {
                return (.failure(error), [])
            }
            let begins = l.state.note(.appendBegins, input: slot, at: clock.now)
            do throws(GraphError) {
                return (.success(try Self.shape(buffer, in: &l.inputs[slot], session: session, sourceClock: l.sourceClock, shownEarlierBy: l.clockOffset)), [begins])
            } catch {
                return (.failure(error), [begins, l.state.note(.appendEnds(reached: nil), input: slot, at: clock.now)])
            }
        }
        actions.forEach(perform)
        return try result.get()
    }

    /// An admitted append on input `slot` has to wait for the encoder.
    func appendWaits(_ slot: Int) {
        perform(locked.withLock { l in l.state.note(.appendWaits, input: slot, at: clock.now) })
    }

    /// An admitted append on input `slot` went in (the session's second acquisition of it).
    func appended(_ admitted: Admitted, to slot: Int) {
        let time = admitted.push.last?.presentationTime
        perform(locked.withLock { l in
            if writesSegments, let time, l.inputs.indices.contains(slot) {
                let name = l.inputs[slot].input.name
                if l.appended[name].map({ time > $0 }) ?? true { l.appended[name] = time }
            }
            return l.state.note(.appendEnds(reached: admitted.stamp?.reached), input: slot, at: clock.now)
        })
    }

    /// Pushing an admitted sample into input `slot`'s graph input threw: why writing ended, as the
    /// append should throw it, with the run to wait for first (nil while writing goes on, when
    /// the push's own error stands).
    func appendFailed(_ slot: Int) -> (reason: GraphError, run: GraphRun?)? {
        let (ended, action) = locked.withLock { l -> ((reason: GraphError, run: GraphRun?)?, StallWatch.Action) in
            l.refresh()
            let action = l.state.note(.appendEnds(reached: nil), input: slot, at: clock.now)
            guard l.inputs.indices.contains(slot) else { return (nil, action) }
            return (l.state.endedReason(for: l.inputs[slot].input.name).map { ($0, l.run) }, action)
        }
        perform(action)
        return ended
    }

    /// markAsFinished() on input `slot`: its stream ends (after the frame it held, if any); the
    /// last input's at finishWriting() (``Locked/heldEnd``).
    func finish(_ slot: Int) {
        let (finish, media, action) = locked.withLock { l -> ((endStream: Bool, lastFrame: SampleBuffer?)?, MediaInput?, StallWatch.Action) in
            guard l.inputs.indices.contains(slot), let finish = l.inputs[slot].state.markAsFinished() else { return (nil, nil, .none) }
            let action = l.state.note(.finished, input: slot, at: clock.now)
            if finish.endStream, let media = l.inputs[slot].media, l.inputs.allSatisfy({ $0.state.isFinished }) {
                l.heldEnd = (media, finish.lastFrame)
                return (nil, nil, action)
            }
            return (finish, l.inputs[slot].media, action)
        }
        perform(action)
        guard let finish, finish.endStream, let media else { return }
        if let frame = finish.lastFrame { try? media.appendAdmittedImmediately(frame) }
        media.markAsFinished()
    }

    /// Runs `body` on input `slot`'s place in the session (its settings, once added).
    func withSlot<T: Sendable>(_ slot: Int, _ body: @Sendable (inout InputSlot) -> T) -> T? {
        locked.withLock { l in l.inputs.indices.contains(slot) ? body(&l.inputs[slot]) : nil }
    }

    // MARK: A failure reported from above

    /// Fails writing with `error`, as a layer above reports it (Apple's names fail the writer
    /// where AVFoundation raises an exception); `reported` is that layer's own form of it, given
    /// back by ``reportedFailure``. The first failure stays. A writer that was writing is
    /// abandoned: its inputs close, and its run is cancelled and waited for, so that nothing is
    /// left under the output's name.
    package func fail(because error: GraphError, reporting reported: any Error & Sendable) {
        let (fails, run, closing, delivery) = locked.withLock { l -> (Bool, GraphRun?, [Closing], SegmentDelivery?) in
            l.refresh()
            if l.reported == nil, l.state.status != .failed, l.state.status != .cancelled { l.reported = reported }
            guard l.state.failByCaller(error) else { return (false, nil, [], nil) }
            return (true, l.run, l.closeInputs(), l.segments.delivery)
        }
        guard fails else { return }
        delivery?.close(because: error)
        for c in closing { c.media.close(because: error) }
        run?.cancel()
        _ = run?.wait()
    }

    /// The first failure a layer above reported (``fail(because:reporting:)``), as it made it.
    package var reportedFailure: (any Error & Sendable)? {
        locked.withLock { $0.reported }
    }

    #if DEBUG
    /// How many times the session's lock has been taken (debug builds): the writer's budget is
    /// two per appended sample on the steady path.
    package var lockAcquisitions: Int { locked.acquisitions }
    #endif

    // MARK: Shaping a sample

    /// Whether passthrough samples keep their own times, the session's start written as each
    /// track's edit (``MP4SinkNode/startPresentation(at:onInput:)``), as AVFoundation writes
    /// them: what comes before the session (the key frame a later picture needs, the packet
    /// the next one overlaps) stays in the file, edited out. A whole file's index is written
    /// at its end, so it can; a fragmented file or segments, written as they go, take samples
    /// on the session's clock (and none from before it). So does a writer that also encodes:
    /// the muxer interleaves its tracks by time, so they must share one clock. Decided as
    /// writing starts (``Locked/sourceClock``).
    func keepsSourceTimes(_ l: Locked) -> Bool {
        !writesSegments && l.fragmentInterval == nil && l.inputs.allSatisfy { $0.input.outputSettings is PassthroughSettings }
    }

    /// Checks `buffer` for the input in `slot` and returns what to push now (nothing: held, or
    /// before the session; the buffer on the session's clock; or the held first frame and this
    /// one), with where it is in time order.
    /// Times in errors are said `offset` earlier than the samples' stamps (``AssetWriter/clockOffset``).
    private static func shape(_ buffer: SampleBuffer, in slot: inout InputSlot, session: MediaTime, sourceClock: Bool,
                              shownEarlierBy offset: MediaTime) throws(GraphError) -> Admitted {
        let name = slot.input.name, mediaType = slot.input.mediaType
        guard let format = buffer.format else {
            throw GraphError(.usage, at: name, "the sample has no format; give it one (.pcm for audio, .rawVideo for video)")
        }
        let passthrough = slot.input.outputSettings is PassthroughSettings
        switch (mediaType, format) {
        case (.audio, .aac) where passthrough, (.video, .h264) where passthrough: break
        case _ where passthrough:
            throw GraphError(.usage, at: name, "this input writes samples as they are: it takes \(mediaType == .audio ? "AAC" : "H.264") samples (as a reader's .stored output gives them); this one is \(format)")
        case (.audio, .pcm), (.video, .rawVideo): break
        case (.audio, _):
            throw GraphError(.usage, at: name, "an audio input takes PCM samples; this one is \(format)")
        case (.video, _):
            throw GraphError(.usage, at: name, "a video input takes raw frames; this one is \(format) (use AssetWriterInputPixelBufferAdaptor for pixel buffers)")
        }
        guard buffer.presentationTime != nil else {
            throw GraphError(.usage, at: name, "the sample has no presentation time; set presentationTime (or append through the adaptor, with a time)")
        }
        try slot.state.check(format)
        guard let media = slot.media else { throw GraphError(.usage, at: name, "call startWriting() before appending") }
        // The graph input's checks, and the time order of a track, on the times the app gave
        // (before anything is held or cut to the session).
        if passthrough {
            // Encoded samples go in decode order (B-frames' presentation times go back and
            // forth) and are written whole: at their own times, the session's start an edit
            // (``keepsSourceTimes(_:)``), or on the session's clock.
            // On the session's clock, a time before it cannot be held (a buffer's times are
            // unsigned): refused, saying why, rather than written at 0.
            let earliest = [buffer.presentationTime, buffer.decodeTime].compactMap { $0 }.min() ?? session
            guard sourceClock || earliest >= session else {
                throw GraphError(.usage, at: name, "this sample's time, \((earliest - offset).seconds) s, is before the session's start (\((session - offset).seconds) s): a fragmented file, segments or a writer with an encoding input beside this one take no passthrough sample before it (start the session at or before the first sample's decode time)")
            }
            guard let stamp = try media.admit(buffer, format: format, rule: .notEarlier, at: name, shownEarlierBy: offset) else { return Admitted(media: media, push: [buffer], stamp: nil) }
            var shaped = slot.state.shape(buffer, format, stamp: stamp, session: session)
            if session > .zero, !sourceClock {
                for i in shaped.indices {
                    shaped[i].presentationTime = shaped[i].presentationTime.map { $0 - session }
                    shaped[i].decodeTime = shaped[i].decodeTime.map { $0 - session }
                }
            }
            return Admitted(media: media, push: shaped, stamp: stamp)
        }
        guard let stamp = try media.admit(buffer, format: format, rule: .track, at: name, shownEarlierBy: offset) else { return Admitted(media: media, push: [buffer], stamp: nil) }
        return Admitted(media: media, push: slot.state.shape(buffer, format, stamp: stamp, session: session), stamp: stamp)
    }
}
