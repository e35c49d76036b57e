import CGStreamer
import CGraphKitGlue
import Glibc
import Logging
import GraphKitCore
import MediaContainers

/// Watches a running pipeline's bus on the run's own thread (never the Swift concurrency pool)
/// and turns its messages into one outcome: end of stream, a failure as a ``GraphError`` that
/// names the node it came from (the node each element was recorded for at build time), or a
/// cancel. GStreamer's warnings go to the logger with their node's id. A display whose window
/// was closed asks the run to stop, as SIGINT does (once the pipeline plays), and the watch goes
/// on to the end of stream.
struct BusWatcher {
    enum Outcome {
        case endOfStream
        case failed(GraphError)
        case cancelled
    }

    let pipeline: Pipeline
    let graph: Graph
    let nodes: [(spec: Graph.NodeSpec, node: any Node)]
    let failures: NodeFailures
    let logger: Logger
    /// Ends the run gracefully (``GraphRun/stop()``): end of stream from the sources.
    let requestStop: @Sendable () -> Void

    /// The name of the application message that wakes the watcher to cancel.
    static let cancelMessage = "graphkit-cancel"

    /// Asks a watching ``watch(startFailed:)`` to end the run as cancelled, at once.
    static func postCancel(to pipeline: Pipeline) {
        guard let bus = gst_element_get_bus(pipeline.raw) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(bus)) }
        let structure = gst_structure_new_empty(cancelMessage)
        if let message = gst_message_new_application(UnsafeMutableRawPointer(pipeline.raw).assumingMemoryBound(to: GstObject.self), structure) {
            gst_bus_post(bus, message)
        }
    }

    /// Blocks until the run's outcome is known. `sample` is called every few milliseconds (queue
    /// depths). When the pipeline refused to start, an error it posted is awaited briefly.
    ///
    /// `whenPrerolled`, for a pipeline set to PAUSED, is called once it has prerolled (on this
    /// thread, as soon as the bus says so: before any failure or cancel after it, and never after
    /// one); it seeks and plays, and its error fails the run. A failure or a cancel while
    /// prerolling ends the watch without it.
    func watch(startFailed: Bool, whenPrerolled: (() -> GraphError?)? = nil, sample: () -> Void) -> Outcome {
        guard let bus = gst_element_get_bus(pipeline.raw) else {
            return .failed(GraphError(.runFailed, "the pipeline has no bus"))
        }
        defer { gst_object_unref(UnsafeMutableRawPointer(bus)) }
        let wanted = GST_MESSAGE_ERROR.rawValue | GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ELEMENT.rawValue
            | GST_MESSAGE_WARNING.rawValue | GST_MESSAGE_APPLICATION.rawValue
        var missing: [MissingPlugin] = []
        var idle = 0
        // A window closed before the pipeline plays (its sinks still prerolling, for the first
        // half-second of a live recording) stops it once it plays: stopping earlier would cancel.
        // A pipeline that has not played 5 s later is stopped all the same (so cancelled).
        var window = WindowClosed.no
        var whenPrerolled = whenPrerolled
        /// Runs `whenPrerolled` once the pipeline is paused with nothing pending; its error, if any.
        func playOncePrerolled() -> GraphError? {
            guard let action = whenPrerolled else { return nil }
            var state = GST_STATE_VOID_PENDING, pending = GST_STATE_VOID_PENDING
            let result = gst_element_get_state(pipeline.raw, &state, &pending, 0)  // not waiting
            guard result == GST_STATE_CHANGE_SUCCESS || result == GST_STATE_CHANGE_NO_PREROLL, state == GST_STATE_PAUSED else { return nil }
            whenPrerolled = nil
            return action()
        }
        func stopOnceClosedAndPlaying() {
            guard case .closed(let when) = window else { return }
            var state = GST_STATE_VOID_PENDING
            _ = gst_element_get_state(pipeline.raw, &state, nil, 0)  // the current state, not waiting
            guard state == GST_STATE_PLAYING || ContinuousClock.now - when > .seconds(5) else { return }
            window = .stopRequested
            requestStop()
        }
        while true {
            stopOnceClosedAndPlaying()
            if let error = playOncePrerolled() { return .failed(error) }
            // Prerolling, the end of it wakes the watch at once.
            let waitingFor = whenPrerolled == nil ? wanted : wanted | GST_MESSAGE_ASYNC_DONE.rawValue
            guard let msg = gst_bus_timed_pop_filtered(bus, 20_000_000, GstMessageType(rawValue: waitingFor)) else {
                sample()
                idle += 1
                // A refused start normally posts its error at once; 1 s of silence is the guard.
                if startFailed, idle >= 50 { return .failed(GraphError(.runFailed, "the pipeline failed to start")) }
                continue
            }
            defer { gk_message_unref(msg) }
            switch msg.pointee.type {
            case GST_MESSAGE_EOS:
                return .endOfStream
            case GST_MESSAGE_ERROR:
                if let node = recovered(msg) {
                    // (Once an attempt, up to one a second while a peer is away: the report has the gap.)
                    logger.debug("its connection failed; it connects again", metadata: ["node": .string(node)])
                    break
                }
                if let node = endingStream(msg) {
                    logger.info("its peer ended the stream", metadata: ["node": .string(node)])
                    break
                }
                return .failed(translate(error: msg, missing: missing))
            case GST_MESSAGE_APPLICATION:
                if let s = gst_message_get_structure(msg), String(cString: gst_structure_get_name(s)) == Self.cancelMessage {
                    return .cancelled
                }
            case GST_MESSAGE_WARNING:
                let (text, debug) = parse(msg, warning: true)
                var metadata: Logger.Metadata = [:]
                if let node = pipeline.directory.node(owning: msg.pointee.src) { metadata["node"] = .string(node) }
                // GStreamer's debug text is for developers: only a logger that shows debug
                // messages gets it (graphctl's --verbose), as errors print their cause only then.
                if let debug, logger.logLevel <= .debug { metadata["debug"] = .string(debug) }
                logger.warning("\(text.message)", metadata: metadata)
            case GST_MESSAGE_ELEMENT:
                if let node = closedWindow(msg) {
                    if case .no = window {
                        window = .closed(ContinuousClock.now)
                        logger.info("its window was closed: stopping the run; files are finished", metadata: ["node": .string(node)])
                    }
                } else if let m = MissingPlugin(msg, node: pipeline.directory.node(owning: msg.pointee.src)), !missing.contains(m) {
                    missing.append(m)
                }
            default:
                break
            }
            sample()
        }
    }

    /// The node whose element posted `msg`, an error, when the node says it recovers from it
    /// (``ExplainsFailures/failureIsRecovered(_:debug:)``); nil for a failure.
    private func recovered(_ msg: UnsafeMutablePointer<GstMessage>) -> String? {
        guard let nodeID = pipeline.directory.node(owning: msg.pointee.src),
              let node = nodes.first(where: { $0.spec.id == nodeID })?.node as? any ExplainsFailures else { return nil }
        let (parsed, debug) = parse(msg, warning: false)
        return node.failureIsRecovered(parsed.message, debug: debug) ? nodeID : nil
    }

    /// The node whose element posted `msg`, an error, when the node says the error is its
    /// stream's end (``ExplainsFailures/failureEndsStream(_:debug:)``); nil for a failure.
    private func endingStream(_ msg: UnsafeMutablePointer<GstMessage>) -> String? {
        guard let nodeID = pipeline.directory.node(owning: msg.pointee.src),
              let node = nodes.first(where: { $0.spec.id == nodeID })?.node as? any ExplainsFailures else { return nil }
        let (parsed, debug) = parse(msg, warning: false)
        return node.failureEndsStream(parsed.message, debug: debug) ? nodeID : nil
    }

    private enum WindowClosed { case no, closed(ContinuousClock.Instant), stopRequested }

    /// The node whose display's window was closed, if `msg` says so: the sink's "not found"
    /// resource error, which ``BinBuilder/display(_:title:)`` has turned into an element message
    /// before the pipeline saw it (see `gk_pipeline_watch_display`).
    private func closedWindow(_ msg: UnsafeMutablePointer<GstMessage>) -> String? {
        guard let s = gst_message_get_structure(msg), String(cString: gst_structure_get_name(s)) == GK_WINDOW_CLOSED else { return nil }
        return pipeline.statistics.node(ofDisplay: msg.pointee.src)
    }

    struct Parsed {
        var message: String
        var domain: Int32
        var code: Int32
    }

    private func parse(_ msg: UnsafeMutablePointer<GstMessage>, warning: Bool) -> (Parsed, String?) {
        var gerror: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        if warning { gst_message_parse_warning(msg, &gerror, &debug) } else { gst_message_parse_error(msg, &gerror, &debug) }
        defer {
            if gerror != nil { g_error_free(gerror) }
            g_free(debug)
        }
        // A URL an element quotes (an RTSP or RTMP location) is shown without its credentials.
        let text = RedactedURL.scrub(gerror.map { String(cString: $0.pointee.message) } ?? "unknown error")
        return (Parsed(message: text, domain: gk_error_domain(gerror), code: gerror?.pointee.code ?? 0), debug.map { RedactedURL.scrub(String(cString: $0)) })
    }

    /// A bus error as the GraphError a user reads: its code from GStreamer's error domain, its
    /// location and node from the element that posted it, and its message in the user's terms:
    /// what is wrong with the input file, which codec is missing and which Debian package adds
    /// it, why the output could not be written. GStreamer's own words and debug text become the
    /// cause (printed with --verbose). A Swift node's own error (kept when it failed) is reported
    /// as the node raised it.
    private func translate(error msg: UnsafeMutablePointer<GstMessage>, missing: [MissingPlugin]) -> GraphError {
        let (parsed, debug) = parse(msg, warning: false)
        let nodeID = pipeline.directory.node(owning: msg.pointee.src)
        if let nodeID, var own = failures.error(of: nodeID) {
            if own.problems.allSatisfy({ $0.location == nil }), let entry = nodes.first(where: { $0.spec.id == nodeID }) {
                own.problems[0].location = "node \"\(nodeID)\" (\(entry.spec.descriptor.type))"
            }
            return own
        }
        if let nodeID, let explaining = nodes.first(where: { $0.spec.id == nodeID })?.node as? any ExplainsFailures,
           let explained = explaining.explainFailure(parsed.message, debug: debug, location: location(of: nodeID)) {
            return explained
        }
        var code = GraphError.Code.runFailed
        switch (parsed.domain, parsed.code) {
        case (0, Int32(GST_CORE_ERROR_MISSING_PLUGIN.rawValue)), (3, Int32(GST_STREAM_ERROR_CODEC_NOT_FOUND.rawValue)):
            code = .missingPlugin
        case (2, Int32(GST_RESOURCE_ERROR_OPEN_WRITE.rawValue)), (2, Int32(GST_RESOURCE_ERROR_OPEN_READ_WRITE.rawValue)),
             (2, Int32(GST_RESOURCE_ERROR_WRITE.rawValue)), (2, Int32(GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue)):
            code = .outputUnwritable
        case (2, Int32(GST_RESOURCE_ERROR_BUSY.rawValue)):
            // A camera another program streams from (v4l2src), a sound card held (alsasrc).
            code = .deviceBusy
        case (3, Int32(GST_STREAM_ERROR_FAILED.rawValue)), (3, Int32(GST_STREAM_ERROR_DEMUX.rawValue)):
            // A stream the node found no decoder for is not exposed: the node then fails in its
            // own words ("has no video track"), but the cause is the missing decoder.
            if missing.contains(where: { $0.node == nodeID && $0.stream != nil }) { code = .missingPlugin }
        default:
            break
        }
        // A format GStreamer does not know at all is no plugin to install: a damaged file (a
        // flipped byte in an MP4's sample entry) or a codec nothing reads. It fails as damaged
        // media does (70), whichever element reports it first, naming the stream.
        let here = missing.filter { $0.node == nodeID }
        let unknownOnly = !missing.isEmpty && (here.isEmpty ? missing : here).allSatisfy(\.isUnknown)
        if code == .missingPlugin, unknownOnly { code = .runFailed }
        let entry = nodeID.flatMap { id in nodes.first { $0.spec.id == id } }
        let input = nodeID.flatMap { InputFile.feeding($0, pipeline: pipeline, graph: graph, nodes: nodes) }
        var message = parsed.message
        var cause = debug
        /// GStreamer's words, kept for --verbose above its debug text.
        func replaceMessage(with text: String) {
            cause = [parsed.message, debug].compactMap { $0 }.joined(separator: "\n")
            message = text
        }
        if code == .missingPlugin || unknownOnly, !missing.isEmpty {
            replaceMessage(with: MissingPlugin.message(here.isEmpty ? missing : here, input: input?.name))
        } else if code == .outputUnwritable, let output = entry?.node.output {
            replaceMessage(with: Self.writeFailure(parsed, debug: debug, path: output.path))
        } else if code == .runFailed, parsed.domain == 3, Self.isGStreamersStreamError(parsed), let input {
            if let diagnosis = ContainerDiagnosis.diagnose(path: input.path) {
                replaceMessage(with: diagnosis.sentence(about: input.name))
            } else if parsed.code == Int32(GST_STREAM_ERROR_TYPE_NOT_FOUND.rawValue) {
                replaceMessage(with: "\(input.name) is not in a media format GStreamer recognises")
            } else if parsed.code == Int32(GST_STREAM_ERROR_WRONG_TYPE.rawValue),
                      ["decodebin", "typefind"].contains(Self.factory(of: msg.pointee.src)) {
                // decodebin's type finder found text: "This appears to be a text file".
                replaceMessage(with: "\(input.name) is not in a media format GStreamer recognises (\(Self.sentence(parsed.message).lowercasedFirst))")
            }
        }
        // Caps that could not be agreed: GStreamer blames whoever was pushing ("Internal data
        // stream error" from the demuxer); the node whose input cannot take the stream's size,
        // channel count or rate is found and named, with what it takes.
        if code == .runFailed, failures.error(of: nodeID ?? "") == nil, debug?.contains("not-negotiated") == true,
           let refusal = refusal() {
            cause = [parsed.message, debug].compactMap { $0 }.joined(separator: "\n")
            return GraphError(code, at: location(of: refusal.node), refusal.message, node: refusal.node, cause: cause)
        }
        guard let nodeID, entry != nil else {
            return GraphError(code, message, cause: cause)
        }
        return GraphError(code, at: location(of: nodeID), message, node: nodeID, cause: cause)
    }

    /// `node "ID" (type, …)`, with what the node was doing: a sink writes its file, whatever
    /// failed; any other node reads what feeds it.
    private func location(of nodeID: String) -> String {
        Self.location(of: nodeID, graph: graph, nodes: nodes)
    }

    static func location(of nodeID: String, graph: Graph, nodes: [(spec: Graph.NodeSpec, node: any Node)]) -> String {
        guard let entry = nodes.first(where: { $0.spec.id == nodeID }) else { return "node \"\(nodeID)\"" }
        var doing = ""
        if let output = entry.node.output {
            doing = ", writing \"\(output.path)\""
        } else if let d = entry.node.mediaDescription ?? describe(upstreamOf: nodeID, graph: graph, nodes: nodes) {
            doing = ", reading \(d)"
        }
        return "node \"\(nodeID)\" (\(entry.spec.descriptor.type)\(doing))"
    }

    /// After caps could not be agreed: the raw stream whose caps a pad refused, and the node
    /// downstream of where it was refused whose input cannot take its size (video), channel
    /// count or rate (audio). Each node's input is asked what it takes (a caps query, which
    /// also asks everything after it), so the node at fault is the last one in the graph's
    /// order that refuses: nothing after it does. Nil when no node's input refuses those.
    private func refusal() -> (node: String, message: String)? {
        // Each pad that looks refused is tried in turn: a pad of another stream caught between
        // storing its caps and sending them looks the same, and no node refuses what it holds.
        // The pads tried are passed over by identity (a count would pass over the wrong pad
        // once that other pad has sent its caps: the set changes between two searches).
        var tried: [UnsafeMutablePointer<GstPad>?] = []
        defer { for pad in tried { gst_object_unref(UnsafeMutableRawPointer(pad)) } }
        while tried.count < 64 {
            var owner: UnsafeMutablePointer<GstElement>?, pad: UnsafeMutablePointer<GstPad>?
            guard let offered = gk_bin_find_refused_caps(pipeline.bin, tried, guint(tried.count), &owner, &pad) else { return nil }
            tried.append(pad)
            if let found = refusal(of: offered, owner: owner) { return found }
        }
        return nil
    }

    /// The node that cannot take `offered`, the caps `owner`'s source pad could not send.
    /// Takes both references.
    private func refusal(of offered: UnsafeMutablePointer<GstCaps>, owner: UnsafeMutablePointer<GstElement>?) -> (node: String, message: String)? {
        defer {
            gk_caps_unref(offered)
            if let owner { gst_object_unref(UnsafeMutableRawPointer(owner)) }
        }
        guard let origin = owner.flatMap({ pipeline.directory.node(owning: UnsafeMutableRawPointer($0).assumingMemoryBound(to: GstObject.self)) }) else {
            return nil
        }
        var value: Int32 = 0
        let video = gk_caps_int_field(offered, "width", &value) != 0
        let fields = video ? ["width", "height"] : ["channels", "rate"]
        var downstream: Set<String> = []
        var frontier = [origin]
        while let n = frontier.popLast() {
            for e in graph.edges(from: n) where downstream.insert(e.to.node).inserted { frontier.append(e.to.node) }
        }
        /// The input of `node` the stream reaches: fed by the origin or by a node after it.
        func port(of node: String) -> String? {
            graph.edges(into: node).first { $0.from.node == origin || downstream.contains($0.from.node) }?.to.port
        }
        // A node that declares it cannot take the stream's channel count or rate (encode.aac: 1
        // to 63 channels) is the one; else the last that refuses it (nothing after it does).
        var count: Int32 = 0, rate: Int32 = 0
        let audio = !video && gk_caps_int_field(offered, "channels", &count) != 0 && gk_caps_int_field(offered, "rate", &rate) != 0
        func declaresRefusal(_ set: FormatSet) -> Bool {
            !set.patterns.contains { pattern in
                switch pattern {
                case .any: true
                case let .pcm(_, rates, channels): rates.contains(Int(rate)) && channels.contains(Int(count))
                case .aac, .rawVideo, .h264, .video, .audio, .peaks, .container: false
                }
            }
        }
        var culprit: (node: String, refused: [String], accepted: UnsafeMutablePointer<GstCaps>)?
        search: for spec in graph.nodes where downstream.contains(spec.id) {
            for pad in entryPads(of: spec.id) {
                defer { gst_object_unref(UnsafeMutableRawPointer(pad)) }
                guard let accepted = gst_pad_query_caps(pad, nil) else { continue }
                let refused = fields.filter { gk_caps_field_refused(offered, accepted, $0) != 0 }
                if refused.isEmpty || culprit?.node == spec.id {
                    gk_caps_unref(accepted)
                    continue
                }
                if let previous = culprit { gk_caps_unref(previous.accepted) }
                culprit = (spec.id, refused, accepted)
                if audio, let declared = port(of: spec.id).flatMap(spec.descriptor.input)?.formats, declaresRefusal(declared) {
                    break search
                }
            }
        }
        guard let culprit else { return nil }
        defer { gk_caps_unref(culprit.accepted) }
        func int(_ field: String) -> Int {
            var v: Int32 = 0
            return gk_caps_int_field(offered, field, &v) != 0 ? Int(v) : 0
        }
        func takes(_ field: String, _ unit: String) -> String {
            var low: Int32 = 0, high: Int32 = 0
            guard gk_caps_field_span(culprit.accepted, field, &low, &high) != 0 else { return "no \(unit) GraphKit can name" }
            return high == Int32.max ? "\(unit) of \(low) or more" : low == high ? "\(unit) of \(low)" : "\(unit) of \(low) to \(high)"
        }
        let subject = nodes.first { $0.spec.id == origin }?.node.mediaDescription
            ?? describe(upstreamOf: origin) ?? "the stream from node \"\(origin)\""
        let port = port(of: culprit.node)
        let what: String, limits: [String]
        if video {
            what = "\(int("width"))x\(int("height")) video"
            limits = culprit.refused.map { takes($0, $0 == "width" ? "a width" : "a height") }
        } else {
            let (count, rate) = (int("channels"), int("rate"))
            what = culprit.refused.contains("channels") ? "\(count) audio channel\(count == 1 ? "" : "s")" : "audio at \(rate) Hz"
            limits = culprit.refused.map { takes($0, $0 == "channels" ? "channel counts" : "rates (Hz)") }
        }
        return (culprit.node, "\(subject) has \(what), and its input\(port.map { " \"\($0)\"" } ?? "") takes "
                + ParameterDescriptor.list(limits, "and"))
    }

    /// The pads where a node's stream enters it: sink pads of its elements whose peer belongs to
    /// another node (an edge's queue counts as the node's). New references.
    private func entryPads(of nodeID: String) -> [UnsafeMutablePointer<GstPad>] {
        var pads: [UnsafeMutablePointer<GstPad>] = []
        guard let elements = gst_bin_iterate_elements(pipeline.bin) else { return pads }
        defer { gst_iterator_free(elements) }
        var item = GValue()
        defer { if item.g_type != 0 { g_value_unset(&item) } }
        while gst_iterator_next(elements, &item) == GST_ITERATOR_OK {
            defer { g_value_reset(&item) }
            guard let object = g_value_get_object(&item) else { continue }
            let element = object.assumingMemoryBound(to: GstElement.self)
            guard pipeline.directory.node(owning: object.assumingMemoryBound(to: GstObject.self)) == nodeID,
                  let sinks = gst_element_iterate_sink_pads(element) else { continue }
            defer { gst_iterator_free(sinks) }
            var padItem = GValue()
            defer { if padItem.g_type != 0 { g_value_unset(&padItem) } }
            while gst_iterator_next(sinks, &padItem) == GST_ITERATOR_OK {
                defer { g_value_reset(&padItem) }
                guard let pad = g_value_get_object(&padItem)?.assumingMemoryBound(to: GstPad.self),
                      let peer = gst_pad_get_peer(pad) else { continue }
                defer { gst_object_unref(UnsafeMutableRawPointer(peer)) }
                let upstream = gst_pad_get_parent_element(peer)
                defer { if let upstream { gst_object_unref(UnsafeMutableRawPointer(upstream)) } }
                let from = upstream.flatMap { pipeline.directory.node(owning: UnsafeMutableRawPointer($0).assumingMemoryBound(to: GstObject.self)) }
                if from != nodeID {
                    gst_object_ref(UnsafeMutableRawPointer(pad))
                    pads.append(pad)
                }
            }
        }
        return pads
    }

    /// A stream error in GStreamer's words, which a diagnosis of the input may replace: a
    /// demuxer's or decoder's, or the general one. A node's own message (the general code with
    /// words of its own, such as "has no audio track") is never replaced.
    private static func isGStreamersStreamError(_ parsed: Parsed) -> Bool {
        switch parsed.code {
        case Int32(GST_STREAM_ERROR_TYPE_NOT_FOUND.rawValue), Int32(GST_STREAM_ERROR_WRONG_TYPE.rawValue),
             Int32(GST_STREAM_ERROR_DECODE.rawValue), Int32(GST_STREAM_ERROR_DEMUX.rawValue),
             Int32(GST_STREAM_ERROR_FORMAT.rawValue):
            return true
        case Int32(GST_STREAM_ERROR_FAILED.rawValue):
            return parsed.message == defaultMessage(domain: gst_stream_error_quark(), code: parsed.code)
        default:
            return false
        }
    }

    private static func defaultMessage(domain: GQuark, code: Int32) -> String? {
        guard let text = gst_error_get_message(domain, code) else { return nil }
        defer { g_free(text) }
        return String(cString: text)
    }

    /// "cannot write "out.m4a": no space left on device": the output as the graph names it (not
    /// the temporary file being written) and the system's reason, found in GStreamer's words.
    static func writeFailure(_ parsed: Parsed, debug: String?, path: String) -> String {
        let temporary = OutputFile(path: path, location: "", node: "").temporary.path
        var reason: String?
        if parsed.code == Int32(GST_RESOURCE_ERROR_NO_SPACE_LEFT.rawValue) {
            reason = String(cString: strerror(ENOSPC))
        } else {
            reason = systemReason(in: [debug, parsed.message].compactMap { $0 }.joined(separator: "\n"))
        }
        // GStreamer's own sentence only when it adds something: not its domain's default, and
        // not one about a temporary file (ours, or mp4mux's unnamed one beside the output),
        // whose name the user never gave: the output and the system's reason say it all.
        var detail: String?
        if parsed.message != defaultMessage(domain: gst_resource_error_quark(), code: parsed.code),
           !parsed.message.contains(temporary), !parsed.message.lowercased().contains("temporary file") {
            var sentence = parsed.message
            if sentence.hasSuffix(".") { sentence.removeLast() }
            detail = sentence.lowercasedFirst
        }
        let because = [detail, reason.map(\.lowercasedFirst)].compactMap { $0 }.joined(separator: ": ")
        return "cannot write \"\(path)\": \(because.isEmpty ? "the write failed" : because)"
    }

    /// The strerror(3) text of an errno that `text` contains (GStreamer puts it in its debug
    /// text: "system error: File too large"), the longest one if several match.
    static func systemReason(in text: String) -> String? {
        var best: String?
        for number in 1..<134 {
            guard let s = strerror(Int32(number)) else { continue }
            let words = String(cString: s)
            if words.hasPrefix("Unknown error") { continue }
            if text.contains(words), words.count > (best?.count ?? 0) { best = words }
        }
        return best
    }

    /// The factory name of the element `object` is, if it is one.
    static func factory(of object: UnsafeMutablePointer<GstObject>?) -> String? {
        gk_object_factory_name(object).map { String(cString: $0) }
    }

    /// A sentence without its final period, to go inside another.
    static func sentence(_ s: String) -> String { s.hasSuffix(".") ? String(s.dropLast()) : s }

    private func describe(upstreamOf id: String) -> String? {
        Self.describe(upstreamOf: id, graph: graph, nodes: nodes)
    }

    /// The nearest description upstream of a node (a file's path, a device).
    static func describe(upstreamOf id: String, graph: Graph, nodes: [(spec: Graph.NodeSpec, node: any Node)]) -> String? {
        for e in graph.edges(into: id) {
            if let n = nodes.first(where: { $0.spec.id == e.from.node }), let d = n.node.mediaDescription { return d }
            if let d = describe(upstreamOf: e.from.node, graph: graph, nodes: nodes) { return d }
        }
        return nil
    }
}
