import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

/// The GStreamer pipeline of one run and everything the run handed it: the callbacks (owned by
/// ``CallbackRegistry``), which node each element belongs to, and the statistics' counters.
///
/// Teardown order is the point of this type: the pipeline goes to NULL (no streaming thread
/// runs), every callback is released, the pipeline is unreferenced, and only then is the
/// counters' memory freed (the statistics are released after `deinit`'s body).
final class Pipeline: @unchecked Sendable {
    let raw: UnsafeMutablePointer<GstElement>
    let callbacks = CallbackRegistry()
    let directory = ElementDirectory()
    let statistics: RunStatistics

    init(name: String) throws(GraphError) {
        try GStreamer.start()
        guard let p = gst_pipeline_new(name) else {
            throw GraphError(.runFailed, "GStreamer could not make a pipeline")
        }
        gst_object_ref_sink(UnsafeMutableRawPointer(p))
        raw = p
        statistics = RunStatistics(callbacks: callbacks)
    }

    deinit {
        stop()
        gst_object_unref(UnsafeMutableRawPointer(raw))
    }

    var bin: UnsafeMutablePointer<GstBin> { UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstBin.self) }

    /// Stops every streaming thread and releases every callback (idempotent). What the elements
    /// know only while they run is read first (a display's frames shown, what a dropping queue
    /// still holds). An appsink that holds end of stream until the app has pulled everything is
    /// flushed first, or stopping would wait for its streaming thread for ever.
    func stop() {
        statistics.readBeforeStopping()
        gk_bin_unblock_app_sinks(bin)
        gk_element_set_state(raw, GST_STATE_NULL)
        callbacks.releaseAll()
    }

    /// A builder for one node's elements.
    func builder(for context: NodeContext) -> BinBuilder {
        BinBuilder(context: context, pipeline: raw, callbacks: callbacks, directory: directory, statistics: statistics)
    }

    /// An element of the engine's own (a queue, a tee, a fakesink), recorded as `node`'s when it
    /// serves one node.
    func makeElement(_ factory: String, name: String, node: String?) throws(GraphError) -> UnsafeMutablePointer<GstElement> {
        guard let e = gst_element_factory_make(factory, name) else {
            throw GraphError(.missingPlugin, "GStreamer element \"\(factory)\" is not installed; install the Debian package \(GStreamer.debianPackage(forElement: factory))")
        }
        guard gst_bin_add(bin, e) != 0 else {
            gst_object_ref_sink(UnsafeMutableRawPointer(e))
            gst_object_unref(UnsafeMutableRawPointer(e))
            throw GraphError(.runFailed, "could not add \(factory) to the pipeline")
        }
        if let node { directory.record(e, node: node) }
        return e
    }

    func set(_ element: UnsafeMutablePointer<GstElement>, _ property: String, _ value: String) throws(GraphError) {
        if gk_object_set_from_string(UnsafeMutableRawPointer(element), property, value) != 0 {
            throw GraphError(.runFailed, "cannot set \(property)=\(value) on an internal element")
        }
    }
}
