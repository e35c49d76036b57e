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

    /// Ctrl-C ends the sources: the file is finalized and the run is a success. The interrupt
    /// comes once the progress line shows two seconds of media, and the file then holds what the
    /// run's statistics say reached it: no clock is read.
    @Test func interruptFinalizesTheFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("live.m4a").path, stats = folder.appendingPathComponent("stats.json").path
        let graphctl = try Graphctl.start(["run", Graphctl.graph("m4a.json"), "--set", "mic.duration=0", "--set", "file.path=\(out)",
                                           "--progress", "always", "--stats", stats])
        let shown = try graphctl.waitForPosition(atLeast: 2)
        graphctl.send(SIGINT)
        let r = graphctl.wait()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("stopping"))
        #expect(r.stderr.contains("stopped in"))
        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats)))
        #expect(report.status == .stopped)
        #expect(report.mediaSeconds >= shown - 0.05)  // the line shows tenths, rounded
        let probe = try MediaProbe(out)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(abs(probe.duration - report.mediaSeconds) <= 0.047, "file \(probe.duration) s, run \(report.mediaSeconds) s")  // two AAC frames
    }

    /// SIGTERM is like Ctrl-C, and a second signal while the first is honoured cancels: exit 130
    /// and nothing written. The two are sent while graphctl is stopped (SIGSTOP), so it takes both
    /// at once when it continues, before the pipeline can drain; they are two different signals
    /// (SIGTERM then SIGINT) because the kernel keeps one pending instance of each, and two of
    /// the same kind would merge into one.
    @Test func sigtermIsLikeInterruptAndASecondOneCancels() throws {
        let folder = try TestMedia.temporaryFolder()
        let out = folder.appendingPathComponent("cancel.m4a").path
        let graphctl = try Graphctl.start(["run", Graphctl.graph("m4a.json"), "--set", "mic.duration=0", "--set", "file.path=\(out)",
                                           "--set", "aac.bitrate=64000", "--progress", "always"])
        // Media has reached the file: the signal handlers are installed and the pipeline plays.
        try graphctl.waitForPosition(atLeast: 0.5)
        graphctl.send(SIGSTOP)
        graphctl.send(SIGTERM)
        graphctl.send(SIGINT)
        graphctl.send(SIGCONT)
        let r = graphctl.wait()
        #expect(r.stderr.contains("stopping"))  // printed before the first signal's stop() is called
        // The second signal cancels, even when the end of stream the first one started arrives
        // first: the file is abandoned.
        #expect(r.stderr.contains("cancelling"), "graphctl counted only one of the two signals")
        #expect(r.status == 130, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent(".cancel.m4a.partial").path))
    }

    /// The tests above wait on what the progress line shows; this pins how it is read.
    @Test func progressLinePositionsAreRead() {
        let text = "\r\u{1B}[K0.1 s  0.3x\r\u{1B}[K[===          ] 1.5 / 10.0 s  1.0x\r\u{1B}[K\nstopping: finishing files"
        #expect(RunningGraphctl.positions(in: text) == [0.1, 1.5])
    }
}
