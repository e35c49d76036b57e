import Dispatch
import Glibc
import GraphKit

/// SIGINT and SIGTERM, counted: the handler gets 1 for the first, 2 for the second, and so on,
/// on a queue of the listener's own (never in a signal handler). One listener for the process,
/// installed first thing (`GraphCtl.main`), so that no signal ever takes the system's default
/// action (exit 143 for SIGTERM, leaving files half made): until a command says what a signal
/// means (`run` and `batch` each do), one ends the process at once with 130, removing the
/// temporary files made so far. Nothing has run yet that a stop could finish.
final class InterruptSignals: Sendable {
    static let shared = InterruptSignals()

    let queue = DispatchQueue(label: "graphctl.signals")
    private struct State {
        var sources: [any DispatchSourceSignal] = []
        var count = 0
        var handler: (@Sendable (Int) -> Void)?
    }
    private let state = Guarded(State())

    /// Starts listening (once). Until `handle(with:)`, a signal exits with 130.
    func install() {
        queue.sync {
            state.withLock { state in
                guard state.sources.isEmpty else { return }
                for sig in [SIGINT, SIGTERM] {
                    signal(sig, SIG_IGN)
                    let source = DispatchSource.makeSignalSource(signal: sig, queue: queue)
                    source.setEventHandler { [weak self] in self?.signalled() }
                    source.resume()
                    state.sources.append(source)
                }
            }
        }
    }

    /// From now on, signals go to `handle`, counted from 1.
    func handle(with handle: @escaping @Sendable (Int) -> Void) {
        queue.sync {
            state.withLock {
                $0.count = 0
                $0.handler = handle
            }
        }
    }

    /// Stops handing signals to the handler (signals already received are handled first); a
    /// later signal exits at once again.
    func stopHandling() {
        queue.sync { state.withLock { $0.handler = nil } }
    }

    /// How many signals the current handler has been given.
    var received: Int { state.withLock { $0.count } }

    /// On `queue`: the handler is called there, outside the lock.
    private func signalled() {
        let (handler, count) = state.withLock { state in
            state.count += 1
            return (state.handler, state.count)
        }
        guard let handler else { Self.exitNow() }
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
