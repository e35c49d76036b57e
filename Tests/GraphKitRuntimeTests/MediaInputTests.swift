import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport
import Testing

@Suite(.media) struct MediaInputTests {
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

    /// RosyWriter's burst through a graph (issue 27): 300 frames of 1280×720 and their sound
    /// handed back to back to two `source.app` inputs with `live: true`, each appended only if
    /// its input is ready (the rest dropped by the app, and counted), the machine idle or loaded.
    /// Every frame and sample appended is in the file, interleaved by time, and the report
    /// counts no drop: a real-time input's edge is a link, never a queue that drops.
    @Test(.timeLimit(.minutes(10)), arguments: [false, true])
    func aLiveInputKeepsEverySampleItAccepted(underLoad: Bool) async throws {
        let out = try TestMedia.temporaryFolder().appendingPathComponent("burst.mp4").path
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "camera": { "type": "source.app", "params": { "live": true } },
                "mic": { "type": "source.app", "params": { "live": true } },
                "h264": { "type": "encode.h264" }, "aac": { "type": "encode.aac" },
                "file": { "type": "sink.mp4", "params": { "path": "\(out)" } } },
              "edges": [ "camera.out -> h264.in", "h264.out -> file.video", "mic.out -> aac.in", "aac.out -> file.audio" ] }
            """)
        let load = underLoad ? try CPULoad(workers: 2) : nil
        defer { load?.stop() }
        let run = try GraphRun(graph)
        try run.start()
        let camera = try run.input("camera"), mic = try run.input("mic")
        let frameFormat = MediaFormat.rawVideo(.init(pixelFormat: .bgra, width: 1280, height: 720, frameRate: FrameRate(30)))
        // A camera's buffers come filled: handing one over costs the app nothing.
        let frames = (0..<4).map { n in SampleBuffer(format: frameFormat, bytes: [UInt8](repeating: UInt8(n * 60), count: 1280 * 720 * 4)) }
        let sound = TestMedia.sine(sampleRate: 48_000, seconds: 10, framesPerBuffer: 1_600)
        let handed = try await TestThread("camera") { () -> Result<RealTimeProducer.Counts, any Error> in
            Result {
                defer {
                    camera.markAsFinished()
                    mic.markAsFinished()
                }
                return try RealTimeProducer.run(ticks: 300, paced: false, [
                    .init(isReady: { camera.isReadyForMoreMediaData }) { n in
                        var frame = frames[n % frames.count]
                        frame.presentationTime = MediaTime(value: Int64(n), timescale: 30)
                        frame.duration = MediaTime(value: 1, timescale: 30)
                        try camera.appendImmediately(frame)
                        return 1
                    },
                    .init(isReady: { mic.isReadyForMoreMediaData }) { n in
                        try mic.appendImmediately(sound[n])
                        return sound[n].frameCount
                    },
                ])
            }
        }.join().get()
        let counts = (frames: handed.appended[0], samples: handed.appended[1], turnedAway: handed.turnedAway[0] + handed.turnedAway[1])
        load?.stop()
        let report = await run.report()
        #expect(report.status == .completed, "\(report.error.map { "\($0)" } ?? "")")
        let probe = try MediaProbe(out, countFrames: true)
        let inFile = probe.stream("video")?.frameCount ?? 0
        let seconds = probe.stream("audio")?.duration ?? 0
        let lag = try PacketOrder.worstLag(inFile: out)
        print("\(counts.frames) frames and \(counts.samples) samples appended, \(counts.turnedAway) samples dropped by the app; "
              + "in the file: \(inFile) frames, \(seconds) s; interleaved to \(lag) s")
        #expect(counts.frames > 8)
        #expect(inFile == counts.frames, "appended \(counts.frames) frames, the file has \(inFile)")
        #expect(abs(seconds - Double(counts.samples) / 48_000) <= 1_024.0 / 48_000, "appended \(Double(counts.samples) / 48_000) s, the file has \(seconds) s")
        // Where the file's times are the times appended: sound turned away between two buffers
        // taken leaves a hole the AAC track closes up, so the late buffers are labelled as
        // following on while stored at their time, and the measure reads seconds of "lag"
        // (RealTimeWriterInputTests says more).
        if !handed.hasGap[1] {
            #expect(lag < 0.5, "a packet is stored \(lag) s after a later one")
        }
        #expect(report.droppedBuffers == 0, "\(report.drops)")
        #expect(report.edges.filter { $0.from.hasPrefix("camera.") || $0.from.hasPrefix("mic.") }.allSatisfy { !$0.queued })
    }
}
