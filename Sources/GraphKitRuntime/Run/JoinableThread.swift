import CGraphKitGlue
import FoundationEssentials
import Glibc
import GraphKitCore
import MediaContainers

/// A thread of our own that can be joined: a run's bus watcher. Foundation's `Thread` cannot be
/// joined, so a program (or a test counting threads) could not know when it is gone.
package final class JoinableThread: Sendable {
    /// The thread, and whether it was joined (or never started).
    private let state: Guarded<(thread: pthread_t, joined: Bool)>

    /// Starts `body` on a new thread named `name` (at most 15 characters are kept).
    package init(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(name: name, body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            let work = Unmanaged<Body>.fromOpaque(context!).takeRetainedValue()
            gk_set_thread_name(String(work.name.prefix(15)))
            work.body()
            return nil
        }, box)
        state = Guarded((thread, result != 0))
        if result != 0 {
            // No thread: run the work here rather than lose it (it only watches and reports).
            Unmanaged<Body>.fromOpaque(box).takeRetainedValue().body()
        }
    }

    /// Waits for the thread to end (once; later calls return at once). From the thread itself
    /// it detaches instead, since a thread cannot wait for itself.
    package func join() {
        state.withLock { state in
            guard !state.joined else { return }
            state.joined = true
            if pthread_equal(state.thread, pthread_self()) != 0 {
                pthread_detach(state.thread)
            } else {
                pthread_join(state.thread, nil)
            }
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

    /// Runs `body` on a thread of its own that nothing waits for.
    static func detach(_ body: @escaping @Sendable () -> Void) {
        final class Box { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        guard pthread_create(&thread, nil, { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, context) == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            return
        }
        pthread_detach(thread)
    }
}
