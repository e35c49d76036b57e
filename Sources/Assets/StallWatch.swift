import GraphKitCore

/// The writer's rule for an append that nothing can unblock: a value with no clock and no
/// threads, whose transitions take the instant as an argument and return what to do. The
/// ``AssetWriter`` keeps one in its state and performs the actions: it sets an alarm on its
/// clock, and when the rule says so, fails writing with the rule's error.
///
/// The muxer interleaves by time, so one input can run ahead of another by only so much
/// (``AssetWriter/intoTheMuxer``). An append that has waited ``bound`` while another input, at
/// least ``lead`` behind it, got nothing for as long (no append, no `markAsFinished()`, no
/// request block) is a stall: appending all of one track before the other from one loop would
/// otherwise wait for ever.
struct StallWatch: Sendable {
    typealias Instant = ContinuousClock.Instant

    /// How long an append waits, with another input idle for as long, before the writer says
    /// it cannot go on. A producer that feeds an input at all, however slowly (a live source,
    /// a slow decoder, a loop that appends each track in turn), does so far more often; a
    /// pause this long while the other input is stuck is a stall, or close enough to one.
    static let bound = Duration.seconds(10)
    /// How far ahead (media seconds) the waiting input must be of the idle one: the muxer holds
    /// 10 s (``AssetWriter/intoTheMuxer``) before it makes an input wait, so an input that waits
    /// for an idle one is about that far ahead; one that waits for its own slow encoder need not be.
    static let lead = MediaTime(value: 5, timescale: 1)

    /// What happened on an input.
    enum Event: Equatable, Sendable {
        /// An append call began.
        case appendBegins
        /// An append found the input full and waits for room.
        case appendWaits
        /// An append call returned; `reached` is how far appends have got on the source clock
        /// (the end of the audio, the frame's time), when the sample went in.
        case appendEnds(reached: MediaTime?)
        /// A request block was registered: the app feeds the input from its own queue.
        case requested
        /// `markAsFinished()`: no more samples.
        case finished
    }

    enum Action: Equatable, Sendable {
        case none
        /// Call ``alarm(_:at:)`` with `token` at `deadline`.
        case arm(at: Instant, token: UInt64)
    }

    enum Verdict: Sendable {
        case none
        case arm(at: Instant, token: UInt64)
        /// An append waits for an input nobody feeds: fail writing with this.
        case stall(GraphError)
    }

    private struct Input {
        let name: String
        var finished = false
        var appends = 0
        /// Since when an append in progress has waited for room (nil: none waits).
        var waitingSince: Instant?
        var lastActivity: Instant
        var requested = false
        var reached: MediaTime?
    }

    private var inputs: [Input] = []
    /// The alarm set and not yet rung, by its deadline and token.
    private var armed: (at: Instant, token: UInt64)?
    private var nextToken: UInt64 = 0

    /// A watch over inputs named `names` (for the message), all idle since `start`.
    init(inputs names: [String], since begin: Instant) {
        for name in names { add(name) }
        start(at: begin)
    }

    init() {}

    /// An input joins, named `name` for the message: the next index.
    mutating func add(_ name: String) {
        inputs.append(Input(name: name, lastActivity: .now))
    }

    /// Writing starts at `now`: every input is idle since then. What was noted before (a request
    /// block registered, an input finished before writing) stays.
    mutating func start(at now: Instant) {
        for i in inputs.indices { inputs[i].lastActivity = now }
        armed = nil
    }

    /// Something happened on input `index` at `now`; the session starts at `session` (what an
    /// input that has nothing yet has reached). Arms an alarm when a stall has become possible
    /// sooner than the one set.
    mutating func note(_ event: Event, input index: Int, at now: Instant, session: MediaTime) -> Action {
        var input = inputs[index]
        input.lastActivity = now
        switch event {
        case .appendBegins:
            input.appends += 1
        case .appendWaits:
            if input.waitingSince == nil { input.waitingSince = now }
        case .appendEnds(let reached):
            input.appends = max(0, input.appends - 1)
            if input.appends == 0 { input.waitingSince = nil }
            if let reached { input.reached = reached }
        case .requested:
            input.requested = true
        case .finished:
            input.finished = true
        }
        inputs[index] = input
        guard let next = nextStall(session: session)?.at else { return .none }
        if let armed, armed.at <= next { return .none }
        return arm(at: next)
    }

    /// The alarm `token` rang at `now`: the stall, if one has come, or when to look again.
    /// A stale alarm (another was set since) does nothing. `ready` holds the inputs that have
    /// room now: an append waiting on one of those waits for its thread (a busy machine's task
    /// pool), not for room, and its wait starts again from `now`.
    mutating func alarm(_ token: UInt64, at now: Instant, session: MediaTime, ready: Set<Int> = []) -> Verdict {
        guard let armed, armed.token == token else { return .none }
        self.armed = nil
        for i in ready where inputs.indices.contains(i) && inputs[i].waitingSince != nil { inputs[i].waitingSince = now }
        guard let next = nextStall(session: session) else { return .none }
        guard next.at <= now else {
            guard case .arm(let at, let token) = arm(at: next.at) else { return .none }
            return .arm(at: at, token: token)
        }
        return .stall(Self.error(waiting: inputs[next.waiting], idle: inputs[next.idle], session: session))
    }

    private mutating func arm(at deadline: Instant) -> Action {
        nextToken &+= 1
        armed = (deadline, nextToken)
        return .arm(at: deadline, token: nextToken)
    }

    /// The soonest a stall can come if nothing else happens: an append waiting on an input at
    /// least ``lead`` behind it that is not finished, not appending and fed by no request block.
    private func nextStall(session: MediaTime) -> (at: Instant, waiting: Int, idle: Int)? {
        var soonest: (at: Instant, waiting: Int, idle: Int)?
        for (w, waiting) in inputs.enumerated() {
            guard let since = waiting.waitingSince else { continue }
            let ahead = waiting.reached ?? session
            for (i, idle) in inputs.enumerated() where i != w {
                guard !idle.finished, idle.appends == 0, !idle.requested,
                      ahead - (idle.reached ?? session) >= Self.lead else { continue }
                let at = max(since, idle.lastActivity) + Self.bound
                if soonest == nil || at < soonest!.at { soonest = (at, w, i) }
            }
        }
        return soonest
    }

    private static func error(waiting: Input, idle: Input, session: MediaTime) -> GraphError {
        let w = waiting.name, i = idle.name
        let ahead = waiting.reached ?? session, behind = idle.reached ?? session
        let idleAt = idle.reached == nil ? "has no samples" : "is at \(seconds(behind))"
        let bound = bound.components.seconds
        return GraphError(.usage, at: w,
            "an append to the \(w) waited \(bound) s for room that only the \(i) can make: the file interleaves "
            + "its tracks, the \(w) is at \(seconds(ahead)) and the \(i) \(idleAt), and nothing was appended to the \(i) "
            + "meanwhile (appending all of one track before the other from one loop waits for ever). Interleave the appends "
            + "(each track up to about the same time), append to each input from its own task or with "
            + "requestMediaDataWhenReady(on:using:), or call markAsFinished() on the \(i) if it has no more samples")
    }

    private static func seconds(_ t: MediaTime) -> String {
        "\((t.seconds * 10).rounded() / 10) s"
    }
}
