import CGStreamer
import CGraphKitGlue
import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport
import Testing

/// The hand-off under `MediaOutput` (CGraphKitGlue/appqueue.c), on a pipeline of its own:
/// `appsrc ! appsink` with the queue on the appsink's pad. Every wait it has must end when the
/// pipeline stops, however it is stopped.
@Suite(.media) struct MediaOutputTests {
    /// An `appsrc ! appsink` pipeline with a queue of `capacity`, the appsrc holding every buffer
    /// pushed before it plays; `microsecondsPerSample` makes the graph that slow (an identity
    /// that sleeps), as a decoder is.
    final class Pipe: @unchecked Sendable {
        let pipeline: UnsafeMutablePointer<GstElement>
        let src: UnsafeMutablePointer<GstElement>
        let queue: OpaquePointer

        init(capacity: UInt32, microsecondsPerSample: Int = 0) {
            GStreamer.initialize()
            let slow = microsecondsPerSample > 0 ? "identity sleep-time=\(microsecondsPerSample) ! " : ""
            pipeline = gst_parse_launch("appsrc name=src format=time max-bytes=0 ! \(slow)appsink name=sink sync=false async=false enable-last-sample=false", nil)!
            let bin = UnsafeMutableRawPointer(pipeline).assumingMemoryBound(to: GstBin.self)
            src = gst_bin_get_by_name(bin, "src")!
            let sink = gst_bin_get_by_name(bin, "sink")!
            queue = gk_app_queue_attach(sink, capacity)!
            gst_object_unref(UnsafeMutableRawPointer(sink))
        }

        deinit {
            gst_element_set_state(pipeline, GST_STATE_NULL)
            gk_app_queue_unref(queue)
            gst_object_unref(UnsafeMutableRawPointer(src))
            gst_object_unref(UnsafeMutableRawPointer(pipeline))
        }

        var appsrc: UnsafeMutablePointer<GstAppSrc> { UnsafeMutableRawPointer(src).assumingMemoryBound(to: GstAppSrc.self) }

        /// Pushes buffer `i` (8 bytes, PTS i ms, its bytes the number i).
        func push(_ i: Int) {
            let buffer = gst_buffer_new_allocate(nil, 8, nil)!
            var value = UInt64(i)
            _ = gst_buffer_fill(buffer, 0, &value, 8)
            buffer.pointee.pts = GstClockTime(i) * 1_000_000
            // Handed on as GraphKit's inputs hand theirs (gk_buffer_ref tells ThreadSanitizer
            // that what was written to it happens before what the puller reads).
            #expect(gst_app_src_push_buffer(appsrc, gk_buffer_ref(buffer)) == GST_FLOW_OK)
            gst_buffer_unref(buffer)
        }

        func endOfStream() { #expect(gst_app_src_end_of_stream(appsrc) == GST_FLOW_OK) }

        func play() { #expect(gst_element_set_state(pipeline, GST_STATE_PLAYING) != GST_STATE_CHANGE_FAILURE) }

        /// The number a popped buffer carries; nil when pop gave nothing.
        func pop(timeout microseconds: gint64 = -1) -> Int? {
            var caps: UnsafeMutablePointer<GstCaps>?
            guard let buffer = gk_app_queue_pop(queue, microseconds, &caps) else { return nil }
            defer {
                gst_buffer_unref(buffer)
                if let caps { gst_caps_unref(caps) }
            }
            var value: UInt64 = 0
            _ = gst_buffer_extract(buffer, 0, &value, 8)
            #expect(buffer.pointee.pts == GstClockTime(value) * 1_000_000)
            return Int(value)
        }

        /// Whether the bus has an end-of-stream message within `seconds`.
        func endOfStreamPosted(within seconds: Double) -> Bool {
            let bus = gst_element_get_bus(pipeline)!
            defer { gst_object_unref(UnsafeMutableRawPointer(bus)) }
            guard let message = gst_bus_timed_pop_filtered(bus, GstClockTime(seconds * 1e9), GST_MESSAGE_EOS) else { return false }
            gst_message_unref(message)
            return true
        }
    }

    /// A puller faster than the graph sleeps about once per batch (half the capacity), not once
    /// per sample as on a bare appsink; every sample arrives, in order, then the end.
    @Test(.timeLimit(.minutes(10))) func aFastPullerSleepsOncePerBatchAndMissesNothing() {
        // 50 µs a sample (usleep makes it more): a batch of 8 gathers well within the 1 ms window.
        let pipe = Pipe(capacity: 16, microsecondsPerSample: 50)
        let count = 1600
        for i in 0..<count { pipe.push(i) }
        pipe.endOfStream()
        pipe.play()
        var next = 0
        while let i = pipe.pop() {
            #expect(i == next)
            next += 1
        }
        #expect(next == count)
        #expect(gk_app_queue_is_at_end(pipe.queue) != 0)
        #expect(pipe.endOfStreamPosted(within: 10))
        // A batch is 8 here: woken for each sample, the puller would sleep about 1,600 times. Half
        // of that is the limit, so a loaded machine that sometimes lets the 1 ms window pass with
        // a short batch passes too.
        let sleeps = gk_app_queue_sleeps(pipe.queue)
        #expect(sleeps < UInt64(count / 2), "\(sleeps) sleeps for \(count) samples")
    }

    /// End of stream reaches the bus only once every sample was pulled (what appsink's
    /// wait-on-eos does), so a run does not end with samples nobody has seen.
    @Test(.timeLimit(.minutes(10))) func endOfStreamWaitsForEverySampleToBePulled() {
        let pipe = Pipe(capacity: 16)
        for i in 0..<10 { pipe.push(i) }
        pipe.endOfStream()
        pipe.play()
        #expect(!pipe.endOfStreamPosted(within: 0.3))
        #expect(gk_app_queue_is_at_end(pipe.queue) == 0)
        for i in 0..<10 { #expect(pipe.pop() == i) }
        #expect(pipe.pop() == nil)
        #expect(pipe.endOfStreamPosted(within: 10))
    }

    /// A sample that trickles in alone is handed over when it comes, not held for a batch that
    /// never comes; a pull with a timeout gives nil when nothing came. Counted, not timed: the
    /// queue counts each wake-up in which the puller found what it waited for with nobody having
    /// woken it (it slept on to its next look, up to 100 ms later), so a loaded machine cannot
    /// make this fail and a hand-off that forgets to wake the puller always does.
    @Test(.timeLimit(.minutes(10))) func aLoneSampleIsNotHeldForABatch() {
        let pipe = Pipe(capacity: 16)
        pipe.play()
        let start = ContinuousClock.now
        #expect(pipe.pop(timeout: 200_000) == nil)
        #expect(ContinuousClock.now - start >= .milliseconds(190))  // a wait never ends early
        let slept = gk_app_queue_sleeps(pipe.queue)
        let puller = TestThread("puller") { pipe.pop() }
        // Asleep past its batch window (its second sleep waits for any one sample).
        while gk_app_queue_sleeps(pipe.queue) < slept + 2 { Thread.sleep(forTimeInterval: 0.001) }
        pipe.push(7)
        #expect(puller.join() == 7)
        #expect(gk_app_queue_missed_wakes(pipe.queue) == 0, "the puller was not woken by the sample it waited for")
    }

    /// A pipeline stopped without a flush-start (its pads just deactivated) still wakes a puller
    /// waiting on an empty queue, and a graph waiting for room in a full one: stopping returns.
    /// The queues' backstop recheck is set past the test's time limit, so only the wake on
    /// deactivation can end either wait: without it the test runs into its limit and fails.
    @Test(.timeLimit(.minutes(10))) func stoppingThePipelineWakesEveryWaitWithoutAFlush() {
        let never = 24 * 3600 * 1_000_000
        let empty = Pipe(capacity: 16)
        gk_app_queue_set_recheck(empty.queue, never)
        empty.play()
        let sleeps = gk_app_queue_sleeps(empty.queue)
        let puller = TestThread("puller") { empty.pop() }
        // Asleep on the empty queue, past its batch window (its second sleep).
        while gk_app_queue_sleeps(empty.queue) < sleeps + 2 { Thread.sleep(forTimeInterval: 0.001) }
        gst_element_set_state(empty.pipeline, GST_STATE_NULL)
        #expect(puller.join() == nil)

        let full = Pipe(capacity: 4)
        gk_app_queue_set_recheck(full.queue, never)
        for i in 0..<50 { full.push(i) }
        full.play()
        // The appsrc's thread fills the queue and waits for room inside the probe, holding the
        // pad's stream lock that deactivating the pad needs: set_state returns only once woken.
        while gk_app_queue_producer_waits(full.queue) == 0 { Thread.sleep(forTimeInterval: 0.001) }
        gst_element_set_state(full.pipeline, GST_STATE_NULL)
        #expect(full.pop(timeout: 0) == nil)
    }

    /// A flush-start (what a stopping run sends, `gk_bin_unblock_app_sinks`) wakes a waiting
    /// puller at once and drops what was queued.
    @Test(.timeLimit(.minutes(10))) func aFlushWakesThePullerAndDropsTheQueue() {
        let pipe = Pipe(capacity: 4)
        for i in 0..<4 { pipe.push(i) }
        pipe.play()
        #expect(pipe.pop() == 0)
        gk_bin_unblock_app_sinks(UnsafeMutableRawPointer(pipe.pipeline).assumingMemoryBound(to: GstBin.self))
        let sleeps = gk_app_queue_sleeps(pipe.queue)
        #expect(pipe.pop() == nil)
        #expect(gk_app_queue_sleeps(pipe.queue) == sleeps, "a pull after the flush went to sleep")
    }

    /// `copyNextSampleBuffer(timeout:)` takes any Double: NaN and negative mean "do not wait",
    /// a huge one waits as long as it must; the samples come through with their format.
    @Test(.timeLimit(.minutes(10))) func anyTimeoutIsTakenWithoutACrash() async throws {
        let g = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "take": { "type": "sink.app" } },
              "edges": [ "feed.out -> take.in" ] }
            """)
        let run = try GraphRun(g)
        try run.start()
        let input = try run.input("feed"), output = try run.output("take")
        let early = await TestThread("early") { [output.copyNextSampleBuffer(timeout: .nan), output.copyNextSampleBuffer(timeout: -5)] }.join()
        #expect(early.allSatisfy { $0 == nil })
        let samples = TestMedia.pcm(sampleRate: 8000, frames: 3 * 256, framesPerBuffer: 256) { f, _ in Int16(truncatingIfNeeded: f) }
        for b in samples { try input.appendImmediately(b) }
        input.markAsFinished()
        let pulled = await TestThread("puller") { () -> ([SampleBuffer?], SampleBuffer?, Bool) in
            let got = samples.map { _ in output.copyNextSampleBuffer(timeout: .infinity) }
            return (got, output.copyNextSampleBuffer(timeout: .greatestFiniteMagnitude), output.isAtEnd)
        }.join()
        for sample in pulled.0 {
            #expect(sample?.format == samples[0].format)
            #expect(sample?.frameCount == 256)
        }
        #expect(pulled.1 == nil)
        #expect(pulled.2)
        #expect(await run.report().status == .completed)
    }
}
