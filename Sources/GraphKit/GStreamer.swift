import CGStreamer
import CGraphKitGlue
import Foundation

/// Process-wide GStreamer set-up.
public enum GStreamer {
    private static let initResult: String? = {
        // A registry cache beside the user's makes gst_init 8 ms instead of 0.3-0.5 s.
        if let message = gk_init() {
            defer { free(message) }
            return String(cString: message)
        }
        return nil
    }()

    /// Initialises GStreamer once per process (thread-safe). Fatal if GStreamer cannot start:
    /// nothing in GraphKit can run without it.
    public static func initialize() {
        background.wait()
        if let message = initResult { fatalError("GStreamer failed to initialise: \(message)") }
    }

    /// Starts initialising on another thread and returns at once, so that a program that will
    /// run a graph reads its options and its graph file while GStreamer loads its registry
    /// (about 10 ms) on another core. `initialize()` then waits for it to finish.
    public static func beginInitializing() {
        guard background.begin() else { return }
        Thread.detachNewThread {
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

    /// An initialisation under way on another thread. Waiters sleep on a condition: waiting on
    /// `initResult` itself would spin a core (the runtime's once-lock is a priority-inheritance
    /// futex, which spins while its owner runs).
    private static let background = BackgroundStart()

    private final class BackgroundStart: @unchecked Sendable {
        private let condition = NSCondition()
        private var begun = false
        private var done = false

        func begin() -> Bool {
            condition.lock()
            defer { condition.unlock() }
            if begun { return false }
            begun = true
            return true
        }

        func finish() {
            condition.lock()
            done = true
            condition.broadcast()
            condition.unlock()
        }

        func wait() {
            condition.lock()
            while begun && !done { condition.wait() }
            condition.unlock()
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

    /// The Debian package that provides an element, for "missing plugin" messages.
    public static func debianPackage(forElement factory: String) -> String {
        let packages: [String: [String]] = [
            "gstreamer1.0-libav": ["avenc_aac", "avdec_aac", "avdec_h264", "avdec_mp3", "avdec_mp3float"],
            "gstreamer1.0-plugins-ugly": ["x264enc", "a52dec", "mpeg2dec"],
            "gstreamer1.0-plugins-good": ["mp4mux", "qtmux", "qtdemux", "wavparse", "wavenc", "flacparse", "flacdec",
                                          "v4l2src", "videoflip", "videocrop", "videobox", "gdkpixbufoverlay",
                                          "level", "mpegaudioparse", "mpg123audiodec", "lamemp3enc"],
            "gstreamer1.0-plugins-bad": ["voaacenc", "fdkaacenc", "h264parse", "openh264enc", "faac", "faad"],
            "gstreamer1.0-pulseaudio": ["pulsesrc", "pulsesink"],
            "gstreamer1.0-x": ["textoverlay", "timeoverlay", "clockoverlay", "ximagesink", "xvimagesink"],
            "gstreamer1.0-alsa": ["alsasrc", "alsasink"],
            "libgstreamer1.0-0": ["queue", "tee", "filesrc", "filesink", "fakesink", "identity", "capsfilter", "typefind"],
        ]
        return packages.first { $0.value.contains(factory) }?.key ?? "gstreamer1.0-plugins-base"
    }

    static func caps(_ format: MediaFormat) -> UnsafeMutablePointer<GstCaps> {
        initialize()
        return gst_caps_from_string(format.capsString)!
    }

    /// The format described by fixed caps, or nil for caps GraphKit has no name for.
    static func format(from caps: UnsafePointer<GstCaps>) -> MediaFormat? {
        guard gst_caps_get_size(caps) > 0, let s = gst_caps_get_structure(caps, 0) else { return nil }
        let name = String(cString: gst_structure_get_name(s))
        func int(_ field: String) -> Int? {
            var v: Int32 = 0
            return gst_structure_get_int(s, field, &v) != 0 ? Int(v) : nil
        }
        func string(_ field: String) -> String? {
            gst_structure_get_string(s, field).map { String(cString: $0) }
        }
        switch name {
        case "audio/x-raw":
            guard let f = string("format").flatMap(SampleFormat.init(gstName:)), let rate = int("rate"),
                  let channels = int("channels") else { return .data(name) }
            return .pcm(.init(sampleRate: rate, channels: channels, sampleFormat: f))
        case "audio/mpeg" where int("mpegversion") == 4 || int("mpegversion") == 2:
            return .aac(sampleRate: int("rate"), channels: int("channels"))
        case "video/x-raw":
            guard let f = string("format").flatMap(PixelFormat.init(gstName:)), let w = int("width"),
                  let h = int("height") else { return .data(name) }
            var num: Int32 = 0, den: Int32 = 1
            if gst_structure_get_fraction(s, "framerate", &num, &den) == 0 { num = 0; den = 1 }
            return .rawVideo(.init(pixelFormat: f, width: w, height: h, frameRate: FrameRate(Int(num), Int(den))))
        case "video/x-h264":
            return .h264(width: int("width"), height: int("height"))
        case "application/x-graphkit-peaks":
            return .peaks(samplesPerPixel: int("samples-per-pixel") ?? 0, channels: int("channels") ?? 0)
        default:
            return .data(name)
        }
    }
}

/// One of a node's GStreamer elements, seen without GStreamer types.
public final class Element: @unchecked Sendable {
    let raw: UnsafeMutablePointer<GstElement>
    public let name: String
    public let factory: String
    let nodeID: String
    private var handlers: [AnyObject] = []

    init(raw: UnsafeMutablePointer<GstElement>, factory: String, nodeID: String) {
        self.raw = raw
        self.factory = factory
        self.nodeID = nodeID
        let name = gst_object_get_name(raw.withMemoryRebound(to: GstObject.self, capacity: 1) { $0 })!
        self.name = String(cString: name)
        g_free(name)  // a copy, ours to free
        gst_object_ref(UnsafeMutableRawPointer(raw))
    }

    deinit { gst_object_unref(UnsafeMutableRawPointer(raw)) }

    var object: UnsafeMutableRawPointer { UnsafeMutableRawPointer(raw) }

    /// Sets a property from a value's text form, typed by the property's own declaration.
    /// Throws (rather than GStreamer's silent ignore) for an unknown property or a bad value.
    public func set(_ property: String, _ value: some CustomStringConvertible) throws {
        switch gk_object_set_from_string(object, property, value.description) {
        case 0: return
        case 1: throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "element \(factory) has no property \"\(property)\"", node: nodeID)
        default: throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "element \(factory) rejects \(property)=\(value)", node: nodeID)
        }
    }

    /// A property's value in text form.
    public func property(_ name: String) -> String? {
        guard let s = gk_object_get_as_string(object, name) else { return nil }
        defer { g_free(s) }
        return String(cString: s)
    }

    /// Called on a streaming thread when the element adds a pad (a demuxer found a stream).
    public func onPadAdded(_ handler: @escaping @Sendable (Pad) -> Void) {
        let box = PadHandler(handler, nodeID: nodeID)
        handlers.append(box)
        let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<GstPad>?, UnsafeMutableRawPointer?) -> Void = { _, pad, ctx in
            guard let pad, let ctx else { return }
            let h = Unmanaged<PadHandler>.fromOpaque(ctx).takeUnretainedValue()
            h.handler(Pad(raw: pad, nodeID: h.nodeID))
        }
        g_signal_connect_data(object, "pad-added", unsafeBitCast(callback, to: GCallback.self),
                              Unmanaged.passUnretained(box).toOpaque(), nil, GConnectFlags(rawValue: 0))
    }

    /// Called on a streaming thread once a demuxer has added every pad it will.
    public func onNoMorePads(_ handler: @escaping @Sendable () -> Void) {
        let box = VoidHandler(handler)
        handlers.append(box)
        let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { _, ctx in
            guard let ctx else { return }
            Unmanaged<VoidHandler>.fromOpaque(ctx).takeUnretainedValue().handler()
        }
        g_signal_connect_data(object, "no-more-pads", unsafeBitCast(callback, to: GCallback.self),
                              Unmanaged.passUnretained(box).toOpaque(), nil, GConnectFlags(rawValue: 0))
    }

    /// Called on the streaming thread with each new format arriving at this element's sink pad,
    /// before the element sees it: the moment to configure it from its input (an encoder's
    /// bitrate from the frame size).
    public func onInputFormat(pad: String = "sink", _ handler: @escaping @Sendable (MediaFormat) -> Void) {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        let box = Unmanaged.passRetained(FormatHandler(handler)).toOpaque()
        gk_pad_add_transform(p, nil, { ctx, kind, caps in
            guard kind == 0, let ctx, let caps, let format = GStreamer.format(from: caps) else { return }
            Unmanaged<FormatHandler>.fromOpaque(ctx).takeUnretainedValue().handler(format)
        }, box, { ctx in Unmanaged<FormatHandler>.fromOpaque(ctx!).release() })
    }

    /// Called on the streaming thread with each buffer's index and time as it arrives at this
    /// element's sink pad, before the element sees it (a frame counter drawn by an overlay).
    public func onEachBuffer(pad: String = "sink", _ handler: @escaping @Sendable (Int, MediaTime?) -> Void) {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        let box = Unmanaged.passRetained(BufferHandler(handler)).toOpaque()
        gk_pad_add_transform(p, { ctx, buffer in
            let h = Unmanaged<BufferHandler>.fromOpaque(ctx!).takeUnretainedValue()
            let pts = buffer!.pointee.pts
            h.handler(h.count, pts == GstClockTime.max ? nil : MediaTime(nanoseconds: UInt64(pts)))
            h.count += 1
            return buffer
        }, nil, box, { ctx in Unmanaged<BufferHandler>.fromOpaque(ctx!).release() })
    }

    /// Fails the run from a streaming thread with a message naming this node (exit 70).
    public func postError(_ message: String, debug: String? = nil) {
        gk_element_post_error(raw, 3, Int32(GST_STREAM_ERROR_FAILED.rawValue), message, debug)
    }

    /// Fails the run with a resource error: an output that cannot be written (exit 73).
    public func postWriteError(_ message: String, debug: String? = nil) {
        gk_element_post_error(raw, 2, Int32(GST_RESOURCE_ERROR_OPEN_WRITE.rawValue), message, debug)
    }

    /// A static pad of this element.
    public func pad(_ name: String) -> Pad? {
        guard let p = gst_element_get_static_pad(raw, name) else { return nil }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        return Pad(raw: p, nodeID: nodeID)
    }

    /// Brings an element added while the pipeline runs to the pipeline's state.
    public func syncStateWithParent() {
        _ = gst_element_sync_state_with_parent(raw)
    }

    private final class PadHandler {
        let handler: @Sendable (Pad) -> Void
        let nodeID: String
        init(_ h: @escaping @Sendable (Pad) -> Void, nodeID: String) { handler = h; self.nodeID = nodeID }
    }
    private final class BufferHandler: @unchecked Sendable {
        let handler: @Sendable (Int, MediaTime?) -> Void
        var count = 0  // touched only on the pad's streaming thread
        init(_ h: @escaping @Sendable (Int, MediaTime?) -> Void) { handler = h }
    }
    private final class FormatHandler {
        let handler: @Sendable (MediaFormat) -> Void
        init(_ h: @escaping @Sendable (MediaFormat) -> Void) { handler = h }
    }
    private final class VoidHandler {
        let handler: @Sendable () -> Void
        init(_ h: @escaping @Sendable () -> Void) { handler = h }
    }
}

/// A pad of an element, as a demuxer's pad-added handler sees it.
public final class Pad: @unchecked Sendable {
    let raw: UnsafeMutablePointer<GstPad>
    let nodeID: String

    init(raw: UnsafeMutablePointer<GstPad>, nodeID: String) {
        self.raw = raw
        self.nodeID = nodeID
        gst_object_ref(UnsafeMutableRawPointer(raw))
    }
    deinit { gst_object_unref(UnsafeMutableRawPointer(raw)) }

    public var name: String {
        let s = gst_object_get_name(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstObject.self))!
        defer { g_free(s) }
        return String(cString: s)
    }

    /// The media type name of the pad's caps (`audio/x-raw`, `video/x-raw`, …).
    public var mediaType: String? {
        guard let caps = gst_pad_get_current_caps(raw) ?? gst_pad_query_caps(raw, nil) else { return nil }
        defer { gk_caps_unref(caps) }
        guard gst_caps_get_size(caps) > 0, let s = gst_caps_get_structure(caps, 0) else { return nil }
        return String(cString: gst_structure_get_name(s))
    }

    /// The negotiated format, once there is one.
    public var format: MediaFormat? {
        guard let caps = gst_pad_get_current_caps(raw) else { return nil }
        defer { gk_caps_unref(caps) }
        return GStreamer.format(from: caps)
    }

    /// Links this (source) pad to an element's sink pad.
    @discardableResult
    public func link(to element: Element, pad name: String = "sink") -> Bool {
        guard let sink = gst_element_get_static_pad(element.raw, name) else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(sink)) }
        return gst_pad_link(raw, sink) == GST_PAD_LINK_OK
    }
}

/// Builds an ``ElementNode``'s part of the pipeline: makes elements, links them, and exposes
/// one pad per port.
///
/// The elements go straight into the run's pipeline, named `<node id>:<name>` so that every bus
/// message maps back to its node, and ports are the elements' own pads: no bin and no ghost
/// pads around a node, whose proxying cost about a microsecond per buffer at each node
/// boundary (BENCHMARKS.md), and GStreamer orders state changes over the whole graph as it
/// does for a gst-launch-1.0 line.
public final class BinBuilder {
    public let context: NodeContext
    let pipeline: UnsafeMutablePointer<GstElement>
    private(set) var exposedInputs: [String: UnsafeMutablePointer<GstPad>] = [:]
    private(set) var exposedOutputs: [String: UnsafeMutablePointer<GstPad>] = [:]
    private(set) var elements: [Element] = []
    private var counter = 0

    init(context: NodeContext, pipeline: UnsafeMutablePointer<GstElement>) {
        self.context = context
        self.pipeline = pipeline
    }

    public var nodeID: String { context.id }

    /// Makes an element and adds it to the node. A missing element is a missing-plugin error
    /// (exit 69) that names the Debian package providing it.
    @discardableResult
    public func make(_ factory: String, name: String? = nil, _ properties: KeyValuePairs<String, any CustomStringConvertible> = [:]) throws -> Element {
        counter += 1
        let elementName = "\(nodeID):" + (name ?? "\(factory)\(counter)")
        guard let raw = gst_element_factory_make(factory, elementName) else {
            throw GraphError(.missingPlugin, at: "node \"\(nodeID)\"",
                             "GStreamer element \"\(factory)\" is not installed; install the Debian package \(GStreamer.debianPackage(forElement: factory))",
                             node: nodeID)
        }
        guard gst_bin_add(pipeline.withMemoryRebound(to: GstBin.self, capacity: 1) { $0 }, raw) != 0 else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "could not add \(factory) (\(elementName)) to the pipeline", node: nodeID)
        }
        let element = Element(raw: raw, factory: factory, nodeID: nodeID)
        for (key, value) in properties { try element.set(key, value) }
        elements.append(element)
        return element
    }

    /// Makes a capsfilter that fixes a format.
    @discardableResult
    public func makeCapsFilter(_ capsString: String) throws -> Element {
        let e = try make("capsfilter")
        try e.set("caps", capsString)
        return e
    }

    /// Links elements in a chain, source pad to sink pad.
    public func link(_ chain: Element...) throws {
        for (a, b) in zip(chain, chain.dropFirst()) where gst_element_link(a.raw, b.raw) == 0 {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "cannot link \(a.factory) to \(b.factory)", node: nodeID)
        }
    }

    /// Exposes an element's static sink pad as the node's input port.
    public func expose(input port: String, _ element: Element, pad: String = "sink") throws {
        exposedInputs[port] = try exposable(port, staticPad: pad, of: element, alreadyExposed: exposedInputs[port] != nil)
    }

    /// Exposes an element's static source pad as the node's output port.
    public func expose(output port: String, _ element: Element, pad: String = "src") throws {
        exposedOutputs[port] = try exposable(port, staticPad: pad, of: element, alreadyExposed: exposedOutputs[port] != nil)
    }

    /// Exposes a request pad (a muxer's `audio_%u`) as the node's input port.
    public func expose(input port: String, requesting template: String, from element: Element) throws {
        guard exposedInputs[port] == nil else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "port \(port) exposed twice", node: nodeID)
        }
        guard let p = gst_element_request_pad_simple(element.raw, template) else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "\(element.factory) gave no \(template) pad", node: nodeID)
        }
        gst_object_unref(UnsafeMutableRawPointer(p))  // the element keeps its request pad
        exposedInputs[port] = p
    }

    /// A pad the element owns for as long as it exists (as long as the pipeline).
    private func exposable(_ port: String, staticPad name: String, of element: Element, alreadyExposed: Bool) throws -> UnsafeMutablePointer<GstPad> {
        guard !alreadyExposed else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "port \(port) exposed twice", node: nodeID)
        }
        guard let p = gst_element_get_static_pad(element.raw, name) else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "\(element.factory) has no pad \"\(name)\"", node: nodeID)
        }
        gst_object_unref(UnsafeMutableRawPointer(p))
        return p
    }
}
