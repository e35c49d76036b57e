import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport
import Testing

@Suite struct MediaInputTests {
    func feedToSink(maxBuffers: Int = 2) throws -> GraphRun {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "feed": { "type": "source.app", "params": { "maxBuffers": \(maxBuffers) } },
              "drain": { "type": "sink.app", "params": { "maxBuffers": 1 } } }, "edges": ["feed.out -> drain.in"] }
            """)
        return try GraphRun(graph)
    }

    /// A format GStreamer cannot describe is refused with an error naming the input, not a crash.
    @Test(.timeLimit(.minutes(10)))
    func aFormatWithoutCapsIsRefused() throws {
        let run = try feedToSink()
        try run.start()
        let input = try run.input("feed")
        let odd = SampleBuffer(format: .data("not a media type ((("), bytes: [1, 2, 3], presentationTime: .zero)
        #expect {
            try input.appendImmediately(odd)
        } throws: { error in
            let e = error as? GraphError
            return e?.code == .usage && e?.node == "feed" && e?.message.contains("not one GStreamer can describe") == true
        }
        run.cancel()
        #expect(run.wait().status == .cancelled)
    }

    /// A producer blocked in appendWaiting (the graph is full: nobody pulls) wakes and throws when
    /// the run is cancelled, with the run's error.
    @Test(.timeLimit(.minutes(10)))
    func aBlockedAppendWakesWhenTheRunIsCancelled() async throws {
        let run = try feedToSink()
        try run.start()
        let input = try run.input("feed")
        let pcm = TestMedia.pcm(frames: 64 * 40, framesPerBuffer: 64) { frame, _ in Int16(truncatingIfNeeded: frame) }
        let outcome = TestThread("producer") { () -> GraphError? in
            do {
                for b in pcm { try input.appendWaiting(b) }
                return nil
            } catch {
                return error as? GraphError
            }
        }
        // Wait until the producer is held back (the graph stopped taking samples), then cancel.
        while input.isReadyForMoreMediaData { try await Task.sleep(for: .milliseconds(5)) }
        run.cancel()
        let error = await outcome.join()
        #expect(error?.code == .cancelled, "\(String(describing: error))")
        #expect(await run.report().status == .cancelled)
    }
}
