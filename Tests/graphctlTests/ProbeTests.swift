import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport

/// `graphctl probe FILE [--json]`: a file's container, duration, streams and tags, on files
/// ffmpeg makes here; and what cannot be probed (missing, a folder, a pipe with no writer, a
/// file that is not media) exits 66 naming it, without hanging.
@Suite(.media) struct ProbeTests {
    static let title = "Café – 東京"

    static func ffmpeg(_ arguments: [String]) throws {
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y"] + arguments)
    }

    static func string(_ v: JSONValue?) -> String? { if case .string(let s)? = v { return s }; return nil }
    static func number(_ v: JSONValue?) -> Double? { if case .number(let n)? = v { return n }; return nil }
    static func array(_ v: JSONValue?) -> [JSONValue] { if case .array(let a)? = v { return a }; return [] }

    /// A stream's colour as ffprobe says it, from what the file states: HEVC Main 10 in HLG
    /// (iPhone's), in PQ with SMPTE 2086 mastering display and content light level (HDR10), and
    /// H.264 tagged BT.709 (ffmpeg 7, on Debian 13, writes its matrix alone); a stream that
    /// states nothing has no colour but its depth and chroma.
    @Test(arguments: [
        ("hlg", ["-c:v", "libx265", "-pix_fmt", "yuv420p10le", "-tag:v", "hvc1", "-x265-params",
                 "log-level=error:colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc"]),
        ("pq", ["-c:v", "libx265", "-pix_fmt", "yuv420p10le", "-tag:v", "hvc1", "-x265-params",
                "log-level=error:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:hdr10=1:"
                + "master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400"]),
        ("bt709", ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-color_primaries", "bt709", "-color_trc", "bt709", "-colorspace", "bt709"]),
        ("none", ["-c:v", "libx264", "-pix_fmt", "yuv420p"]),
    ])
    func aStreamsColourAsFfprobeNamesIt(_ name: String, _ encoding: [String]) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("\(name).mp4").path
        try Self.ffmpeg(["-f", "lavfi", "-i", "testsrc2=d=0.4:s=128x96:r=25"] + encoding + [path])
        let r = try Graphctl.run("probe", "--json", path)
        #expect(r.status == 0, "\(r.stderr)")
        let color = try #require(Self.array(try JSONParser.parse(r.stdout)["streams"]).first?["color"], "\(r.stdout)")
        let ffprobe = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=color_primaries,color_transfer,color_space,color_range",
                                                        "-of", "default=nw=1", path])
        for (ours, theirs) in [("primaries", "color_primaries"), ("transfer", "color_transfer"), ("matrix", "color_space"), ("range", "color_range")] {
            let said = ffprobe.split(separator: "\n").first { $0.hasPrefix(theirs + "=") }.map { String($0.dropFirst(theirs.count + 1)) }
            #expect(Self.string(color[ours]) ?? "unknown" == said ?? "unknown", "\(ours): \(r.stdout) vs \(ffprobe)")
        }
        #expect(Self.number(color["bitDepth"]) == (name == "hlg" || name == "pq" ? 10 : 8))
        #expect(Self.string(color["chromaFormat"]) == "4:2:0")
        #expect(Self.string(color["hdr"]) == (name == "hlg" || name == "pq" ? name : nil))
        if name == "pq" {
            let m = color["masteringDisplay"]
            #expect(Self.number(m?["maxLuminance"]) == 1000 && Self.number(m?["minLuminance"]) == 0.0001)
            #expect(Self.array(m?["red"]).compactMap(Self.number) == [0.68, 0.32] && Self.array(m?["whitePoint"]).compactMap(Self.number) == [0.3127, 0.329])
            #expect(Self.number(color["contentLightLevel"]?["maxCLL"]) == 1000 && Self.number(color["contentLightLevel"]?["maxFALL"]) == 400)
        } else {
            #expect(color["masteringDisplay"] == nil && color["contentLightLevel"] == nil)
        }
        let text = try Graphctl.run("probe", path).stdout
        #expect(text.contains(name == "hlg" ? "bt2020/arib-std-b67/bt2020nc tv, 10-bit 4:2:0, HDR (HLG)"
                              : name == "pq" ? "HDR (PQ), mastered 0.0001-1000 cd/m2, MaxCLL 1000, MaxFALL 400"
                              : name == "bt709" ? "bt709 tv, 8-bit 4:2:0" : "25 fps, 0.400 s, 8-bit 4:2:0\n"), "\(text)")
    }

    /// Dolby Vision 8.4 (an iPhone's): its configuration as ffprobe reads the record, and its HLG
    /// base layer's colour.
    @Test func dolbyVisionsConfiguration() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let dv = try HDRTestMedia.makeDolbyVision84(fromHLG: try HDRTestMedia.makeHLG(from: try HDRTestMedia.makeChart(in: folder), in: folder), in: folder)
        let r = try Graphctl.run("probe", "--json", dv)
        #expect(r.status == 0, "\(r.stderr)")
        let stream = try #require(Self.array(try JSONParser.parse(r.stdout)["streams"]).first, "\(r.stdout)")
        let config = stream["dolbyVision"]
        let ffprobe = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "v:0", "-show_entries",
                                                        "stream_side_data=dv_profile,dv_level,dv_bl_signal_compatibility_id", "-of", "default=nw=1", dv])
        #expect(ffprobe.contains("dv_profile=8") && ffprobe.contains("dv_level=5") && ffprobe.contains("dv_bl_signal_compatibility_id=4"), "\(ffprobe)")
        #expect(Self.number(config?["profile"]) == 8 && Self.number(config?["level"]) == 5 && Self.number(config?["compatibilityID"]) == 4, "\(r.stdout)")
        #expect(config?["rpu"] == .bool(true) && config?["enhancementLayer"] == .bool(false) && config?["baseLayer"] == .bool(true))
        #expect(Self.string(config?["compatibleWith"]) == "hlg")
        #expect(Self.string(stream["color"]?["hdr"]) == "hlg")
        let text = try Graphctl.run("probe", dv).stdout
        #expect(text.contains("HDR (HLG), Dolby Vision profile 8.4 (HLG base), level 5"), "\(text)")
    }

    /// An MP4 with H.264 video (1 s, 64x48 at 25 fps) and AAC sound (1.5 s), tagged; its JSON
    /// says so in the documented keys, and the text form in short lines.
    @Test func anMP4sStreamsDurationsAndTags() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("tagged.mp4").path
        try Self.ffmpeg(["-f", "lavfi", "-i", "testsrc=d=1:s=64x48:r=25", "-f", "lavfi", "-i", "sine=d=1.5:sample_rate=48000",
                         "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-ac", "2",
                         "-metadata", "title=\(Self.title)", "-metadata", "artist=Zoë", "-metadata", "track=3/10", path])
        let r = try Graphctl.run("probe", "--json", path)
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONParser.parse(r.stdout)
        #expect(Self.string(json["file"]) == path)
        #expect(Self.string(json["container"]) == "mp4")
        #expect(abs((Self.number(json["duration"]) ?? 0) - 1.5) < 0.05, "\(r.stdout)")
        let streams = Self.array(json["streams"])
        #expect(streams.count == 2, "\(r.stdout)")
        let video = try #require(streams.first { Self.string($0["kind"]) == "video" })
        #expect(Self.string(video["codec"])?.hasPrefix("H.264") == true)
        #expect(Self.number(video["width"]) == 64 && Self.number(video["height"]) == 48 && Self.number(video["frameRate"]) == 25)
        #expect(abs((Self.number(video["duration"]) ?? 0) - 1.0) < 0.05, "\(video)")
        let audio = try #require(streams.first { Self.string($0["kind"]) == "audio" })
        #expect(Self.string(audio["codec"]) == "MPEG-4 AAC")
        #expect(Self.number(audio["sampleRate"]) == 48_000 && Self.number(audio["channels"]) == 2)
        // The track's playing span, as ffprobe's: its edit list leaves out the AAC encoder's
        // priming (1024 samples, 21 ms), which its media duration counts.
        let ffprobe = try TestMedia.runTool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration", "-of", "csv=p=0", path])
        let expected = try #require(Double(ffprobe.trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(abs((Self.number(audio["duration"]) ?? 0) - expected) < 0.001, "\(audio), ffprobe \(expected)")
        let tags = try #require(json["metadata"])
        #expect(Self.string(tags["title"]) == Self.title)
        #expect(Self.string(tags["artist"]) == "Zoë")
        #expect(Self.number(tags["trackNumber"]) == 3 && Self.number(tags["trackCount"]) == 10)
        #expect(Self.string(tags["encoder"])?.hasPrefix("Lavf") == true)
        #expect(Self.array(tags["items"]).contains { Self.string($0["key"]) == "©nam" && Self.string($0["value"]) == Self.title })

        let text = try Graphctl.run("probe", path)
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "\(path): mp4, 1.500 s", "\(text.stdout)")
        #expect(lines.contains { $0.hasPrefix("  stream ") && $0.contains("video, H.264") && $0.contains("64x48, 25 fps") }, "\(text.stdout)")
        #expect(lines.contains { $0.contains("audio, MPEG-4 AAC, 48000 Hz, 2 channels") }, "\(text.stdout)")
        #expect(lines.contains("  title: \(Self.title)") && lines.contains("  track: 3/10"), "\(text.stdout)")
    }

    /// An MP3's ID3v2 tag and cover, and a FLAC's Vorbis comment, through the command.
    @Test(arguments: [("mp3", "libmp3lame"), ("flac", "flac")]) func audioFilesTagsAndCover(ext: String, codec: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let cover = folder.appendingPathComponent("cover.png").path, path = folder.appendingPathComponent("t.\(ext)").path
        try Self.ffmpeg(["-f", "lavfi", "-i", "color=c=blue:s=8x8", "-frames:v", "1", cover])
        try Self.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", "-i", cover, "-map", "0", "-map", "1", "-c:v", "copy",
                         "-disposition:v", "attached_pic", "-c:a", codec, "-metadata", "title=\(Self.title)", "-metadata", "album=Ålbum", path])
        let r = try Graphctl.run("probe", "--json", path)
        #expect(r.status == 0, "\(r.stderr)")
        let json = try JSONParser.parse(r.stdout)
        #expect(Self.string(json["container"]) == ext)
        let tags = try #require(json["metadata"])
        #expect(Self.string(tags["title"]) == Self.title && Self.string(tags["album"]) == "Ålbum", "\(r.stdout)")
        let size = try FileManager.default.attributesOfItem(atPath: cover)[.size] as? Int
        #expect(Self.string(tags["artwork"]?["mimeType"]) == "image/png", "\(r.stdout)")
        #expect(Self.number(tags["artwork"]?["size"]).map(Int.init) == size, "\(r.stdout)")
        #expect(Self.array(json["streams"]).contains { Self.string($0["kind"]) == "audio" && Self.number($0["sampleRate"]) == 44_100 })
    }

    /// Chapters, as `ffprobe -show_chapters` gives them: each start, end and title, in the JSON
    /// and a line each in the text; an MP4's from its QuickTime chapter track, an MP3's from its
    /// ID3 chapters. A file without chapters has an empty list.
    @Test(arguments: ["mp4", "mp3"]) func chaptersAsFfprobeShowsThem(_ ext: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let list = folder.appendingPathComponent("chapters.txt").path, path = folder.appendingPathComponent("c.\(ext)").path
        try ";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=400\ntitle=Intro\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=400\nEND=1000\ntitle=\(Self.title)\n"
            .write(toFile: list, atomically: true, encoding: .utf8)
        try Self.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", "-i", list, "-map", "0", "-map_chapters", "1"]
                        + (ext == "mp4" ? ["-c:a", "aac", "-movflags", "disable_chpl"] : []) + [path])
        let r = try Graphctl.run("probe", "--json", path)
        #expect(r.status == 0, "\(r.stderr)")
        let chapters = Self.array(try JSONParser.parse(r.stdout)["chapters"])
        let theirs = try MediaProbe(path).chapters
        #expect(chapters.count == 2 && theirs.count == 2, "\(r.stdout)")
        for (ours, their) in zip(chapters, theirs) {
            #expect(Self.string(ours["title"]) == their.title)
            #expect(abs((Self.number(ours["start"]) ?? -1) - their.start) < 0.001 && abs((Self.number(ours["end"]) ?? -1) - their.end) < 0.001,
                    "\(ours) against ffprobe's \(their)")
        }
        let text = try Graphctl.run("probe", path)
        #expect(text.stdout.contains("  chapter 1: 0.000 s to 0.400 s: Intro\n  chapter 2: 0.400 s to 1.000 s: \(Self.title)\n"), "\(text.stdout)")
        let plain = folder.appendingPathComponent("plain.\(ext)").path
        try Self.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", plain])
        let none = try Graphctl.run("probe", "--json", plain)
        #expect(Self.array(try JSONParser.parse(none.stdout)["chapters"]).isEmpty && none.stdout.contains("\"chapters\""), "\(none.stdout)")
    }

    /// What cannot be probed exits 66 and names the file: missing, a folder, a pipe with no
    /// writer (which must not hold the command), a text file, an MP4 cut before its index.
    @Test func unreadableInputsExit66NamingTheFile() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("none.mp4").path
        let fifo = folder.appendingPathComponent("pipe.mp4").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let text = folder.appendingPathComponent("notes.mp4").path
        try Data("just words, no media\n".utf8).write(to: URL(fileURLWithPath: text))
        let whole = folder.appendingPathComponent("whole.m4a").path, cut = folder.appendingPathComponent("cut.m4a").path
        try Self.ffmpeg(["-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", whole])  // index last
        try Data(try Data(contentsOf: URL(fileURLWithPath: whole)).prefix(3000)).write(to: URL(fileURLWithPath: cut))
        let cases = [(missing, "no such file"), (folder.path, "it is a folder"), (fifo, "it is not a regular file"),
                     (text, "it is not a media file"), (cut, "ends at byte 3000 before its index")]
        for (path, why) in cases {
            for arguments in [["probe", path], ["probe", "--json", path]] {
                let r = try Graphctl.run(arguments)
                #expect(r.status == 66, "\(arguments): \(r.stderr)")
                #expect(r.stderr.contains("cannot read \"\(path)\": \(why)"), "\(arguments): \(r.stderr)")
                #expect(r.stdout.isEmpty, "\(arguments): \(r.stdout)")
            }
        }
        #expect(try Graphctl.run("probe").status == 64)
    }
}
