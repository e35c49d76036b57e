import Foundation
import GraphKit
import GraphKitTesting
import Testing
import TestSupport

/// A write that fails part-way (here a file-size limit, as a full disk would) names the output
/// being written, exits 73, and leaves nothing under the target's name or beside it.
@Suite(.media) struct OutputErrorTests {
    @Test(.timeLimit(.minutes(10)))
    func aFailedWriteNamesTheOutputPath() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("in.wav").path
        // 120 s at 96 kb/s is about 1.4 MB of AAC, past the 1 MiB limit below. The limit is not
        // lower because a ThreadSanitizer build writes 512 KiB to a temporary file as it starts
        // (its read-only shadow), and under a smaller limit faults before main.
        try TestMedia.writeWAV(wav, seconds: 120, sampleRate: 44_100, channels: 2)
        let out = folder.appendingPathComponent("out.m4a").path
        // SIGXFSZ ignored, so that writing past the limit fails with EFBIG instead of killing.
        let script = "trap '' XFSZ; ulimit -f 1024; exec \"$0\" \"$@\""
        let r = try Graphctl.runCommand("/bin/bash", ["-c", script, Graphctl.executable.path, "run", Graphctl.graph("transcode-audio.json"),
                                                      "--set", "src.path=\(wav)", "--set", "file.path=\(out)"])
        #expect(r.status == 73, "\(r.stderr)")
        // The system's reason (EFBIG), in the file or in mp4mux's own temporary file.
        #expect(r.stderr.contains("error: node \"file\" (sink.mp4, writing \"\(out)\"): cannot write \"\(out)\": "), "\(r.stderr)")
        #expect(r.stderr.contains("file too large"), "\(r.stderr)")
        #expect(!r.stderr.contains("reading"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["in.wav"])
    }

    /// A full disk: a 64 KiB tmpfs mounted for the test (root only), too small for the 10 s of
    /// AAC written into it. The error names the output and "no space left on device", says
    /// "writing", exits 73, and leaves nothing on the full disk. With faststart the media waits
    /// in a file of mp4mux's on the output's disk (it was in $TMPDIR, so the disk filled only at
    /// the end, after the whole run): either way the disk is seen full during the run, before the
    /// input's end reaches the file (the statistics, written elsewhere, say how far it got).
    @Test(.timeLimit(.minutes(10)), .enabled(if: geteuid() == 0, "mounting a file system needs root"),
          arguments: [true, false])
    func aFullDiskNamesTheOutputAndTheCause(faststart: Bool) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let wav = folder.appendingPathComponent("in.wav").path
        try TestMedia.writeWAV(wav, seconds: 10, sampleRate: 44_100, channels: 2)
        let disk = folder.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: false)
        let mount = try Graphctl.runCommand("/bin/mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", disk.path])
        try #require(mount.status == 0, "cannot mount a tmpfs: \(mount.stderr)")
        defer {
            let unmount = try? Graphctl.runCommand("/bin/umount", [disk.path])
            #expect(unmount?.status == 0, "the test's tmpfs stays mounted at \(disk.path): \(unmount?.stderr ?? "")")
        }
        let out = disk.appendingPathComponent("out.m4a").path, stats = folder.appendingPathComponent("stats.json").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(wav)",
                                 "--set", "file.path=\(out)", "--set", "file.faststart=\(faststart)", "--stats", stats)
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr.contains("error: node \"file\" (sink.mp4, writing \"\(out)\"): cannot write \"\(out)\": "), "\(r.stderr)")
        #expect(r.stderr.contains("no space left on device"), "\(r.stderr)")
        #expect(!r.stderr.contains("reading"), "\(r.stderr)")
        #expect(!r.stderr.contains("cause:"), "\(r.stderr)")  // GStreamer's debug text only with --verbose
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == [])
        let report = try JSONDecoder().decode(RunReport.self, from: Data(contentsOf: URL(fileURLWithPath: stats)))
        #expect(report.mediaSeconds < 9, "the disk was seen full only after \(report.mediaSeconds) s of 10")
    }

    /// A statistics file that cannot be written is found before the run, as an output is: the
    /// transcode used to run to the end, write its file, and only then exit 73.
    @Test(.timeLimit(.minutes(10)))
    func anUnwritableStatsFileStopsTheRunBeforeItStarts() throws {
        let folder = try TestMedia.temporaryFolder()
        let wav = folder.appendingPathComponent("in.wav").path
        try TestMedia.writeWAV(wav, seconds: 1, sampleRate: 44_100, channels: 2)
        let plain = folder.appendingPathComponent("plain").path
        FileManager.default.createFile(atPath: plain, contents: Data())
        let out = folder.appendingPathComponent("out.m4a").path
        let r = try Graphctl.run("run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(wav)",
                                 "--set", "file.path=\(out)", "--stats", "\(plain)/stats.json")
        #expect(r.status == 73, "\(r.stderr)")
        #expect(r.stderr.contains("error: --stats: cannot write \"\(plain)/stats.json\": \"\(plain)\" is a file, not a folder"), "\(r.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["in.wav", "plain"])
    }
}
