import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// `sink.mp4` keeps the source's metadata (`sourceTags`, ffmpeg's `-map_metadata 0`): the
/// title, artist, album, date, cover, place, chapters, each track's language and the creation
/// time of the file the graph reads, on the pipeline path (a transcode) and the container path
/// (a remux, a join), into MP4, M4A and MOV; ffprobe reads them back. A parameter wins over the
/// source's, and `sourceTags: false` keeps nothing. `sink.mp4segments` gives each of its files
/// the same, and `sink.hls` its initialization segment, but the chapters.
@Suite(.media, .timeLimit(.minutes(10))) struct MP4SinkSourceTagsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Runs `nodes` (JSON members) with `edges` to its end, on `plan` when given.
    func run(_ nodes: String, _ edges: [String], plan: RunPlan? = nil) throws {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { \(nodes) }, "edges": [ \(edges.map { "\"\($0)\"" }.joined(separator: ", ")) ] }
            """)
        let run = try GraphRun(graph, plan: plan)
        try run.start()
        let report = run.wait()
        try #require(report.status == .completed, "\(report.error.map { "\($0)" } ?? "")")
    }

    /// The tags every test expects of the source's.
    func expectSourceTags(_ p: TaggedMedia.Probe, cover: Bool = false, location: Bool = false, chapters: Bool = true,
                          sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(p.tags["title"] == TaggedMedia.title, sourceLocation: sourceLocation)
        #expect(p.tags["artist"] == TaggedMedia.artist, sourceLocation: sourceLocation)
        #expect(p.tags["album"] == TaggedMedia.album, sourceLocation: sourceLocation)
        #expect(p.tags["date"] == TaggedMedia.date, sourceLocation: sourceLocation)
        #expect(p.tags["creation_time"] == TaggedMedia.creationTime, "\(p.tags)", sourceLocation: sourceLocation)
        #expect(p.language(of: "audio") == "fra", sourceLocation: sourceLocation)
        // The source's encoder tag names the program that made it (ffmpeg's Lavf), not this file's.
        #expect(p.tags["encoder"]?.hasPrefix("Lavf") != true, "\(p.tags)", sourceLocation: sourceLocation)
        if cover { #expect(p.hasCover, "\(p.streams)", sourceLocation: sourceLocation) }
        if location { #expect(p.tags["location"] == TaggedMedia.location, "\(p.tags)", sourceLocation: sourceLocation) }
        if chapters {
            #expect(p.chapters.map(\.title) == TaggedMedia.chapters.map(\.title), sourceLocation: sourceLocation)
            #expect(zip(p.chapters, TaggedMedia.chapters).allSatisfy { abs($0.start - $1.start) < 0.01 }, "\(p.chapters)", sourceLocation: sourceLocation)
        }
    }

    /// graphs/transcode-audio.json's chain (decode, AAC, sink.mp4) on a tagged M4A.
    @Test func aTranscodedM4AKeepsTheSourcesTagsCoverChaptersLanguageAndCreationTime() throws {
        let src = try TaggedMedia.m4a(in: folder), out = path("out.m4a")
        try run("""
            "src": { "type": "source.file", "params": { "path": "\(src)" } }, "dec": { "type": "decode" },
            "aac": { "type": "encode.aac", "params": { "bitrate": 96000 } }, "file": { "type": "sink.mp4", "params": { "path": "\(out)" } }
            """, ["src.out -> dec.in", "dec.audio -> aac.in", "aac.out -> file.audio"])
        expectSourceTags(try TaggedMedia.probe(out), cover: true)
    }

    /// graphs/transcode-video.json's chain (decode, H.264 and AAC) on a tagged MP4, into MP4 and MOV.
    @Test(arguments: ["mp4", "mov"]) func aTranscodedMovieKeepsTheSourcesTags(_ type: String) throws {
        let src = try TaggedMedia.movie(in: folder), out = path("out.\(type)")
        try run("""
            "src": { "type": "source.file", "params": { "path": "\(src)" } }, "dec": { "type": "decode", "params": { "pixelFormat": "i420" } },
            "h264": { "type": "encode.h264" }, "aac": { "type": "encode.aac" }, "file": { "type": "sink.mp4", "params": { "path": "\(out)" } }
            """, ["src.out -> dec.in", "dec.video -> h264.in", "h264.out -> file.video", "dec.audio -> aac.in", "aac.out -> file.audio"])
        let p = try TaggedMedia.probe(out)
        expectSourceTags(p, location: true)
        #expect(p.language(of: "video") == "deu")
    }

    /// graphs/remux.json (`source.file → demux → sink.mp4`) on both plans: the container path
    /// copies the index, the pipeline demuxes; both keep the tags.
    @Test(arguments: RunPlan.allCases) func aRemuxKeepsTheSourcesTags(plan: RunPlan) throws {
        for (source, output) in [("tagged.mp4", "out.mp4"), ("tagged.mov", "out.mov"), ("tagged.mp4", "asmov.mov")] {
            let src = FileManager.default.fileExists(atPath: path(source)) ? path(source) : try TaggedMedia.movie(in: folder, name: source)
            let out = path("\(plan)-\(output)")
            try run("""
                "src": { "type": "source.file", "params": { "path": "\(src)" } }, "demux": { "type": "demux" },
                "file": { "type": "sink.mp4", "params": { "path": "\(out)" } }
                """, ["src.out -> demux.in", "demux.audio -> file.audio", "demux.video -> file.video"], plan: plan)
            let p = try TaggedMedia.probe(out)
            expectSourceTags(p, location: true)
            // ffmpeg's MOV muxer writes no language of a video track: the source's, whatever it is.
            #expect(p.language(of: "video") ?? "und" == (try TaggedMedia.probe(src)).language(of: "video") ?? "und", "\(source) → \(output)")
            #expect(source.hasSuffix(".mov") || p.language(of: "video") == "deu", "\(source) → \(output)")
        }
    }

    /// A join (`source.concat`, on the container path) keeps the first piece's tags; not its
    /// chapters, which are on that piece's timeline and not the join's.
    @Test func aJoinKeepsTheFirstPiecesTags() throws {
        let src = try TaggedMedia.movie(in: folder), out = path("joined.mp4")
        try run("""
            "join": { "type": "source.concat", "params": { "pieces": [ { "path": "\(src)" }, { "path": "\(src)" } ] } },
            "file": { "type": "sink.mp4", "params": { "path": "\(out)" } }
            """, ["join.video -> file.video", "join.audio -> file.audio"])
        let p = try TaggedMedia.probe(out)
        expectSourceTags(p, location: true, chapters: false)
        #expect(p.chapters.isEmpty)
    }

    /// A tag parameter wins over the source's; the source fills the others. `sourceTags: false`
    /// writes the parameters' alone.
    @Test func parametersWinAndSourceTagsFalseKeepsNothing() throws {
        let src = try TaggedMedia.movie(in: folder), given = path("given.mp4"), none = path("none.mp4")
        func remux(_ out: String, _ params: String) throws {
            try run("""
                "src": { "type": "source.file", "params": { "path": "\(src)" } }, "demux": { "type": "demux" },
                "file": { "type": "sink.mp4", "params": { "path": "\(out)", \(params) } }
                """, ["src.out -> demux.in", "demux.audio -> file.audio", "demux.video -> file.video"])
        }
        try remux(given, #""title": "Mine", "location": "+35.6586+139.7454/", "chapters": "0 Only""#)
        let p = try TaggedMedia.probe(given)
        #expect(p.tags["title"] == "Mine" && p.tags["artist"] == TaggedMedia.artist, "\(p.tags)")
        #expect(p.tags["location"] == "+35.6586+139.7454/")
        #expect(p.chapters.map(\.title) == ["Only"])
        try remux(none, #""sourceTags": false, "album": "Only this""#)
        let q = try TaggedMedia.probe(none)
        #expect(q.tags["title"] == nil && q.tags["artist"] == nil && q.tags["location"] == nil && q.tags["album"] == "Only this", "\(q.tags)")
        #expect(q.tags["creation_time"] == nil && q.chapters.isEmpty)
        #expect(q.language(of: "audio") != "fra")
    }

    /// A recording cut into files (`sink.mp4segments`) keeps the source's tags, cover, place,
    /// languages and creation time in every file; not its chapters, on the whole recording's
    /// timeline. `sourceTags: false` writes none.
    @Test func everyFileOfASegmentedRecordingKeepsTheSourcesTags() throws {
        let src = try TaggedMedia.movie(in: folder)
        for keep in [true, false] {
            let pattern = path("\(keep ? "kept" : "none")-%d.mp4")
            try run("""
                "src": { "type": "source.file", "params": { "path": "\(src)" } }, "demux": { "type": "demux" },
                "file": { "type": "sink.mp4segments", "params": { "path": "\(pattern)", "segmentDuration": 1, "sourceTags": \(keep) } }
                """, ["src.out -> demux.in", "demux.audio -> file.audio", "demux.video -> file.video"])
            let files = (0..<3).map { pattern.replacingOccurrences(of: "%d", with: "\($0)") }
            for file in files {
                let p = try TaggedMedia.probe(file)
                if keep {
                    expectSourceTags(p, location: true, chapters: false)
                    #expect(p.chapters.isEmpty, "\(file)")
                    #expect(p.language(of: "video") == "deu", "\(file)")
                } else {
                    #expect(p.tags["title"] == nil && p.tags["location"] == nil && p.tags["creation_time"] == nil, "\(file): \(p.tags)")
                    #expect(p.language(of: "audio") != "fra", "\(file)")
                }
            }
        }
    }

    /// `sink.hls`'s initialization segment keeps the source's tags, languages and creation time
    /// (with the gapless tag of an encoded sound, in the same list); `sourceTags: false` none.
    @Test func anHLSInitializationSegmentKeepsTheSourcesTags() throws {
        let src = try TaggedMedia.movie(in: folder)
        for keep in [true, false] {
            let out = path(keep ? "hls-kept" : "hls-none")
            try run("""
                "src": { "type": "source.file", "params": { "path": "\(src)" } }, "dec": { "type": "decode" },
                "aac": { "type": "encode.aac" }, "demux": { "type": "demux" }, "src2": { "type": "source.file", "params": { "path": "\(src)" } },
                "hls": { "type": "sink.hls", "params": { "folder": "\(out)", "segmentDuration": 1, "sourceTags": \(keep) } }
                """, ["src.out -> dec.in", "dec.audio -> aac.in", "aac.out -> hls.audio", "src2.out -> demux.in", "demux.video -> hls.video"])
            let initialization = out + "/" + (HLSPackageFiles.generations(out).first ?? "?") + "/init.mp4"
            let p = try TaggedMedia.probe(initialization)
            if keep {
                expectSourceTags(p, location: true, chapters: false)
                #expect(p.language(of: "video") == "deu")
                // ffmpeg reads the encoder's priming from iTunes' gapless tag, beside the others.
                let probed = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "format_tags=iTunSMPB", "-of", "default=nw=1", initialization])
                #expect(probed.contains("iTunSMPB"), "\(probed)")
            } else {
                #expect(p.tags["title"] == nil && p.tags["creation_time"] == nil, "\(p.tags)")
            }
        }
    }
}
