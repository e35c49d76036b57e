import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc
import GraphKitCore
import MediaContainers
import Synchronization

/// Runs a ``ProcessingNode`` inside the pipeline: a pad probe on the streaming thread calls the
/// node with each buffer, each new format and the end of stream, with no thread hop.
///
/// A node that passes buffers through (``BufferFlow/passThrough``) sits on an `identity`, whose
/// output pad it transforms. A node that consumes them (``BufferFlow/consume``) watches the input
/// of a `fakesink` (one element fewer per buffer); its `out`, when connected, is an `appsrc` fed
/// by ``ProcessingHost/emit(_:)``.
struct ProcessingNodeHost {
    let pipeline: Pipeline
    /// Where a node's failure is kept with its own code, for the bus watcher to report.
    let failures: NodeFailures

    /// Builds the node's elements and its probe; returns the pads of its ports.
    func host(_ node: any ProcessingNode, context: NodeContext) throws(GraphError) -> ExposedPorts {
        let d = type(of: node).descriptor
        let flow = type(of: node).bufferFlow
        guard d.input("in") != nil else {
            throw GraphError(.invalidGraph, at: context.location(), "\(d.type) is a processing node without an input \"in\"", node: context.id)
        }
        if flow == .passThrough, d.output("out") == nil {
            throw GraphError(.invalidGraph, at: context.location(), "\(d.type) passes buffers through but declares no output \"out\"", node: context.id)
        }
        let builder = pipeline.builder(for: context)
        var output: AppInput?
        let entry: Element
        let watched: UnsafeMutablePointer<GstPad>
        switch flow {
        case .passThrough:
            entry = try builder.make("identity", name: "process", ["silent": "true"])
            try builder.expose(output: "out", entry)
            watched = try staticPad(entry, "src")
        case .consume:
            entry = try builder.make("fakesink", name: "consumed", ["sync": "false", "async": "false"])
            watched = try staticPad(entry, "sink")
            if context.connectedOutputs.contains("out") {
                let src = try builder.make("appsrc", name: "emit", [
                    "format": "time", "is-live": "false", "max-bytes": "0", "max-buffers": "0", "block": "false",
                ])
                output = AppInput(appsrc: src.raw, nodeID: context.id)
                try builder.expose(output: "out", src)
            }
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(watched)) }
        // The input takes what the node declares, and nothing else: a converter upstream
        // (decode's) negotiates a format it takes; a format that nothing converts fails the run
        // where it enters, naming the node (never bytes of one format read as another: 32-bit
        // floats taken for 16-bit samples played 7 to 10 dB loud and a third as long).
        let declared = d.input("in")!.formats
        var takes: Element?
        if let caps = declared.capsString {
            let filter = try builder.make("capsfilter", name: "takes", ["caps": caps])
            try builder.link(filter, entry)
            try builder.expose(input: "in", filter)
            takes = filter
        } else {
            try builder.expose(input: "in", entry)
        }
        let inputPad = try staticPad(entry, "sink")
        defer { gst_object_unref(UnsafeMutableRawPointer(inputPad)) }
        let gate = EmitGate()
        let host: ProcessingHost
        switch flow {
        case .consume:
            let appsrc = output
            var emitter: (@Sendable (SampleBuffer) throws(GraphError) -> Bool)?
            if let appsrc { emitter = { (b: SampleBuffer) throws(GraphError) in try appsrc.appendImmediately(b); return true } }
            host = ProcessingHost(emitter: emitter, endOutput: { appsrc?.markAsFinished() },
                                  upstreamDuration: Self.durationQuery(on: inputPad))
        case .passThrough:
            host = ProcessingHost(emitter: Self.pusher(on: watched, gate: gate, node: context.id),
                                  upstreamDuration: Self.durationQuery(on: inputPad))
        }
        node.attach(host)
        let step = Step(node: node, id: context.id, element: entry.raw, host: host, endsHere: flow == .consume, failures: failures, gate: gate)
        if let takes {
            let pad = try staticPad(takes, "sink")
            defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
            let check = InputCheck(step: step, declared: declared)
            let id = gk_pad_add_transform(pad, nil, { ctx, kind, caps in
                if kind == 0, let caps { Unmanaged<InputCheck>.fromOpaque(ctx!).takeUnretainedValue().check(caps) }
            }, Unmanaged.passRetained(check).toOpaque(), { ctx in
                Unmanaged<InputCheck>.fromOpaque(ctx!).release()
            })
            pipeline.callbacks.adopt(probe: id, on: pad)
        }
        // The probe counts too: every buffer arriving at the node's input (an identity passes on
        // what it receives, so its output pad sees the same ones), and what a passing node sends
        // on from its output.
        let stats = pipeline.statistics
        let id = gk_pad_add_counted_transform(watched, { ctx, buffer in
            Unmanaged<Step>.fromOpaque(ctx!).takeUnretainedValue().process(buffer!)
        }, { ctx, kind, caps in
            Unmanaged<Step>.fromOpaque(ctx!).takeUnretainedValue().event(kind: kind, caps: caps)
        }, Unmanaged.passRetained(step).toOpaque(), { ctx in
            Unmanaged<Step>.fromOpaque(ctx!).release()
        }, stats.counter(keptAt: inputPad), flow == .passThrough ? stats.counter(keptAt: watched) : nil)
        pipeline.callbacks.adopt(probe: id, on: watched)
        if flow == .passThrough {
            // End of stream is handled where it enters the identity: by the time it reaches the
            // output pad, GStreamer has marked that pad EOS, and a tail emitted then is refused.
            let eos = gk_pad_add_transform(inputPad, nil, { ctx, kind, _ in
                if kind == 1 { Unmanaged<Step>.fromOpaque(ctx!).takeUnretainedValue().endOfStream() }
            }, Unmanaged.passRetained(step).toOpaque(), { ctx in
                Unmanaged<Step>.fromOpaque(ctx!).release()
            })
            pipeline.callbacks.adopt(probe: eos, on: inputPad)
        }
        return ExposedPorts(inputs: builder.exposedInputs, outputs: builder.exposedOutputs)
    }

    /// Sends a pass-through node's own buffers on from its output pad, from the streaming thread:
    /// the pad's transform lets them by untouched (the gate), and what downstream answers decides:
    /// a pipeline shutting down takes nothing more silently, anything else is an error.
    private static func pusher(on pad: UnsafeMutablePointer<GstPad>, gate: EmitGate, node: String)
        -> @Sendable (SampleBuffer) throws(GraphError) -> Bool
    {
        let owned = GstObjectReference(pad)
        return { buffer throws(GraphError) in
            gate.open = true
            let result = gst_pad_push(owned.raw, buffer.retainedBuffer())
            gate.open = false
            switch result {
            case GST_FLOW_OK: return true
            case GST_FLOW_FLUSHING, GST_FLOW_EOS: return false
            default:
                throw GraphError(.runFailed, at: "node \"\(node)\"", "downstream refused a buffer the node emitted (flow \(result.rawValue))", node: node)
            }
        }
    }

    private func staticPad(_ element: Element, _ name: String) throws(GraphError) -> UnsafeMutablePointer<GstPad> {
        guard let pad = gst_element_get_static_pad(element.raw, name) else {
            throw GraphError(.runFailed, "\(element.factory) has no pad \"\(name)\"", node: element.nodeID)
        }
        return pad
    }

    /// The probe's context: the node and what it needs on the streaming thread.
    fileprivate final class Step: @unchecked Sendable {
        // @unchecked: `element` is a GstElement (a GObject, thread-safe to post on; the pointer never
        // changes), which the compiler cannot see; `format` and `failed` are touched only on the
        // input's streaming thread (GStreamer calls a pad's probes in turn).
        let node: any ProcessingNode
        let id: String
        let element: UnsafeMutablePointer<GstElement>
        let host: ProcessingHost
        let endsHere: Bool
        let failures: NodeFailures
        let gate: EmitGate
        /// Touched only on the input's streaming thread.
        var format: MediaFormat?
        var failed = false

        init(node: any ProcessingNode, id: String, element: UnsafeMutablePointer<GstElement>, host: ProcessingHost,
             endsHere: Bool, failures: NodeFailures, gate: EmitGate) {
            self.node = node
            self.id = id
            self.element = element
            self.host = host
            self.endsHere = endsHere
            self.failures = failures
            self.gate = gate
        }

        /// Takes ownership of `buffer`; returns the buffer to pass on, or nil to drop it.
        func process(_ buffer: UnsafeMutablePointer<GstBuffer>) -> UnsafeMutablePointer<GstBuffer>? {
            if gate.open { return buffer }  // the node's own, emitted: already processed
            var sample = SampleBuffer(owning: buffer, format: format)
            if failed { return nil }
            do {
                guard try node.process(&sample) || endsHere else { return nil }
                return sample.retainedBuffer()
            } catch {
                fail(error)
                return nil
            }
        }

        /// A new format (kind 0) on the watched pad; end of stream (kind 1) there too, except for a
        /// pass-through node, whose end of stream comes from its input pad (``endOfStream()``).
        func event(kind: Int32, caps: UnsafeMutablePointer<GstCaps>?) {
            if kind == 0, let caps, let format = GStreamer.format(from: caps) {
                self.format = format
                do {
                    try node.formatDidChange(to: format)
                } catch {
                    fail(error)
                }
            } else if kind == 1, endsHere {
                endOfStream()
            } else if kind == 2 {
                node.streamWasFlushed()
            }
        }

        func endOfStream() {
            do {
                if !failed { try node.endOfStream() }
            } catch {
                fail(error)
            }
            host.finishOutput()
        }

        /// Fails the run with the node's own error (its code decides the exit status).
        func fail(_ error: any Error) {
            failed = true
            let e = GraphError(error, node: id)
            failures.record(e, node: id)
            gk_element_post_error(element, 3, Int32(GST_STREAM_ERROR_FAILED.rawValue), e.message, nil)
        }
    }
}

/// Each format arriving at a Swift node's input, checked against what it declares before the
/// caps filter there refuses it: the run fails with the node's own error, which says what it
/// takes and what it was given (the filter's refusal alone would be a bare "not negotiated"
/// from whatever pushed).
private final class InputCheck: Sendable {
    let step: ProcessingNodeHost.Step
    let declared: FormatSet

    init(step: ProcessingNodeHost.Step, declared: FormatSet) {
        self.step = step
        self.declared = declared
    }

    func check(_ caps: UnsafeMutablePointer<GstCaps>) {
        let format = GStreamer.format(from: caps)
        if let format, declared.contains(format) { return }
        let given = format.map { "\($0)" } ?? GStreamer.describe(caps)
        step.fail(GraphError(.runFailed, "its input takes \(declared), and was given \(given), which nothing before it converts "
                             + "(decode converts to what its sampleFormat, sampleRate, channels and pixelFormat say)", node: step.id))
    }
}

/// Open while a pass-through node's own buffer passes its output pad (the streaming thread only:
/// relaxed loads and stores, no ordering with anything else).
final class EmitGate: Sendable {
    private let state = Atomic(false)

    var open: Bool {
        get { state.load(ordering: .relaxed) }
        set { state.store(newValue, ordering: .relaxed) }
    }
}

/// The pads a node's ports are, by port name.
struct ExposedPorts {
    var inputs: [String: UnsafeMutablePointer<GstPad>]
    var outputs: [String: UnsafeMutablePointer<GstPad>]
}

/// Errors that Swift nodes raised on streaming threads, kept with their code and location
/// until the bus watcher reports the run's failure.
final class NodeFailures: Sendable {
    /// The first error of each node.
    private let errors = Guarded<[String: GraphError]>([:])

    func record(_ error: GraphError, node: String) {
        errors.withLock { if $0[node] == nil { $0[node] = error } }
    }

    func error(of node: String) -> GraphError? {
        errors.withLock { $0[node] }
    }
}

extension ProcessingNodeHost {
    /// Asks upstream of `pad` for the stream's duration (a file knows it; a live capture does not).
    static func durationQuery(on pad: UnsafeMutablePointer<GstPad>) -> @Sendable () -> MediaTime? {
        let held = GstObjectReference(pad)
        return {
            var ns: gint64 = 0
            guard gst_pad_peer_query_duration(held.raw, GST_FORMAT_TIME, &ns) != 0, ns > 0 else { return nil }
            return MediaTime(nanoseconds: UInt64(ns))
        }
    }
}
