import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc
import GraphKitCore
import MediaContainers

/// Builds an ``ElementNode``'s part of the pipeline: makes elements, links them, and exposes
/// one pad per port.
///
/// The elements go straight into the run's pipeline, named `<node id>:<name>` for GStreamer's
/// logs and recorded as the node's, so that every bus message maps back to its node; ports are
/// the elements' own pads: no bin and no ghost
/// pads around a node, whose proxying cost about a microsecond per buffer at each node
/// boundary (BENCHMARKS.md), and GStreamer orders state changes over the whole graph as it
/// does for a gst-launch-1.0 line.
public final class BinBuilder: Sendable {
    public let context: NodeContext
    private let pipelineReference: GstObjectReference<GstElement>
    var pipeline: UnsafeMutablePointer<GstElement> { pipelineReference.raw }
    let callbacks: CallbackRegistry
    let directory: ElementDirectory
    let statistics: RunStatistics
    /// Where a node's own errors are kept, so that the run reports them as the node raised them
    /// (``PushedSource/fail(_:)``); nil for a builder outside a compiled graph.
    let failures: NodeFailures?
    /// Elements may be made from a streaming thread too (a demuxer's pad-added handler).
    private struct Made {
        var inputs: [String: GstObjectReference<GstPad>] = [:]
        var outputs: [String: GstObjectReference<GstPad>] = [:]
        var elements: [Element] = []
        var counter = 0
    }
    private let made = Guarded(Made())

    init(context: NodeContext, pipeline: GstObjectReference<GstElement>, callbacks: CallbackRegistry, directory: ElementDirectory,
         statistics: RunStatistics, failures: NodeFailures? = nil) {
        self.context = context
        self.pipelineReference = pipeline
        self.callbacks = callbacks
        self.directory = directory
        self.statistics = statistics
        self.failures = failures
    }

    /// The pads exposed as the node's input ports, by port.
    var exposedInputs: [String: UnsafeMutablePointer<GstPad>] { made.withLock { $0.inputs }.mapValues(\.raw) }
    /// The pads exposed as the node's output ports, by port.
    var exposedOutputs: [String: UnsafeMutablePointer<GstPad>] { made.withLock { $0.outputs }.mapValues(\.raw) }
    /// The elements made, in order.
    var elements: [Element] { made.withLock { $0.elements } }

    public var nodeID: String { context.id }

    /// What fails the run from a streaming thread with the node's own error, as the node raised
    /// it (its code decides the exit status, its message is said as it is: ``NodeFailures``),
    /// posted on one of the node's elements. For a node whose sink or source thread finds that
    /// it cannot go on (a segment that cannot be written, a picture that cannot be taken).
    public func nodeFailure() -> @Sendable (GraphError, Element) -> Void {
        let (failures, node) = (failures, nodeID)
        return { error, element in
            let e = GraphError(error, node: node)
            failures?.record(e, node: node)
            element.postError(e.message)
        }
    }

    /// Makes an element and adds it to the node. A missing element is a missing-plugin error
    /// (exit 69) that names the Debian package providing it.
    @discardableResult
    public func make(_ factory: String, name: String? = nil, _ properties: KeyValuePairs<String, any CustomStringConvertible> = [:]) throws(GraphError) -> Element {
        let count = made.withLock { $0.counter += 1; return $0.counter }
        let elementName = "\(nodeID):" + (name ?? "\(factory)\(count)")
        guard let raw = gst_element_factory_make(factory, elementName) else {
            throw GraphError(.missingPlugin, at: "node \"\(nodeID)\"",
                             "GStreamer element \"\(factory)\" is not installed; install the Debian package \(GStreamer.debianPackage(forElement: factory))",
                             node: nodeID)
        }
        guard gst_bin_add(pipeline.withMemoryRebound(to: GstBin.self, capacity: 1) { $0 }, raw) != 0 else {
            gst_object_ref_sink(UnsafeMutableRawPointer(raw))  // still floating: ours to free
            gst_object_unref(UnsafeMutableRawPointer(raw))
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "could not add \(factory) (\(elementName)) to the pipeline", node: nodeID)
        }
        directory.record(raw, node: nodeID)
        if Self.binsThatDropErrors.contains(factory) {
            _ = gk_bin_keep_errors(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstBin.self))
        }
        let element = Element(raw: raw, factory: factory, nodeID: nodeID, callbacks: callbacks)
        for (key, value) in properties { try element.set(key, value) }
        made.withLock { $0.elements.append(element) }
        return element
    }

    /// Takes `element`, one of this node's, out of the running pipeline: set to NULL (what it was
    /// doing is abandoned: a sink's buffer in hand is answered "flushing"), unlinked and removed.
    /// For a node that replaces a sink that failed: ``make(_:name:_:)`` makes its successor, which
    /// is linked, then brought to the pipeline's state (``Element/syncStateWithParent()``). What
    /// feeds the element must take its failures (GraphKit's `gkflowguard`).
    /// Its handlers and probes are let go with it. (Its entry in the run's directory of elements
    /// stays: an error it posted before it went may still be on the bus, and must name this node.)
    public func remove(_ element: Element) {
        _ = gst_element_set_state(element.raw, GST_STATE_NULL)
        _ = gst_bin_remove(pipeline.withMemoryRebound(to: GstBin.self, capacity: 1) { $0 }, element.raw)
        callbacks.release(on: element.raw)
        made.withLock { $0.elements.removeAll { $0 === element } }
    }

    /// Ends the stream arriving at `element`'s sink pad `pad` now, from any thread (an element
    /// not linked yet, whose stream would otherwise never end).
    public func endInput(of element: Element, pad: String = "sink") {
        guard let p = gst_element_get_static_pad(element.raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        gk_pad_send_eos(p)
    }

    /// Bins that drop their children's errors while plugging them, which could lose a real
    /// failure and stall the run (see `gk_bin_keep_errors`); their errors are kept and posted.
    static let binsThatDropErrors: Set<String> = ["decodebin", "parsebin"]

    /// Links a stream nobody asked for (a demuxer's pad no output takes) to a fakesink of its
    /// own, so that it never stalls the streams in use.
    @discardableResult
    public func discard(_ pad: Pad) -> Element? {
        guard let sink = try? make("fakesink", ["sync": false, "async": false]) else { return nil }
        sink.syncStateWithParent()
        pad.link(to: sink)
        return sink
    }

    /// Makes a capsfilter that fixes a format.
    @discardableResult
    public func makeCapsFilter(_ capsString: String) throws(GraphError) -> Element {
        let e = try make("capsfilter")
        try e.set("caps", capsString)
        return e
    }

    /// Links elements in a chain, source pad to sink pad.
    public func link(_ chain: Element...) throws(GraphError) {
        for (a, b) in zip(chain, chain.dropFirst()) where gst_element_link(a.raw, b.raw) == 0 {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "cannot link \(a.factory) to \(b.factory)", node: nodeID)
        }
    }

    /// Exposes an element's static sink pad as the node's input port.
    public func expose(input port: String, _ element: Element, pad: String = "sink") throws(GraphError) {
        let p = try exposable(port, staticPad: pad, of: element)
        try record(p, as: port, \.inputs)
    }

    /// Exposes an element's static source pad as the node's output port.
    public func expose(output port: String, _ element: Element, pad: String = "src") throws(GraphError) {
        let p = try exposable(port, staticPad: pad, of: element)
        try record(p, as: port, \.outputs)
    }

    /// Exposes a request pad (a muxer's `audio_%u`) as the node's input port.
    public func expose(input port: String, requesting template: String, from element: Element) throws(GraphError) {
        guard made.withLock({ $0.inputs[port] == nil }) else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "port \(port) exposed twice", node: nodeID)
        }
        guard let p = gst_element_request_pad_simple(element.raw, template) else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "\(element.factory) gave no \(template) pad", node: nodeID)
        }
        try record(GstObjectReference(adopting: p), as: port, \.inputs)
    }

    /// Makes `sink`, a video sink that shows frames in a window and is linked already, this node's
    /// display, on the terms a preview needs:
    ///
    /// - What goes wrong in the sink stays there: an error it returns never reaches the elements
    ///   that feed it (the frame is counted as not shown), so a display cannot stop a recording.
    /// - Closing its window (the sink's "not found" resource error, which ximagesink, xvimagesink
    ///   and waylandsink post: "Output window was closed") is no error: it stops the run as SIGINT
    ///   does, once the pipeline plays: end of stream from the sources, every file finished, the
    ///   run `stopped`. Any other error the sink posts fails the run.
    /// - Its frames shown, and the frames that reached the node but were not shown, are the node's
    ///   `shown` and `dropped` in the run's report.
    /// - The window is titled `title`; the stream's own tags (a file's title) do not reach the sink.
    public func display(_ sink: Element, title: String?) throws(GraphError) {
        guard let input = gst_element_get_static_pad(sink.raw, "sink") else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "\(sink.factory) has no pad \"sink\"", node: nodeID)
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(input)) }
        guard let feeding = gst_pad_get_peer(input) else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "\(sink.factory) is shown before anything is linked to it", node: nodeID)
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(feeding)) }
        guard gk_pipeline_watch_display(pipeline.withMemoryRebound(to: GstBin.self, capacity: 1) { $0 }, sink.raw) != 0 else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "the pipeline's messages cannot be watched for \(sink.factory)", node: nodeID)
        }
        statistics.addDisplay(node: nodeID, sink: sink.raw, feeding: feeding, title: title)
    }

    /// One of the element's static pads.
    private func exposable(_ port: String, staticPad name: String, of element: Element) throws(GraphError) -> GstObjectReference<GstPad> {
        guard let p = gst_element_get_static_pad(element.raw, name) else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "\(element.factory) has no pad \"\(name)\"", node: nodeID)
        }
        return GstObjectReference(adopting: p)
    }

    /// Records `pad` as the port's, unless the port has one already.
    private func record(_ pad: GstObjectReference<GstPad>, as port: String,
                        _ side: WritableKeyPath<Made, [String: GstObjectReference<GstPad>]> & Sendable) throws(GraphError) {
        guard made.withLock({ made in
            guard made[keyPath: side][port] == nil else { return false }
            made[keyPath: side][port] = pad
            return true
        }) else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "port \(port) exposed twice", node: nodeID)
        }
    }
}
