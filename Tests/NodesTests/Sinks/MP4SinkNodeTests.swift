import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

@Suite(.media) struct MP4SinkNodeTests {
    /// AAC made by the encoder node, to feed the sink.
    static func aac(seconds: Double, sampleRate: Int = 44_100, channels: Int = 1) throws -> [SampleBuffer] {
        let enc = try NodeHarness(#"{ "type": "encode.aac" }"#)
        try enc.push(TestMedia.sine(sampleRate: sampleRate, channels: channels, seconds: seconds))
        return try enc.pullAll()
    }

    @Test func writesAnM4AWithMoovFirstAndRenamesOnCompletion() throws {
        let folder = try TestMedia.temporaryFolder()
        let path = folder.appendingPathComponent("new/sub/a.m4a").path  // folders created
        let h = try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "\#(path)" } }"#, inputs: ["audio"])
        #expect(h.node.output?.status == .writing)
        try h.push(try Self.aac(seconds: 2), to: "audio")
        #expect(!FileManager.default.fileExists(atPath: path))  // nothing under the name until complete
        let result = try h.finish()
        #expect(result.report.outputs == [OutputReport(node: "node", path: path, status: .completed)])
        let probe = try MediaProbe(path)
        #expect(probe.streams.count == 1)
        #expect(probe.stream("audio")?.codecName == "aac")
        #expect(probe.stream("audio")?.sampleRate == 44_100)
        #expect(abs(probe.duration - 2) < 0.047)
        let boxes = probe.topLevelBoxes
        #expect(boxes.firstIndex(of: "moov")! < boxes.firstIndex(of: "mdat")!)
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("new/sub/.a.m4a.partial").path))
    }

    /// The tag parameters are the file's own tags, where iTunes and AVFoundation put them
    /// (`moov/udta/meta/ilst`): ffprobe reads each as written, non-ASCII text included, and so
    /// does GraphKit's own reader.
    @Test func tagParametersAreTheFilesTags() throws {
        let folder = try TestMedia.temporaryFolder()
        let path = folder.appendingPathComponent("tagged.m4a").path
        let h = try NodeHarness(#"""
            { "type": "sink.mp4", "params": { "path": "\#(path)", "title": "Café – 東京", "artist": "Zoë", "album": "Nights",
              "albumArtist": "Various", "genre": "Ambient", "comment": "a \"quoted\" note", "date": "2024-05-01T12:30:00Z" } }
            """#, inputs: ["audio"])
        try h.push(try Self.aac(seconds: 1), to: "audio")
        _ = try h.finish()
        let printed = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags", "-of", "default=nw=1", path])
        for line in ["TAG:title=Café – 東京", "TAG:artist=Zoë", "TAG:album=Nights", "TAG:album_artist=Various", "TAG:genre=Ambient",
                     "TAG:comment=a \"quoted\" note", "TAG:date=2024-05-01T12:30:00Z"] {
            #expect(printed.contains(line), "\(line) not in \(printed)")
        }
        let tags = try MediaMetadata.read(from: try #require(FileBytes(path: path)))
        #expect(tags.title == "Café – 東京" && tags.artist == "Zoë" && tags.album == "Nights" && tags.albumArtist == "Various")
        #expect(tags.genre == "Ambient" && tags.comment == "a \"quoted\" note" && tags.date?.hasPrefix("2024-05-01") == true)
    }

    /// A cover, a place and chapters (what GStreamer's muxer does not write) are in the finished
    /// file as ffmpeg writes them: ffprobe reads the cover as an attached picture, the place as
    /// `location` and the chapters with their titles and starts; GraphKit's reader reads the
    /// cover's bytes back as they were.
    @Test func coverLocationAndChaptersAreTheFilesTags() throws {
        let folder = try TestMedia.temporaryFolder()
        let cover = folder.appendingPathComponent("cover.png").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x64:duration=1", "-frames:v", "1", "-y", cover])
        let path = folder.appendingPathComponent("tagged.m4a").path
        let h = try NodeHarness(#"""
            { "type": "sink.mp4", "params": { "path": "\#(path)", "title": "Talk", "cover": "\#(cover)", "location": "+48.8583+002.2945/",
              "chapters": "0 Opening\n0.5 Second part" } }
            """#, inputs: ["audio"])
        try h.push(try Self.aac(seconds: 1), to: "audio")
        _ = try h.finish()
        let printed = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags:stream=codec_name,codec_type:stream_disposition=attached_pic",
                                                        "-show_chapters", "-of", "default=nw=1", path])
        for line in ["TAG:location=+48.8583+002.2945/", "TAG:title=Talk", "codec_name=png", "attached_pic=1", "TAG:title=Opening",
                     "TAG:title=Second part", "start_time=0.000000", "start_time=0.500000"] {
            #expect(printed.contains(line), "\(line) not in \(printed)")
        }
        let tags = try MediaMetadata.read(from: try #require(FileBytes(path: path)))
        #expect(tags.artwork?.data == Array(try Data(contentsOf: URL(fileURLWithPath: cover))))
        #expect(tags.location == "+48.8583+002.2945/" && tags.title == "Talk")
        let written = try #require(FileBytes(path: path))
        let movie = try #require(try MP4File(written).movie())
        #expect(movie.neroChapters == [.init(start: 0, title: "Opening"), .init(start: 0.5, title: "Second part")])
    }

    /// Tags ffmpeg writes (a cover as an attached picture, a place) are what GraphKit reads.
    @Test func coverAndLocationFfmpegWritesAreRead() throws {
        let folder = try TestMedia.temporaryFolder()
        let cover = folder.appendingPathComponent("cover.jpg").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc=size=64x64:duration=1", "-frames:v", "1", "-y", cover])
        let path = folder.appendingPathComponent("ffmpeg.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=1", "-i", cover, "-map", "0", "-map", "1", "-c:a", "aac",
                                         "-c:v", "copy", "-disposition:v", "attached_pic", "-y", path])
        let tags = try MediaMetadata.read(from: try #require(FileBytes(path: path)))
        #expect(tags.artwork?.data == Array(try Data(contentsOf: URL(fileURLWithPath: cover))))
        // FFmpeg 5.1 writes a place (©xyz) into QuickTime files only.
        let mov = folder.appendingPathComponent("ffmpeg.mov").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac", "-metadata", "location=+35.6586+139.7454/", "-y", mov])
        #expect(try MediaMetadata.read(from: try #require(FileBytes(path: mov))).location == "+35.6586+139.7454/")
    }

    /// A cover that is not a picture is refused when the graph is built, naming the parameter
    /// and the file; nothing is written.
    @Test func aCoverThatIsNotAPictureIsRefused() throws {
        let folder = try TestMedia.temporaryFolder()
        let text = folder.appendingPathComponent("cover.png").path
        try Data("not a picture".utf8).write(to: URL(fileURLWithPath: text))
        let path = folder.appendingPathComponent("out.m4a").path
        let error = #expect(throws: GraphError.self) {
            _ = try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "\#(path)", "cover": "\#(text)" } }"#, inputs: ["audio"])
        }
        #expect(error?.code == .invalidGraph)
        #expect(error?.description.contains("cover") == true && error?.description.contains(text) == true
                && error?.description.contains("not a JPEG or PNG") == true, "\(String(describing: error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["cover.png"])
    }

    /// A date that is not ISO 8601 is refused when the graph is read, at the parameter.
    @Test func aDateThatIsNotISO8601IsRefused() throws {
        #expect(throws: GraphError.self) {
            _ = try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "/tmp/x.m4a", "date": "May 1st" } }"#, inputs: ["audio"])
        }
        do {
            _ = try GraphLoader(registry: .builtIn).load(json: """
                { "version": 1, "nodes": { "src": { "type": "source.app", "params": { "format": "audio/aac" } },
                  "file": { "type": "sink.mp4", "params": { "path": "/tmp/x.m4a", "date": "May 1st" } } }, "edges": [ "src.out -> file.audio" ] }
                """)
            Issue.record("a date of \"May 1st\" was taken")
        } catch {
            #expect(error.code == .invalidGraph)
            #expect(error.description.contains("nodes.file.params.date") && error.description.contains("ISO 8601"), "\(error)")
        }
    }

    @Test func aFailedRunLeavesAnExistingFileUntouchedAndNoTemporaryFile() throws {
        let folder = try TestMedia.temporaryFolder()
        let path = folder.appendingPathComponent("keep.m4a").path
        let old = Data("the old file".utf8)
        FileManager.default.createFile(atPath: path, contents: old)
        let partial = folder.appendingPathComponent(".keep.m4a.partial").path
        FileManager.default.createFile(atPath: partial, contents: Data("stale, from a killed run".utf8))

        let h = try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "\#(path)" } }"#, inputs: ["audio"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: partial)).isEmpty)  // the stale one was replaced
        try h.push(try Self.aac(seconds: 0.5), to: "audio")
        h.run.cancel()
        let report = h.run.wait()
        #expect(report.status == .cancelled)
        #expect(report.outputs.first?.status == .cancelled)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == old)
        #expect(!FileManager.default.fileExists(atPath: partial))
    }

    /// Samples whose times go back (a joined transport stream overlapped by two frames and 0.1 s
    /// of sound) were written into an index no player reads right, and the run said completed.
    /// The run now fails at the first such sample, saying which input and where, and leaves no
    /// file.
    @Test(.timeLimit(.minutes(10)))
    func samplesOutOfTimeOrderFailTheRun() throws {
        let folder = try TestMedia.temporaryFolder()
        let path = folder.appendingPathComponent("order.m4a").path
        var packets = try Self.aac(seconds: 1)
        #expect(packets.count > 20)
        let earlier = packets[8].presentationTime
        packets[12].presentationTime = earlier
        packets[12].decodeTime = earlier
        let h = try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "\#(path)" } }"#, inputs: ["audio"])
        try? h.push(packets, to: "audio")
        let report = h.run.wait()
        #expect(report.status == .failed)
        let message = report.error?.description ?? ""
        #expect(message.contains("node \"node\""), "\(message)")
        #expect(message.contains("the audio input's time stamps go back at"), "\(message)")
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [])
    }

    /// An .m4a says it is one, as iTunes and AVFoundation write it (major brand "M4A ", the
    /// muxer's brands still compatible); container m4a with video connected is refused.
    @Test func anM4AStatesItsFileType() throws {
        let folder = try TestMedia.temporaryFolder()
        for (name, container, brand) in [("a.m4a", "auto", "M4A "), ("b.m4a", "m4a", "M4A "), ("c.mp4", "auto", "mp42")] {
            let path = folder.appendingPathComponent(name).path
            let h = try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "\#(path)", "container": "\#(container)" } }"#, inputs: ["audio"])
            try h.push(try Self.aac(seconds: 0.5), to: "audio")
            #expect(try h.finish().report.status == .completed)
            let major = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=major_brand", "-of", "csv=p=0", path])
            #expect(major.trimmingCharacters(in: .newlines) == brand, "\(name)")
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", path, "-f", "null", "-"])
        }
        let video = folder.appendingPathComponent("v.m4a").path
        #expect(throws: GraphError.self) {
            try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "\#(video)", "container": "m4a" } }"#, inputs: ["audio", "video"])
        }
    }

    @Test func aParentThatIsAFileIsAnOutputError() throws {
        let folder = try TestMedia.temporaryFolder()
        let file = folder.appendingPathComponent("plain").path
        FileManager.default.createFile(atPath: file, contents: Data())
        #expect(throws: GraphError(.outputUnwritable, at: "nodes.node.params.path",
                                   "cannot write \"\(file)/x.m4a\": \"\(file)\" is a file, not a folder", node: "node")) {
            try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "\#(file)/x.m4a" } }"#, inputs: ["audio"])
        }
    }

    @Test func movContainerAndFragments() throws {
        let folder = try TestMedia.temporaryFolder()
        let mov = folder.appendingPathComponent("a.mov").path
        let h = try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "\#(mov)" } }"#, inputs: ["audio"])
        try h.push(try Self.aac(seconds: 1), to: "audio")
        try h.finish()
        #expect(try MediaProbe(mov).formatName.contains("mov"))
        #expect(MediaProbe.boxes(mov).first == "ftyp")

        let frag = folder.appendingPathComponent("f.mp4").path
        let f = try NodeHarness(#"{ "type": "sink.mp4", "params": { "path": "\#(frag)", "fragmentInterval": 0.5 } }"#, inputs: ["audio"])
        try f.push(try Self.aac(seconds: 2), to: "audio")
        #expect(FileManager.default.fileExists(atPath: frag))  // written in place from the start
        try f.finish()
        #expect(MediaProbe.boxes(frag).filter { $0 == "moof" }.count >= 3)
        #expect(abs(try MediaProbe(frag).duration - 2) < 0.1)
    }
}
