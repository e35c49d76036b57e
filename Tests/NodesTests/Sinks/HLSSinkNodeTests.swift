import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// sink.hls on media ffmpeg makes here, decoded and re-encoded by the graph: the playlist keeps
/// RFC 8216's rules in each of its kinds, segments start on key frames, ffmpeg and GStreamer play
/// every frame, and what a failed or cancelled run wrote is removed.
@Suite(.timeLimit(.minutes(10))) struct HLSSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of 320x240 video at 25 fps and 48 kHz sound.
    func movie(seconds: Int) throws -> String {
        let p = path("in.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=\(seconds)", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=\(seconds)", "-c:v", "libx264", "-c:a", "aac", p])
        return p
    }

    /// The input decoded, re-encoded (a key frame every `keyframes` frames) and written by sink.hls.
    func graph(_ source: String, keyframes: Int = 25, audio: Bool = true, hls: String) throws -> Graph {
        try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "src": { "type": "source.file", "params": { "path": "\(source)" } },
                "dec": { "type": "decode", "params": { "pixelFormat": "i420" } },
                "h264": { "type": "encode.h264", "params": { "keyframeInterval": \(keyframes) } },
                \(audio ? #""aac": { "type": "encode.aac" },"# : "")
                "hls": { "type": "sink.hls", "params": { \(hls) } } },
              "edges": [ "src.out -> dec.in", "dec.video -> h264.in", "h264.out -> hls.video" \(audio ? #", "dec.audio -> aac.in", "aac.out -> hls.audio""# : "") ] }
            """)
    }

    func files(_ sub: String = "hls") -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path(sub))) ?? []).sorted()
    }

    /// The AAC encoder's priming, measured at the end of the stream, is written into a VOD
    /// playlist's initialization segment (edit list and gapless tag): ffmpeg decodes the playlist
    /// to the input's exact sample count (an input of whole AAC frames: ffmpeg before 9.0 reads
    /// the tag's priming, not its padding).
    @Test func theSoundOfAVODPlaylistStartsAtTheInputsFirstSample() throws {
        let source = path("in.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=3.2", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=3.008", "-c:v", "libx264", "-c:a", "aac", source])
        func samples(_ p: String) throws -> Int {
            let raw = path("count.raw")
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", p, "-map", "0:a", "-ac", "1", "-f", "s16le", raw])
            return try FileManager.default.attributesOfItem(atPath: raw)[.size] as! Int / 2
        }
        #expect(try samples(source) == 144_384)
        let report = try GraphRun(try graph(source, hls: #""folder": "\#(path("hls"))", "segmentDuration": 1"#)).run()
        #expect(report.status == .completed)
        #expect(try HLSPlaylistCheck(path: path("hls/playlist.m3u8")).problems == [])
        #expect(try samples(path("hls/playlist.m3u8")) == 144_384)
    }

    @Test func aVODPlaylistOfKeyFrameSegmentsThatPlayersPlayThrough() throws {
        let source = try movie(seconds: 7)
        let report = try GraphRun(try graph(source, hls: #""folder": "\#(path("hls"))", "segmentDuration": 2"#)).run()
        #expect(report.status == .completed)
        #expect(report.outputs == [OutputReport(node: "hls", path: path("hls/playlist.m3u8"), status: .completed)])
        let playlist = path("hls/playlist.m3u8")
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [])
        #expect(check.playlistType == "VOD" && check.ended && check.mediaSequence == 0)
        // Key frames every second: cuts at 2, 4 and 6 s, the rest in the last.
        #expect(check.segments.map(\.duration).dropLast() == [2, 2, 2])
        #expect(abs(check.segments.map(\.duration).reduce(0, +) - 7) < 0.05)
        #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(playlist, check) == [])
        let counted = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
                                                        "stream=nb_read_frames", "-of", "csv=p=0", playlist])
        #expect(counted.split(whereSeparator: \.isNewline).first == "175")
        let audio = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name,sample_rate",
                                                      "-of", "csv=p=0", playlist])
        #expect(audio.split(whereSeparator: \.isNewline).first == "aac,48000")
        try TestMedia.runTool("gst-launch-1.0", ["-q", "uridecodebin", "uri=file://\(playlist)", "name=d",
                                                 "d.", "!", "queue", "!", "videoconvert", "!", "fakesink",
                                                 "d.", "!", "queue", "!", "audioconvert", "!", "fakesink"])
        #expect(files() == ["init.mp4", "playlist.m3u8", "segment0.m4s", "segment1.m4s", "segment2.m4s", "segment3.m4s"])
    }

    /// segmentFormat mpegts: transport stream segments from the same cuts, no initialization
    /// segment; ffmpeg and GStreamer's hlsdemux play every frame; each segment alone starts with a
    /// key frame (its own tables and the SPS and PPS before it).
    @Test func mpegTSSegmentsPlayInFFmpegAndHlsdemux() throws {
        let source = try movie(seconds: 7)
        let report = try GraphRun(try graph(source, hls: #""folder": "\#(path("hls"))", "segmentDuration": 2, "segmentFormat": "mpegts""#)).run()
        #expect(report.status == .completed)
        let playlist = path("hls/playlist.m3u8")
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [])
        #expect(check.map == nil)
        #expect(check.segments.map(\.duration).dropLast() == [2, 2, 2])
        #expect(files() == ["playlist.m3u8", "segment0.ts", "segment1.ts", "segment2.ts", "segment3.ts"])
        for s in check.segments {
            let first = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v", "-read_intervals", "%+#1", "-show_entries",
                                                          "packet=flags", "-of", "csv=p=0", path("hls/" + s.uri)])
            #expect(first.hasPrefix("K"), "\(s.uri) starts with \(first)")
        }
        let counted = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
                                                        "stream=nb_read_frames", "-of", "csv=p=0", playlist])
        #expect(counted.split(whereSeparator: \.isNewline).first == "175")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-i", playlist, "-f", "null", "-"])
        // hlsdemux through decodebin: every frame decoded, counted by an identity at the end.
        let gst = try TestMedia.runTool("gst-launch-1.0", ["-v", "filesrc", "location=\(playlist)", "!", "hlsdemux", "!", "tsdemux", "name=t",
                                                           "t.", "!", "queue", "!", "h264parse", "!", "avdec_h264", "!", "fakesink", "silent=false",
                                                           "t.", "!", "queue", "!", "aacparse", "!", "avdec_aac", "!", "fakesink"])
        #expect(gst.components(separatedBy: "fakesink0: last-message = chain").count - 1 == 175)
    }

    /// A live MPEG-TS playlist slides and deletes as the fMP4 one does.
    @Test func aLiveMPEGTSPlaylistSlides() throws {
        let source = try movie(seconds: 8)
        let report = try GraphRun(try graph(source, audio: false, hls: #""folder": "\#(path("hls"))", "segmentDuration": 1, "playlistType": "live", "windowSize": 2, "segmentFormat": "mpegts""#)).run()
        #expect(report.status == .completed)
        let check = try HLSPlaylistCheck(path: path("hls/playlist.m3u8"))
        #expect(check.problems == [])
        #expect(check.segments.map(\.uri) == ["segment6.ts", "segment7.ts"] && check.mediaSequence == 6)
        #expect(files() == ["playlist.m3u8", "segment4.ts", "segment5.ts", "segment6.ts", "segment7.ts"])
    }

    /// demux → sink.hls packages a file without re-encoding: every video packet and every audio
    /// packet the demuxer gives (it leaves out the AAC frame past the edit list's end, as
    /// graphs/remux.json's MP4 shows) is the source's, in order; the audio before the first
    /// key frame is kept.
    @Test func aDemuxedFileIsPackagedWithoutReencoding() throws {
        let source = try movie(seconds: 5)
        let g = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(source)" } }, "demux": { "type": "demux" },
                "hls": { "type": "sink.hls", "params": { "folder": "\(path("hls"))", "segmentDuration": 2 } } },
              "edges": [ "src.out -> demux.in", "demux.video -> hls.video", "demux.audio -> hls.audio" ] }
            """)
        #expect(try GraphRun(g).run().status == .completed)
        func hashes(_ file: String, _ stream: String) throws -> [Substring] {
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-map", "0:\(stream)", "-c", "copy", "-f", "framemd5", "-"])
                .split(whereSeparator: \.isNewline).filter { !$0.hasPrefix("#") }.map { $0.split(separator: ",")[5] }  // side data after
        }
        let playlist = path("hls/playlist.m3u8")
        #expect(try HLSPlaylistCheck(path: playlist).problems == [])
        let video = try hashes(playlist, "v"), stored = try hashes(source, "v")
        #expect(video == stored, "\(video.count) packets of \(stored.count); first differing at \(String(describing: zip(video, stored).enumerated().first { $0.element.0 != $0.element.1 }?.offset))")
        let audio = try hashes(playlist, "a"), original = try hashes(source, "a")
        // GStreamer 1.22's qtdemux leaves out the AAC frame past the edit list's end; 1.26's gives it.
        #expect(audio == original || audio == Array(original.dropLast()), "\(audio.count) packets of \(original.count)")
    }

    /// Live: the playlist lists the last `windowSize` segments, its media sequence the first of
    /// them; a segment out of it for a window more is deleted; the end is marked.
    @Test func aLivePlaylistSlidesAndDeletesWhatLeftIt() throws {
        let source = try movie(seconds: 8)
        let report = try GraphRun(try graph(source, audio: false,
                                            hls: #""folder": "\#(path("hls"))", "segmentDuration": 1, "playlistType": "live", "windowSize": 2"#)).run()
        #expect(report.status == .completed)
        let check = try HLSPlaylistCheck(path: path("hls/playlist.m3u8"))
        #expect(check.problems == [])
        #expect(check.playlistType == nil && check.ended)
        #expect(check.mediaSequence == 6)
        #expect(check.segments.map(\.uri) == ["segment6.m4s", "segment7.m4s"])
        // Segments 0 to 3 left the playlist two or more segments ago: deleted; 4 and 5 kept.
        #expect(files() == ["init.mp4", "playlist.m3u8", "segment4.m4s", "segment5.m4s", "segment6.m4s", "segment7.m4s"])
    }

    /// Event: every segment listed, the playlist rewritten as each comes; ended at the end.
    @Test func anEventPlaylistListsEverySegment() throws {
        let source = try movie(seconds: 4)
        _ = try GraphRun(try graph(source, hls: #""folder": "\#(path("hls"))", "segmentDuration": 1, "playlistType": "event""#)).run()
        let check = try HLSPlaylistCheck(path: path("hls/playlist.m3u8"))
        #expect(check.problems == [])
        #expect(check.playlistType == "EVENT" && check.ended)
        #expect(check.segments.count == 4)
    }

    /// Three video inputs from one decode: three renditions in v0, v1, v2, each a valid media
    /// playlist with the audio muxed in, and a multivariant playlist listing them by peak bit
    /// rate (at least each one's busiest segment), with their codecs and sizes.
    @Test func aLadderOfThreeRenditionsAndItsMultivariantPlaylist() throws {
        let source = try movie(seconds: 4)
        let g = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "src": { "type": "source.file", "params": { "path": "\(source)" } },
                "dec": { "type": "decode", "params": { "pixelFormat": "i420" } },
                "a": { "type": "encode.h264", "params": { "keyframeInterval": 25 } },
                "b": { "type": "encode.h264", "params": { "width": 160, "height": 120, "keyframeInterval": 25 } },
                "c": { "type": "encode.h264", "params": { "width": 96, "height": 72, "keyframeInterval": 25 } },
                "aac": { "type": "encode.aac" },
                "hls": { "type": "sink.hls", "params": { "folder": "\(path("hls"))", "segmentDuration": 1 } } },
              "edges": [ "src.out -> dec.in", "dec.video -> a.in", "dec.video -> b.in", "dec.video -> c.in",
                         "a.out -> hls.video", "b.out -> hls.video1", "c.out -> hls.video2", "dec.audio -> aac.in", "aac.out -> hls.audio" ] }
            """)
        let report = try GraphRun(g).run()
        #expect(report.status == .completed)
        #expect(report.outputs == [OutputReport(node: "hls", path: path("hls/master.m3u8"), status: .completed)])
        #expect(files() == ["master.m3u8", "v0", "v1", "v2"])
        let master = try String(contentsOfFile: path("hls/master.m3u8"), encoding: .utf8)
        let lines = master.split(separator: "\n").map(String.init)
        #expect(lines.prefix(3) == ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"])
        let streams = lines.filter { $0.hasPrefix("#EXT-X-STREAM-INF:") }
        #expect(streams.count == 3)
        // Largest first; each URI follows its tag.
        for (k, (size, uri)) in [("320x240", "v0/playlist.m3u8"), ("160x120", "v1/playlist.m3u8"), ("96x72", "v2/playlist.m3u8")].enumerated() {
            let i = try #require(lines.firstIndex(of: streams[k]))
            #expect(lines[i + 1] == uri)
            #expect(streams[k].contains("RESOLUTION=\(size)"))
            #expect(streams[k].contains(#"CODECS="avc1.64"#) && streams[k].contains(#",mp4a.40.2""#), "\(streams[k])")
            let check = try HLSPlaylistCheck(path: path("hls/" + uri))
            #expect(check.problems == [])
            // The peak is at least the busiest segment's rate.
            let folder = URL(fileURLWithPath: path("hls/" + uri)).deletingLastPathComponent()
            let busiest = try check.segments.map { s in Double(try Data(contentsOf: folder.appendingPathComponent(s.uri)).count * 8) / s.duration }.max() ?? 0
            let bandwidth = Double(streams[k].split(separator: ",").first!.dropFirst("#EXT-X-STREAM-INF:BANDWIDTH=".count)) ?? 0
            #expect(bandwidth >= busiest.rounded(.down), "\(bandwidth) against \(busiest)")
            let audio = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path("hls/" + uri)])
            #expect(audio.split(whereSeparator: \.isNewline).first == "aac")
        }
        // ffmpeg opens the multivariant playlist and reads every rung's frames.
        let frames = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries", "stream=nb_read_frames",
                                                       "-of", "csv=p=0", path("hls/master.m3u8")])
        #expect(frames.split(whereSeparator: \.isNewline).filter { $0 == "100" }.count >= 3, "\(frames)")
    }

    /// A cancelled run removes every file it wrote: segments, initialization segment, playlist.
    /// (A live camera, so the run is still going when segments are on disk.)
    @Test func aCancelledRunLeavesNothing() async throws {
        let g = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "camera": { "type": "capture.video", "params": { "width": 160, "height": 120, "fps": 25 } },
                "h264": { "type": "encode.h264", "params": { "keyframeInterval": 10 } },
                "hls": { "type": "sink.hls", "params": { "folder": "\(path("hls"))", "segmentDuration": 0.5, "playlistType": "event" } } },
              "edges": [ "camera.out -> h264.in", "h264.out -> hls.video" ] }
            """)
        let run = try GraphRun(g)
        try run.start()
        let deadline = ContinuousClock.now + .seconds(120)
        while !files().contains("segment1.m4s"), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(files().contains("playlist.m3u8") && files().contains("init.mp4"))
        run.cancel()
        #expect(await run.report().status == .cancelled)
        #expect(files() == [])
    }

    /// A folder that is a file: refused before the run (73), naming the node's parameter.
    @Test func aFolderThatCannotBeMadeFailsBeforeTheRun() throws {
        let source = try movie(seconds: 1)
        try Data().write(to: URL(fileURLWithPath: path("taken")))
        let error = #expect(throws: GraphError.self) { try GraphRun(try graph(source, hls: #""folder": "\#(path("taken"))""#)).run() }
        #expect(error?.code == .outputUnwritable)
        #expect(error?.problems.first?.location == "nodes.hls.params.folder", "\(String(describing: error))")
    }

    /// A playlist name that is a path is refused when the graph is read (65).
    @Test func aPlaylistNameThatIsAPathIsRefused() throws {
        let error = #expect(throws: GraphError.self) { try graph("/in.mp4", hls: #""folder": "/tmp/x", "playlist": "../up.m3u8""#) }
        #expect(error?.code == .invalidGraph)
    }
}
