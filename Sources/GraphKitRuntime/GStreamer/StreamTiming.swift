import CGStreamer
import Dispatch
import CGraphKitGlue
import GraphKitCore
import MediaContainers

// What GraphKit reads about a stream's timing and orientation on its way: what reaches a
// writer's input (an encoder's delay, measured by gkencoderdelay; an orientation), and the fixes
// that must work inside decodebin, where no element of GraphKit's can go. Probes and their C
// halves in timing.c. The other workarounds are elements of the graphkit GStreamer plugin
// (Sources/GstGraphKit: gkaudiotrim, gkpresenttimes, gkrisingtimes, gkorientation,
// gkvideotrim, gkencoderdelay), which nodes make with BinBuilder.make.

extension Element {
    /// For decodebin: an MP3 made by ffmpeg (its Info tag says "Lavc") is trimmed of its encoder
    /// delay and padding as GStreamer trims LAME's, so it decodes to exactly the samples that were
    /// encoded, as ffmpeg and BBC audiowaveform decode it. An MP3 without the tag decodes as is.
    public func trimFFmpegMP3Delay() {
        callbacks.adopt(signal: gk_decodebin_read_lavc_mp3_delay(raw), on: object)
    }

    /// For opusparse: the stream's comment header (OpusTags: its title, artist...) reaches the
    /// muxer as the file has it; the parser's own caps would replace it with an empty one.
    public func keepOpusComments() {
        gk_opusparse_keep_comment_header(raw)
    }

    /// For decodebin: a transport stream pushed with times (a live source such as `srtsrc`) is
    /// timed by its own presentation times, as ffmpeg reads it, not mapped through its clock
    /// reference and the packets' arrival (a burst bent the times back); a file keeps
    /// GStreamer's handling.
    public func timeLiveTransportStreamsByTheirOwnTimes() {
        callbacks.adopt(signal: gk_decodebin_time_live_ts_by_pts(raw), on: object)
    }

    /// For decodebin on a live stream: one that ends before it says what it holds (a transport
    /// stream whose sender left before its program tables, PAT and PMT, sending null packets or
    /// noise) makes no pads, so its end reaches no output and the run would wait for ever. When
    /// end of stream reaches this element while `missing()` names an output's track that was not
    /// linked ("video", "audio"), and 3 s later still does, the run fails (exit 70), naming
    /// `input` and the track. A stream whose tracks are linked by then (decodebin exposes a
    /// short stream's as it drains, on a busy machine not at once) ends as it does.
    public func failIfEndingBeforeItsTracks(_ input: String, missing: @escaping @Sendable () -> String?) {
        onEndOfStream { [self] in
            guard missing() != nil else { return }
            DispatchQueue.global().asyncAfter(deadline: .now() + 3) { [self] in
                guard let track = missing() else { return }
                postMissingStreamError("\(input) ended before its \(track) track appeared: nothing in it said which tracks it holds "
                                       + "(a transport stream's program tables, PAT and PMT, never came), so nothing of it could be written")
            }
        }
    }

    /// For decodebin: decodes only audio, or only video, when only that is wanted; a stream of
    /// the other kind leaves encoded (no parser, no decoder is plugged for it), so that a stream
    /// nobody takes costs no decoding. Containers are opened whatever they are called.
    public func decodeOnly(audio: Bool, video: Bool) {
        callbacks.adopt(signal: gk_decodebin_decode_only(raw, audio ? 1 : 0, video ? 1 : 0), on: object)
    }

    /// For decodebin: H.264 and HEVC are decoded by gkavdec (the graphkit plugin's, over
    /// libavcodec) before any other decoder, after their parser: its pictures are handed on
    /// read-only and uncopied where the readers say they read a video meta
    /// (``answerAllocationReadingVideoMeta(pad:)``). Other streams (and H.264 or HEVC at a depth
    /// gkavdec does not give: 9 or 14 bits, gray past 8) keep their usual decoders, which the
    /// same answer may let hand on frames in their own layout too. If libavcodec cannot be
    /// loaded, decodebin takes the next decoder (avdec_h264), copying as before.
    public func preferSharingDecoder() {
        callbacks.adopt(signal: gk_decodebin_prefer_sharing_decoder(raw), on: object)
    }

    /// Answers the allocation query that leaves this element's `pad` downstream: its readers
    /// read a video meta (a frame's own row and plane layout, as ``SampleBuffer``'s planes do),
    /// and no pool is offered. Only for an output whose readers are GraphKit's nodes.
    public func answerAllocationReadingVideoMeta(pad: String = "src") {
        guard let p = gst_element_get_static_pad(raw, pad) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        callbacks.adopt(probe: gk_pad_answer_allocation_reading_video_meta(p), on: p)
    }

    /// For decodebin: once `trim` (a gkaudiotrim) is on, the gapless marks a demuxer puts on
    /// the sound into its decoders (GStreamer 1.24+'s qtdemux marks AAC's priming and padding)
    /// are taken off, so that only `trim` cuts: the same samples on every GStreamer version, and
    /// never the priming twice. Where no mark comes (GStreamer 1.22) nothing changes; where
    /// `trim` is off, GStreamer's marks do their work.
    public func leaveTrimming(to trim: Element) {
        callbacks.adopt(signal: gk_decodebin_leave_trimming_to(raw, trim.raw), on: object)
    }
}

extension BinBuilder {
    /// Calls `handler` on the streaming thread with each display orientation and encoder delay
    /// (gkencoderdelay's event) that reaches the node's input `port` (exposed already).
    public func onStreamFacts(input port: String, _ handler: @escaping @Sendable (StreamFact) -> Void) {
        guard let pad = exposedInputs[port] else { return }
        final class Box: Sendable {
            let handler: @Sendable (StreamFact) -> Void
            init(_ h: @escaping @Sendable (StreamFact) -> Void) { handler = h }
        }
        let box = Unmanaged.passRetained(Box(handler)).toOpaque()
        let id = gk_pad_watch_stream_facts(pad, { ctx, kind, text, a, b, c in
            let box = Unmanaged<Box>.fromOpaque(ctx!).takeUnretainedValue()
            if kind == 0, let text, let orientation = DisplayOrientation(rawValue: String(cString: text)) {
                box.handler(.orientation(orientation))
            } else if kind == 1 {
                box.handler(.encoderDelay(EncoderDelay(priming: Int(a), samples: Int(b), sampleRate: Int(c))))
            }
        }, box, { ctx in Unmanaged<Box>.fromOpaque(ctx!).release() })
        callbacks.adopt(probe: id, on: pad)
    }
}

extension BinBuilder {
    /// Puts `encoder`, an audio encoder made by ``make(_:name:_:)``, inside a gkencoderdelay,
    /// which measures the priming it adds and tells the writer downstream at end of stream
    /// (``onStreamFacts(input:_:)``), so that it can write an edit list. Returns the
    /// gkencoderdelay: link it where the encoder would go. The encoder's errors are still the
    /// node's (its new parent is).
    public func measuringDelay(of encoder: Element) throws(GraphError) -> Element {
        let delay = try make("gkencoderdelay")
        guard gk_element_move_into(delay.raw, "encoder", encoder.raw) != 0 else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "cannot put \(encoder.factory) inside gkencoderdelay", node: nodeID)
        }
        return delay
    }

    /// Links `a`'s pad `from` to `b`'s pad `to` (a request pad's template, such as a muxer's
    /// `audio_%u`, is requested): for elements with more than one pad a side (gkencoderdelay).
    public func link(_ a: Element, pad from: String, to b: Element, pad to: String) throws(GraphError) {
        guard gst_element_link_pads(a.raw, from, b.raw, to) != 0 else {
            throw GraphError(.runFailed, at: "node \"\(nodeID)\"", "cannot link \(a.factory).\(from) to \(b.factory).\(to)", node: nodeID)
        }
    }
}

extension Element {
    /// For decodebin: calls `handler` on the streaming thread with each MP4/MOV index (the whole
    /// `moov` box) its demuxer reads, before the demuxer reads it. The handler may change bytes
    /// in place (the count stays): to read what GStreamer 1.22 reads inexactly, and to take it
    /// out of the demuxer's hands.
    public func onMP4Index(_ handler: @escaping @Sendable (inout [UInt8]) -> Void) {
        final class Box: Sendable {
            let handler: @Sendable (inout [UInt8]) -> Void
            init(_ h: @escaping @Sendable (inout [UInt8]) -> Void) { handler = h }
        }
        let box = Unmanaged.passRetained(Box(handler)).toOpaque()
        let id = gk_decodebin_watch_mp4_index(raw, { ctx, data, size in
            guard let ctx, let data else { return }
            let count = Int(size)
            var bytes = Array(UnsafeBufferPointer(start: data, count: count))
            Unmanaged<Box>.fromOpaque(ctx).takeUnretainedValue().handler(&bytes)
            guard bytes.count == count else { return }
            bytes.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: count) }
        }, box, { ctx in Unmanaged<Box>.fromOpaque(ctx!).release() })
        callbacks.adopt(signal: id, on: object)
    }
}

extension Element {
    /// Mends the decode times x265enc gives a stream shorter than x265's B-frame delay (read
    /// from memory x265 never set: hours or years off, and the muxer would place the pictures
    /// there): the stream's decode times move together so that they come before its
    /// presentation times, x265's steps between them kept (`gk_pad_mend_x265_decode_times`).
    public func mendX265DecodeTimes() {
        guard let p = gst_element_get_static_pad(raw, "src") else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        callbacks.adopt(probe: gk_pad_mend_x265_decode_times(p), on: p)
    }
}
