import FoundationEssentials
import GraphKitCore
import GraphKitRuntime
import MediaContainers

/// `sink.preview`: shows the video it receives in a window, as it flows, like
/// `AVCaptureVideoPreviewLayer` beside a recording or `autovideosink` at the end of a
/// gst-launch-1.0 line.
///
/// It never slows the graph: frames wait for the window in a queue of one, and a newer frame
/// replaces the one waiting (`queue leaky=downstream max-size-buffers=1`), so a display that is
/// slow or stalled costs the preview frames, never the recording. Frames the window did not show
/// are counted as the node's `dropped` in the run's report, beside its `shown`.
///
/// Closing the window stops the run as Ctrl-C does: the sources end their streams, every file is
/// finished, and the run is `stopped` (`graphctl run` exits 0). With no display (`DISPLAY` and
/// `WAYLAND_DISPLAY` unset or empty), or one named that cannot be opened, a graph with a preview
/// fails while it is built, before anything runs or is written; `graphctl validate` needs no
/// display.
///
/// Example (a fan-out: the effect's output feeds the encoder and the preview):
/// ```json
/// "preview": { "type": "sink.preview", "params": { "title": "Recording" } }
/// ```
public final class PreviewSinkNode: ElementNode, Sendable {
    public static let descriptor = NodeDescriptor(
        type: "sink.preview",
        category: .sink,
        summary: "Shows video in a window as it flows, dropping frames rather than slowing the graph",
        inputs: [PortDescriptor("in", .rawVideo(), help: "raw frames of any size")],
        parameters: [title, sync],
        example: #"{ "type": "sink.preview", "params": { "title": "Recording" } }"#
    )

    public static let title = Parameter<String>("title", default: "GraphKit preview", help: "the window's title")
    public static let sync = Parameter<Bool>("sync", default: false,
                                             help: "true shows each frame at its time on the pipeline clock, as a player does (a graph that "
                                                 + "is not live then ends no sooner than its media would play); false shows each frame as it arrives")

    let context: NodeContext

    public init(context: NodeContext) throws(GraphError) {
        self.context = context
    }

    public func build(in bin: BinBuilder) throws(GraphError) {
        guard let display = Display(environment: ProcessInfo.processInfo.environment) else {
            throw Self.noDisplay(node: context.id)
        }
        // The only frame that may wait is the newest: the window never holds its producer back.
        let latest = try bin.make("queue", name: "latest", ["leaky": "downstream", "max-size-buffers": 1,
                                                            "max-size-bytes": 0, "max-size-time": 0])
        // On the queue's thread, not the producer's: a conversion to what the window takes.
        let convert = try bin.make("videoconvert", name: "convert")
        // qos=false: a late frame must not make anything upstream skip work (a decoder drops
        // frames on QoS events), since upstream is also what is being recorded.
        // show-preroll-frame=false: the first frame waits for the pipeline to play before it is
        // shown. Shown while prerolling, it fails if the window was closed meanwhile, the sink
        // never finishes prerolling, and the pipeline never plays; and it would be shown twice.
        let window = try bin.make(display.sinkFactory, name: "window", ["sync": context.parameters[Self.sync], "qos": false,
                                                                        "show-preroll-frame": false])
        // A display that is named but does not answer fails here, before anything is written.
        if let failure = window.tryOpening() {
            throw Self.displayUnreachable(display, node: context.id, because: failure.message, cause: failure.debug)
        }
        try bin.link(latest, convert, window)
        try bin.expose(input: "in", latest)
        try bin.display(window, title: context.parameters[Self.title])
    }

    /// Where the window goes, from the session's environment, and GStreamer's sink for it.
    enum Display: Equatable {
        /// An X server (`DISPLAY`), XWayland included: `ximagesink`. autovideosink would pick
        /// xvimagesink first (it ranks higher), which needs the XVideo extension that Xvfb, VNC
        /// and many remote displays lack, or glimagesink, which needs working OpenGL; ximagesink
        /// needs X alone, so it works wherever X does (and is tested under Xvfb).
        case x11(String)
        /// A Wayland compositor and no X server (`WAYLAND_DISPLAY` alone): `waylandsink`
        /// (gstreamer1.0-plugins-bad; tested under Weston's headless backend). A Wayland desktop
        /// that also runs XWayland gets ximagesink, the sink tested with a window closed.
        case wayland(String)

        /// nil when neither variable names a display (unset or empty).
        init?(environment: [String: String]) {
            if let x = environment["DISPLAY"], !x.isEmpty {
                self = .x11(x)
            } else if let wayland = environment["WAYLAND_DISPLAY"], !wayland.isEmpty {
                self = .wayland(wayland)
            } else {
                return nil
            }
        }

        /// The variable that named it, as the user would write it: `DISPLAY=":0"`.
        var setting: String {
            switch self {
            case .x11(let name): "DISPLAY=\"\(name)\""
            case .wayland(let name): "WAYLAND_DISPLAY=\"\(name)\""
            }
        }

        var sinkFactory: String {
            switch self {
            case .x11: "ximagesink"
            case .wayland: "waylandsink"
            }
        }
    }

    /// A preview with no display fails before anything runs (nothing is written), as an output
    /// that cannot be created: exit 73.
    static func noDisplay(node: String) -> GraphError {
        GraphError(.outputUnwritable, at: "nodes.\(node)",
                   "no display to show the preview on (DISPLAY and WAYLAND_DISPLAY are not set); run it in a graphical session, "
                       + "or remove node \"\(node)\" and its edge to run without a preview (graphs/record.json records as "
                       + "graphs/record-preview.json does, without one)",
                   node: node)
    }

    /// A display that is named but cannot be opened (no server answers there, or it refuses
    /// us): also before anything runs, also 73, with GStreamer's words as the cause.
    static func displayUnreachable(_ display: Display, node: String, because message: String, cause: String) -> GraphError {
        GraphError(.outputUnwritable, at: "nodes.\(node)",
                   "cannot open the display \(display.setting) to show the preview on (\(message)); check that its server is "
                       + "running and lets this user in, or remove node \"\(node)\" and its edge to run without a preview",
                   node: node, cause: cause.isEmpty ? nil : cause)
    }
}
