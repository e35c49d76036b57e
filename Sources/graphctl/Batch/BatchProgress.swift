import Dispatch
import Glibc
import GraphKit

/// What a batch says on standard error while it runs: a line for each input that fails (always,
/// unless --quiet), and on a terminal a progress line redrawn five times a second: inputs done
/// of the total, failures, inputs per second and the time left at that rate.
final class BatchProgress: Sendable {
    private let queue = DispatchQueue(label: "graphctl.batch.progress")
    private let total: Int
    private let showsLine: Bool
    private let quiet: Bool
    /// What is counted and drawn, from the slots' threads and the timer's queue.
    private struct State {
        /// Whether the line is drawn: from start() until finish().
        var drawing = false
        var done = 0
        var failed = 0
        var started = ContinuousClock.now
        var drawn = false
    }
    private let state = Guarded(State())

    /// `total`: inputs to run (skipped ones are not counted: the rate is of runs).
    init(total: Int, showsLine: Bool, quiet: Bool) {
        self.total = total
        self.showsLine = showsLine && !quiet
        self.quiet = quiet
    }

    func start() {
        state.withLock { $0.started = .now }
        guard showsLine else { return }
        state.withLock { $0.drawing = true }
        scheduleDraw()
    }

    /// The next redraw, 200 ms from now; each schedules the next, until finish().
    private func scheduleDraw() {
        queue.asyncAfter(deadline: .now() + .milliseconds(200)) { [weak self] in
            guard let self, self.state.withLock({ state in
                self.draw(&state)
                return state.drawing
            }) else { return }
            self.scheduleDraw()
        }
    }

    /// Counts one input that ended; prints its error, if any, above the progress line.
    func ended(_ result: InputResult) {
        state.withLock { state in
            state.done += 1
            if !result.succeeded && result.status != .cancelled {
                state.failed += 1
                clear(&state)
                // Control characters escaped, as report() prints every error (the worker's
                // messages quote names and text from the input).
                printError("error: " + TerminalText.escaped(result.error ?? result.status.rawValue))
            }
            if showsLine { draw(&state) }
        }
    }

    /// A message above the progress line.
    func say(_ text: String) {
        state.withLock { state in
            clear(&state)
            printError(text)
            if showsLine { draw(&state) }
        }
    }

    /// Stops drawing and clears the line; nothing is drawn after this returns.
    func finish() {
        state.withLock { state in
            state.drawing = false
            clear(&state)
        }
    }

    private func clear(_ state: inout State) {
        if state.drawn { writeStandardError("\r\u{1B}[K"); state.drawn = false }
    }

    private func draw(_ state: inout State) {
        guard state.drawing else { return }
        let (done, failed) = (state.done, state.failed)
        let elapsed = (ContinuousClock.now - state.started).inSeconds
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        var line = "[\(done)/\(total)]"
        if failed > 0 { line += " \(failed) failed" }
        line += "  \(fixed(rate, 1)) inputs/s"
        if rate > 0, done < total {
            line += "  ETA " + Self.clock(Double(total - done) / rate)
        }
        writeStandardError("\r\u{1B}[K" + line)
        state.drawn = true
    }

    /// `1:05` or `2:03:09`.
    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
    }
}
