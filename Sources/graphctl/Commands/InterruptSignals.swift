import Dispatch
import Glibc
import GraphKit

/// SIGINT and SIGTERM, counted: the handler gets 1 for the first, 2 for the second, and so on,
/// on a queue of the listener's own (never in a signal handler). One listener for the process,
/// installed first thing (`GraphCtl.main`), so that no signal ever takes the system's default
/// action (exit 143 for SIGTERM, leaving files half made): until a command says what a signal
/// means (`run` and `batch` each do), one ends the process at once with 130, removing the
/// temporary files made so far. Nothing has run yet that a stop could finish.
final class InterruptSignals: @unchecked Sendable {
    static let shared = InterruptSignals()

    let queue = DispatchQueue(label: "graphctl.signals")
    private var sources: [DispatchSourceSignal] = []
    private var count = 0
    private var handler: ((Int) -> Void)?

    /// Starts listening (once). Until `handle(with:)`, a signal exits with 130.
    func install() {
        queue.sync {
            guard sources.isEmpty else { return }
            for sig in [SIGINT, SIGTERM] {
                signal(sig, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
                source.setEventHandler { [weak self] in self?.signalled() }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// From now on, signals go to `handle`, counted from 1.
    func handle(with handle: @escaping (Int) -> Void) {
        queue.sync {
            count = 0
            handler = handle
        }
    }

    /// Stops handing signals to the handler (signals already received are handled first); a
    /// later signal exits at once again.
    func stopHandling() {
        queue.sync { handler = nil }
    }

    /// How many signals the current handler has been given.
    var received: Int { queue.sync { count } }

    private func signalled() {
        count += 1
        guard let handler else { Self.exitNow(); return }
        handler(count)
    }

    /// Ends the process with 130 now, without finishing anything: the temporary files this
    /// process made are removed first.
    static func exitNow(saying message: String? = "\ncancelled") -> Never {
        if let message { printError(message) }
        OutputFile.discardAll()
        _exit(GraphError.Code.cancelled.exitStatus)
    }
}
