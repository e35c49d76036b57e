import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import Synchronization
import TestSupport
import Testing

/// What app code appends to a source.app is checked before it enters the graph, and no call on
/// an input or output waits once the run has ended.
@Suite(.media, .timeLimit(.minutes(10))) struct AppInputChecksTests {
    func run(format: String? = nil, maxBuffers: Int = 8, sink: String = #"{ "type": "sink.app", "params": { "maxBuffers": 1 } }"#) throws -> GraphRun {
        let declared = format.map { #", "format": "\#($0)""# } ?? ""
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app", "params": { "maxBuffers": \(maxBuffers)\(declared) } },
              "drain": \(sink) }, "edges": ["feed.out -> drain.in"] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        return run
    }

    func expectRefusal(_ fragment: String, _ input: MediaInput, _ buffer: SampleBuffer, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) {
            try input.appendImmediately(buffer)
        } throws: { error in
            let e = error as? GraphError
            return e?.code == .usage && e?.node == "feed" && e?.problems[0].location == "input \"feed\"" && e?.message.contains(fragment) == true
        }
    }

    @Test func aDeclaredFormatIsEnforced() async throws {
        let r = try run(format: "audio/pcm s16le 8000 Hz 1 ch")
        let input = try r.input("feed")
        #expect(input.declaredFormat == .pcm(.init(sampleRate: 8_000, channels: 1, sampleFormat: .s16le)))
        expectRefusal("this input was declared audio/pcm S16LE 8000 Hz 1 ch", input, TestMedia.sine(sampleRate: 16_000, seconds: 0.1)[0])
        try input.appendImmediately(TestMedia.sine(sampleRate: 8_000, seconds: 0.1)[0])
        r.cancel()
        _ = await r.report()
    }

    /// The declared format is what the output carries, so the loader checks it against what it
    /// feeds, as it does a decoder's parameters: refused before anything runs, at the parameter.
    @Test func aDeclaredFormatTheGraphCannotTakeIsRefusedAtLoad() throws {
        func load(_ format: String, into consumer: String) throws {
            _ = try GraphLoader(registry: .builtIn).load(json: """
                { "version": 1, "nodes": { "feed": { "type": "source.app", "params": { "format": "\(format)" } },
                  "use": { "type": "\(consumer)" }, "drain": { "type": "sink.app" } }, "edges": ["feed.out -> use.in", "use.out -> drain.in"] }
                """)
        }
        #expect {
            try load("audio/pcm s16le 48000 Hz 2 ch", into: "encode.h264")
        } throws: { error in
            let e = error as? GraphError
            return e?.code == .invalidGraph && e?.problems[0].location == "nodes.feed.params.format"
                && e?.message.contains("audio/pcm S16LE 48000 Hz 2 ch") == true && e?.message.contains("\"use.in\" (encode.h264)") == true
        }
        // What the input takes passes; without a format, anything does (checked when appended).
        try load("audio/pcm s16le 48000 Hz 2 ch", into: "encode.aac")
        try load("video/raw i420 640x480 30 fps", into: "encode.h264")
        _ = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "use": { "type": "encode.h264" }, "drain": { "type": "sink.app" } },
              "edges": ["feed.out -> use.in", "use.out -> drain.in"] }
            """)
    }

    @Test func aFormatThatIsNotOneIsAnErrorAtTheParameter() throws {
        #expect {
            try run(format: "audio/pcm s17le 8000 2")
        } throws: { error in
            let e = error as? GraphError
            return e?.code == .invalidGraph && e?.problems[0].location == "nodes.feed.params.format" && e?.message.contains("is not a format") == true
        }
        for text in ["audio/pcm s16le 48000 Hz 2 ch", "video/raw bgra 1280x720 30 fps", "video/raw i420 640x480 30000/1001", "audio/aac", "video/h264 1920x1080",
                     "video/hevc 3840x2160", "video/vp9", "video/av1 64x64", "audio/opus 48000 Hz 2 ch", "audio/flac", "audio/alac 44100 1"] {
            let f = try #require(MediaFormat(text: text), "\(text)")
            #expect(MediaFormat(text: f.description) == f, "\(f.description) reads back")
        }
    }

    @Test func byteCountsTimesAndOrderAreChecked() async throws {
        let r = try run(maxBuffers: 0, sink: #"{ "type": "sink.app", "params": { "maxBuffers": 0 } }"#)
        let input = try r.input("feed")
        let pcm = MediaFormat.pcm(.init(sampleRate: 8_000, channels: 2, sampleFormat: .s16le))
        expectRefusal("not a whole number of 4-byte frames", input, SampleBuffer(format: pcm, bytes: [1, 2, 3, 4, 5, 6], presentationTime: .zero))
        expectRefusal("not a whole number of 4-byte frames", input, SampleBuffer(format: pcm, bytes: [UInt8](), presentationTime: .zero))
        let video = MediaFormat.rawVideo(.init(pixelFormat: .i420, width: 64, height: 48, frameRate: FrameRate(30)))
        expectRefusal("a 64x48 I420 frame is 4608 bytes", input, SampleBuffer(format: video, byteCount: 4_000, presentationTime: .zero))
        expectRefusal("no presentation time", input, SampleBuffer(format: pcm, byteCount: 400))
        expectRefusal("the sample is empty", input, SampleBuffer(format: .aac(sampleRate: nil, channels: nil), byteCount: 0, presentationTime: .zero))
        try input.appendImmediately(SampleBuffer(format: pcm, byteCount: 400, presentationTime: MediaTime(value: 100, timescale: 8_000)))
        expectRefusal("earlier than the previous sample's", input, SampleBuffer(format: pcm, byteCount: 400, presentationTime: MediaTime(value: 99, timescale: 8_000)))
        try input.appendImmediately(SampleBuffer(format: pcm, byteCount: 400, presentationTime: MediaTime(value: 100, timescale: 8_000)))
        // Padded rows (bytesPerRow beyond 4 × width) are a frame's own layout, and fit.
        let padded = SampleBuffer(video: .init(pixelFormat: .bgra, width: 30, height: 10, frameRate: FrameRate(30)), bytesPerRow: 128,
                                  presentationTime: MediaTime(value: 1, timescale: 1))
        try input.appendImmediately(padded)
        input.markAsFinished()
        let output = try r.output("drain")
        let pulled = await TestThread("pull") { () -> Int in
            var n = 0
            while output.copyNextSampleBuffer() != nil { n += 1 }
            return n
        }.join()
        #expect(pulled == 3)
        #expect(await r.report().status == .completed)
    }

    /// The run fails (a node refuses a buffer) while a producer is held back on a full input:
    /// the producer wakes and throws the failure, naming the node.
    @Test func aBlockedAppendWakesWithTheRunsFailure() async throws {
        var registry = NodeRegistry.builtIn
        registry.register(RefusesThird.self)
        let graph = try GraphLoader(registry: registry).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app", "params": { "maxBuffers": 2 } },
              "refuse": { "type": "test.refuses-third" }, "drain": { "type": "sink.app", "params": { "maxBuffers": 1 } } },
              "edges": ["feed.out -> refuse.in", "refuse.out -> drain.in"] }
            """)
        let r = try GraphRun(graph)
        try r.start()
        let input = try r.input("feed")
        let output = try r.output("drain")
        let producer = TestThread("producer") { () -> GraphError? in
            do {
                for b in TestMedia.sine(seconds: 10) { try input.appendWaiting(b) }
                return nil
            } catch {
                return error as? GraphError
            }
        }
        // The sink holds the first buffer and the second waits behind it, so the producer is
        // held back; a pull lets the third in, which is refused.
        while input.isReadyForMoreMediaData { try await Task.sleep(for: .milliseconds(5)) }
        let first = await TestThread("pull") { output.copyNextSampleBuffer() }.join()
        #expect(first != nil)
        let error = await producer.join()
        #expect(error?.node == "refuse" && error?.message.contains("third buffer refused") == true, "\(String(describing: error))")
        #expect(await r.report().status == .failed)
        // A pull after the end returns at once.
        #expect(await TestThread("after") { output.copyNextSampleBuffer() == nil }.join())
    }

    /// A pull waiting for a sample that will never come (nothing is appended) wakes with nil
    /// when the run is cancelled.
    @Test func aWaitingPullWakesWhenTheRunIsCancelled() async throws {
        let r = try run()
        let output = try r.output("drain")
        let puller = TestThread("pull") { output.copyNextSampleBuffer() }
        try await Task.sleep(for: .milliseconds(100))
        r.cancel()
        #expect(await puller.join() == nil)
        #expect(await r.report().status == .cancelled)
    }

    /// A graph that writes an M4A from what is appended (a sink that needs no pulling).
    func toM4A() throws -> (GraphRun, String) {
        let path = try TestMedia.temporaryFolder().appendingPathComponent("x.m4a").path
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app" }, "aac": { "type": "encode.aac" },
              "file": { "type": "sink.mp4", "params": { "path": "\(path)" } } }, "edges": ["feed.out -> aac.in", "aac.out -> file.audio"] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        return (run, path)
    }

    /// End of stream waits in a sink.app until the app has pulled everything (appsink's
    /// wait-on-eos), holding its streaming thread: cancelling then must still end the run
    /// (GStreamer 1.22 would wait for that thread for ever when stopping the pipeline).
    @Test func cancellingWhileEndOfStreamWaitsForPullsEnds() async throws {
        let r = try run(maxBuffers: 0, sink: #"{ "type": "sink.app", "params": { "maxBuffers": 0 } }"#)
        let input = try r.input("feed")
        for b in TestMedia.sine(seconds: 0.1) { try input.appendImmediately(b) }
        input.markAsFinished()
        try await Task.sleep(for: .milliseconds(200))  // end of stream reaches the sink and waits there
        let canceller = TestThread("cancel") { () -> RunStatus in
            r.cancel()
            return r.wait().status
        }
        let status = await canceller.join(guardSeconds: 20)
        #expect(status != nil, "the run did not end")
        if let status { #expect(status == .cancelled) }
    }

    /// The input was never finished, and the app does not hold it any more: awaiting the report
    /// finishes it, so the report comes, and the file is complete.
    @Test func aReportDoesNotWaitForAnInputNobodyHolds() async throws {
        let (r, path) = try toM4A()
        do {
            let input = try r.input("feed")
            for b in TestMedia.sine(seconds: 0.5) { try await input.append(b) }
        }
        let report = await r.report()
        #expect(report.status == .completed)
        #expect(abs(try MediaProbe(path).duration - 0.5) < 0.03)
    }

    /// Let go while the report is awaited: the input is finished then.
    @Test func anInputLetGoWhileTheReportIsAwaitedIsFinished() async throws {
        let (r, _) = try toM4A()
        var input: MediaInput? = try r.input("feed")
        try await input!.append(TestMedia.sine(seconds: 0.1)[0])
        let waiter = Task { await r.report() }
        try await Task.sleep(for: .milliseconds(200))
        #expect(!r.isFinished)  // held: the app may still append
        input = nil
        #expect(await waiter.value.status == .completed)
    }

    /// A requestMediaDataWhenReady block is let go when the input finishes: the input it holds
    /// (a cycle) is freed.
    @Test func aFinishedInputLetsItsBlockGo() async throws {
        let r = try run()
        weak var weakInput: MediaInput?
        do {
            let input = try r.input("feed")
            weakInput = input
            let queue = DispatchQueue(label: "feed")
            input.requestMediaDataWhenReady(on: queue) { _ = input.isReadyForMoreMediaData }
            input.markAsFinished()
        }
        // A call the graph's need-data scheduled just before the finish may still run once (and
        // hold the block meanwhile); then nothing holds it. A cycle would keep it for ever.
        for _ in 0..<200 where weakInput != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakInput == nil)
        r.cancel()
        _ = await r.report()
    }
}

/// Passes two buffers on and refuses the third.
final class RefusesThird: ProcessingNode, Sendable {
    static let bufferFlow = BufferFlow.passThrough
    static let descriptor = NodeDescriptor(
        type: "test.refuses-third", category: .effect, summary: "refuses its third buffer",
        inputs: [PortDescriptor("in", .any, help: "")], outputs: [PortDescriptor("out", .any, help: "")],
        example: #"{ "type": "test.refuses-third" }"#)
    private let seen = Atomic<Int>(0)
    init(context: NodeContext) throws(GraphError) {}
    func process(_ buffer: inout SampleBuffer) throws(GraphError) -> Bool {
        if seen.add(1, ordering: .relaxed).newValue == 3 { throw GraphError(.runFailed, "third buffer refused") }
        return true
    }
}
