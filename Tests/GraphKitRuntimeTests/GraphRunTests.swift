import Dispatch
import Foundation
import Synchronization
import TestSupport
import Testing
import GraphKit
import Logging
import GraphKitTesting
import Nodes

@Suite(.media) struct GraphRunTests {
    static let mono = MediaFormat.pcm(.init(sampleRate: 44_100, channels: 1, sampleFormat: .s16le))

    func graph(_ json: String) throws -> Graph {
        try GraphLoader(registry: .builtIn).load(json: json)
    }

    /// Two hours of silence in one-second buffers, through a Swift node, into a consumer that
    /// pulls nothing until the producer has filled the source and both edges and is held back:
    /// the graph then holds no more than its bounds allow, no connection ever holds more than its
    /// capacity, and every buffer arrives once, in order.
    @Test func backpressureBoundsEveryEdgeOverHoursOfMedia() throws {
        let g = try graph("""
            { "version": 1, "nodes": {
                "feed": { "type": "source.app", "params": { "maxBuffers": 4 } },
                "gain": { "type": "effect.gain", "params": { "gain": 1 } },
                "take": { "type": "sink.app", "params": { "maxBuffers": 2 } } },
              "edges": [
                { "from": "feed.out", "to": "gain.in", "capacity": { "buffers": 3 } },
                { "from": "gain.out", "to": "take.in", "capacity": { "buffers": 5 } } ] }
            """)
        let run = try GraphRun(g)
        try run.start()
        let input = try run.input("feed"), output = try run.output("take")
        let seconds = 2 * 3600
        let second = SampleBuffer(format: Self.mono, byteCount: 44_100 * 2)

        let heldBack = TestEvent()
        let producer = TestThread("producer") { () -> (heldAt: Int?, error: String?) in
            var heldAt: Int?
            for i in 0..<seconds {
                var b = second  // shares the silence; only timing is copied
                b.presentationTime = MediaTime(value: Int64(i), timescale: 1)
                b.duration = MediaTime(value: 1, timescale: 1)
                // At least the source's and the edges' bounds (4 + 3 + 5) are in and the source is
                // full: this append waits, and the consumer may start.
                if heldAt == nil, i >= 4 + 3 + 5, !input.isReadyForMoreMediaData {
                    heldAt = i
                    heldBack.signal()
                }
                do {
                    try input.appendWaiting(b)
                } catch {
                    input.markAsFinished()
                    heldBack.signal()
                    return (heldAt, "\(error)")
                }
            }
            input.markAsFinished()
            heldBack.signal()
            return (heldAt, nil)
        }

        // Nothing is pulled until then (or until the producer has ended, which means a bound failed).
        #expect(heldBack.wait(), "the producer neither filled the graph nor ended within the guard limit")
        var count = 0
        var last: MediaTime?
        var ordered = true
        while let b = output.copyNextSampleBuffer() {
            ordered = ordered && (last == nil || b.presentationTime! > last!)
            last = b.presentationTime
            count += 1
        }
        let report = run.wait()
        let (heldAt, error) = producer.join()
        #expect(error == nil)
        // At most 4 + 1 in the app source (appsrc raises enough-data on the push that finds it
        // full, and keeps that buffer), 3 and 5 on the edges, 2 in the app sink, and one in hand on
        // each of the three streaming threads (the app source's and the two queues').
        let bound = 5 + 3 + 5 + 2 + 3
        #expect(heldAt != nil && heldAt! <= bound, "the producer appended \(heldAt.map(String.init) ?? "everything") before it was held back")
        #expect(report.status == .completed)
        #expect(ordered)
        #expect(count == seconds)
        #expect(last == MediaTime(value: Int64(seconds - 1), timescale: 1))
        #expect(report.mediaSeconds == Double(seconds))
        let edges = Dictionary(uniqueKeysWithValues: report.edges.map { ($0.to, $0) })
        #expect(edges["gain.in"]!.maxBuffers <= 3)
        #expect(edges["take.in"]!.maxBuffers <= 5)
        #expect(edges["gain.in"]!.buffers == seconds)
        #expect(report.nodes.first { $0.id == "gain" }?.buffersIn == seconds)
    }

    @Test func requestMediaDataWhenReadyFeedsUntilFinished() throws {
        let g = try graph("""
            { "version": 1, "nodes": {
                "feed": { "type": "source.app", "params": { "maxBuffers": 2 } },
                "take": { "type": "sink.app", "params": { "maxBuffers": 2 } } },
              "edges": [ { "from": "feed.out", "to": "take.in", "capacity": { "buffers": 2 } } ] }
            """)
        let run = try GraphRun(g)
        try run.start()
        let input = try run.input("feed")
        let buffers = TestMedia.sine(seconds: 1)
        let next = Atomic<Int>(0)
        let queue = DispatchQueue(label: "feeder")
        input.requestMediaDataWhenReady(on: queue) {
            while input.isReadyForMoreMediaData {
                let i = next.add(1, ordering: .relaxed).oldValue
                guard i < buffers.count else { input.markAsFinished(); return }
                try? input.appendImmediately(buffers[i])
            }
        }
        var frames = 0
        let output = try run.output("take")
        while let b = output.copyNextSampleBuffer() { frames += b.frameCount }
        #expect(run.wait().status == .completed)
        queue.sync {}  // the block that finished the input has returned; none is scheduled after that
        #expect(frames == 44_100)
    }

    /// The appends outrun a graph that holds a few buffers: the puller starts only once an
    /// append has to wait, and every buffer still arrives.
    @Test func asyncAppendSuspendsUntilReady() async throws {
        let g = try graph("""
            { "version": 1, "nodes": {
                "feed": { "type": "source.app", "params": { "maxBuffers": 1 } },
                "take": { "type": "sink.app", "params": { "maxBuffers": 1 } } },
              "edges": [ { "from": "feed.out", "to": "take.in", "capacity": { "buffers": 1 } } ] }
            """)
        let run = try GraphRun(g)
        try run.start()
        let input = try run.input("feed"), output = try run.output("take")
        let heldBack = TestEvent()
        let puller = TestThread("puller") { () -> Int in
            guard heldBack.wait() else { return -1 }
            var n = 0
            while output.copyNextSampleBuffer() != nil { n += 1 }
            return n
        }
        var heldAt: Int?
        do {
            for (i, b) in TestMedia.sine(seconds: 1).prefix(44).enumerated() {
                if heldAt == nil, !input.isReadyForMoreMediaData {
                    heldAt = i  // this append suspends until the puller makes room
                    heldBack.signal()
                }
                try await input.append(b)
            }
        } catch {
            heldBack.signal()
            run.cancel()
            _ = await puller.join()
            throw error
        }
        heldBack.signal()  // if no append ever had to wait (the check below fails)
        input.markAsFinished()
        let report = await run.report()
        #expect(report.status == .completed)
        #expect(await puller.join() == 44)
        #expect(heldAt != nil && heldAt! < 44, "every append went in with nothing pulled")
        await #expect(throws: GraphError.self) { try await input.append(TestMedia.sine(seconds: 0.1)[0]) }
    }

    /// A user's node (as a plugin would be) that needs an element nobody installed.
    final class NeedsMissingElement: ElementNode, Sendable {
        static let descriptor = NodeDescriptor(
            type: "test.missing", category: .effect, summary: "needs an element that does not exist",
            inputs: [PortDescriptor("in", .any, help: "")], outputs: [PortDescriptor("out", .any, help: "")],
            example: #"{ "type": "test.missing" }"#)
        init(context: NodeContext) throws(GraphError) {}
        func build(in bin: BinBuilder) throws(GraphError) {
            let e = try bin.make("x264enc_not_installed")
            try bin.expose(input: "in", e)
        }
    }

    /// No package is invented for an element GraphKit does not know (DebianPackagesTests checks
    /// the ones it knows against dpkg).
    @Test func aMissingElementIsAMissingPluginErrorThatInventsNoPackage() throws {
        var registry = NodeRegistry.builtIn
        registry.register(NeedsMissingElement.self)
        let g = try GraphLoader(registry: registry).load(json: """
            { "version": 1, "nodes": { "a": { "type": "source.app" }, "m": { "type": "test.missing" },
              "b": { "type": "sink.app" } }, "edges": [ "a.out -> m.in", "m.out -> b.in" ] }
            """)
        #expect(throws: GraphError(.missingPlugin, at: "node \"m\"",
                                   "GStreamer element \"x264enc_not_installed\" is not installed; install the Debian package that provides it",
                                   node: "m")) {
            try GraphRun(g)
        }
        #expect(GStreamer.debianPackage(forElement: "x264enc") == "gstreamer1.0-plugins-ugly")
        #expect(GStreamer.debianPackage(forElement: "avenc_aac") == "gstreamer1.0-libav")
        #expect(GStreamer.debianPackage(providing: "x264enc_not_installed") == nil)
    }

    /// A Swift node that throws on buffer `at` (counting from 1), for the failure tests.
    final class Fails: ProcessingNode, @unchecked Sendable {
        static let bufferFlow = BufferFlow.passThrough
        static let descriptor = NodeDescriptor(
            type: "test.fails", category: .effect, summary: "throws on buffer `at`",
            inputs: [PortDescriptor("in", .any, help: "")], outputs: [PortDescriptor("out", .any, help: "")],
            parameters: [at],
            example: #"{ "type": "test.fails" }"#)
        let at: Int
        var seen = 0
        static let at = Parameter<Int>("at", 1...1000, default: 1, help: "the buffer refused")
        init(context: NodeContext) throws(GraphError) { at = context.parameters[Self.at] }
        func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
            seen += 1
            if seen == at { throw GraphError(.runFailed, "buffer \(at) refused") }
            return true
        }
    }

    func failingHarness(at: Int) throws -> NodeHarness {
        var registry = NodeRegistry.builtIn
        registry.register(Fails.self)
        return try NodeHarness(#"{ "type": "test.fails", "params": { "at": \#(at) } }"#, registry: registry)
    }

    @Test func aSwiftNodeThatThrowsFailsTheRunNamingIt() throws {
        let h = try failingHarness(at: 3)
        // The run may already have failed by the fourth push: then the push says so.
        #expect(throws: GraphError(.runFailed, at: "node \"node\" (test.fails)", "buffer 3 refused", node: "node")) {
            try h.push(TestMedia.sine(seconds: 0.1))
            try h.finish()
        }
    }

    /// Once the run has failed, an append is refused with the run's error, which names the node
    /// and the reason (as AVAssetWriter's error does), not only with the refusal.
    @Test func anAppendRefusedAfterAFailureThrowsTheFailure() throws {
        let h = try failingHarness(at: 1)
        let buffers = TestMedia.sine(seconds: 0.1)
        try h.push(buffers[0])  // the node refuses it: the run fails
        #expect(h.run.wait().status == .failed)  // waits for the run to end, however long that takes
        #expect(throws: GraphError(.runFailed, at: "node \"node\" (test.fails)", "buffer 1 refused", node: "node")) {
            try h.push(buffers[1])
        }
    }

    /// A queue (a thread) only where one is needed; elsewhere a direct link that holds nothing.
    @Test func edgesGetAQueueOnlyWhereAThreadOrADropPolicyIsNeeded() throws {
        let dir = try TestMedia.temporaryFolder().path
        let g = try graph("""
            { "version": 1, "nodes": {
                "mic": { "type": "capture.audio", "params": { "live": false, "duration": 0.2 } },
                "gain": { "type": "effect.gain" },
                "w1": { "type": "analysis.waveform", "params": { "json": "\(dir)/1.json" } },
                "w2": { "type": "analysis.waveform", "params": { "json": "\(dir)/2.json" } },
                "live": { "type": "capture.audio", "params": { "duration": 0.2 } },
                "w3": { "type": "analysis.waveform", "params": { "json": "\(dir)/3.json" } },
                "slow": { "type": "capture.audio", "params": { "live": false, "duration": 0.2 } },
                "w4": { "type": "analysis.waveform", "params": { "json": "\(dir)/4.json" } },
                "solo": { "type": "capture.audio", "params": { "live": false, "duration": 0.2 } },
                "w5": { "type": "analysis.waveform", "params": { "json": "\(dir)/5.json" } },
                "app": { "type": "source.app", "params": { "live": true } },
                "w6": { "type": "analysis.waveform", "params": { "json": "\(dir)/6.json" } } },
              "edges": [ "mic.out -> gain.in", "gain.out -> w1.in", "gain.out -> w2.in", "live.out -> w3.in",
                         { "from": "slow.out", "to": "w4.in", "capacity": { "seconds": 0.1 } }, "solo.out -> w5.in",
                         "app.out -> w6.in" ] }
            """)
        let run = try GraphRun(g)
        try run.start()
        // Code that appends in real time is not a live capture source: its edge never drops.
        let app = try run.input("app")
        for b in TestMedia.sine(seconds: 0.2) { try app.appendWaiting(b) }
        app.markAsFinished()
        let report = run.wait()
        let queued = Dictionary(uniqueKeysWithValues: report.edges.map { ("\($0.from)->\($0.to)", $0.queued) })
        #expect(queued == ["mic.out->gain.in": false, "gain.out->w1.in": true, "gain.out->w2.in": true,
                           "live.out->w3.in": true, "slow.out->w4.in": true, "solo.out->w5.in": false,
                           "app.out->w6.in": false])
        // Every edge of the capture sources saw every buffer (the app's sent its own).
        #expect(report.edges.filter { $0.from != "app.out" }.allSatisfy { $0.buffers == report.edges[0].buffers })
        // A Swift node that consumes its input counts every buffer in, kept or not.
        #expect(report.nodes.filter { $0.type == "analysis.waveform" && $0.id != "w6" }.allSatisfy { $0.buffersIn == report.edges[0].buffers })
        // Each side of a link reports the same buffers and bytes, however they are counted: by a
        // probe, or by the Swift node at either end (gain passes on, w5 consumes).
        let nodes = Dictionary(uniqueKeysWithValues: report.nodes.map { ($0.id, $0) })
        #expect(report.edges[0].buffers > 0)
        for (from, to) in [("mic", "gain"), ("gain", "w1"), ("solo", "w5")] {
            #expect(nodes[from]!.buffersOut == report.edges[0].buffers, "\(from)")
            #expect(nodes[from]!.bytesOut == nodes[to]!.bytesIn, "\(from) -> \(to)")
        }
        #expect(nodes["gain"]!.buffersIn == nodes["gain"]!.buffersOut)
    }

    /// A consumer slower than real time: each buffer takes it 40 ms.
    final class Slow: ProcessingNode, Sendable {
        static let bufferFlow = BufferFlow.consume
        static let descriptor = NodeDescriptor(
            type: "test.slow", category: .analysis, summary: "takes 40 ms over each buffer",
            inputs: [PortDescriptor("in", .any, help: "")], example: #"{ "type": "test.slow" }"#)
        init(context: NodeContext) throws(GraphError) {}
        func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
            usleep(40_000)
            return true
        }
    }

    /// A live microphone (a second of 1,024-sample buffers: 43) fanned out to a consumer that
    /// cannot keep up, through an edge of one buffer, and to one that can: the slow edge drops,
    /// and every buffer the source produced either passed an edge or was counted as dropped
    /// there; the source node's `dropped` is its edges' drops (issue 27: drops are counted
    /// wherever a graph makes them, so that the run's summary can warn).
    @Test func aLiveSourcesDropsAreCountedExactlyAtItsEdgesAndItsNode() throws {
        var registry = NodeRegistry.builtIn
        registry.register(Slow.self)
        let dir = try TestMedia.temporaryFolder().path
        let g = try GraphLoader(registry: registry).load(json: """
            { "version": 1, "nodes": {
                "mic": { "type": "capture.audio", "params": { "duration": 1 } },
                "slow": { "type": "test.slow" },
                "wave": { "type": "analysis.waveform", "params": { "json": "\(dir)/w.json" } } },
              "edges": [ { "from": "mic.out", "to": "slow.in", "capacity": { "buffers": 1 } }, "mic.out -> wave.in" ] }
            """)
        let report = try GraphRun(g).run()
        let mic = try #require(report.nodes.first { $0.id == "mic" })
        let slow = try #require(report.edges.first { $0.to == "slow.in" })
        let fast = try #require(report.edges.first { $0.to == "wave.in" })
        #expect(mic.buffersOut >= 40, "\(mic)")
        #expect(slow.drops > 0, "\(slow)")
        #expect(fast.drops == 0, "\(fast)")
        for edge in [slow, fast] {
            #expect(edge.buffers + edge.drops == mic.buffersOut, "\(edge) of \(mic.buffersOut) buffers")
        }
        #expect(mic.dropped == slow.drops + fast.drops, "\(mic)")
        #expect(report.nodes.first { $0.id == "slow" }?.buffersIn == slow.buffers)
    }

    /// The run's report says where buffers were dropped and how many in all, for a summary to
    /// warn with: here a live microphone's edge into a consumer that cannot keep up; a graph
    /// that drops nothing says so.
    @Test func theReportListsEveryPlaceThatDropped() throws {
        var registry = NodeRegistry.builtIn
        registry.register(Slow.self)
        let g = try GraphLoader(registry: registry).load(json: """
            { "version": 1, "nodes": { "mic": { "type": "capture.audio", "params": { "duration": 0.5 } }, "slow": { "type": "test.slow" } },
              "edges": [ { "from": "mic.out", "to": "slow.in", "capacity": { "buffers": 1 } } ] }
            """)
        let captured = LoggingTests.Captured()
        let report = try GraphRun(g, logger: Logger(label: "test") { _ in LoggingTests.CapturingHandler(captured: captured) }).run()
        let dropped = report.edges[0].drops
        #expect(dropped > 0)
        #expect(report.drops == [DropSite(node: "mic", edge: "mic.out -> slow.in", buffers: dropped, reason: .liveSourceAhead)])
        #expect(report.droppedBuffers == dropped)
        // And the run says so, naming the edge and the count: what was dropped is not in the output.
        let warnings = captured.lock.withLock { captured.entries.filter { $0.level == .warning }.map(\.message) }
        #expect(warnings == ["\(dropped) buffers dropped at mic.out -> slow.in: what mic feeds did not keep up with it (a live source drops rather than wait)"])
        let calm = try GraphLoader(registry: registry).load(json: """
            { "version": 1, "nodes": { "mic": { "type": "capture.audio", "params": { "duration": 0.2, "live": false } }, "slow": { "type": "test.slow" } },
              "edges": [ "mic.out -> slow.in" ] }
            """)
        let waited = try GraphRun(calm).run()
        #expect(waited.drops.isEmpty && waited.droppedBuffers == 0, "\(waited.drops)")
    }

    /// Two sources have a thread each, so their streams join the muxer directly, as in a
    /// gst-launch-1.0 line; the muxer still interleaves them and the run ends.
    @Test func streamsFromSeparateSourcesJoinTheMuxerWithoutQueues() throws {
        let dir = try TestMedia.temporaryFolder().path
        let g = try graph("""
            { "version": 1, "nodes": {
                "camera": { "type": "capture.video", "params": { "width": 64, "height": 48, "fps": 30, "duration": 1, "live": false } },
                "mic": { "type": "capture.audio", "params": { "duration": 1, "live": false } },
                "h264": { "type": "encode.h264" }, "aac": { "type": "encode.aac" },
                "file": { "type": "sink.mp4", "params": { "path": "\(dir)/av.mp4" } } },
              "edges": [ "camera.out -> h264.in", "h264.out -> file.video", "mic.out -> aac.in", "aac.out -> file.audio" ] }
            """)
        let report = try GraphRun(g).run()
        #expect(report.edges.allSatisfy { !$0.queued })
        let probe = try MediaProbe("\(dir)/av.mp4")
        #expect(probe.streams.map(\.codecName).sorted() == ["aac", "h264"])
        #expect(probe.stream("video")?.frameCount == 30)
    }

    /// A sink with room for many samples hands each one over as it arrives: samples that trickle
    /// in one at a time (a live source) are never held back to fill the sink's capacity; and a
    /// puller waiting on a run whose input finishes wakes.
    @Test(.timeLimit(.minutes(10))) func eachTrickledSampleIsPulledAsItArrives() async throws {
        let g = try graph("""
            { "version": 1, "nodes": { "feed": { "type": "source.app" },
              "take": { "type": "sink.app", "params": { "maxBuffers": 64 } } }, "edges": [ "feed.out -> take.in" ] }
            """)
        let run = try GraphRun(g)
        try run.start()
        let input = try run.input("feed")
        let output = try run.output("take")
        let samples = TestMedia.pcm(sampleRate: 8000, frames: 5 * 256, framesPerBuffer: 256) { f, _ in Int16(truncatingIfNeeded: f) }
        let pulledCount = Atomic(0)
        let puller = TestThread("puller") { () -> Int in
            for _ in samples {
                guard output.copyNextSampleBuffer() != nil else { break }
                pulledCount.add(1, ordering: .sequentiallyConsistent)
            }
            return pulledCount.load(ordering: .sequentiallyConsistent)
        }
        // One sample at a time, the next only once the puller has this one: a sink that held
        // samples for a batch (64 here) would never hand the first over, and the test would run
        // into its time limit. Counted, not timed, so a loaded machine cannot fail it.
        for (i, b) in samples.enumerated() {
            try input.appendImmediately(b)
            while pulledCount.load(ordering: .sequentiallyConsistent) < i + 1 { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(await puller.join() == samples.count)
        // A puller waiting when the input finishes wakes with nil.
        let last = TestThread("last") { output.copyNextSampleBuffer() == nil }
        input.markAsFinished()
        #expect(await last.join())
        #expect(await run.report().status == .completed)
    }

    /// Caps are described once per caps object, not per sample: a format change mid-stream
    /// still reaches the puller, on the first buffer of the new format.
    @Test func aFormatChangeMidStreamReachesThePuller() throws {
        let g = try graph("""
            { "version": 1, "nodes": { "feed": { "type": "source.app", "params": { "maxBuffers": 0 } },
              "take": { "type": "sink.app", "params": { "maxBuffers": 0 } } }, "edges": [ "feed.out -> take.in" ] }
            """)
        let run = try GraphRun(g)
        try run.start()
        let input = try run.input("feed")
        let first = TestMedia.pcm(sampleRate: 8000, frames: 2048) { f, _ in Int16(f) }
        let second = TestMedia.pcm(sampleRate: 16_000, channels: 2, frames: 2048) { f, _ in Int16(f) }.map { b -> SampleBuffer in
            var b = b
            b.presentationTime = b.presentationTime! + MediaTime(value: 1, timescale: 4)  // after the first
            return b
        }
        for b in first + second { try input.appendImmediately(b) }
        input.markAsFinished()
        var formats: [MediaFormat?] = []
        while let b = try run.output("take").copyNextSampleBuffer() { formats.append(b.format) }
        #expect(run.wait().status == .completed)
        #expect(formats == Array(repeating: first[0].format, count: 2) + Array(repeating: second[0].format, count: 2))
    }
    /// A run not yet playing when asked to stop (here: waiting for its first buffer) has
    /// written nothing, and end of stream may not pass through it (a demuxer stalled reading a
    /// damaged header): stopping it cancels it, so a stop always ends the run.
    @Test func stoppingARunThatIsNotYetPlayingCancelsIt() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("never.m4a").path
        let g = try graph("""
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "aac": { "type": "encode.aac" },
              "file": { "type": "sink.mp4", "params": { "path": "\(path)" } } },
              "edges": [ "feed.out -> aac.in", "aac.out -> file.audio" ] }
            """)
        let run = try GraphRun(g)
        try run.start()  // no buffer ever comes: the file sink waits for one to preroll
        run.stop()
        guard let report = TestThread("wait", { run.wait() }).join(guardSeconds: 120) else {
            run.cancel()  // the guard limit passed: free the test, and fail it
            Issue.record("stop() did not end a run that never started playing")
            return
        }
        #expect(report.status == .cancelled)
        #expect(report.error?.code == .cancelled)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
    }
}
