import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `sink.mkv`: every codec it takes, remuxed from a file ffmpeg made, decodes to the source's
/// frames and samples; its file is renamed into place only when complete.
@Suite(.media, .timeLimit(.minutes(10))) struct MatroskaSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    static let sources: [RemuxChecks.Source] = [.h264AAC, .hevc, .vp9Opus, .av1, .opus, .flac]

    /// Remuxed without re-encoding: each video frame decodes as the source's does (ffmpeg's frame
    /// hashes), audio to the same samples, as many (Opus's pre-skip and FLAC's STREAMINFO kept);
    /// AAC out of an MP4 as GStreamer's MP4 demuxer gives it (within the edit list).
    @Test(arguments: sources)
    func remuxKeepsEveryFrameAndSample(_ source: RemuxChecks.Source) throws {
        let input = try source.make(in: folder)
        let probe = try MediaProbe(input)
        let ports = ["audio", "video"].filter { probe.stream($0) != nil }
        let out = folder.appendingPathComponent("remuxed.mkv").path
        let report = try RemuxChecks.run(input, into: "sink.mkv", at: out, ports: ports)
        #expect(report.status == .completed, "\(String(describing: report.error))")
        #expect(report.outputs == [OutputReport(node: "file", path: out, status: .completed)])
        #expect(try MediaProbe(out).formatName == "matroska,webm")
        #expect(RemuxChecks.docType(out) == "matroska")
        if ports.contains("video") {
            let frames = try RemuxChecks.frames(input, "v")
            #expect(frames.count == 50)
            #expect(try RemuxChecks.frames(out, "v") == frames)
        }
        if probe.stream("audio")?.codecName == "aac" {
            #expect(RemuxChecks.aacPacketsPassed(of: try RemuxChecks.packets(input, "a")).contains(try RemuxChecks.packets(out, "a")))
        } else if ports.contains("audio") {
            let (md5, samples) = try RemuxChecks.audio(input)
            let remuxed = try RemuxChecks.audio(out)
            #expect(samples >= 88_200 && remuxed.samples == samples, "\(remuxed.samples) samples of \(samples)")
            #expect(remuxed.md5 == md5)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == [source.name, "remuxed.mkv"].sorted())
    }

    /// The source's tags in their own text, in sink.mkv (from an M4A's AAC, an Ogg's Opus, a
    /// FLAC file) and sink.webm (from a WebM's and an Ogg's Opus): GStreamer's muxer writes each
    /// value serialized (`"Caf\303\251\ …"`), which the sink mends in place before the file
    /// is renamed; the demuxers of Ogg and FLAC send no tags, so the sink reads the source's
    /// itself. ffprobe reads the title, artist and a comment with quotes and commas exactly.
    @Test(arguments: [("sink.mkv", "m4a", "aac"), ("sink.mkv", "ogg", "libopus"), ("sink.mkv", "flac", "flac"),
                      ("sink.webm", "webm", "libopus"), ("sink.webm", "ogg", "libopus")])
    func tagsKeepTheirOwnText(_ sink: String, _ sourceType: String, _ codec: String) throws {
        let input = folder.appendingPathComponent("tagged-source.\(sourceType)").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=1:sample_rate=48000", "-c:a", codec,
                                         "-metadata", "title=Café – 東京", "-metadata", "artist=Someone",
                                         "-metadata", #"comment=say "hi", then go"#, "-y", input])
        let out = folder.appendingPathComponent(sink == "sink.mkv" ? "tagged.mka" : "tagged.webm").path
        let report = try RemuxChecks.run(input, into: sink, at: out, ports: ["audio"])
        #expect(report.status == .completed, "\(String(describing: report.error))")
        try Self.expectTags(of: out)
    }

    /// An M4A's chapters (ffmpeg's QuickTime chapter track, each with its end) and an Ogg's
    /// (`CHAPTERxx` comments, the last with none: it ends where the file does) reach the
    /// Matroska file, with their times and titles, as ffmpeg's remux keeps them; GStreamer's
    /// demuxers send none.
    @Test(arguments: [("m4a", "aac", "3.000000"), ("ogg", "libopus", "3.0")])
    func chaptersOfTheSourceAreKept(_ type: String, _ codec: String, _ end: String) throws {
        let metadata = folder.appendingPathComponent("chapters.txt")
        try Data(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1000\ntitle=One\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1000\nEND=3000\ntitle=Två – 二\n".utf8)
            .write(to: metadata)
        let input = folder.appendingPathComponent("book.\(type)").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=3:sample_rate=48000", "-i", metadata.path, "-map", "0:a",
                                         "-map_chapters", "1", "-c:a", codec, "-y", input])
        let out = folder.appendingPathComponent("book.mka").path
        let report = try RemuxChecks.run(input, into: "sink.mkv", at: out, ports: ["audio"])
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let chapters = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "chapter=start_time,end_time:chapter_tags=title",
                                                         "-of", "csv=p=0", out])
        let lines = chapters.split(separator: "\n")
        #expect(lines.count == 2 && lines.first == "0.000000,1.000000,One", "\(chapters)")
        #expect(lines.last?.hasPrefix("1.000000,\(end)") == true && lines.last?.hasSuffix(",Två – 二") == true, "\(chapters)")
    }

    /// ffprobe reads the three tags of ``tagsKeepTheirOwnText(_:_:_:)`` exactly, nothing escaped.
    static func expectTags(of out: String) throws {
        let tags = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "default=nw=1", out])
        #expect(tags.contains("TAG:TITLE=Café – 東京"), "\(tags)")
        #expect(tags.contains("TAG:ARTIST=Someone"), "\(tags)")
        #expect(tags.contains(#"TAG:COMMENTS=say "hi", then go"#), "\(tags)")
        #expect(!tags.contains("\\"), "\(tags)")
    }

    /// Cancelled while it writes: nothing under the final name (an older file there untouched),
    /// no temporary file.
    @Test func aCancelledRunLeavesNothing() throws {
        let path = folder.appendingPathComponent("keep.mkv").path
        FileManager.default.createFile(atPath: path, contents: Data("the old file".utf8))
        let (report, left) = try RemuxChecks.cancelMidRun(#"{ "type": "sink.mkv", "params": { "path": "\#(path)" } }"#, port: "audio",
                                                          samples: try MP4SinkNodeTests.aac(seconds: 4),
                                                          temporary: folder.appendingPathComponent(".keep.mkv.partial").path)
        #expect(report.status == .cancelled)
        #expect(report.outputs.first?.status == .cancelled)
        #expect(left == ["keep.mkv"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("the old file".utf8))
    }

    /// A symbolic link at the output's name is refused (73) before anything runs: whoever can
    /// write the folder could point it at another file. The link and its target stay as they were.
    @Test func aSymbolicLinkAtTheNameIsRefused() throws {
        let target = folder.appendingPathComponent("elsewhere").path
        FileManager.default.createFile(atPath: target, contents: Data("not yours".utf8))
        let link = folder.appendingPathComponent("out.mkv").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        do {
            _ = try NodeHarness(#"{ "type": "sink.mkv", "params": { "path": "\#(link)" } }"#, inputs: ["audio"])
            Issue.record("a link at the output's name was written through")
        } catch let error as GraphError {
            #expect(error.code == .outputUnwritable)
            #expect(error.description.contains("cannot write \"\(link)\": it is a symbolic link"), "\(error)")
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == Data("not yours".utf8))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted() == ["elsewhere", "out.mkv"])
    }

    /// A folder that cannot be written: 73, naming the file, before anything runs.
    @Test func anUnwritableFolderIsAnOutputError() throws {
        try RemuxChecks.withReadOnlyFolder(in: folder) { readOnly in
            let path = readOnly.appendingPathComponent("out.mkv").path
            do {
                _ = try NodeHarness(#"{ "type": "sink.mkv", "params": { "path": "\#(path)" } }"#, inputs: ["audio"])
                Issue.record("a read-only folder was written")
            } catch let error as GraphError {
                #expect(error.code == .outputUnwritable)
                #expect(error.description.contains("nodes.node.params.path") && error.description.contains(readOnly.path), "\(error)")
            }
        }
    }

    /// A .webm name is refused: sink.mkv writes Matroska's doc type, which WebM players refuse.
    @Test func aWebMNameIsRefused() throws {
        do {
            _ = try NodeHarness(#"{ "type": "sink.mkv", "params": { "path": "\#(folder.path)/a.webm" } }"#, inputs: ["audio"])
            Issue.record("sink.mkv took a .webm name")
        } catch let error as GraphError {
            #expect(error.code == .invalidGraph)
            #expect(error.description.contains("nodes.node.params.path") && error.description.contains("sink.webm"), "\(error)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
    }

    /// A full disk (a 64 KiB tmpfs, root only) fails the run with 73, naming the file and the
    /// system's reason, and leaves nothing on the disk.
    @Test(.enabled(if: geteuid() == 0, "mounting a file system needs root"))
    func aFullDiskNamesTheFile() throws {
        let input = folder.appendingPathComponent("noise.flac").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "anoisesrc=duration=5:sample_rate=48000", "-c:a", "flac", "-y", input])
        let disk = folder.appendingPathComponent("disk")
        try FileManager.default.createDirectory(at: disk, withIntermediateDirectories: false)
        try TestMedia.runTool("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", disk.path])
        defer { _ = try? TestMedia.runTool("umount", [disk.path]) }
        let out = disk.appendingPathComponent("out.mka").path
        let report = try RemuxChecks.run(input, into: "sink.mkv", at: out, ports: ["audio"])
        #expect(report.status == .failed)
        #expect(report.error?.code == .outputUnwritable)
        let message = report.error?.description ?? ""
        #expect(message.contains("writing \"\(out)\"") && message.lowercased().contains("no space left on device"), "\(message)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == [])
    }
}
