import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

/// The GStreamer pipeline of one run and everything the run handed it: the callbacks (owned by
/// ``CallbackRegistry``), which node each element belongs to, and the statistics' counters.
///
/// Teardown order is the point of this type: the pipeline goes to NULL (no streaming thread
/// runs), every callback is released, the pipeline is unreferenced, and only then is the
/// counters' memory freed (the reference is declared first, so it goes before the statistics).
final class Pipeline: Sendable {
    /// The GstPipeline (a GObject, thread-safe to set state on and to query).
    let reference: GstObjectReference<GstElement>
    var raw: UnsafeMutablePointer<GstElement> { reference.raw }
    let callbacks = CallbackRegistry()
    let directory = ElementDirectory()
    let statistics: RunStatistics

    init(name: String) throws(GraphError) {
        try GStreamer.start()
        guard let p = gst_pipeline_new(name) else {
            throw GraphError(.runFailed, "GStreamer could not make a pipeline")
        }
        gst_object_ref_sink(UnsafeMutableRawPointer(p))
        reference = GstObjectReference(adopting: p)
        statistics = RunStatistics(callbacks: callbacks)
    }

    deinit { stop() }

    var bin: UnsafeMutablePointer<GstBin> { UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstBin.self) }

    /// Stops every streaming thread and releases every callback (idempotent). What the elements
    /// know only while they run is read first (a display's frames shown, what a dropping queue
    /// still holds). An appsink that holds end of stream until the app has pulled everything is
    /// flushed first, or stopping would wait for its streaming thread for ever.
    func stop() {
        stateChanges.withLock { stopped in
            stopped = true
            statistics.readBeforeStopping()
            gk_bin_unblock_app_sinks(bin)
            gk_element_set_state(raw, GST_STATE_NULL)
            callbacks.releaseAll()
        }
    }

    /// Whether ``stop()`` has run, held while it stops the pipeline and while a seek plays it
    /// (``seek(_:)``), so that neither happens inside the other: a seek from the app's thread
    /// that ended after a cancel's stop would set the stopped pipeline PLAYING again, with its
    /// callbacks released and nobody watching its bus (an output's pull then waited for ever).
    let stateChanges = Guarded(false)

    /// A builder for one node's elements.
    func builder(for context: NodeContext, failures: NodeFailures? = nil) -> BinBuilder {
        BinBuilder(context: context, pipeline: reference, callbacks: callbacks, directory: directory, statistics: statistics, failures: failures)
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

extension Pipeline {
    /// Sends end of stream straight into every muxer and every other sink, not from the
    /// sources: each file is finished with what has reached it, whatever is still being worked
    /// on upstream (a long encode a stop would otherwise wait for). A sink fed by a muxer gets
    /// its end from the muxer, after the muxer has written its index. Each send may wait for the
    /// buffer going into that pad, never for work upstream of it.
    func endStreamsAtSinks() {
        for element in elements() {
            defer { gst_object_unref(UnsafeMutableRawPointer(element)) }
            let isSink = element.pointee.object.flags & GST_ELEMENT_FLAG_SINK.rawValue != 0
            guard Self.isMuxer(element) || (isSink && !fedByMuxer(element)) else { continue }
            for pad in sinkPads(of: element) {
                gst_pad_send_event(pad, gst_event_new_eos())
                gst_object_unref(UnsafeMutableRawPointer(pad))
            }
        }
    }

    /// Gives end of stream to every input nothing is linked to yet: the parts a source feeds
    /// only once its stream has begun (an RTSP camera still answering, a demuxer's pads still to
    /// come). End of stream sent to the pipeline goes to its sources, and a source without pads
    /// forwards it nowhere: without this, a run stopped before its stream began waits for ever.
    /// What links there later gets end of stream for its first buffer.
    func endStreamsNotYetBegun() {
        for element in elements() {
            defer { gst_object_unref(UnsafeMutableRawPointer(element)) }
            for pad in sinkPads(of: element) {
                defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
                if let peer = gst_pad_get_peer(pad) {
                    gst_object_unref(UnsafeMutableRawPointer(peer))
                } else {
                    gst_pad_send_event(pad, gst_event_new_eos())
                }
            }
        }
    }

    /// Every sink (one with GstBaseSink's `async`) goes to playing without waiting for a
    /// first buffer, for a live graph: there, one stream not begun must not hold the others.
    func sinksPlayWithoutFirstBuffer() {
        for element in elements() {
            defer { gst_object_unref(UnsafeMutableRawPointer(element)) }
            guard element.pointee.object.flags & GST_ELEMENT_FLAG_SINK.rawValue != 0,
                  gk_object_has_property(element, "async") != 0 else { continue }
            try? set(element, "async", "false")
        }
    }

    /// Every element of the pipeline, nested ones too, each with a reference the caller releases.
    func elements() -> [UnsafeMutablePointer<GstElement>] {
        Self.collect(gst_bin_iterate_recurse(bin), GstElement.self)
    }

    /// The element's sink pads, each with a reference the caller releases.
    private func sinkPads(of element: UnsafeMutablePointer<GstElement>) -> [UnsafeMutablePointer<GstPad>] {
        Self.collect(gst_element_iterate_sink_pads(element), GstPad.self)
    }

    /// What a GStreamer iterator gives, each with a reference the caller releases (taken again
    /// from the start if the iterated set changes meanwhile).
    private static func collect<T>(_ iterator: UnsafeMutablePointer<GstIterator>?, _ type: T.Type) -> [UnsafeMutablePointer<T>] {
        var found: [UnsafeMutablePointer<T>] = []
        guard let iterator else { return found }
        defer { gst_iterator_free(iterator) }
        var item = GValue()
        defer { if item.g_type != 0 { g_value_unset(&item) } }
        loop: while true {
            switch gst_iterator_next(iterator, &item) {
            case GST_ITERATOR_OK:
                if let object = g_value_dup_object(&item) { found.append(object.assumingMemoryBound(to: T.self)) }
                g_value_reset(&item)
            case GST_ITERATOR_RESYNC:
                for o in found { gst_object_unref(UnsafeMutableRawPointer(o)) }
                found.removeAll()
                gst_iterator_resync(iterator)
            default:
                break loop
            }
        }
        return found
    }

    private func fedByMuxer(_ element: UnsafeMutablePointer<GstElement>) -> Bool {
        let pads = sinkPads(of: element)
        defer { for pad in pads { gst_object_unref(UnsafeMutableRawPointer(pad)) } }
        return pads.contains { pad in
            guard let peer = gst_pad_get_peer(pad) else { return false }
            defer { gst_object_unref(UnsafeMutableRawPointer(peer)) }
            guard let parent = gst_pad_get_parent_element(peer) else { return false }
            defer { gst_object_unref(UnsafeMutableRawPointer(parent)) }
            return Self.isMuxer(parent)
        }
    }

    private static func isMuxer(_ element: UnsafeMutablePointer<GstElement>) -> Bool {
        guard let factory = gst_element_get_factory(element),
              let klass = gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS) else { return false }
        return String(cString: klass).contains("Muxer")
    }
}
