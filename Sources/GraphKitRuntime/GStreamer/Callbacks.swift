import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc
import GraphKitCore
import MediaContainers

/// Every callback a run hands GStreamer (signal handlers, pad probes), owned here.
///
/// Each callback's context is retained when it is handed over and released by GStreamer's
/// destroy notify, never earlier. When the run has stopped, ``releaseAll()`` disconnects every
/// handler and removes every probe, which fires those notifies: a closure that captures its
/// node (a demuxer's pad-added handler) cannot keep the node, its elements and itself alive in
/// a cycle, and no late signal finds a freed context.
final class CallbackRegistry: Sendable {
    /// A handler or probe, and one reference to the object it is on (let go with the entry).
    /// A struct, not an enum of two object-carrying cases: such an enum keeps its case in the
    /// reference's spare bits, which LeakSanitizer cannot follow, so every entry of a run alive
    /// at exit was reported as leaked.
    private struct Entry {
        enum Kind { case signal, probe }
        let kind: Kind
        let object: GstObjectReference<GstObject>
        let id: gulong
    }
    private struct State {
        var entries: [Entry] = []
        var released = false
    }
    private let state = Guarded(State())

    /// Connects `callback` to `signal` on `instance`, with `context` retained until disconnected.
    func connect(_ instance: UnsafeMutableRawPointer, _ signal: String, _ callback: GCallback, context: AnyObject) {
        let retained = Unmanaged.passRetained(context).toOpaque()
        let id = g_signal_connect_data(instance, signal, callback, retained, { data, _ in
            if let data { Unmanaged<AnyObject>.fromOpaque(data).release() }
        }, GConnectFlags(rawValue: 0))
        guard id != 0 else {
            Unmanaged<AnyObject>.fromOpaque(retained).release()
            return
        }
        record(Entry(kind: .signal, object: GstObjectReference(instance.assumingMemoryBound(to: GstObject.self)), id: id))
    }

    /// Records a handler connected in C whose data the caller frees after ``releaseAll()``.
    func adopt(signal id: gulong, on instance: UnsafeMutableRawPointer) {
        guard id != 0 else { return }
        record(Entry(kind: .signal, object: GstObjectReference(instance.assumingMemoryBound(to: GstObject.self)), id: id))
    }

    /// Records a probe added to `pad` (whose context GStreamer releases with its destroy notify).
    func adopt(probe id: gulong, on pad: UnsafeMutablePointer<GstPad>) {
        guard id != 0 else { return }
        record(Entry(kind: .probe, object: GstObjectReference(UnsafeMutableRawPointer(pad).assumingMemoryBound(to: GstObject.self)), id: id))
    }

    private func record(_ entry: Entry) {
        let late = state.withLock { s in
            if !s.released { s.entries.append(entry) }
            return s.released
        }
        // Added after the run let go (a pad-added handler racing the stop): let go at once.
        if late { release(entry) }
    }

    /// Disconnects and removes everything; each context is released by its destroy notify.
    /// Call once no streaming thread runs (the pipeline is in NULL).
    func releaseAll() {
        let all = state.withLock { s in
            s.released = true
            defer { s.entries.removeAll() }
            return s.entries
        }
        all.forEach(release)
    }

    /// Disconnects and removes what is on `element` or its pads (an element taken out of the
    /// running pipeline, ``BinBuilder/remove(_:)``), so that a node replacing elements for hours
    /// does not keep every one it made. Call once the element is in NULL.
    func release(on element: UnsafeMutablePointer<GstElement>) {
        let target = UnsafeMutableRawPointer(element)
        let mine = state.withLock { s in
            var taken: [Entry] = []
            s.entries.removeAll { entry in
                let object = UnsafeMutableRawPointer(entry.object.raw)
                var on = object == target
                if !on, entry.kind == .probe, let parent = gst_object_get_parent(entry.object.raw) {
                    on = UnsafeMutableRawPointer(parent) == target
                    gst_object_unref(UnsafeMutableRawPointer(parent))
                }
                if on { taken.append(entry) }
                return on
            }
            return taken
        }
        mine.forEach(release)
    }

    /// Disconnects or removes it; its object's reference goes with the entry.
    private func release(_ entry: Entry) {
        switch entry.kind {
        case .signal:
            let object = UnsafeMutableRawPointer(entry.object.raw)
            if g_signal_handler_is_connected(object, entry.id) != 0 { g_signal_handler_disconnect(object, entry.id) }
        case .probe:
            gst_pad_remove_probe(UnsafeMutableRawPointer(entry.object.raw).assumingMemoryBound(to: GstPad.self), entry.id)
        }
    }

    deinit { releaseAll() }
}

/// Which node each element of a run belongs to, recorded when the element is made, so that a
/// bus message from any element (or from an element inside one, such as decodebin's children)
/// maps to a node id without reading element names.
final class ElementDirectory: Sendable {
    /// Keyed by the element's address (only compared, never followed).
    private let owners = Guarded<[UInt: String]>([:])

    func record(_ element: UnsafeMutablePointer<GstElement>, node: String) {
        owners.withLock { $0[UInt(bitPattern: element)] = node }
    }

    /// The node of `object`, or of its nearest ancestor that a node made; nil for the pipeline's
    /// own elements that serve no single node (a fan-out's tee).
    func node(owning object: UnsafeMutablePointer<GstObject>?) -> String? {
        guard var current = object else { return nil }
        gst_object_ref(UnsafeMutableRawPointer(current))
        while true {
            let key = UInt(bitPattern: current)
            let owner = owners.withLock { $0[key] }
            let parent = owner == nil ? gst_object_get_parent(current) : nil
            gst_object_unref(UnsafeMutableRawPointer(current))
            if let owner { return owner }
            guard let parent else { return nil }
            current = parent
        }
    }
}
