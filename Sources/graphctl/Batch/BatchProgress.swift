import Dispatch
import Glibc

/// What a batch says on standard error while it runs: a line for each input that fails (always,
/// unless --quiet), and on a terminal a progress line redrawn five times a second: inputs done
/// of the total, failures, inputs per second and the time left at that rate.
final class BatchProgress: @unchecked Sendable {
    private let queue = DispatchQueue(label: "graphctl.batch.progress")
    private var timer: DispatchSourceTimer?
    private let total: Int
    private let showsLine: Bool
    private let quiet: Bool
    private var done = 0
    private var failed = 0
    private var started = ContinuousClock.now
    private var drawn = false

    /// `total`: inputs to run (skipped ones are not counted: the rate is of runs).
    init(total: Int, showsLine: Bool, quiet: Bool) {
        self.total = total
        self.showsLine = showsLine && !quiet
        self.quiet = quiet
    }

    func start() {
        started = .now
        guard showsLine else { return }
        let t = DispatchSource.makeTimerSource(queue: queue)
        t.schedule(deadline: .now() + .milliseconds(200), repeating: .milliseconds(200))
        t.setEventHandler { [weak self] in self?.draw() }
        timer = t
        t.resume()
    }

    /// Counts one input that ended; prints its error, if any, above the progress line.
    func ended(_ result: InputResult) {
        queue.sync {
            done += 1
            if !result.succeeded && result.status != .cancelled {
                failed += 1
                clear()
                printError("error: \(result.error ?? result.status.rawValue)")
            }
            if showsLine { draw() }
        }
    }

    /// A message above the progress line.
    func say(_ text: String) {
        queue.sync {
            clear()
            printError(text)
            if showsLine { draw() }
        }
    }

    /// Stops drawing and clears the line; nothing is drawn after this returns.
    func finish() {
        queue.sync {
            timer?.cancel()
            timer = nil
            clear()
        }
    }

    private func clear() {
        if drawn { writeStandardError("\r\u{1B}[K"); drawn = false }
    }

    private func draw() {
        guard timer != nil else { return }
        let elapsed = seconds(ContinuousClock.now - started)
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        var line = "[\(done)/\(total)]"
        if failed > 0 { line += " \(failed) failed" }
        line += "  \(fixed(rate, 1)) inputs/s"
        if rate > 0, done < total {
            line += "  ETA " + Self.clock(Double(total - done) / rate)
        }
        writeStandardError("\r\u{1B}[K" + line)
        drawn = true
    }

    /// `1:05` or `2:03:09`.
    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded(.up))
        let two = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return s >= 3600 ? "\(s / 3600):\(two(s / 60 % 60)):\(two(s % 60))" : "\(s / 60):\(two(s % 60))"
    }
}

func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}
