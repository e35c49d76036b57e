import Foundation

/// A producer as RosyWriter is one: at each tick (every 1/30 s, or back to back for a burst) it
/// offers every stream its next sample, and appends it only if that stream's input is ready at
/// that moment; a sample whose input is not ready it drops, and counts. Blocks its thread.
public enum RealTimeProducer {
    public struct Stream {
        public let isReady: () -> Bool
        /// Appends sample `n`; returns how much it held (1 for a frame, its sample count for sound).
        public let append: (_ n: Int) throws -> Int

        public init(isReady: @escaping () -> Bool, append: @escaping (_ n: Int) throws -> Int) {
            self.isReady = isReady
            self.append = append
        }
    }

    public struct Counts: Sendable {
        /// Per stream, in the order given: how much was appended, and how many samples were not
        /// (their input was not ready).
        public var appended: [Int]
        public var turnedAway: [Int]
        /// Per stream: whether a sample was turned away between two that were appended, so that
        /// what the stream holds has a hole in time (the file's timeline of sound closes it up).
        public var hasGap: [Bool]
    }

    public static func run(ticks: Int, paced: Bool, _ streams: [Stream]) throws -> Counts {
        var counts = Counts(appended: streams.map { _ in 0 }, turnedAway: streams.map { _ in 0 }, hasGap: streams.map { _ in false })
        var lastAppended = streams.map { _ -> Int? in nil }  // the tick of each stream's last append
        let start = ContinuousClock.now
        for n in 0..<ticks {
            if paced {
                let wait = ContinuousClock.now.duration(to: start + .microseconds(Int64(n) * 1_000_000 / 30))
                if wait > .zero { Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18) }
            }
            for (i, stream) in streams.enumerated() {
                if stream.isReady() {
                    counts.appended[i] += try stream.append(n)
                    if let last = lastAppended[i], n - last > 1 { counts.hasGap[i] = true }
                    lastAppended[i] = n
                } else {
                    counts.turnedAway[i] += 1
                }
            }
        }
        return counts
    }
}
