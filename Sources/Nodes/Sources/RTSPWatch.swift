import GraphKitCore
import GraphKitRuntime

/// `source.rtsp`'s watch over its server (``ConnectionWatchdog``, every 20 ms): the budget before
/// PLAY (time and bytes, with the connection cut when it is spent), the timeout for the first
/// packet and between packets, and with `reconnect` the camera's going away and coming back.
extension RTSPSourceNode {
    public func prepare() throws(GraphError) {
        // Every 20 ms: what a server sends before PLAY is counted as it comes (a GB a second on
        // loopback), a socket's count and a clock read a look.
        watchdog.start("rtsp watch", state: (), every: 0.02) { [weak self] parts, _ in self?.keepWatching(parts) ?? false }
    }

    /// One step of the watch: fails the run when nothing came within `timeout` of asking the
    /// server to play, ends the stream when nothing has come for `timeout` since the last
    /// packet. False once there is nothing more to watch.
    func keepWatching(_ parts: ConnectionWatchdog.Parts) -> Bool {
        enum Step { case wait, fail, failBeforePlay, failBeforePlayBySize, end }
        let timeout = Double(context.parameters[Self.timeout])
        if context.parameters[Self.reconnect] > 0, watch.withLock({ $0.lastArrival != nil }) { return keepReconnecting(parts) }
        var waitingFor = ""
        // What the server sent before PLAY, by the kernel's count (rtspsrc reads a reply's
        // body into memory whatever its Content-Length claims: 3.9 GB in 13 s).
        let repliesBeforePlay = watch.withLock { $0.playing == nil }
            ? PeerSockets.bytesReceived(sessionSockets(), port: serverPort) : 0
        let step: Step = watch.withLock { w in
            let now = ContinuousClock.now
            guard let playing = w.playing else {
                // Before PLAY, the whole exchange is timed from the first request: rtspsrc's own
                // timeouts cover each read, and a server answering a header line a second (or
                // headers without end) kept a run for ever.
                waitingFor = w.lastRequest
                if repliesBeforePlay > Self.mostBeforePlay { return .failBeforePlayBySize }
                guard let asked = w.asked, (now - asked).inSeconds >= timeout else { return .wait }
                return .failBeforePlay
            }
            guard let last = w.lastArrival else { return (now - playing).inSeconds >= timeout ? .fail : .wait }
            let silence = (now - last).inSeconds
            guard silence >= timeout else { return .wait }
            w.gaps.append(StreamGap(start: (last - (w.firstArrival ?? last)).inSeconds, seconds: silence, resumed: false))
            return .end
        }
        switch step {
        case .wait:
            return true
        case .fail:
            parts.fail(GraphError(.runFailed, at: context.location(parameter: "url"),
                                  "the RTSP server \"\(endpoint.shown)\" was asked to play the stream but sent nothing within \(Int(timeout)) s"), parts.element)
            return false
        case .failBeforePlayBySize:
            parts.fail(GraphError(.runFailed, at: context.location(parameter: "url"),
                                  "the RTSP server \"\(endpoint.shown)\" sent more than \(Self.mostBeforePlay >> 20) MiB before it agreed to play "
                                  + "the stream (the last request: \(waitingFor)): a server's replies before PLAY are a few kilobytes"), parts.element)
            cutConnection()
            return false
        case .failBeforePlay:
            parts.fail(GraphError(.runFailed, at: context.location(parameter: "url"),
                                  "the RTSP server \"\(endpoint.shown)\" did not answer within \(Int(timeout)) s: it had not agreed to play the stream "
                                  + "\(Int(timeout)) s after the first request (the last sent: \(waitingFor))"), parts.element)
            // rtspsrc may be inside a read it does not leave (a header line a second): its
            // connection is cut, so that the run's end does not wait on it.
            cutConnection()
            return false
        case .end:
            for output in outputFilters.withLock({ $0 }) { output.endStream() }
            return false
        }
    }

    /// One step of the watch once the stream began, with `reconnect`: the camera gone (its end of
    /// stream held, an error, or nothing for `timeout`), a new session a second after each that failed while none
    /// sends, up to `reconnect` seconds; then the gap, resumed or not.
    func keepReconnecting(_ parts: ConnectionWatchdog.Parts) -> Bool {
        enum Step { case wait, replace, giveUp, stop }
        let timeout = Double(context.parameters[Self.timeout]), limit = Double(context.parameters[Self.reconnect])
        let guards = Array(targets.withLock { $0 }.values)
        let ended = guards.contains { $0.property("eos-held") == "true" }
        let step: Step = watch.withLock { w in
            let now = ContinuousClock.now
            guard !w.stopping, let last = w.lastArrival else { return .stop }
            guard let lost = w.lost else {
                guard ended || w.failed || (now - last).inSeconds >= timeout else { return .wait }
                (w.lost, w.attempt, w.failed) = (last, nil, false)
                return .wait
            }
            if let attempt = w.attempt, last > attempt {
                w.noteGap(from: lost, to: last, resumed: true)
                (w.lost, w.attempt, w.failed) = (nil, nil, false)
                return .wait
            }
            if (now - lost).inSeconds >= limit {
                w.noteGap(from: lost, to: now, resumed: false)
                return .giveUp
            }
            let since = w.attempt ?? lost
            guard w.attempt == nil || w.failed || (now - since).inSeconds >= timeout, (now - since).inSeconds >= 1 else { return .wait }
            (w.attempt, w.failed) = (now, false)
            return .replace
        }
        switch step {
        case .wait:
            return true
        case .stop:
            return false
        case .giveUp:
            endSession()
            endHeldStreams(guards)
            return false
        case .replace:
            guard let bin = builder.withLock({ $0 }) else { return false }
            let number = endSession()
            for g in guards { try? g.set("eos-held", false) }
            // The new session's video starts at a key frame (a camera joined mid-group would start on one it cannot decode).
            try? targets.withLock { $0["video"] }?.set("wait-for-keyframe", true)
            do throws(GraphError) { _ = try startSession(in: bin, number: number + 1) } catch {
                parts.fail(error, parts.element)
                return false
            }
            return true
        }
    }
}
