import CGStreamer
import CGraphKitGlue
import Foundation
import GraphKit
import GraphKitTesting
import Synchronization
import Testing

/// `gkx264enc` (CGraphKitGlue/x264enc.c), encode.h264's encoder, in pipelines of this process
/// (it is registered in it only): I420 frames of a moving picture made here go in through an
/// appsrc; what comes out is read as GStreamer buffers and, written to MP4, by ffprobe.
@Suite struct X264EncoderTests {
    static let width = 320, height = 240

    /// The encoder lets each raw frame go once x264 has copied it: however long x264's delay,
    /// at most 2 raw buffers are alive (the one it is encoding, and one being freed) whenever a
    /// frame arrives; and none is left after the run (each released exactly once).
    @Test(.timeLimit(.minutes(10))) func holdsNoRawFramesDuringX264sDelay() throws {
        let run = try EncodeRun(encoder: "gkx264enc speed-preset=veryfast bitrate=1000")
        try run.push(frames: 60)
        let delay = run.latencyFrames
        let out = try run.finish()
        try #require(delay >= 10, "x264's delay is \(delay) frames: too short to tell held frames from passing ones")
        #expect(out.count == 60)
        #expect(run.buffers.maxAlive <= 2, "\(run.buffers.maxAlive) raw frames held at once")
        #expect(run.buffers.alive == 0, "\(run.buffers.alive) raw frames never released")
        #expect(run.buffers.entered == 60)
    }

    /// The same measure sees GStreamer's x264enc hold a raw frame for each frame of x264's delay:
    /// the one above would fail with it.
    @Test(.timeLimit(.minutes(10)), .enabled(if: hasX264enc, "needs GStreamer's x264enc (gstreamer1.0-plugins-ugly)"))
    func theMeasureSeesX264encHoldItsDelay() throws {
        let run = try EncodeRun(encoder: "x264enc speed-preset=veryfast bitrate=1000 vbv-buf-capacity=0")
        try run.push(frames: 60)
        let delay = run.latencyFrames
        _ = try run.finish()
        #expect(delay >= 10)
        #expect(run.buffers.maxAlive >= 10, "x264enc held only \(run.buffers.maxAlive) raw frames at once")
    }

    /// Every frame comes out, in decoding order with DTS rising and never after its PTS, the
    /// PTS those of the input (shifted, as x264enc shifts them, by the 1000 h that keeps the
    /// first DTS of B-frames above zero), keyframes where the interval asks, the profile asked
    /// for in the SPS; and the MP4 decodes to the same frames at the same times.
    @Test(.timeLimit(.minutes(10)), arguments: [(0, "baseline"), (0, "high"), (2, "main"), (2, "high")])
    func encodesEveryFrameInOrder(bframes: Int, profile: String) throws {
        let frames = 60, keyInterval = 15
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let movie = folder.appendingPathComponent("out.mp4").path
        let run = try EncodeRun(encoder: "gkx264enc speed-preset=veryfast bitrate=1000 key-int-max=\(keyInterval) bframes=\(bframes)",
                                profile: profile, movie: movie)
        try run.push(frames: frames)
        let out = try run.finish()

        try #require(out.count == frames)
        #expect(out.allSatisfy { $0.caps.contains("profile=(string)\(profile)") && $0.caps.contains("stream-format=(string)avc") })
        #expect(out.first?.caps.contains("codec_data=(buffer)01") == true)  // an avcC record, version 1
        let pts = out.map(\.pts), dts = out.map(\.dts)
        #expect(zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 }, "DTS not rising: \(dts)")
        #expect(zip(dts, pts).allSatisfy { $0 <= $1 }, "a DTS after its PTS")
        let first = pts.min()!
        #expect(pts.sorted().enumerated().allSatisfy { $1 - first == EncodeRun.time(of: $0) }, "PTS not the input's: \(pts)")
        if bframes > 0 { #expect(zip(dts, pts).contains { $0 < $1 }, "no frame was reordered: no B-frames to test") }
        let keys = out.indices.filter { out[$0].keyframe }
        #expect(keys.first == 0)
        #expect(zip(keys, keys.dropFirst() + [frames]).allSatisfy { $1 - $0 <= keyInterval }, "keyframes at \(keys)")

        let names = ["baseline": "Constrained Baseline", "main": "Main", "high": "High"]
        let stream = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-count_frames",
                                                       "-show_entries", "stream=profile,nb_read_frames", "-of", "csv=p=0", movie])
        #expect(stream.trimmingCharacters(in: .whitespacesAndNewlines) == "\(names[profile]!),\(frames)")
        let decoded = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-show_entries", "frame=pts_time",
                                                        "-of", "csv=p=0", movie])
            .split(separator: "\n").compactMap { $0.split(separator: ",").first.flatMap { Double($0) } }  // "0.000000," for the first
        #expect(decoded.count == frames)
        #expect(decoded.enumerated().allSatisfy { abs($1 - Double($0) / 30) < 0.002 }, "decoded at \(decoded)")
    }

    /// A keyframe asked for (a force-key-unit event, as a segmenter sends) lands on the frame
    /// that follows it, and nowhere else in a picture that has no scene cut.
    @Test(.timeLimit(.minutes(10)), arguments: [0, 2])
    func forcedKeyframeLandsWhereAsked(bframes: Int) throws {
        let run = try EncodeRun(encoder: "gkx264enc speed-preset=veryfast bitrate=1000 key-int-max=250 bframes=\(bframes)")
        run.forceKeyframe(atFrame: 17)
        try run.push(frames: 40)
        let out = try run.finish()
        try #require(out.count == 40)
        let first = out.map(\.pts).min()!
        let keys = out.filter(\.keyframe).map { Int(($0.pts - first) / EncodeRun.time(of: 1)) }.sorted()
        #expect(keys == [0, 17])
    }

    /// Downstream that asks for a byte stream gets one: start codes, the SPS first, no codec_data.
    @Test(.timeLimit(.minutes(10))) func byteStreamWhenAskedFor() throws {
        let run = try EncodeRun(encoder: "gkx264enc speed-preset=veryfast bitrate=1000", profile: "main,stream-format=byte-stream")
        try run.push(frames: 10)
        let out = try run.finish()
        try #require(out.count == 10)
        #expect(out.allSatisfy { $0.caps.contains("stream-format=(string)byte-stream") && !$0.caps.contains("codec_data") })
        #expect(out.allSatisfy { $0.head.starts(with: [0, 0, 0, 1]) || $0.head.starts(with: [0, 0, 1]) })
        #expect(out[0].head.count == 5 && out[0].head[4] & 0x1f == 7, "the first NAL unit is not an SPS: \(out[0].head)")
    }

    /// End of stream before any frame: nothing out, no error.
    @Test(.timeLimit(.minutes(10))) func endOfStreamWithoutFrames() throws {
        let run = try EncodeRun(encoder: "gkx264enc")
        #expect(try run.finish().isEmpty)
    }

    /// New caps mid-stream (another size): the frames of the old size leave first, under the
    /// old caps; then the encoder starts again with a keyframe, under new caps.
    @Test(.timeLimit(.minutes(10))) func newSizeMidStream() throws {
        let run = try EncodeRun(encoder: "gkx264enc speed-preset=veryfast bitrate=1000 bframes=2")
        try run.push(frames: 20)
        run.setSize(width: 160, height: 120)
        try run.push(frames: 20, from: 20)
        let out = try run.finish()
        try #require(out.count == 40)
        #expect(out.prefix(20).allSatisfy { $0.caps.contains("width=(int)320") })
        #expect(out.suffix(20).allSatisfy { $0.caps.contains("width=(int)160") })
        #expect(out[20].keyframe)
        #expect(run.buffers.alive == 0)
    }

    /// Flushing seeks while frames are inside x264: they are dropped, x264 starts again, and
    /// what follows is encoded.
    @Test(.timeLimit(.minutes(10))) func flushingSeek() throws {
        GStreamer.initialize()
        let pipeline = try #require(gst_parse_launch(
            "videotestsrc pattern=ball ! video/x-raw,format=NV12,width=160,height=120,framerate=30/1 ! gkx264enc speed-preset=veryfast ! "
                + "video/x-h264,profile=high ! fakesink name=out sync=false", nil))
        defer {
            _ = gk_element_set_state(pipeline, GST_STATE_NULL)
            gst_object_unref(pipeline)
        }
        let counter = try PadCounter(on: pipeline, element: "out", pad: "sink")
        #expect(gk_element_set_state(pipeline, GST_STATE_PAUSED) != GST_STATE_CHANGE_FAILURE)
        _ = gst_element_get_state(pipeline, nil, nil, 10 * second)
        // Frames are in x264 (prerolled, not yet out); seek back to 0, to stop after 1 s.
        let seek = GstSeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue | GST_SEEK_FLAG_ACCURATE.rawValue)
        #expect(gst_element_seek(pipeline, 1.0, GST_FORMAT_TIME, seek, GST_SEEK_TYPE_SET, 0, GST_SEEK_TYPE_SET, gint64(second)) != 0)
        #expect(gk_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE)
        try EncodeRun.waitForEnd(of: pipeline)
        #expect(counter.buffers.load(ordering: .relaxed) >= 30)
    }

    /// A frame size x264 refuses (odd, in 4:2:0) fails the run with x264's reason.
    @Test(.timeLimit(.minutes(10))) func refusesAnOddSizeSayingWhy() throws {
        let run = try EncodeRun(encoder: "gkx264enc", width: 321, height: 240)
        try? run.push(frames: 1)
        let error = try #require(throws: GraphError.self) { try run.finish() }
        #expect("\(error)".contains("not divisible by 2"), "\(error)")
        #expect("\(error)".contains("321x240"), "\(error)")
    }
}

let second: GstClockTime = 1_000_000_000

var hasX264enc: Bool {
    GStreamer.initialize()
    guard let factory = gst_element_factory_find("x264enc") else { return false }
    gst_object_unref(UnsafeMutableRawPointer(factory))
    return true
}

/// Raw buffers alive: counted in as they reach the encoder, out as they are freed.
final class BufferCount: Sendable {
    private let aliveNow = Atomic<Int>(0), most = Atomic<Int>(0), count = Atomic<Int>(0)
    var alive: Int { aliveNow.load(ordering: .sequentiallyConsistent) }
    var maxAlive: Int { most.load(ordering: .sequentiallyConsistent) }
    var entered: Int { count.load(ordering: .sequentiallyConsistent) }

    func enter() {
        count.add(1, ordering: .sequentiallyConsistent)
        let now = aliveNow.add(1, ordering: .sequentiallyConsistent).newValue
        var seen = most.load(ordering: .sequentiallyConsistent)
        while now > seen {
            let (exchanged, original) = most.compareExchange(expected: seen, desired: now, ordering: .sequentiallyConsistent)
            if exchanged { break }
            seen = original
        }
    }

    func freed() { aliveNow.subtract(1, ordering: .sequentiallyConsistent) }
}

/// Buffers through a pad.
final class PadCounter: Sendable {
    let buffers = Atomic<Int>(0)

    init(on pipeline: UnsafeMutablePointer<GstElement>, element: String, pad: String) throws {
        let e = try #require(gst_bin_get_by_name(EncodeRun.bin(pipeline), element))
        defer { gst_object_unref(e) }
        let p = try #require(gst_element_get_static_pad(e, pad))
        defer { gst_object_unref(p) }
        gst_pad_add_probe(p, GST_PAD_PROBE_TYPE_BUFFER, { _, _, data in
            Unmanaged<PadCounter>.fromOpaque(data!).takeUnretainedValue().buffers.add(1, ordering: .relaxed)
            return GST_PAD_PROBE_OK
        }, Unmanaged.passRetained(self).toOpaque(), { Unmanaged<PadCounter>.fromOpaque($0!).release() })
    }
}

/// appsrc (I420 frames made here) ! ENCODER name=enc ! video/x-h264,profile=P ! [tee: mp4mux ! filesink,] appsink.
final class EncodeRun {
    struct Packet {
        var pts: GstClockTime, dts: GstClockTime, keyframe: Bool, caps: String
        var head: [UInt8]  // the first bytes
    }

    let pipeline: UnsafeMutablePointer<GstElement>
    let appsrc: UnsafeMutablePointer<GstElement>
    let encoder: UnsafeMutablePointer<GstElement>
    let appsink: UnsafeMutablePointer<GstElement>
    let buffers = BufferCount()
    private(set) var width: Int, height: Int

    static func time(of frame: Int) -> GstClockTime { GstClockTime(frame) * second / 30 }
    static func bin(_ e: UnsafeMutablePointer<GstElement>) -> UnsafeMutablePointer<GstBin> {
        UnsafeMutableRawPointer(e).assumingMemoryBound(to: GstBin.self)
    }

    init(encoder: String, profile: String = "high", movie: String? = nil, width: Int = X264EncoderTests.width,
         height: Int = X264EncoderTests.height) throws {
        GStreamer.initialize()
        self.width = width
        self.height = height
        let output = movie.map { "tee name=t ! queue ! mp4mux ! filesink location=\($0) t. ! queue ! " } ?? ""
        let description = "appsrc name=src format=time caps=\"\(Self.caps(width, height))\" ! \(encoder) name=enc ! "
            + "video/x-h264,profile=\(profile) ! \(output)appsink name=out sync=false"
        var error: UnsafeMutablePointer<GError>?
        guard let p = gst_parse_launch(description, &error) else {
            throw GraphError(.runFailed, "cannot build \(description): \(error.map { String(cString: $0.pointee.message) } ?? "?")")
        }
        pipeline = p
        appsrc = gst_bin_get_by_name(Self.bin(p), "src")!
        self.encoder = gst_bin_get_by_name(Self.bin(p), "enc")!
        appsink = gst_bin_get_by_name(Self.bin(p), "out")!
        // Count each raw buffer as it reaches the encoder, and again as it is freed.
        let pad = gst_element_get_static_pad(self.encoder, "sink")!
        defer { gst_object_unref(pad) }
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, { _, info, data in
            let count = Unmanaged<BufferCount>.fromOpaque(data!).takeUnretainedValue()
            let buffer = info!.pointee.data!.assumingMemoryBound(to: GstMiniObject.self)
            count.enter()
            gst_mini_object_weak_ref(buffer, { data, _ in
                Unmanaged<BufferCount>.fromOpaque(data!).takeUnretainedValue().freed()
            }, data)
            return GST_PAD_PROBE_OK
        }, Unmanaged.passUnretained(buffers).toOpaque(), nil)
        if gk_element_set_state(p, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE {
            throw GraphError(.runFailed, "\(description) does not start")
        }
    }

    deinit {
        _ = gk_element_set_state(pipeline, GST_STATE_NULL)
        for e in [appsrc, encoder, appsink, pipeline] { gst_object_unref(e) }
    }

    static func caps(_ width: Int, _ height: Int) -> String {
        "video/x-raw,format=I420,width=\(width),height=\(height),framerate=30/1"
    }

    /// x264's delay, in frames, as the encoder reports it in its latency.
    var latencyFrames: Int {
        let query = gst_query_new_latency()!
        defer { gst_query_unref(query) }
        let pad = gst_element_get_static_pad(encoder, "src")!
        defer { gst_object_unref(pad) }
        guard gst_pad_query(pad, query) != 0 else { return -1 }
        var minimum: GstClockTime = 0
        gst_query_parse_latency(query, nil, &minimum, nil)
        return Int((minimum * 30 + second / 2) / second)
    }

    /// Asks the encoder for a keyframe (a downstream force-key-unit event, "as soon as
    /// possible") just before a frame, in the stream: from a probe, on the streaming thread,
    /// when that frame reaches the encoder. (A running time would be matched against the
    /// encoder's output segment, which GStreamer 1.22 sets only once x264's delay has passed.)
    func forceKeyframe(atFrame frame: Int) {
        let pad = gst_element_get_static_pad(encoder, "sink")!
        defer { gst_object_unref(pad) }
        let pts = UnsafeMutablePointer<GstClockTime>.allocate(capacity: 1)
        pts.pointee = Self.time(of: frame)
        gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER, { pad, info, data in
            let buffer = info!.pointee.data!.assumingMemoryBound(to: GstBuffer.self)
            if buffer.pointee.pts == data!.assumingMemoryBound(to: GstClockTime.self).pointee {
                let none = GstClockTime.max
                _ = gst_pad_send_event(pad, gst_video_event_new_downstream_force_key_unit(none, none, none, 1, 1))
            }
            return GST_PAD_PROBE_OK
        }, pts, { $0?.deallocate() })
    }

    func setSize(width: Int, height: Int) {
        self.width = width
        self.height = height
        let caps = gst_caps_from_string(Self.caps(width, height))
        gst_app_src_set_caps(UnsafeMutableRawPointer(appsrc).assumingMemoryBound(to: GstAppSrc.self), caps)
        gk_caps_unref(caps)
    }

    /// Frames start...start+count-1: a gradient scrolling a pixel a frame and a box moving across it.
    func push(frames count: Int, from start: Int = 0) throws {
        let src = UnsafeMutableRawPointer(appsrc).assumingMemoryBound(to: GstAppSrc.self)
        let lumaSize = width * height, chromaSize = (width / 2) * (height / 2)
        for i in start..<(start + count) {
            let buffer = gst_buffer_new_allocate(nil, gsize(lumaSize + 2 * chromaSize), nil)!
            var map = GstMapInfo()
            gst_buffer_map(buffer, &map, GST_MAP_WRITE)
            let p = map.data!
            let boxLeft = (4 * i) % width, boxTop = height / 3
            for y in 0..<height {
                let boxRow = y >= boxTop && y < boxTop + 40
                for x in 0..<width {
                    let inBox = boxRow && x >= boxLeft && x < boxLeft + 40
                    let gradient: Int = 16 + (x + y + i) % 200
                    p[y * width + x] = inBox ? 235 : UInt8(gradient)
                }
            }
            let chromaWidth = width / 2
            for j in 0..<chromaSize {
                let u: Int = 96 + (j % chromaWidth + i) % 64, v: Int = 160 - (j / chromaWidth) % 64
                p[lumaSize + j] = UInt8(u)
                p[lumaSize + chromaSize + j] = UInt8(v)
            }
            gst_buffer_unmap(buffer, &map)
            buffer.pointee.pts = Self.time(of: i)
            buffer.pointee.duration = Self.time(of: i + 1) - Self.time(of: i)
            guard gst_app_src_push_buffer(src, buffer) == GST_FLOW_OK else { throw GraphError(.runFailed, "appsrc refused frame \(i)") }
        }
    }

    /// Ends the stream and waits for the end; the encoded buffers, in the order they left.
    func finish() throws -> [Packet] {
        gst_app_src_end_of_stream(UnsafeMutableRawPointer(appsrc).assumingMemoryBound(to: GstAppSrc.self))
        let sink = UnsafeMutableRawPointer(appsink).assumingMemoryBound(to: GstAppSink.self)
        var out: [Packet] = []
        let deadline = ContinuousClock.now + .seconds(30)
        while gst_app_sink_is_eos(sink) == 0 {
            guard let sample = gst_app_sink_try_pull_sample(sink, 100_000_000) else {
                try checkBus()
                guard ContinuousClock.now < deadline else { throw GraphError(.runFailed, "no end of stream in 30 s") }
                continue
            }
            defer { gk_sample_unref(sample) }
            let b = gst_sample_get_buffer(sample)!
            let caps = gst_caps_to_string(gst_sample_get_caps(sample))!
            defer { g_free(caps) }
            var head = [UInt8](repeating: 0, count: 5)
            head.removeLast(5 - Int(gst_buffer_extract(b, 0, &head, 5)))
            out.append(Packet(pts: b.pointee.pts, dts: b.pointee.dts,
                              keyframe: b.pointee.mini_object.flags & GST_BUFFER_FLAG_DELTA_UNIT.rawValue == 0,
                              caps: String(cString: caps), head: head))
        }
        if !ended { try Self.waitForEnd(of: pipeline) }
        _ = gk_element_set_state(pipeline, GST_STATE_NULL)
        return out
    }

    private var ended = false

    /// Throws the error the pipeline posted, if it posted one; notes its end of stream. (A
    /// filtered pop drops the messages it does not ask for: both are asked for.)
    private func checkBus() throws {
        let bus = gst_element_get_bus(pipeline)!
        defer { gst_object_unref(bus) }
        let wanted = GstMessageType(rawValue: GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue)
        guard let message = gst_bus_pop_filtered(bus, wanted) else { return }
        defer { gk_message_unref(message) }
        if message.pointee.type == GST_MESSAGE_ERROR { throw Self.text(of: message) }
        ended = true
    }

    static func text(of error: UnsafeMutablePointer<GstMessage>) -> GraphError {
        var e: UnsafeMutablePointer<GError>?
        var debug: UnsafeMutablePointer<gchar>?
        gst_message_parse_error(error, &e, &debug)
        defer {
            g_error_free(e)
            g_free(debug)
        }
        return GraphError(.runFailed, String(cString: e!.pointee.message))
    }

    /// Waits for end of stream, or throws the first error with its text.
    static func waitForEnd(of pipeline: UnsafeMutablePointer<GstElement>) throws {
        let bus = gst_element_get_bus(pipeline)!
        defer { gst_object_unref(bus) }
        let wanted = GstMessageType(rawValue: GST_MESSAGE_EOS.rawValue | GST_MESSAGE_ERROR.rawValue)
        guard let message = gst_bus_timed_pop_filtered(bus, 30 * second, wanted) else {
            throw GraphError(.runFailed, "no end of stream in 30 s")
        }
        defer { gk_message_unref(message) }
        if message.pointee.type == GST_MESSAGE_ERROR { throw text(of: message) }
    }
}
