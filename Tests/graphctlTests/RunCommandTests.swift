import Foundation
import Testing
import GraphKit
import GraphKitTesting

/// The first graphs, end to end, checked with ffprobe.
@Suite struct RunCommandTests {
    @Test func m4aGraphRecordsTenSecondsOfAAC() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("capture.m4a").path
        let stats = folder.appendingPathComponent("stats.json").path
        let r = try Graphctl.run("run", Graphctl.graph("m4a.json"), "--set", "mic.live=false", "--set", "file.path=\(out)",
                                 "--stats", stats)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("completed in"))
        let probe = try MediaProbe(out)
        let audio = try #require(probe.stream("audio"))
        #expect(audio.codecName == "aac")
        #expect(audio.sampleRate == 44_100)
        #expect(audio.channels == 1)
        #expect(abs(probe.duration - 10) <= 0.047)  // two AAC frames at 44.1 kHz
        #expect(probe.topLevelBoxes.firstIndex(of: "moov")! < probe.topLevelBoxes.firstIndex(of: "mdat")!)

        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats)))
        #expect(report.status == .completed)
        #expect(report.outputs.first?.status == .completed)
        #expect(report.edges.first { $0.to == "aac.in" }?.capacity == EdgeCapacity(buffers: 64))
        #expect(report.edges.allSatisfy { $0.maxBuffers <= ($0.capacity.buffers ?? .max) })
    }

    @Test func transcodeGraphReencodesAWAV() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("in.wav").path
        try TestMedia.writeWAV(wav, seconds: 3, sampleRate: 48_000, channels: 2)
        let out = folder.appendingPathComponent("nested/out.m4a").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--quiet",
                                 "--set", "src.path=\(wav)", "--set", "file.path=\(out)")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty)
        let probe = try MediaProbe(out)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(probe.stream("audio")?.sampleRate == 48_000)
        #expect(probe.stream("audio")?.channels == 2)
        #expect(abs(probe.duration - 3) <= 0.043)
    }

    @Test func relativePathsAreRelativeToTheCurrentFolder() throws {
        let folder = try TestMedia.temporaryFolder()
        try TestMedia.writeWAV(folder.appendingPathComponent("rel.wav").path, seconds: 0.5)
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=rel.wav",
                                 "--set", "file.path=o/rel.m4a", in: folder)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("o/rel.m4a").path))
    }

    /// Ctrl-C ends the sources: the file is finalized and the run is a success.
    @Test func interruptFinalizesTheFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("live.m4a").path
        let started = try Graphctl.start(["run", Graphctl.graph("m4a.json"), "--set", "mic.duration=0", "--set", "file.path=\(out)"])
        Thread.sleep(forTimeInterval: 2.5)
        kill(started.0.processIdentifier, SIGINT)
        let r = Graphctl.wait(started)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("stopping"))
        #expect(r.stderr.contains("stopped in"))
        let probe = try MediaProbe(out)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(probe.duration > 1.5 && probe.duration < 4)
    }

    @Test func sigtermIsLikeInterruptAndASecondOneCancels() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("cancel.m4a").path
        let started = try Graphctl.start(["run", Graphctl.graph("m4a.json"), "--set", "mic.duration=0", "--set", "file.path=\(out)",
                                          "--set", "aac.bitrate=64000"])
        Thread.sleep(forTimeInterval: 1.0)
        // Stop the pipeline from draining: a second signal while the first is honoured cancels.
        kill(started.0.processIdentifier, SIGSTOP)
        kill(started.0.processIdentifier, SIGTERM)
        kill(started.0.processIdentifier, SIGTERM)
        kill(started.0.processIdentifier, SIGCONT)
        let r = Graphctl.wait(started)
        if r.status == 130 {
            #expect(r.stderr.contains("cancelled"))
            #expect(!FileManager.default.fileExists(atPath: out))
        } else {
            // Both signals may be folded into one by the kernel: then it is a clean stop.
            #expect(r.status == 0, "\(r.stderr)")
            #expect(try MediaProbe(out).stream("audio")?.codecName == "aac")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(".cancel.m4a.partial").path))
    }
}
