import CGStreamer
import CGraphKitGlue
import FoundationEssentials
import Glibc
import GraphKitCore
import MediaContainers
import Synchronization

/// One of a node's GStreamer elements, seen without GStreamer types.
public final class Element: Sendable {
    private let reference: GstObjectReference<GstElement>
    var raw: UnsafeMutablePointer<GstElement> { reference.raw }
    public let name: String
    public let factory: String
    let nodeID: String
    /// Owns the callbacks this element's handlers hand GStreamer (the run's registry).
    let callbacks: CallbackRegistry

    init(raw: UnsafeMutablePointer<GstElement>, factory: String, nodeID: String, callbacks: CallbackRegistry) {
        reference = GstObjectReference(raw)
        self.factory = factory
        self.nodeID = nodeID
        self.callbacks = callbacks
        if let name = gst_object_get_name(UnsafeMutableRawPointer(raw).assumingMemoryBound(to: GstObject.self)) {
            self.name = String(cString: name)
            g_free(name)  // a copy, ours to free
        } else {
            self.name = factory
        }
    }

    var object: UnsafeMutableRawPointer { UnsafeMutableRawPointer(raw) }

    /// Sets a property from a value's text form, typed by the property's own declaration.
    /// Throws (rather than GStreamer's silent ignore) for an unknown property or a bad value.
    public func set(_ property: String, _ value: some CustomStringConvertible) throws(GraphError) {
        switch gk_object_set_from_string(object, property, value.description) {
        case 0: return
        case 1: throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "element \(factory) has no property \"\(property)\"", node: nodeID)
        default: throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "element \(factory) rejects \(property)=\(value)", node: nodeID)
        }
    }

    /// Gives a muxer a tag of the file it writes (GStreamer's names: `title`, `artist`,
    /// `album-artist`, `datetime`…), its value as text (a date and time in ISO 8601).
    public func setTag(_ tag: String, _ value: String) throws(GraphError) {
        switch gk_tag_setter_set(raw, tag, value) {
        case 0: return
        case 1: throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "element \(factory) takes no tags", node: nodeID)
        case 2: throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "GStreamer has no tag \"\(tag)\"", node: nodeID)
        default: throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "\"\(value)\" is not a value of the tag \(tag)", node: nodeID)
        }
    }

    /// Gives a muxer that takes a table of contents (`matroskamux`) chapters: each its start
    /// and end in seconds (nil: none stated) and its title. False when it takes none.
    @discardableResult
    public func setChapters(_ chapters: [(start: Double, end: Double?, title: String)]) -> Bool {
        guard !chapters.isEmpty else { return false }  // an empty edition is not a valid one
        func nanoseconds(_ s: Double) -> UInt64 { s.isFinite && s > 0 ? UInt64(min(s, 1e9) * 1e9) : 0 }
        let starts = chapters.map { nanoseconds($0.start) }
        let ends = chapters.map { $0.end.map(nanoseconds) ?? .max }
        var titles = chapters.map { strdup($0.title) }
        defer { titles.forEach { free($0) } }
        return titles.withUnsafeMutableBufferPointer { t in
            t.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: t.count) { pointers in
                gk_toc_setter_set_chapters(raw, UInt32(chapters.count), starts, ends, pointers) == 0
            }
        }
    }

    /// Links this element's source pad to `next`'s sink pad, while the pipeline runs (a
    /// demuxer's pad-added handler choosing a route); false when they cannot be linked. Formats
    /// are not checked here: they are agreed when the stream flows, where a refusal names the
    /// node that refuses (see ``Pad/link(to:pad:checkingCaps:)``).
    public func link(to next: Element) -> Bool {
        gst_element_link_pads_full(raw, "src", next.raw, "sink", GST_PAD_LINK_CHECK_HIERARCHY) != 0
    }

    /// Undoes ``link(to:)``: a pad-added handler taking another route than the one built,
    /// before any data went the built way.
    public func unlink(from next: Element) {
        gst_element_unlink(raw, next.raw)
    }

    /// A property's value in text form.
    public func property(_ name: String) -> String? {
        guard let s = gk_object_get_as_string(object, name) else { return nil }
        defer { g_free(s) }
        return String(cString: s)
    }

    /// Called on a streaming thread when the element adds a pad (a demuxer found a stream).
    /// The handler is kept until the run ends, then released: it may capture its node.
    public func onPadAdded(_ handler: @escaping @Sendable (Pad) -> Void) {
        let nodeID = self.nodeID
        let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<GstPad>?, UnsafeMutableRawPointer?) -> Void = { element, pad, ctx in
            guard let pad, let ctx else { return }
            gk_callback_enter(element)
            defer { gk_callback_leave(element) }
            let h = Unmanaged<Handler<(UnsafeMutablePointer<GstPad>)>>.fromOpaque(ctx).takeUnretainedValue()
            h.call(pad)
        }
        callbacks.connect(object, "pad-added", unsafeBitCast(callback, to: GCallback.self),
                          context: Handler<(UnsafeMutablePointer<GstPad>)> { handler(Pad(raw: $0, nodeID: nodeID)) })
    }

    /// Called on a streaming thread once a demuxer has added every pad it will.
    public func onNoMorePads(_ handler: @escaping @Sendable () -> Void) {
        let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void = { element, ctx in
            guard let ctx else { return }
            gk_callback_enter(element)
            defer { gk_callback_leave(element) }
            Unmanaged<Handler<Void>>.fromOpaque(ctx).takeUnretainedValue().call(())
        }
        callbacks.connect(object, "no-more-pads", unsafeBitCast(callback, to: GCallback.self), context: Handler<Void>(handler))
    }

    /// Called as `rtspsrc` is about to send a request, with its method (`PLAY`, `SETUP`…): when
    /// the server was asked to play. The request is sent as it is.
    public func onRTSPRequest(_ handler: @escaping @Sendable (String) -> Void) {
        let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> gboolean = { element, message, ctx in
            guard let ctx, let method = gk_rtsp_request_method(message) else { return 1 }
            gk_callback_enter(element)
            defer { gk_callback_leave(element) }
            Unmanaged<Handler<String>>.fromOpaque(ctx).takeUnretainedValue().call(String(cString: method))
            return 1
        }
        callbacks.connect(object, "before-send", unsafeBitCast(callback, to: GCallback.self), context: Handler<String>(handler))
    }

    /// Called as `rtspsrc` is about to set up each stream of the server's description (SDP), with
    /// its media ("video", "audio"…) and its RTP clock rate (nil when the description gives none):
    /// true sets the stream up, false leaves it out.
    public func onRTSPStreamSelect(_ handler: @escaping @Sendable (_ media: String, _ clockRate: Int?) -> Bool) {
        let callback: @convention(c) (UnsafeMutableRawPointer?, UInt32, UnsafeMutablePointer<GstCaps>?, UnsafeMutableRawPointer?) -> gboolean = { element, _, caps, ctx in
            guard let ctx, let caps else { return 1 }
            gk_callback_enter(element)
            defer { gk_callback_leave(element) }
            var media = ""
            if gst_caps_get_size(caps) > 0, let s = gst_caps_get_structure(caps, 0), let m = gst_structure_get_string(s, "media") { media = String(cString: m) }
            var rate: Int32 = 0
            let known = gk_caps_int_field(caps, "clock-rate", &rate) != 0
            let asker = Unmanaged<Asker<(String, Int?), Bool>>.fromOpaque(ctx).takeUnretainedValue()
            return asker.answer((media, known ? Int(rate) : nil)) ? 1 : 0
        }
        callbacks.connect(object, "select-stream", unsafeBitCast(callback, to: GCallback.self),
                          context: Asker<(String, Int?), Bool> { handler($0.0, $0.1) })
    }

    /// Trusts the certificate authorities in the PEM file at `path` for this element's TLS
    /// connections (its `tls-database`), instead of the system's. Throws GIO's reason when the
    /// file holds none it can read.
    public func trustCertificates(at path: String) throws(GraphError) {
        if let words = gk_set_tls_database(raw, path) {
            defer { g_free(words) }
            throw GraphError(.inputUnreadable, String(cString: words))
        }
    }

    /// Called when a TLS element refuses the certificate its server presented (its `accept-
    /// certificate` signal, after the checks against the trusted authorities failed), with what
    /// is wrong with it in words ("it is signed by an authority that is not trusted"…). The
    /// certificate stays refused.
    public func onCertificateRefused(_ handler: @escaping @Sendable (String) -> Void) {
        let callback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?, UInt32, UnsafeMutableRawPointer?) -> gboolean = { element, _, _, flags, ctx in
            guard let ctx else { return 0 }
            gk_callback_enter(element)
            defer { gk_callback_leave(element) }
            Unmanaged<Handler<String>>.fromOpaque(ctx).takeUnretainedValue().call(Element.certificateProblems(flags))
            return 0
        }
        callbacks.connect(object, "accept-certificate", unsafeBitCast(callback, to: GCallback.self), context: Handler<String>(handler))
    }

    /// GIO's certificate flags (GTlsCertificateFlags) in words.
    static func certificateProblems(_ flags: UInt32) -> String {
        let words: [(UInt32, String)] = [
            (1, "it is signed by an authority that is not trusted"), (2, "it is not for this host"),
            (4, "it is not valid yet"), (8, "it has expired"), (16, "it has been revoked"),
            (32, "its algorithm is insecure"), (64, "it could not be checked"),
        ]
        let found = words.filter { flags & $0.0 != 0 }.map(\.1)
        return found.isEmpty ? "it was refused" : found.joined(separator: ", ")
    }

    /// Called on the streaming thread with each new format arriving at this element's sink pad,
    /// before the element sees it: the moment to configure it from its input (an encoder's
    /// bitrate from the frame size).
    public func onInputFormat(pad: String = "sink", _ handler: @escaping @Sendable (MediaFormat) -> Void) {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        let box = Unmanaged.passRetained(Handler<MediaFormat>(handler)).toOpaque()
        let id = gk_pad_add_transform(p, nil, { ctx, kind, caps in
            guard kind == 0, let ctx, let caps, let format = GStreamer.format(from: caps) else { return }
            Unmanaged<Handler<MediaFormat>>.fromOpaque(ctx).takeUnretainedValue().call(format)
        }, box, { ctx in Unmanaged<Handler<MediaFormat>>.fromOpaque(ctx!).release() })
        callbacks.adopt(probe: id, on: p)
    }

    /// Called on the streaming thread when end of stream reaches this element's sink pad, before
    /// the element sees it: the element gets it when the handler returns (a network sink letting
    /// its transport deliver what it still holds before it closes). The handler must return soon.
    public func onEndOfStream(pad: String = "sink", _ handler: @escaping @Sendable () -> Void) {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        let box = Unmanaged.passRetained(Handler<Void>({ _ in handler() })).toOpaque()
        let id = gk_pad_add_transform(p, nil, { ctx, kind, _ in
            guard kind == 1, let ctx else { return }
            Unmanaged<Handler<Void>>.fromOpaque(ctx).takeUnretainedValue().call(())
        }, box, { ctx in Unmanaged<Handler<Void>>.fromOpaque(ctx!).release() })
        callbacks.adopt(probe: id, on: p)
    }

    /// Called on the streaming thread with each buffer's index and time as it arrives at this
    /// element's sink pad, before the element sees it (a frame counter drawn by an overlay).
    public func onEachBuffer(pad: String = "sink", _ handler: @escaping @Sendable (Int, MediaTime?) -> Void) {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        let box = Unmanaged.passRetained(BufferHandler(handler)).toOpaque()
        let id = gk_pad_add_transform(p, { ctx, buffer in
            let h = Unmanaged<BufferHandler>.fromOpaque(ctx!).takeUnretainedValue()
            let pts = buffer!.pointee.pts
            h.handler(h.count.add(1, ordering: .relaxed).oldValue, pts == GstClockTime.max ? nil : MediaTime(nanoseconds: UInt64(pts)))
            return buffer
        }, nil, box, { ctx in Unmanaged<BufferHandler>.fromOpaque(ctx!).release() })
        callbacks.adopt(probe: id, on: p)
    }

    /// Called on the streaming thread with each buffer's time (running time, nil when it has
    /// none) as it leaves this element's source pad `pad`; a handler returning true marks that
    /// buffer discontinuous (the first after a gap in a live stream), so what follows knows.
    public func onEachBuffer(leaving pad: String, _ handler: @escaping @Sendable (MediaTime?) -> Bool) {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        final class Watch: Sendable {
            let handler: @Sendable (MediaTime?) -> Bool
            init(_ h: @escaping @Sendable (MediaTime?) -> Bool) { handler = h }
        }
        let box = Unmanaged.passRetained(Watch(handler)).toOpaque()
        let id = gk_pad_add_transform(p, { ctx, buffer in
            let w = Unmanaged<Watch>.fromOpaque(ctx!).takeUnretainedValue()
            let pts = buffer!.pointee.pts
            guard w.handler(pts == GstClockTime.max ? nil : MediaTime(nanoseconds: UInt64(pts))) else { return buffer }
            let writable = gk_buffer_make_writable(buffer)
            writable?.pointee.mini_object.flags |= GST_BUFFER_FLAG_DISCONT.rawValue
            return writable
        }, nil, box, { ctx in Unmanaged<Watch>.fromOpaque(ctx!).release() })
        callbacks.adopt(probe: id, on: p)
    }

    /// Stamps the raw audio leaving `pad` by its sample count, whatever the source stamped:
    /// the first buffer at its arrival (the clock's running time then), each next one where the
    /// one before ends. When arrival runs ahead of the count by more than `tolerance` seconds
    /// (samples were lost), the count starts again from the arrival, the buffer marked
    /// discontinuous. For a live source whose own times cannot be trusted: PipeWire 1.4 stamped
    /// every buffer of its audio test source with the same time, 0.5 ms, and 0.3.65 with none.
    public func stampAudioBySampleCount(leaving pad: String, sampleRate: Int, bytesPerFrame: Int, tolerance: Double = 0.04) {
        guard sampleRate > 0, bytesPerFrame > 0, let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        // Touched by the streaming thread only; the element outlives its pad's probe.
        final class Count: @unchecked Sendable {
            let element: UnsafeMutablePointer<GstElement>
            let rate: UInt64, bytesPerFrame: Int, tolerance: UInt64
            var next: UInt64?
            init(_ element: UnsafeMutablePointer<GstElement>, _ rate: Int, _ bytesPerFrame: Int, _ tolerance: Double) {
                (self.element, self.rate, self.bytesPerFrame, self.tolerance) = (element, UInt64(rate), bytesPerFrame, UInt64(max(0, tolerance) * 1e9))
            }
            /// The running time now; nil before the element has a clock.
            func arrival() -> UInt64? {
                guard let clock = gst_element_get_clock(element) else { return nil }
                defer { gst_object_unref(UnsafeMutableRawPointer(clock)) }
                let now = gst_clock_get_time(clock), base = gst_element_get_base_time(element)
                return UInt64(now >= base ? now - base : 0)
            }
        }
        let box = Unmanaged.passRetained(Count(raw, sampleRate, bytesPerFrame, tolerance)).toOpaque()
        let id = gk_pad_add_transform(p, { ctx, buffer in
            let c = Unmanaged<Count>.fromOpaque(ctx!).takeUnretainedValue()
            guard let writable = gk_buffer_make_writable(buffer) else { return buffer }
            let frames = UInt64(Int(gst_buffer_get_size(writable)) / c.bytesPerFrame)
            let now = c.arrival()
            var start = c.next ?? now ?? 0
            if let now, let expected = c.next, now > expected, now - expected > c.tolerance {
                start = now
                writable.pointee.mini_object.flags |= GST_BUFFER_FLAG_DISCONT.rawValue
            }
            let length = frames * 1_000_000_000 / c.rate
            writable.pointee.pts = GstClockTime(start)
            writable.pointee.dts = GstClockTime(start)
            writable.pointee.duration = GstClockTime(length)
            c.next = start + length
            return writable
        }, nil, box, { ctx in Unmanaged<Count>.fromOpaque(ctx!).release() })
        callbacks.adopt(probe: id, on: p)
    }

    /// Ends the stream leaving this element's source pad `pad` now, from any thread: end of
    /// stream goes downstream, and what the element pushes after it is refused (it stops). For a
    /// live source waiting for a peer that has not come back.
    public func endStream(leaving pad: String = "src") {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        gk_pad_push_eos(p)
    }

    /// Wakes a source blocked in its state change or in making a buffer (``GStreamer`` base
    /// sources: its `unlock`), from any thread, by sending flush-start into its source pad `pad`.
    /// The source then fails its state change or stops: for a run that is over (failed or
    /// cancelled) while the source still waits for its device. Not through the element (that
    /// takes the state lock the blocked change holds).
    public func interruptWaiting(at pad: String = "src") {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        _ = gst_pad_send_event(p, gst_event_new_flush_start())
    }

    /// What reaches a sink pad of an encoded stream, for a node that writes its own files from
    /// the samples (``onEncodedSamples(pad:_:)``).
    public enum EncodedSampleEvent: Sendable {
        /// A new format, with the encoder's configuration bytes (caps' `codec_data`: H.264's
        /// AVCDecoderConfigurationRecord, AAC's AudioSpecificConfig), empty when it has none,
        /// and what else the caps say of the stream (``EncodedFormatDetails``).
        case format(MediaFormat?, codecData: [UInt8], details: EncodedFormatDetails)
        /// A sample, its times on the run's clock (from when the run started; a decode time
        /// can be before it).
        case sample(SampleBuffer, presentationTime: MediaTime?, decodeTime: MediaTime?)
        case end
        /// A flush (a seek's, such as `GraphRun.start(at:)`'s after its preroll): the samples
        /// before it are stale; the stream starts again, its format as it was.
        case flush
    }

    /// What an encoded stream's caps say besides its format and configuration bytes: the
    /// streamheader's buffers (Opus's `OpusHead`), the colour as ISO/IEC 23091-2 code points, and
    /// HDR's mastering display and content light level as an MP4's `mdcv` and `clli` hold them.
    public struct EncodedFormatDetails: Sendable, Equatable {
        public var streamHeaders: [[UInt8]] = []
        public var primaries: Int?, transfer: Int?, matrix: Int?, fullRange = false
        public var masteringDisplay: [UInt8]?
        public var contentLightLevel: [UInt8]?
        public init() {}

        init(_ caps: UnsafePointer<GstCaps>) {
            for i in 0..<8 {
                let n = Int(gk_caps_stream_header(caps, guint(i), nil, 0))
                guard n > 0, n <= 1 << 20 else { break }
                var bytes = [UInt8](repeating: 0, count: n)
                _ = bytes.withUnsafeMutableBufferPointer { gk_caps_stream_header(caps, guint(i), $0.baseAddress, gsize(n)) }
                streamHeaders.append(bytes)
            }
            var p: gint = 0, t: gint = 0, m: gint = 0, full: gint = 0
            if gk_caps_colour(caps, &p, &t, &m, &full) != 0 {
                (primaries, transfer, matrix, fullRange) = (Int(p), Int(t), Int(m), full != 0)
            }
            var mdcv = [UInt8](repeating: 0, count: 24), clli = [UInt8](repeating: 0, count: 4)
            if gk_caps_mastering_display(caps, &mdcv) != 0 { masteringDisplay = mdcv }
            if gk_caps_content_light(caps, &clli) != 0 { contentLightLevel = clli }
        }
    }

    /// Called on the streaming thread with each format, sample and the end of the stream as
    /// they arrive at this element's sink pad (a `fakesink`'s, for a node that writes from Swift).
    /// The samples share the pipeline's buffers (no copy). Times are running times: an encoder's
    /// own offsets (x264's 1000 hours before its first frame) are taken out, as a muxer does.
    public func onEncodedSamples(pad: String = "sink", _ handler: @escaping @Sendable (EncodedSampleEvent) -> Void) {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        final class Watch: Sendable {
            let handler: @Sendable (EncodedSampleEvent) -> Void
            /// The current format; touched only on the pad's streaming thread.
            let format = Guarded<MediaFormat?>(nil)
            init(_ h: @escaping @Sendable (EncodedSampleEvent) -> Void) { handler = h }
        }
        let box = Unmanaged.passRetained(Watch(handler)).toOpaque()
        let id = gk_pad_watch_samples(p, { ctx, buffer, pts, dts in
            let w = Unmanaged<Watch>.fromOpaque(ctx!).takeUnretainedValue()
            func time(_ t: gint64) -> MediaTime? { t == gint64.min ? nil : MediaTime(value: Int64(t), timescale: MediaTime.nanosecondTimescale) }
            let sample = SampleBuffer(owning: gk_buffer_ref(buffer!), format: w.format.withLock { $0 })
            w.handler(.sample(sample, presentationTime: time(pts), decodeTime: time(dts)))
        }, { ctx, kind, caps in
            let w = Unmanaged<Watch>.fromOpaque(ctx!).takeUnretainedValue()
            if kind == 1 { return w.handler(.end) }
            if kind == 2 { return w.handler(.flush) }
            guard let caps else { return }
            let format = GStreamer.format(from: caps)
            w.format.withLock { $0 = format }
            var data = [UInt8](repeating: 0, count: Int(gk_caps_codec_data(caps, nil, 0)))
            if !data.isEmpty { _ = data.withUnsafeMutableBufferPointer { gk_caps_codec_data(caps, $0.baseAddress, gsize($0.count)) } }
            w.handler(.format(format, codecData: data, details: EncodedFormatDetails(caps)))
        }, box, { ctx in Unmanaged<Watch>.fromOpaque(ctx!).release() })
        callbacks.adopt(probe: id, on: p)
    }

    /// Passes the buffers arriving at this element's sink pad while `admit` (given each one's
    /// size, on the streaming thread) says yes; the first it refuses is dropped and end of
    /// stream is sent on in its place, so the element finishes with what came before (what
    /// ffmpeg's `-fs` does at a muxer's input). Later buffers meet the ended pad.
    public func passWhile(pad: String = "sink", _ admit: @escaping @Sendable (Int) -> Bool) {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        final class Gate: Sendable {
            let admit: @Sendable (Int) -> Bool
            /// The pad, not referenced: the probe lives on it and goes with it.
            nonisolated(unsafe) let pad: UnsafeMutablePointer<GstPad>
            let ended = Atomic(false)
            init(_ admit: @escaping @Sendable (Int) -> Bool, pad: UnsafeMutablePointer<GstPad>) { self.admit = admit; self.pad = pad }
        }
        let box = Unmanaged.passRetained(Gate(admit, pad: p)).toOpaque()
        let id = gk_pad_add_transform(p, { ctx, buffer in
            let gate = Unmanaged<Gate>.fromOpaque(ctx!).takeUnretainedValue()
            if !gate.ended.load(ordering: .relaxed), gate.admit(Int(gst_buffer_get_size(buffer))) { return buffer }
            gk_buffer_unref(buffer)
            if !gate.ended.exchange(true, ordering: .relaxed) { gk_pad_send_eos(gate.pad) }
            return nil
        }, nil, box, { ctx in Unmanaged<Gate>.fromOpaque(ctx!).release() })
        callbacks.adopt(probe: id, on: p)
    }

    /// Bounds what a peer can make this element hold: the bytes it takes in since it last gave
    /// a buffer out. A depayloader keeps a frame's fragments until the last one, so a peer that
    /// starts a frame and never ends it would fill memory; past `limit` the run fails with
    /// `message` (70), `exceeded` is called once (on the streaming thread: to stop reading from
    /// the peer) and what comes in is dropped.
    public func boundHeldBytes(_ limit: Int, message: String, exceeded: (@Sendable () -> Void)? = nil) {
        withExceeded(exceeded) { gk_bound_held_bytes(raw, guint64(max(limit, 0)), message, $0, $1, $2) }
    }

    /// The same bound on each jitter buffer this `rtspsrc` makes: the packets it queues between
    /// reading the server and passing them on, before it passes any on.
    public func boundJitterBuffers(_ limit: Int, message: String, exceeded: (@Sendable () -> Void)? = nil) {
        withExceeded(exceeded) { gk_rtspsrc_bound_jitter_buffers(raw, guint64(max(limit, 0)), message, $0, $1, $2) }
    }

    /// Calls `body` with `exceeded` as a C callback, its context and the context's release.
    private func withExceeded(_ exceeded: (@Sendable () -> Void)?,
                              _ body: (GkHeldExceeded?, UnsafeMutableRawPointer?, GDestroyNotify?) -> Void) {
        final class Box: Sendable {
            let exceeded: @Sendable () -> Void
            init(_ exceeded: @escaping @Sendable () -> Void) { self.exceeded = exceeded }
        }
        guard let exceeded else { return body(nil, nil, nil) }
        body({ ctx in Unmanaged<Box>.fromOpaque(ctx!).takeUnretainedValue().exceeded() },
             Unmanaged.passRetained(Box(exceeded)).toOpaque(), { ctx in Unmanaged<Box>.fromOpaque(ctx!).release() })
    }

    /// Bounds, in the MPEG-TS leaving `pad`, each stream's bytes since its last unit started
    /// (what a demuxer holds of one PES): past `limit` the run fails with `message` (70).
    public func boundTransportStreamUnits(leaving pad: String = "src", _ limit: Int, message: String) {
        gk_bound_transport_stream_units(raw, pad, guint64(max(limit, 0)), message)
    }

    /// Asks whatever encodes the stream arriving at this element's `pad` for a key frame at the
    /// first frame whose running time is at or after `time` (GStreamer's upstream force-key-unit
    /// event, as splitmuxsink and hlssink2 send it; the SPS and PPS come with it). A video
    /// encoder (any `GstVideoEncoder`: x264, x265, VP9, AV1) keeps each request until a frame
    /// reaches that time, so requests may be sent well ahead of the frames. Returns whether
    /// something upstream took the request: false when nothing can make key frames there (a
    /// demuxer's or an app's packets, passed as they are). Callable from any thread, a streaming
    /// thread's pad probe included; it never blocks on the stream.
    @discardableResult
    public func requestKeyFrame(at time: MediaTime, pad: String = "sink") -> Bool {
        guard time.isFinite, time >= .zero, let p = gst_element_get_static_pad(raw, pad) else { return false }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        guard let event = gst_video_event_new_upstream_force_key_unit(GstClockTime(time.nanoseconds), 1, 0) else { return false }
        return gst_pad_push_event(p, event) != 0
    }

    /// Fails the run from a streaming thread with a message naming this node (exit 70).
    public func postError(_ message: String, debug: String? = nil) {
        gk_element_post_error(raw, 3, Int32(GST_STREAM_ERROR_FAILED.rawValue), message, debug)
    }

    /// Fails the run because a stream the input should hold is not there (exit 70). The run
    /// reads the input's structure first: a file cut short or damaged is named as such ("ends
    /// at byte 763"), since that is why its track is missing; a whole file keeps `message`.
    public func postMissingStreamError(_ message: String, debug: String? = nil) {
        gk_element_post_error(raw, 3, Int32(GST_STREAM_ERROR_DEMUX.rawValue), message, debug)
    }

    /// Reports something worth knowing that does not stop the run (GST_ELEMENT_WARNING): it goes
    /// to the run's logger as a warning, with this node's id as `node` metadata.
    public func postWarning(_ message: String, debug: String? = nil) {
        gk_element_post_warning(raw, message, debug)
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

    /// Opens the element's device and closes it again (its READY state and back): a display
    /// server, a sound card. Done while the graph is built, a device that cannot be opened fails
    /// the run before anything runs or is written. Returns nil when it opened, or GStreamer's
    /// words for why not, and its debug text.
    public func tryOpening() -> (message: String, debug: String)? {
        guard let words = gk_element_try_open(raw) else { return nil }
        defer { g_free(words) }
        let parts = String(cString: words).split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
        return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
    }

    /// Brings an element added while the pipeline runs to the pipeline's state.
    public func syncStateWithParent() {
        _ = gk_element_sync_state_with_parent(raw)
    }

    /// A Swift closure kept alive for GStreamer as a callback's context.
    private final class Handler<Argument>: Sendable {
        let call: @Sendable (Argument) -> Void
        init(_ call: @escaping @Sendable (Argument) -> Void) { self.call = call }
    }
    /// A handler whose answer goes back to the signal's emitter.
    private final class Asker<Argument, Result>: Sendable {
        let answer: @Sendable (Argument) -> Result
        init(_ answer: @escaping @Sendable (Argument) -> Result) { self.answer = answer }
    }
    private final class BufferHandler: Sendable {
        let handler: @Sendable (Int, MediaTime?) -> Void
        /// Buffers seen so far; touched only on the pad's streaming thread (relaxed order is enough).
        let count = Atomic<Int>(0)
        init(_ h: @escaping @Sendable (Int, MediaTime?) -> Void) { handler = h }
    }
}
