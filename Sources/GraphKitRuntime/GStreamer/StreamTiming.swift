import CGStreamer
import CGraphKitGlue
import GraphKitCore
import MediaContainers

// What GraphKit reads and states about a stream's timing and orientation on its way, where
// GStreamer 1.22 does not: an encoder's measured delay for a writer, the samples a file says to
// keep for a reader, an orientation a demuxer missed. Probes and their C halves in timing.c.

extension Element {
    /// Measures this audio encoder's delay while it runs (the samples it sends beyond those it
    /// was given, at end of stream) and tells the writer downstream, which can then describe
    /// the priming and padding (``BinBuilder/onStreamFacts(input:_:)``). For an encoder built on
    /// GStreamer's `GstAudioEncoder`, which stamps its output from sample counts. The output's
    /// segment is left open at its end: its input's end, passed on as it came, would have the
    /// muxer drop the frames that the delay pushes past it (an ALAC file's last 204 samples).
    public func measureEncoderDelay() {
        var ids: (gulong, gulong) = (0, 0)
        let ok = withUnsafeMutablePointer(to: &ids) { tuple in
            tuple.withMemoryRebound(to: gulong.self, capacity: 2) { gk_encoder_measure_delay(raw, $0) }
        }
        guard ok != 0 else { return }
        for (pad, id) in [("sink", ids.0), ("src", ids.1)] {
            guard let p = gst_element_get_static_pad(raw, pad) else { continue }
            callbacks.adopt(probe: id, on: p)
            gst_object_unref(UnsafeMutableRawPointer(p))
        }
    }
}

extension Element {
    /// Says downstream that the picture leaving this element's `pad` is upright: for an element
    /// that has turned it as the stream's orientation said (videoflip's `auto`), which passes
    /// the orientation on as it came, so that a writer would turn the picture once more.
    public func markUpright(pad name: String = "src") {
        guard let p = gst_element_get_static_pad(raw, name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        callbacks.adopt(probe: gk_pad_mark_upright(p), on: p)
    }

    /// Makes the time stamps leaving this element's `pad` the stream's presentation times (an
    /// edit list's or a transport stream's offset taken out of stamps and segment alike), so
    /// that a sample's time is where it shows, as AVAssetReader gives it.
    public func presentTimes(pad name: String = "src") {
        guard let p = gst_element_get_static_pad(raw, name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        callbacks.adopt(probe: gk_pad_present_times(p), on: p)
    }
}

extension Element {
    /// For decodebin: an MP3 made by ffmpeg (its Info tag says "Lavc") is trimmed of its encoder
    /// delay and padding as GStreamer trims LAME's, so it decodes to exactly the samples that were
    /// encoded, as ffmpeg and BBC audiowaveform decode it. An MP3 without the tag decodes as is.
    public func trimFFmpegMP3Delay() {
        callbacks.adopt(signal: gk_decodebin_read_lavc_mp3_delay(raw), on: object)
    }
}

extension BinBuilder {
    /// Calls `handler` on the streaming thread with each display orientation and encoder delay
    /// that reaches the node's input `port` (exposed already).
    /// Fails the run at the first buffer into input `port` whose time stamp does not follow
    /// the one before, with a message that names the input: for a writer whose file cannot hold
    /// such a stream.
    public func requireRisingTimes(input port: String) {
        guard let pad = exposedInputs[port] else { return }
        callbacks.adopt(probe: gk_pad_require_rising_times(pad, port), on: pad)
    }

    public func onStreamFacts(input port: String, _ handler: @escaping @Sendable (StreamFact) -> Void) {
        guard let pad = exposedInputs[port] else { return }
        final class Box: @unchecked Sendable {
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

/// The samples to keep of a decoded audio stream, by position in its timeline: what an MP4's
/// edit list or an iTunes gapless tag says (``Element/trimAudio(_:pad:)``). Keeps everything
/// until ``keep(from:to:timescale:)`` is called, which may be late: before the first sample.
public final class AudioTrim: @unchecked Sendable {
    let raw: OpaquePointer

    public init() { raw = gk_audio_trim_new() }
    deinit { gk_audio_trim_unref(raw) }

    /// Keeps the samples from `start` to `end` (nil: to the stream's end), in `timescale` units
    /// a second of the stream's own time; the first kept sample is then at time 0.
    public func keep(from start: Int64, to end: Int64?, timescale: Int) {
        gk_audio_trim_set(raw, gint64(start), gint64(end ?? -1), Int32(clamping: timescale))
    }
}

/// A video stream's orientation as its file says it, stated in the stream's tags from the moment
/// it is known (``Element/stateOrientation(_:pad:)``).
public final class OrientationStatement: @unchecked Sendable {
    let raw: OpaquePointer

    public init() { raw = gk_orientation_new() }
    deinit { gk_orientation_unref(raw) }

    public func set(_ orientation: DisplayOrientation) { gk_orientation_set(raw, orientation.rawValue) }
}

extension Element {
    /// Makes the tags arriving at this element's `pad` say `statement`'s orientation, once set.
    public func stateOrientation(_ statement: OrientationStatement, pad name: String = "sink") {
        guard let p = gst_element_get_static_pad(raw, name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        callbacks.adopt(probe: gk_pad_state_orientation(p, statement.raw), on: p)
    }

    /// Applies `trim` to the decoded audio arriving at this element's `pad`.
    public func trimAudio(_ trim: AudioTrim, pad name: String = "sink") {
        guard let p = gst_element_get_static_pad(raw, name) else { return }
        defer { gst_object_unref(UnsafeMutableRawPointer(p)) }
        callbacks.adopt(probe: gk_pad_trim_audio(p, trim.raw), on: p)
    }

    /// For decodebin: calls `handler` on the streaming thread with each MP4/MOV index (the whole
    /// `moov` box) its demuxer reads, before the demuxer reads it. The handler may change bytes
    /// in place (the count stays): to read what GStreamer 1.22 reads inexactly, and to take it
    /// out of the demuxer's hands.
    public func onMP4Index(_ handler: @escaping @Sendable (inout [UInt8]) -> Void) {
        final class Box: @unchecked Sendable {
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
