import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc
import GraphKitCore
import MediaContainers

/// Process-wide GStreamer set-up.
public enum GStreamer {
    private static let initResult: String? = {
        // A registry cache beside the user's makes gst_init 8 ms instead of 0.3-0.5 s.
        if let message = gk_init() {
            defer { free(message) }
            return String(cString: message)
        }
        // From now on every buffer a SampleBuffer makes is a GStreamer buffer, and frame pools
        // are GStreamer's: what enters a pipeline goes in without a copy.
        SampleStorageAllocation.install(GStreamerAllocator())
        // Every video decoder checks the sizes it is told before it allocates for them.
        gk_guard_video_decoders { width, height, frameBytes, what, message, length in
            guard let message, let refusal = FrameSizeLimit.refusal(what.map { "the stream (\(String(cString: $0)))" } ?? "the stream",
                                                                    width: Int(width), height: Int(height),
                                                                    jpegFrameBytes: frameBytes >= 0 ? frameBytes : nil) else { return 0 }
            _ = refusal.utf8CString.withUnsafeBufferPointer { text in
                strncpy(message, text.baseAddress!, length - 1)
            }
            message[length - 1] = 0
            return 1
        }
        return nil
    }()

    /// Initialises GStreamer once per process (thread-safe), for the calls that cannot report a
    /// failure (making a buffer, looking up an element). A GStreamer that cannot start is
    /// reported by ``start()``, which every run calls.
    public static func initialize() {
        background.wait()
        _ = initResult
    }

    /// Initialises GStreamer once per process (thread-safe), or says why it cannot start
    /// (exit 69, like a missing plugin: the media framework is unavailable).
    public static func start() throws(GraphError) {
        background.wait()
        if let message = initResult {
            throw GraphError(.missingPlugin, message)  // a sentence of its own (gk_init): the cause and what to do
        }
    }

    /// Makes glibc's malloc keep the memory of freed video frames for the next ones, process-wide:
    /// a program that runs graphs calls it first (graphctl does); a host app decides for itself.
    ///
    /// GStreamer's video decoder copies every frame the codec still holds as a reference
    /// (`gst_video_decoder_finish_frame` makes it writable) into memory from malloc. glibc serves a
    /// frame-sized block (3 MB at 1080p) with mmap once its adaptive threshold has moved, and gives
    /// it back with munmap when freed, so each copy faulted in and zeroed fresh pages: 78,000 page
    /// faults in the 1080p transcode against ffmpeg's 21,000, and the kernel's `clear_page_erms`
    /// near the top of the profile. Frames are now taken from malloc's heaps (mmap above 32 MiB
    /// only), which keep up to 64 MiB free at their tops before giving pages back: 28,000 faults.
    public static func keepFrameMemory() {
        gk_keep_frame_memory()
    }

    /// Starts initialising on another thread and returns at once, so that a program that will
    /// run a graph reads its options and its graph file while GStreamer loads its registry
    /// (about 10 ms) on another core. `initialize()` then waits for it to finish.
    public static func beginInitializing() {
        guard background.begin() else { return }
        background.thread = JoinableThread(name: "graphkit-init") {
            _ = initResult
            background.finish()
        }
    }

    /// Waits for an initialisation begun by `beginInitializing()` (or initialises), without
    /// judging the result: for a program about to exit, which must not do so under a thread
    /// still inside gst_init.
    public static func waitUntilInitialized() {
        background.wait()
        _ = initResult
    }

    /// Releases what GStreamer holds for the process, as gst-launch-1.0 does before it exits, so
    /// that leak checkers (GStreamer's `GST_TRACERS=leaks`, valgrind) see only real leaks. Call
    /// it last, once every run has ended and been released: GStreamer cannot be used after it.
    public static func deinitialize() {
        background.wait()
        if initResult == nil { gst_deinit() }
    }

    /// Ends the streaming threads GStreamer and GLib keep idle in their pools for the next run
    /// (they would end by themselves after a while), and from then on keeps none idle: for a
    /// program or test that counts its threads. Call it only when no run is under way.
    public static func stopIdleStreamingThreads() {
        initialize()
        gst_task_cleanup_all()
        g_thread_pool_set_max_unused_threads(0)  // a thread returning to the pool later ends too
        g_thread_pool_stop_unused_threads()
    }

    /// An initialisation under way on another thread. Waiters sleep on a condition: waiting on
    /// `initResult` itself would spin a core (the runtime's once-lock is a priority-inheritance
    /// futex, which spins while its owner runs).
    private static let background = BackgroundStart()

    private final class BackgroundStart: Sendable {
        private struct State {
            var begun = false
            var done = false
            /// The thread doing it, joined by the first wait after it is done.
            var thread: JoinableThread?
        }
        private let state = Condition(State())

        var thread: JoinableThread? {
            get { state.withLock { $0.thread } }
            set { state.withLock { $0.thread = newValue } }
        }

        func begin() -> Bool {
            state.withLock { state in
                if state.begun { return false }
                state.begun = true
                return true
            }
        }

        func finish() {
            state.withLock(wakingWaiters: true) { $0.done = true }
        }

        func wait() {
            let finished = state.wait(until: { !$0.begun || $0.done }) { state in
                defer { state.thread = nil }
                return state.thread
            }
            finished?.join()
        }
    }

    /// Whether an element factory is installed.
    public static func hasElement(_ factory: String) -> Bool {
        initialize()
        guard let f = gst_element_factory_find(factory) else { return false }
        gst_object_unref(UnsafeMutableRawPointer(f))
        return true
    }

    /// An element factory's rank (GST_RANK_PRIMARY is 256), or nil when it is not installed.
    public static func rank(of factory: String) -> Int? {
        initialize()
        guard let f = gst_element_factory_find(factory) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(f)) }
        return Int(gst_plugin_feature_get_rank(f))
    }

    /// Ranks `factory` just above `others`, for this process only (the registry is unchanged),
    /// so that decodebin, which breaks ties of rank by name, picks it. No effect when it is not
    /// installed or already ranks higher.
    public static func prefer(_ factory: String, over others: [String]) {
        initialize()
        func rank(_ name: String) -> (OpaquePointer, UInt32)? {
            guard let f = gst_element_factory_find(name) else { return nil }
            let feature = f  // a GstElementFactory is a GstPluginFeature
            return (feature, gst_plugin_feature_get_rank(feature))
        }
        guard let (preferred, current) = rank(factory) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(preferred)) }
        var highest: UInt32 = 0
        for name in others {
            guard let (feature, r) = rank(name) else { continue }
            highest = max(highest, r)
            gst_object_unref(UnsafeMutableRawPointer(feature))
        }
        if current <= highest { gst_plugin_feature_set_rank(preferred, highest + 1) }
    }
}
