import Dispatch
import Glibc

/// SIGINT and SIGTERM, counted: `handle` gets 1 for the first, 2 for the second, and so on, on
/// a queue of the listener's own (never in a signal handler). `run` and `batch` each say what
/// the first and second mean.
final class InterruptSignals: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []
    private var count = 0
    let queue: DispatchQueue
    private let handle: (Int) -> Void

    init(label: String, handle: @escaping (Int) -> Void) {
        queue = DispatchQueue(label: label)
        self.handle = handle
    }

    func install() {
        for sig in [SIGINT, SIGTERM] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
            source.setEventHandler { [weak self] in
                guard let self else { return }
                count += 1
                handle(count)
            }
            source.resume()
            sources.append(source)
        }
    }

    /// Stops listening; signals already received are handled first.
    func uninstall() {
        queue.sync { sources.forEach { $0.cancel() } }
        sources.removeAll()
    }

    /// How many signals have come.
    var received: Int { queue.sync { count } }
}
