import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// sink.hls on media ffmpeg makes here, decoded and re-encoded by the graph: the playlist keeps
/// RFC 8216's rules in each of its kinds, segments start on key frames, ffmpeg and GStreamer play
/// every frame, and what a failed or cancelled run wrote is removed.
@Suite(.media, .timeLimit(.minutes(10))) struct HLSSinkNodeTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of 320x240 video at 25 fps (a key frame every `gop` frames, none at scene cuts;
    /// nil: x264's own choice, 250 frames apart) and 48 kHz sound.
    func movie(seconds: Int, gop: Int? = nil) throws -> String {
        let p = path("in.mp4")
        let keys = gop.map { ["-g", "\($0)", "-keyint_min", "\($0)", "-sc_threshold", "0"] } ?? []
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=\(seconds)", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=\(seconds)", "-c:v", "libx264"] + keys + ["-c:a", "aac", p])
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

    /// The package's files, its generation folder seen through (``HLSPackageFiles``).
    func files(_ sub: String = "hls") -> [String] { HLSPackageFiles.list(path(sub)) }

    /// `name` in the package's generation folder (the one there is).
    func inPackage(_ name: String) -> String { path("hls/" + (HLSPackageFiles.generations(path("hls")).first ?? "?") + "/" + name) }

    /// A flash and its beep at every second, decoded and encoded again, stay together in every
    /// kind of package as ffmpeg plays it: a VOD playlist of fragments skips the AAC encoder's
    /// priming with its edit list and gapless tag; an event or live playlist, and transport
    /// stream segments, are read before it is measured, so the encoder leaves as much input out
    /// and the priming takes its place (it was 21.3 ms late there).
    @Test(arguments: [#""playlistType": "vod""#, #""playlistType": "event""#, #""playlistType": "live", "windowSize": 10"#,
                      #""playlistType": "vod", "segmentFormat": "mpegts""#])
    func aFlashAndItsBeepStayTogether(kind: String) throws {
        let input = try FlashAndBeep.make(in: folder)
        let report = try GraphRun(try graph(input, hls: #""folder": "\#(path("hls"))", "segmentDuration": 1, \#(kind)"#)).run()
        #expect(report.status == .completed, "\(String(describing: report.error))")
        let (sent, got, skew) = try FlashAndBeep.change(from: input, to: path("hls/playlist.m3u8"))
        #expect(sent.count >= 3 && got.count >= 3 && skew <= 0.005, "\(kind): beeps from their flashes: sent \(sent), received \(got)")
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
        // GStreamer's HLS demuxer gives every frame too.
        #expect(try HLSPlaylistCheck.framesThroughHlsdemux(playlist) == 175)
        #expect(files() == ["init.mp4", "playlist.m3u8", "segment0.m4s", "segment1.m4s", "segment2.m4s", "segment3.m4s"])
    }

    /// Key frames come at the cuts, by time, whatever frames are missing: the input lacks one
    /// frame in seven (as a live camera drops what the encoder cannot take), so the encoder's
    /// key frame every 50 frames would come every 2.33 s; asked for one at each multiple of the
    /// segment duration, it makes segments within one frame (1/25 s) of 2 s, each starting on a
    /// key frame, which ffmpeg and hlsdemux play to the last frame.
    @Test func keyFramesComeAtTheCutsWhateverFramesAreMissing() throws {
        let source = path("in.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=12", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=12", "-vf", "select='not(eq(mod(n\\,7)\\,3))'", "-fps_mode", "vfr",
                                         "-c:v", "libx264", "-c:a", "aac", source])
        let report = try GraphRun(try graph(source, keyframes: 50, hls: #""folder": "\#(path("hls"))", "segmentDuration": 2, "playlistType": "event""#)).run()
        #expect(report.status == .completed)
        let playlist = path("hls/playlist.m3u8")
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [])
        #expect(check.targetDuration == 2)
        let durations = check.segments.map(\.duration)
        #expect(durations.count == 6)
        #expect(durations.dropLast().allSatisfy { abs($0 - 2) <= 0.04 + 1e-6 }, "\(durations)")
        // Frame 150 (6 s) is one of those missing: the cut is at the next frame, 6.04 s.
        #expect(durations.dropLast().contains { abs($0 - 2.04) < 1e-6 }, "\(durations)")
        #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(playlist, check) == [])
        let frames = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries",
                                                       "stream=nb_read_frames", "-of", "csv=p=0", playlist])
        #expect(frames.split(whereSeparator: \.isNewline).first == "257")
        #expect(try HLSPlaylistCheck.framesThroughHlsdemux(playlist) == 257)
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
        let source = try movie(seconds: 12)
        let report = try GraphRun(try graph(source, audio: false, hls: #""folder": "\#(path("hls"))", "segmentDuration": 1, "playlistType": "live", "windowSize": 2, "segmentFormat": "mpegts""#)).run()
        #expect(report.status == .completed)
        let check = try HLSPlaylistCheck(path: path("hls/playlist.m3u8"))
        #expect(check.problems == [])
        #expect(check.segments.map { HLSPackageFiles.withoutGeneration($0.uri) } == ["segment9.ts", "segment10.ts", "segment11.ts"] && check.mediaSequence == 9)
        #expect(files() == ((5...11).map { "segment\($0).ts" } + ["playlist.m3u8"]).sorted())
        #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(path("hls/playlist.m3u8"), check) == [])
    }

    /// demux → sink.hls packages a file without re-encoding: every video packet and every audio
    /// packet the demuxer gives (it leaves out the AAC frame past the edit list's end, as
    /// graphs/remux.json's MP4 shows) is the source's, in order; the audio before the first
    /// key frame is kept.
    @Test func aDemuxedFileIsPackagedWithoutReencoding() throws {
        let source = try movie(seconds: 5, gop: 25)
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

    /// Live: the playlist lists the last `windowSize` segments, but never less than three
    /// target durations of them (RFC 8216 6.2.2: here 3 s, so three segments of 1 s where two
    /// were asked for), its media sequence the first of them; a segment that left is deleted once
    /// the stream has gone on for its own duration and the longest playlist's more (1 + 3 s);
    /// the end is marked.
    @Test func aLivePlaylistSlidesAndDeletesWhatLeftIt() throws {
        let source = try movie(seconds: 12)
        let report = try GraphRun(try graph(source, audio: false,
                                            hls: #""folder": "\#(path("hls"))", "segmentDuration": 1, "playlistType": "live", "windowSize": 2"#)).run()
        #expect(report.status == .completed)
        let playlist = path("hls/playlist.m3u8")
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [])
        #expect(check.playlistType == nil && check.ended)
        #expect(check.mediaSequence == 9)
        #expect(check.segments.map { HLSPackageFiles.withoutGeneration($0.uri) } == ["segment9.m4s", "segment10.m4s", "segment11.m4s"])
        // Segment k left when segment k + 3 was written (the stream at k + 4 s) and is deleted
        // 4 s later: 0 to 4 by the end at 12 s.
        #expect(files() == (["init.mp4", "playlist.m3u8"] + (5...11).map { "segment\($0).m4s" }).sorted())
        #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(playlist, check) == [])
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
    /// playlist with the audio muxed in, its segments starting on key frames at the same times in
    /// every rung, and a multivariant playlist that keeps RFC 8216's rules (HLSMultivariantCheck:
    /// each BANDWIDTH within 10% above the peak segment bit rate measured, AVERAGE-BANDWIDTH,
    /// CODECS and RESOLUTION those of the segments), highest first.
    @Test func aLadderOfThreeRenditionsAndItsMultivariantPlaylist() throws {
        let source = try movie(seconds: 4)
        let g = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": {
                "src": { "type": "source.file", "params": { "path": "\(source)" } },
                "dec": { "type": "decode", "params": { "pixelFormat": "i420" } },
                "a": { "type": "encode.h264", "params": { "keyframeInterval": 250 } },
                "b": { "type": "encode.h264", "params": { "width": 160, "height": 120, "keyframeInterval": 250 } },
                "c": { "type": "encode.h264", "params": { "width": 96, "height": 72, "keyframeInterval": 250 } },
                "aac": { "type": "encode.aac" },
                "hls": { "type": "sink.hls", "params": { "folder": "\(path("hls"))", "segmentDuration": 1 } } },
              "edges": [ "src.out -> dec.in", "dec.video -> a.in", "dec.video -> b.in", "dec.video -> c.in",
                         "a.out -> hls.video", "b.out -> hls.video1", "c.out -> hls.video2", "dec.audio -> aac.in", "aac.out -> hls.audio" ] }
            """)
        let report = try GraphRun(g).run()
        #expect(report.status == .completed)
        #expect(report.outputs == [OutputReport(node: "hls", path: path("hls/master.m3u8"), status: .completed)])
        #expect(files() == ["master.m3u8", "v0", "v1", "v2"])
        let master = try HLSMultivariantCheck(path: path("hls/master.m3u8"))
        #expect(master.problems == [])
        // Largest first (the highest bit rate); each rung's size and codecs.
        #expect(master.variants.map { HLSPackageFiles.withoutGeneration($0.uri) } == ["v0/playlist.m3u8", "v1/playlist.m3u8", "v2/playlist.m3u8"])
        #expect(master.variants.map { $0.attributes["RESOLUTION"] } == ["320x240", "160x120", "96x72"])
        for v in master.variants {
            #expect(v.attributes["CODECS"]?.hasPrefix("avc1.64") == true && v.attributes["CODECS"]?.hasSuffix(",mp4a.40.2") == true, "\(v.attributes)")
            let playlist = path("hls/" + v.uri)
            let check = try HLSPlaylistCheck(path: playlist)
            // Key frames asked for at each second, though the encoders would make one every 10 s.
            // (The last runs to the sound's end, its encoder's last frame.)
            #expect(check.segments.map(\.duration).dropLast() == [1, 1, 1] && abs(check.segments.last!.duration - 1) < 0.05, "\(v.uri)")
            #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(playlist, check) == [], "\(v.uri)")
        }
        // ffmpeg opens the multivariant playlist and reads every rung's frames.
        let frames = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-select_streams", "v", "-show_entries", "stream=nb_read_frames",
                                                       "-of", "csv=p=0", path("hls/master.m3u8")])
        #expect(frames.split(whereSeparator: \.isNewline).filter { $0 == "100" }.count >= 3, "\(frames)")
    }

    /// `audio: separate`: the sound in a rendition of its own (audio/: an initialization segment
    /// and segments holding only the AAC track, cut at the video's times), named by the video
    /// rendition (EXT-X-MEDIA TYPE=AUDIO, AUDIO=), whose CODECS and BANDWIDTH count it. ffmpeg
    /// and GStreamer's adaptive demuxer (hlsdemux2, which plays alternative renditions) play
    /// every video frame and all of the sound.
    @Test func aSeparateAudioRenditionPlaysInFFmpegAndGStreamer() throws {
        let source = try movie(seconds: 5)
        let report = try GraphRun(try graph(source, hls: #""folder": "\#(path("hls"))", "segmentDuration": 2, "audio": "separate""#)).run()
        #expect(report.status == .completed)
        #expect(report.outputs == [OutputReport(node: "hls", path: path("hls/master.m3u8"), status: .completed)])
        #expect(files() == ["audio", "master.m3u8", "v0"])
        let master = try HLSMultivariantCheck(path: path("hls/master.m3u8"))
        #expect(master.problems == [])
        #expect(master.media.count == 1)
        #expect(master.media.first?["TYPE"] == "AUDIO" && master.media.first?["URI"].map(HLSPackageFiles.withoutGeneration) == "audio/playlist.m3u8" && master.media.first?["CHANNELS"] == "1")
        let variant = try #require(master.variants.first)
        #expect(master.variants.count == 1 && variant.attributes["AUDIO"] == master.media.first?["GROUP-ID"])
        #expect(variant.attributes["CODECS"]?.hasSuffix(",mp4a.40.2") == true)
        // The sound's segments hold sound only, the video's video only, cut at the same times.
        let sound = try HLSPlaylistCheck(path: inPackage("audio/playlist.m3u8"))
        let picture = try HLSPlaylistCheck(path: inPackage("v0/playlist.m3u8"))
        #expect(sound.problems == [] && picture.problems == [])
        // (ffprobe lists a playlist's streams twice: in its program, then alone.)
        let streams = { (p: String) in Set(try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", p])
            .split(whereSeparator: \.isNewline)) }
        #expect(try streams(inPackage("audio/playlist.m3u8")) == ["audio"])
        #expect(try streams(inPackage("v0/playlist.m3u8")) == ["video"])
        #expect(zip(sound.segments, picture.segments).dropLast().allSatisfy { abs($0.duration - $1.duration) < 0.03 },
                "\(sound.segments.map(\.duration)) against \(picture.segments.map(\.duration))")
        // ffmpeg: every frame, and the sound's whole length.
        let master_ = path("hls/master.m3u8")
        let counted = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_frames", "-show_entries", "stream=codec_type,nb_read_frames", "-of", "csv=p=0", master_])
        #expect(counted.split(whereSeparator: \.isNewline).contains("video,125"), "\(counted)")
        let raw = path("sound.raw")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-xerror", "-y", "-i", master_, "-map", "0:a", "-ac", "1", "-f", "s16le", raw])
        let samples = try FileManager.default.attributesOfItem(atPath: raw)[.size] as! Int / 2
        #expect(abs(samples - 5 * 48_000) <= 1024, "\(samples) samples")
        // GStreamer: hlsdemux2 (through uridecodebin3) plays the variant and the sound's
        // rendition; it fetches over HTTP only (libsoup), so the folder is served. (The older
        // hlsdemux plays a variant's own segments and not alternative renditions.)
        let server = try FolderServer(folder: URL(fileURLWithPath: path("hls")))
        defer { server.stop() }
        let gst = try TestMedia.runTool("gst-launch-1.0", ["-v", "uridecodebin3", "uri=\(server.url("master.m3u8"))", "name=d",
                                                           "d.", "!", "queue", "!", "video/x-raw", "!", "fakesink", "name=frames", "silent=false",
                                                           "d.", "!", "queue", "!", "audio/x-raw", "!", "audioconvert", "!", "audio/x-raw,format=S16LE,channels=1", "!",
                                                           "filesink", "location=\(path("gst.raw"))"])
        #expect(gst.components(separatedBy: "frames: last-message = chain").count - 1 == 125)
        let gstSamples = try FileManager.default.attributesOfItem(atPath: path("gst.raw"))[.size] as! Int / 2
        #expect(abs(gstSamples - 5 * 48_000) <= 2048, "\(gstSamples) samples")
    }

    /// `audio: separate` needs both a sound and a video: refused before the run, naming the
    /// parameter.
    @Test func aSeparateSoundWithoutVideoIsRefused() throws {
        let source = try movie(seconds: 1)
        let g = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(source)" } }, "dec": { "type": "decode" },
                "aac": { "type": "encode.aac" },
                "hls": { "type": "sink.hls", "params": { "folder": "\(path("hls"))", "audio": "separate" } } },
              "edges": [ "src.out -> dec.in", "dec.audio -> aac.in", "aac.out -> hls.audio" ] }
            """)
        let error = #expect(throws: GraphError.self) { try GraphRun(g).run() }
        #expect(error?.code == .invalidGraph)
        #expect(error?.problems.first?.location == "nodes.hls.params.audio", "\(String(describing: error))")
        #expect(files() == [])
    }

    /// Packets passed as they are (demux) whose key frames are farther apart than the segment
    /// duration: nothing upstream can make one where a cut is due, so the run fails (70), naming
    /// the parameter, the key frames' times and what to do; a VOD run leaves nothing. On both
    /// plans (the container path's times start where the first picture is decoded: 2 B-frames,
    /// 0.08 s, later than a pipeline's).
    @Test(arguments: [RunPlan.pipeline, .containerPath])
    func passedThroughKeyFramesFartherApartThanASegmentAreRefused(_ plan: RunPlan) throws {
        let source = try movie(seconds: 6, gop: 75)
        let g = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(source)" } }, "demux": { "type": "demux" },
                "hls": { "type": "sink.hls", "params": { "folder": "\(path("hls"))", "segmentDuration": 2 } } },
              "edges": [ "src.out -> demux.in", "demux.video -> hls.video", "demux.audio -> hls.audio" ] }
            """)
        let error = #expect(throws: GraphError.self) { try GraphRun(g, plan: plan).run() }
        #expect(error?.code == .runFailed)
        #expect(error?.problems.first?.location == "nodes.hls.params.segmentDuration", "\(String(describing: error))")  // the parameter at fault
        // Refused at the first frame past the segment duration with no key frame, not at the next.
        let since = plan == .pipeline ? "the one at 0 s, by the frame at 2.04 s" : "the one at 0.08 s, by the frame at 2.12 s"
        #expect(error?.message.contains("its video input's key frames are more than 2.04 s apart (none since \(since)), farther apart than the segment duration (2 s)") == true,
                "\(String(describing: error))")
        #expect(error?.message.contains("set segmentDuration to the key frames' distance or more") == true)
        #expect(files() == [])
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
