/// The rule by which a file sink's inputs wait for each other, as a muxer's pads wait for the
/// one that is behind: the one copy `sink.mp4` and `sink.mp4segments` keep (the first piece of
/// the one mux session, issue 71).
///
/// An input whose sample is more than ``lead`` seconds (decode time) ahead of the slowest other
/// input still running waits for it, at most ``wait`` seconds a sample: the file is interleaved
/// as it is written, the sound does not run ahead of the pictures in memory, and a length limit
/// or a cut comes near one time on every track. An input that has not given a sample yet is not
/// waited for (a camera can take seconds to give its first picture), nor one that ended. A wait
/// that runs out with the input still ahead is a stall: that input waits no more until the
/// others have caught up with it (one wait a stall, however slowly they move), so a stalled
/// camera does not stop the sound, and nothing waits for ever.
///
/// A value: the sink keeps it under its own lock, with the writer it guards.
package struct MuxInterleave: Sendable, Equatable {
    /// How far (seconds) an input may be ahead of the slowest other before it waits.
    package static let lead = 0.5
    /// The longest wait (seconds) for one sample.
    package static let wait = 0.5

    /// Each input's latest decode time (seconds); -infinity before its first sample.
    private var reached: [Double]
    private var ended: [Bool]
    /// Whether each input's last wait ran out with it still ahead.
    private var gaveUp: [Bool]

    package init(inputs: Int) {
        reached = Array(repeating: -.infinity, count: max(inputs, 0))
        ended = Array(repeating: false, count: max(inputs, 0))
        gaveUp = Array(repeating: false, count: max(inputs, 0))
    }

    /// The latest decode time of the input furthest behind among those other than `t` that
    /// have given a sample and have not ended; nil when there is none.
    package func slowest(besides t: Int) -> Double? {
        var slowest: Double?
        for i in reached.indices where i != t && !ended[i] && reached[i] > -.infinity {
            slowest = min(slowest ?? reached[i], reached[i])
        }
        return slowest
    }

    /// Whether input `t`'s sample at decode time `time` (seconds) should wait: it is more than
    /// ``lead`` ahead of the slowest other running input, and, unless `evenAfterAStall`, its
    /// last wait did not run out. False for an input this value does not know.
    package func isAhead(_ t: Int, _ time: Double, evenAfterAStall: Bool = false) -> Bool {
        guard gaveUp.indices.contains(t), evenAfterAStall || !gaveUp[t], time.isFinite,
              let slowest = slowest(besides: t) else { return false }
        return time > slowest + Self.lead
    }

    /// After input `t`'s wait for its sample at `time` (ended or run out): it has given up
    /// waiting while it is still ahead, and waits again once the others have caught up.
    package mutating func waited(_ t: Int, at time: Double) {
        guard gaveUp.indices.contains(t) else { return }
        gaveUp[t] = isAhead(t, time, evenAfterAStall: true)
    }

    /// Input `t` took a sample decoded at `time` (seconds).
    package mutating func reach(_ t: Int, _ time: Double) {
        guard reached.indices.contains(t), time.isFinite else { return }
        reached[t] = time
    }

    /// Input `t` ended: nothing waits for it any more.
    package mutating func end(_ t: Int) {
        guard ended.indices.contains(t) else { return }
        ended[t] = true
    }

    /// Input `t` was flushed (a seek): what it gave before is stale, and it starts again as an
    /// input that has given nothing.
    package mutating func restart(_ t: Int) {
        guard reached.indices.contains(t) else { return }
        (reached[t], ended[t], gaveUp[t]) = (-.infinity, false, false)
    }

    /// Whether every input other than `t` has reached `time` (seconds, within a microsecond),
    /// ended, or given nothing yet: what comes later from them cannot be earlier than `time`.
    package func othersReached(_ time: Double, besides t: Int) -> Bool {
        reached.indices.allSatisfy { $0 == t || ended[$0] || reached[$0] == -.infinity || reached[$0] >= time - 1e-6 }
    }

    /// Whether input `t` ended.
    package func hasEnded(_ t: Int) -> Bool { ended.indices.contains(t) && ended[t] }

    /// Input `t`'s latest decode time, -infinity before its first sample.
    package func latest(_ t: Int) -> Double { reached.indices.contains(t) ? reached[t] : -.infinity }
}
