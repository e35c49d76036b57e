import CGraphKitGlue
import FoundationEssentials
import Glibc
import GraphKitCore
import MediaContainers

/// A thread of our own that can be joined: a run's bus watcher. Foundation's `Thread` cannot be
/// joined, so a program (or a test counting threads) could not know when it is gone.
final class JoinableThread: @unchecked Sendable {
    private var thread = pthread_t()
    private let lock = Lock()
    private var joined = false

    /// Starts `body` on a new thread named `name` (at most 15 characters are kept).
    init(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(name: name, body)).toOpaque()
        let result = pthread_create(&thread, nil, { context in
            let work = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            gk_set_thread_name(String(work.name.prefix(15)))
            work.body()
            return nil
        }, box)
        if result != 0 {
            // No thread: run the work here rather than lose it (it only watches and reports).
            joined = true
            Unmanaged<Body>.fromOpaque(box).takeRetainedValue().body()
        }
    }

    /// Waits for the thread to end (once; later calls return at once). From the thread itself
    /// it detaches instead, since a thread cannot wait for itself.
    func join() {
        lock.lock()
        defer { lock.unlock() }
        guard !joined else { return }
        joined = true
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    deinit { join() }

    private final class Body {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
