import Foundation
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport
import Testing

/// GraphRun.start(at:): a run that starts at a position in its files, found by seeking.
@Suite(.media, .timeLimit(.minutes(10))) struct GraphRunSeekTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// 10 s of 320x240 H.264 at 25 fps with a keyframe every 2 s (ffprobe lists 0, 2, 4, 6, 8).
    func video() throws -> String {
        let p = path("gop.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=10",
                                         "-c:v", "libx264", "-g", "50", "-keyint_min", "50", "-sc_threshold", "0", p])
        return p
    }

    func decodeGraph(_ file: String, _ kind: String) throws -> Graph {
        var b = GraphBuilder(name: "seek")
        let source = b.add("file", FileSourceNode.self) { $0[\.path] = file }
        let decode = b.add("decode", DecodeNode.self)
        let sink = b.add("out", AppSinkNode.self) { $0[\.maxBuffers] = 2 }
        b.connect(source.output(), to: decode.input())
        b.connect(decode.output(kind), to: sink.input())
        return try b.build(registry: .builtIn)
    }

    /// The first frames after a keyframe seek start at the keyframe at or before the time, and
    /// after an exact seek at the frame showing then (stamped from the time on: the decoder cuts
    /// it to where the run starts, as GStreamer clips to a segment); the frames before are never
    /// pulled, and the run goes on to the end of the file from there.
    @Test func aRunStartsAtTheKeyframeBeforeOrAtTheExactFrame() throws {
        let file = try video()
        for (seek, first) in [(GraphRun.Seek.keyframe(atOrBefore: MediaTime(seconds: 5.5)), 4.0),
                              (.keyframe(atOrBefore: MediaTime(seconds: 8)), 8.0),
                              (.exact(MediaTime(seconds: 5.5)), 5.5),
                              (.exact(MediaTime(seconds: 7.01)), 7.01)] {
            let run = try GraphRun(try decodeGraph(file, "video"))
            try run.start(at: seek)
            let output = try run.output("out")
            var times: [Double] = []
            while let frame = output.copyNextSampleBuffer() { times.append(frame.presentationTime?.seconds ?? -1) }
            let report = run.wait()
            #expect(report.status == .completed, "\(seek): \(report.error?.description ?? "")")
            #expect(abs((times.first ?? -1) - first) < 0.001, "\(seek): first frame at \(times.first ?? -1) s")
            // From there to the end, every frame once: from frame ⌊first × 25⌋ to frame 249.
            #expect(times.count == 250 - Int((first * 25).rounded(.down)), "\(seek): \(times.count) frames")
        }
    }

    /// Sound seeks to the sample: an exact start at 1.25 s gives PCM from 1.25 s, and the
    /// remaining 0.75 s of the file.
    @Test func soundStartsAtTheExactTime() throws {
        let wav = path("tone.wav")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000:duration=2", wav])
        let run = try GraphRun(try decodeGraph(wav, "audio"))
        try run.start(at: .exact(MediaTime(value: 5, timescale: 4)))
        let output = try run.output("out")
        var first: MediaTime?
        var frames = 0
        while let sample = output.copyNextSampleBuffer() {
            if first == nil { first = sample.presentationTime }
            frames += sample.frameCount
        }
        #expect(run.wait().status == .completed)
        #expect(abs((first?.seconds ?? -1) - 1.25) < 1.0 / 8000)
        #expect(frames == 6000)
    }

    /// A run that cannot preroll (an encoder and a file sink waiting for samples nobody appends)
    /// blocks start(at:) until it is cancelled from another thread: then it wakes and throws
    /// `cancelled`, and nothing is left under the output's name.
    @Test func aStartWaitingForPrerollWakesWhenCancelled() throws {
        let out = path("never.mp4")
        var b = GraphBuilder(name: "never")
        let feed = b.add("feed", AppSourceNode.self)
        let h264 = b.add("h264", H264EncoderNode.self)
        let mp4 = b.add("mp4", MP4SinkNode.self) { $0[\.path] = out }
        b.connect(feed.output(), to: h264.input())
        b.connect(h264.output(), to: mp4.input("video"))
        let run = try GraphRun(try b.build(registry: .builtIn))
        let canceller = TestThread("canceller") {
            Thread.sleep(forTimeInterval: 0.5)
            run.cancel()
        }
        #expect(throws: GraphError.self) { try run.start(at: .keyframe(atOrBefore: MediaTime(seconds: 1))) }
        canceller.join()
        do {
            try run.start(at: .exact(.zero))  // already started: does nothing, and does not wait
        } catch {
            Issue.record("a second start threw \(error)")
        }
        #expect(run.wait().status == .cancelled)
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    /// A position that is not a time from 0 is refused before anything starts.
    @Test func aNegativePositionIsRefused() throws {
        let run = try GraphRun(try decodeGraph(try video(), "video"))
        #expect { try run.start(at: .exact(MediaTime(seconds: -1))) } throws: { ($0 as? GraphError)?.code == .usage }
        #expect { try run.start(at: .keyframe(atOrBefore: .positiveInfinity)) } throws: { ($0 as? GraphError)?.code == .usage }
    }

    /// A run started at a position moves to another (seek(to:)), back or forward, keyframe or
    /// exact: the first frame after each is the one the seek asks for, never one decoded for the
    /// position before; a run not started at a position, or ended, is refused.
    @Test func aPositionedRunSeeksAgain() throws {
        let file = try video()
        let run = try GraphRun(try decodeGraph(file, "video"))
        try run.start(at: .keyframe(atOrBefore: MediaTime(seconds: 6.5)))
        let output = try run.output("out")
        #expect(abs((output.copyNextSampleBuffer()?.presentationTime?.seconds ?? -1) - 6) < 0.001)
        for (seek, first) in [(GraphRun.Seek.keyframe(atOrBefore: MediaTime(seconds: 3)), 2.0), (.exact(MediaTime(seconds: 9.2)), 9.2),
                              (.exact(MediaTime(seconds: 0.4)), 0.4), (.keyframe(atOrBefore: MediaTime(seconds: 8.1)), 8.0)] {
            try run.seek(to: seek)
            let time = output.copyNextSampleBuffer()?.presentationTime?.seconds ?? -1
            #expect(abs(time - first) < 0.001, "\(seek): first frame at \(time) s")
        }
        run.cancel()
        _ = run.wait()
        #expect { try run.seek(to: .exact(.zero)) } throws: { ($0 as? GraphError)?.code == .usage }
        let plain = try GraphRun(try decodeGraph(file, "video"))
        try plain.start()
        #expect { try plain.seek(to: .exact(.zero)) } throws: { ($0 as? GraphError)?.code == .usage }
        plain.cancel()
        _ = plain.wait()
    }

    /// A cancel that comes while another thread seeks (a thumbnailer's picture under way when
    /// its run is ended) ends the run, and a pull waiting on the output wakes with nil: the seek
    /// happens before the pipeline stops, or is refused after. (A seek's return to PLAYING once
    /// came after the cancel had stopped the pipeline, which then played on with no watcher and
    /// its callbacks released, and the pull waited for ever: found by the address-sanitizer run,
    /// whose slowness widened the window.) Rounds with the cancel at varied moments; each with a
    /// hard limit.
    @Test func aCancelWhileSeekingEndsTheRunAndWakesThePull() throws {
        let file = try video()
        for round in 0..<60 {
            let run = try GraphRun(try decodeGraph(file, "video"))
            try run.start(at: .keyframe(atOrBefore: .zero))
            let output = try run.output("out")
            let seeker = TestThread("seeker") {
                var i = 0
                while true {
                    do { try run.seek(to: .keyframe(atOrBefore: MediaTime(seconds: Double(i % 5) * 2))) } catch { break }
                    i += 1
                    if output.copyNextSampleBuffer() == nil { break }
                }
            }
            usleep(UInt32(round % 10) * 3_000)  // the cancel lands at a different point in the seeks
            run.cancel()
            guard seeker.join(guardSeconds: 20) != nil else {
                Issue.record("round \(round): a seek or a pull did not wake 20 s after the run was cancelled")
                return  // the thread is stuck: not joined
            }
            #expect(run.wait().status == .cancelled)
            // The run is over (a seek refused once the cancel was asked for, samples already
            // queued could still come until then): a pull now gives nil at once, never a sample
            // of a pipeline playing again.
            guard let pulledNothing = TestThread("puller", { output.copyNextSampleBuffer() == nil }).join(guardSeconds: 20) else {
                Issue.record("round \(round): a pull after the run ended did not return within 20 s")
                return
            }
            #expect(pulledNothing, "round \(round): a pull after the run ended gave a sample")
        }
    }
}
