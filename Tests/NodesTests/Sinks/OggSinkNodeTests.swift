import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `sink.ogg`: Opus and FLAC remuxed decode to the source's samples, as many; the file is renamed
/// into place only when complete; an Ogg Opus file's comments (OpusTags) stay.
@Suite(.media, .timeLimit(.minutes(10))) struct OggSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// Opus out of WebM (its pre-skip is the track's CodecDelay there, OpusHead's field here) and
    /// FLAC out of a bare .flac file.
    @Test(arguments: [RemuxChecks.Source.vp9Opus, .flac])
    func remuxKeepsEverySample(_ source: RemuxChecks.Source) throws {
        let input = try source.make(in: folder)
        let out = folder.appendingPathComponent("remuxed.ogg").path
        let report = try RemuxChecks.run(input, into: "sink.ogg", at: out, ports: ["audio"])
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(try MediaProbe(out).formatName == "ogg")
        let (md5, samples) = try RemuxChecks.audio(input)
        let remuxed = try RemuxChecks.audio(out)
        #expect(samples >= 88_200 && remuxed.samples == samples, "\(remuxed.samples) samples of \(samples)")
        #expect(remuxed.md5 == md5)
    }

    /// An Ogg Opus file remuxed keeps its comment header: its tags, as ffprobe reads them, and
    /// its samples. (opusparse's own caps had an empty one, and the muxer wrote that.)
    @Test func anOpusRemuxKeepsItsComments() throws {
        let input = folder.appendingPathComponent("tagged.opus").path, out = folder.appendingPathComponent("remuxed.opus").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=frequency=500:sample_rate=48000:duration=2", "-c:a", "libopus",
                                         "-metadata", "title=Le titre", "-metadata", "artist=Quelqu'un", "-metadata", "album=Un album", input])
        let report = try RemuxChecks.run(input, into: "sink.ogg", at: out, ports: ["audio"])
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let tags = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream_tags", "-of", "default=nw=1", out])
        for tag in ["TAG:title=Le titre", "TAG:artist=Quelqu'un", "TAG:album=Un album"] {
            #expect(tags.contains(tag), "\(tags)")
        }
        #expect(try RemuxChecks.audio(out).md5 == RemuxChecks.audio(input).md5)
    }

    /// Cancelled while it writes: nothing under the final name, no temporary file.
    @Test func aCancelledRunLeavesNothing() throws {
        let input = try RemuxChecks.Source.opus.make(in: folder)
        let samples = try RemuxChecks.demuxed(input, "audio")
        let out = folder.appendingPathComponent("out/voice.opus")
        let (report, left) = try RemuxChecks.cancelMidRun(#"{ "type": "sink.ogg", "params": { "path": "\#(out.path)" } }"#, port: "audio",
                                                          samples: samples, temporary: folder.appendingPathComponent("out/.voice.opus.partial").path)
        #expect(report.status == .cancelled)
        #expect(left == [])
    }

    /// A named pipe at the output's name is refused (73): the output is renamed over it, and a
    /// reader at the pipe would wait forever.
    @Test func aPipeAtTheNameIsRefused() throws {
        let pipe = folder.appendingPathComponent("out.ogg").path
        #expect(mkfifo(pipe, 0o644) == 0)
        do {
            _ = try NodeHarness(#"{ "type": "sink.ogg", "params": { "path": "\#(pipe)" } }"#, inputs: ["audio"])
            Issue.record("a pipe at the output's name was taken")
        } catch let error as GraphError {
            #expect(error.code == .outputUnwritable)
            #expect(error.description.contains("cannot write \"\(pipe)\": it is a named pipe"), "\(error)")
        }
    }
}
