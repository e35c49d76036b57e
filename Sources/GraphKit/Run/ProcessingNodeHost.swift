import CGStreamer
import CGraphKitGlue
import Foundation

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
        var output: MediaInput?
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
                output = MediaInput(appsrc: src.raw, nodeID: context.id)
                try builder.expose(output: "out", src)
            }
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(watched)) }
        try builder.expose(input: "in", entry)
        let inputPad = try staticPad(entry, "sink")
        defer { gst_object_unref(UnsafeMutableRawPointer(inputPad)) }
        let host = ProcessingHost(inputPad: inputPad, output: output)
        node.attach(host)
        let step = Step(node: node, id: context.id, element: entry.raw, host: host, endsHere: flow == .consume, failures: failures)
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
        return ExposedPorts(inputs: builder.exposedInputs, outputs: builder.exposedOutputs)
    }

    private func staticPad(_ element: Element, _ name: String) throws(GraphError) -> UnsafeMutablePointer<GstPad> {
        guard let pad = gst_element_get_static_pad(element.raw, name) else {
            throw GraphError(.runFailed, "\(element.factory) has no pad \"\(name)\"", node: element.nodeID)
        }
        return pad
    }

    /// The probe's context: the node and what it needs on the streaming thread.
    private final class Step: @unchecked Sendable {
        let node: any ProcessingNode
        let id: String
        let element: UnsafeMutablePointer<GstElement>
        let host: ProcessingHost
        let endsHere: Bool
        let failures: NodeFailures
        /// Touched only on the input's streaming thread.
        var format: MediaFormat?
        var failed = false

        init(node: any ProcessingNode, id: String, element: UnsafeMutablePointer<GstElement>, host: ProcessingHost,
             endsHere: Bool, failures: NodeFailures) {
            self.node = node
            self.id = id
            self.element = element
            self.host = host
            self.endsHere = endsHere
            self.failures = failures
        }

        /// Takes ownership of `buffer`; returns the buffer to pass on, or nil to drop it.
        func process(_ buffer: UnsafeMutablePointer<GstBuffer>) -> UnsafeMutablePointer<GstBuffer>? {
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

        func event(kind: Int32, caps: UnsafeMutablePointer<GstCaps>?) {
            do {
                if kind == 0, let caps, let format = GStreamer.format(from: caps) {
                    self.format = format
                    try node.formatDidChange(to: format)
                } else if kind == 1 {
                    if !failed { try node.endOfStream() }
                    host.finishOutput()
                }
            } catch {
                fail(error)
            }
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

/// The pads a node's ports are, by port name.
struct ExposedPorts {
    var inputs: [String: UnsafeMutablePointer<GstPad>]
    var outputs: [String: UnsafeMutablePointer<GstPad>]
}

/// Errors that Swift nodes raised on streaming threads, kept with their code and location
/// until the bus watcher reports the run's failure.
final class NodeFailures: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [String: GraphError] = [:]

    func record(_ error: GraphError, node: String) {
        lock.lock()
        if errors[node] == nil { errors[node] = error }
        lock.unlock()
    }

    func error(of node: String) -> GraphError? {
        lock.lock()
        defer { lock.unlock() }
        return errors[node]
    }
}
