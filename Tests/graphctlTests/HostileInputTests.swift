import Foundation
import Testing
import GraphKit
import GraphKitTesting
import MediaContainers
import TestSupport

/// What an attacker's file or argument claims (issue 47), through graphctl as a user runs it: a
/// claim nothing can mean is refused by name with its documented status, never a crash (SIGILL
/// from a trapped conversion), a loop without end, text sent raw to a terminal or a playlist,
/// or a file reported missing because of its name. Every run has a hard limit of its own.
@Suite(.media, .timeLimit(.minutes(10))) struct HostileInputTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Far more than any refusal takes, far less than the runner's guard.
    static let limit: Duration = .seconds(60)

    /// Arithmetic: an edit list whose media time is 2^63−1, in either track. The old code
    /// trapped converting it (export: SIGILL, status 132) or packaged and joined garbage
    /// (hls, concat: exit 0). Each command now refuses the file (66), naming it, the track and
    /// the edit list.
    @Test func anEditListStartingItsMediaAt2To63Minus1IsRefusedByName() throws {
        let good = path("good.mp4")
        try CraftedMP4.movie(good)
        for handler: FourCC in ["vide", "soun"] {
            let bad = path("bad-\(handler).mp4")
            try CraftedMP4.edited(good, to: bad) { movie in
                try CraftedMP4.track(handler, of: &movie) { track in
                    let duration = track.edits?.first?.duration ?? 3000
                    track.setEdits([MP4Track.Edit(duration: duration, mediaTime: .max)])
                }
            }
            let why = "edit list (elst) starts its media at 9223372036854775807 ticks"
            let hls = try Graphctl.run(["hls", bad, path("hls-\(handler)")], limit: Self.limit)
            #expect(hls.status == 66, "\(handler): \(hls.stderr)")
            #expect(hls.stderr.contains("cannot package \"\(bad)\" for HLS: its track") && hls.stderr.contains(why), "\(hls.stderr)")
            for range in [[], ["--start", "1", "--duration", "1"]] {
                let export = try Graphctl.run(["export", bad, path("out.mp4"), "--preset", "passthrough", "--quiet"] + range, limit: Self.limit)
                #expect(export.status == 66, "\(handler) \(range): \(export.stderr)")
                #expect(export.stderr.contains("cannot export \"\(bad)\"") && export.stderr.contains(why), "\(export.stderr)")
                #expect(!FileManager.default.fileExists(atPath: path("out.mp4")))
            }
            let concat = try Graphctl.run(["run", Graphctl.graph("concat.json"), "--quiet", "--set", "file.path=\(path("joined.mp4"))",
                                           "--set", #"join.pieces=[{"path": "\#(good)"}, {"path": "\#(bad)", "inpoint": 1}]"#], limit: Self.limit)
            #expect(concat.status == 66, "\(handler): \(concat.stderr)")
            #expect(concat.stderr.contains("nodes.join.params.pieces[1].path: piece 1 (\"\(bad)\")") && concat.stderr.contains(why), "\(concat.stderr)")
            #expect(!FileManager.default.fileExists(atPath: path("joined.mp4")))
        }
    }

    /// Arithmetic: the other extremes a file's timing can claim, in either track (edit media
    /// times of −2^63 and 2^63−2, an empty edit of 2^63−1 ticks, media clocks of 0, 1 and
    /// 2^32−1 Hz, sample durations of 2^32−1 ticks, composition offsets of ±2^31). Each
    /// command either does its job or refuses by name with a documented status; none is killed
    /// by a signal (a trap), none runs past its limit.
    @Test func extremeTimingNeverTraps() throws {
        let good = path("good.mp4")
        try CraftedMP4.movie(good)
        typealias Damage = (name: String, edit: (inout MP4Track) -> Void)
        let damages: [Damage] = [
            ("media time -2^63", { $0.setEdits([MP4Track.Edit(duration: 3000, mediaTime: .min)]) }),
            ("media time 2^63-2", { $0.setEdits([MP4Track.Edit(duration: 3000, mediaTime: .max - 1)]) }),
            ("empty edit 2^63-1", { $0.setEdits([MP4Track.Edit(duration: UInt64(Int64.max), mediaTime: -1), MP4Track.Edit(duration: 3000, mediaTime: 0)]) }),
            ("clock 0 Hz", { $0.box.update(["mdia", "mdhd"], as: MediaHeader.self) { $0.timescale = 0 } }),
            ("clock 1 Hz", { $0.box.update(["mdia", "mdhd"], as: MediaHeader.self) { $0.timescale = 1 } }),
            ("clock 2^32-1 Hz", { $0.box.update(["mdia", "mdhd"], as: MediaHeader.self) { $0.timescale = .max } }),
            ("durations 2^32-1", { $0.box.update(["mdia", "minf", "stbl", "stts"], as: TimeToSample.self) { stts in
                stts.entries = stts.entries.map { .init(count: $0.count, delta: .max) } } }),
            ("offsets -2^31", { $0.box.modify(["mdia", "minf", "stbl"]) { $0.children.append(Self.compositionOffsets(Int32.min)) } }),
            ("offsets 2^31-1", { $0.box.modify(["mdia", "minf", "stbl"]) { $0.children.append(Self.compositionOffsets(Int32.max)) } }),
        ]
        for handler: FourCC in ["vide", "soun"] {
            for damage in damages {
                let bad = path("bad.mp4"), what = "\(handler), \(damage.name)"
                try CraftedMP4.edited(good, to: bad) { try CraftedMP4.track(handler, of: &$0, damage.edit) }
                try? FileManager.default.removeItem(atPath: path("hls"))
                try? FileManager.default.removeItem(atPath: path("out.mp4"))
                let runs = [
                    try Graphctl.run(["hls", bad, path("hls"), "--quiet"], limit: Self.limit),
                    try Graphctl.run(["export", bad, path("out.mp4"), "--preset", "passthrough", "--start", "1", "--quiet"], limit: Self.limit),
                    try Graphctl.run(["run", Graphctl.graph("concat.json"), "--quiet", "--set", "file.path=\(path("joined.mp4"))",
                                      "--set", #"join.pieces=[{"path": "\#(good)"}, {"path": "\#(bad)", "inpoint": 1}]"#], limit: Self.limit),
                ]
                try? FileManager.default.removeItem(atPath: path("joined.mp4"))
                for (command, r) in zip(["hls", "export", "concat"], runs) {
                    #expect([0, 64, 65, 66, 70].contains(r.status), "\(what), \(command): exit \(r.status): \(r.stderr)")
                    // A refusal names the file; a run that fails names the node (a concat of a
                    // sound on a 2^32−1 Hz clock fails at the sink, its stamps going back).
                    #expect(r.status == 0 || r.stderr.contains(bad) || (r.status == 70 && r.stderr.contains("error: node \"")), "\(what), \(command): \(r.stderr)")
                }
            }
        }
    }

    /// A `ctts` box giving every one of a track's samples (at most 10,000) `offset`.
    static func compositionOffsets(_ offset: Int32) -> MP4Box {
        var body: [UInt8] = [1, 0, 0, 0, 0, 0, 0, 1]  // version 1 (signed), one run
        for word in [UInt32(10_000), UInt32(bitPattern: offset)] { body += [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: word >> UInt32($0)) } }
        return MP4Box(type: "ctts", body: body)
    }

    /// Arithmetic: a number that is none (`nan`, infinities, 1e400, which reads as infinity) or
    /// out of its option's range. `export --start nan` crashed (a NaN has no media time); each is
    /// now a usage error (64) naming the option, before the input is read.
    @Test func numbersThatAreNoneAreRefusedNamingTheOption() throws {
        let good = path("good.mp4")
        try CraftedMP4.movie(good)
        for (option, values) in [("--start", ["nan", "inf", "-inf", "1e400", "-1", "NaN"]), ("--duration", ["nan", "-inf", "1e400", "-0.5"])] {
            for value in values {
                let r = try Graphctl.run(["export", good, path("out.mp4"), "--preset", "passthrough", "\(option)=\(value)"], limit: Self.limit)
                #expect(r.status == 64, "\(option) \(value): \(r.stderr)")
                #expect(r.stderr.contains("The value '\(value)' is invalid for '\(option) <\(option.dropFirst(2))>': \(option) takes a"), "\(r.stderr)")
                #expect(!FileManager.default.fileExists(atPath: path("out.mp4")))
            }
        }
        let timeout = try Graphctl.run(["batch", Graphctl.graph("transcode-audio.json"), "--inputs", folder.path, "--map", "src.path={input}",
                                        "--timeout", "nan"], limit: Self.limit)
        #expect(timeout.status == 64 && timeout.stderr.contains("--timeout takes a finite number from 0 to 31536000 seconds"), "\(timeout.stderr)")
    }

    /// Loops: a segment duration of 1e-20 s made the cut loop spin for ever (adding it to a
    /// time of seconds changes nothing), deaf to SIGINT and SIGTERM; 1e-9 s burned 11–31 s of
    /// CPU before refusing. The range (0.5 to 60 s) is checked before the source is read; and
    /// what the range allows cuts in steps of the file's samples.
    @Test func aSegmentDurationOutsideItsRangeIsRefusedAtOnce() throws {
        let good = path("good.mp4")
        try CraftedMP4.movie(good)
        for value in ["1e-20", "1e-9", "0", "0.49", "60.5", "nan", "inf", "-inf", "1e400"] {
            let started = ContinuousClock.now
            let r = try Graphctl.run(["hls", good, path("out"), "--segment-duration=\(value)"], limit: .seconds(20))
            #expect(r.status == 64, "\(value): \(r.stderr)")
            #expect(r.stderr.contains("--segment-duration takes a") && r.stderr.contains("from 0.5 to 60 seconds"), "\(value): \(r.stderr)")
            #expect(ContinuousClock.now - started < .seconds(10), "\(value)")
        }
        #expect(!FileManager.default.fileExists(atPath: path("out")))
        let shortest = try Graphctl.run(["hls", good, path("out"), "--segment-duration", "1", "--quiet"], limit: Self.limit)
        #expect(shortest.status == 0, "\(shortest.stderr)")
    }

    /// Loops: crafted timing, empty edits of 2^64−1 ticks before the video. The old cut loop
    /// stepped from there by the target for ever (the step lost against so large a time),
    /// deaf to SIGTERM; now the reader refuses the timeline (66) before any cut.
    @Test func aDelayNoTimelineHoldsIsRefusedNotLoopedOn() throws {
        let good = path("good.mp4"), bad = path("delayed.mp4")
        try CraftedMP4.movie(good)
        try CraftedMP4.edited(good, to: bad) { movie in
            try CraftedMP4.track("vide", of: &movie) { track in
                track.setEdits([MP4Track.Edit(duration: .max, mediaTime: -1), MP4Track.Edit(duration: 3000, mediaTime: 0)])
            }
        }
        let r = try Graphctl.run(["hls", bad, path("out")], limit: .seconds(30))
        #expect(r.status == 66, "\(r.stderr)")
        #expect(r.stderr.contains("cannot package \"\(bad)\" for HLS: its track 1's edit list (elst) delays its media by 18446744073709551615 ticks"),
                "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("out")))
    }

    /// Text: a newline in a playlist's name forged a line of the multivariant playlist. A name
    /// with any control character is refused when the graph is loaded (65), at its JSON path;
    /// `graphctl hls --playlist` refuses one too (64).
    @Test func aControlCharacterInAPlaylistNameIsRefusedAtItsPath() throws {
        for name in ["a\nb.m3u8", "x.m3u8\r", "bell\u{07}.m3u8", "del\u{7F}.m3u8", "csi\u{9B}.m3u8"] {
            let graph = path("hls.json")
            let document = """
                {"version": 1, "nodes": {
                  "src": {"type": "source.file", "params": {"path": \(JSONValue.quote(path("in.mp4")))}},
                  "dec": {"type": "decode"}, "h264": {"type": "encode.h264"},
                  "hls": {"type": "sink.hls", "params": {"folder": \(JSONValue.quote(path("hls"))), "playlist": \(JSONValue.quote(name))}}},
                 "edges": ["src.out -> dec.in", "dec.video -> h264.in", "h264.out -> hls.video"]}
                """
            try Data(document.utf8).write(to: URL(fileURLWithPath: graph))
            let r = try Graphctl.run(["validate", graph], limit: Self.limit)
            #expect(r.status == 65, "\(name.debugDescription): \(r.stderr)")
            #expect(r.stderr.contains("nodes.hls.params.playlist: expected a file name (no folder, not hidden, no control characters), got \(JSONValue.quote(name))"),
                    "\(r.stderr)")
            #expect(!r.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" } && r.stderr.split(separator: "\n").count == 1, "\(r.stderr)")
        }
        let good = path("good.mp4")
        try CraftedMP4.movie(good)
        // An error quoting a name that holds ESC shows it escaped, whoever made the message.
        let named = path("x\u{1B}[2J.wav")
        let missing = try Graphctl.run(["run", Graphctl.graph("transcode-audio.json"), "--set", "src.path=\(named)", "--set", "file.path=\(path("o.m4a"))"],
                                       limit: Self.limit)
        #expect(missing.status == 66, "\(missing.stderr)")
        #expect(missing.stderr.contains("cannot read \"\(path("x\\x1B[2J.wav"))\": no such file") && !missing.stderr.contains("\u{1B}"),
                "\(missing.stderr.debugDescription)")
        let cli = try Graphctl.run(["hls", good, path("out"), "--playlist", "a\n#EXT-X-ENDLIST\nb.m3u8"], limit: Self.limit)
        #expect(cli.status == 64, "\(cli.stderr)")
        #expect(cli.stderr.contains(#"playlistName: "a\n#EXT-X-ENDLIST\nb.m3u8" is not a file name"#), "\(cli.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("out")))
    }

    /// Text: `probe` printed tag text raw (an escape sequence recolours the terminal, BEL rings,
    /// a NUL or a newline forges output). Its text form shows every control character escaped;
    /// its JSON stays JSON, each one a \u escape.
    @Test func probeEscapesControlCharactersInTags() throws {
        let good = path("good.mp4"), tagged = path("tagged.mp4")
        let marker = "QQQQQQQQQQQQQQQ"
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "aac", "-metadata", "title=\(marker)", good])
        // The same number of bytes (15), so no box changes size: ESC [31m, BEL, NUL, DEL, C1's
        // CSI (U+009B, two bytes), a newline.
        let hostile: [UInt8] = [0x61, 0x1B] + Array("[31m".utf8) + [0x62, 0x07, 0x00, 0x63, 0x7F, 0xC2, 0x9B, 0x64, 0x0A]
        #expect(hostile.count == marker.utf8.count)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let at = try #require(bytes.indices.first { bytes[$0...].starts(with: marker.utf8) })
        bytes.replaceSubrange(at..<(at + hostile.count), with: hostile)
        try Data(bytes).write(to: URL(fileURLWithPath: tagged))

        let text = try Graphctl.run(["probe", tagged], limit: Self.limit)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("  title: a\\x1B[31mb\\x07\\x00c\\x7F\\u{9B}d\\x0A\n"), "\(text.stdout.debugDescription)")
        #expect(!text.stdout.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7F...0x9F).contains($0.value) }, "\(text.stdout.debugDescription)")

        let json = try Graphctl.run(["probe", "--json", tagged], limit: Self.limit)
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains(#""title":"a\u001b[31mb\u0007\u0000c\u007f\u009bd\n""#), "\(json.stdout)")
        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        let title = (parsed?["metadata"] as? [String: Any])?["title"] as? String
        #expect(title.map { Array($0.utf8) } == hostile)
    }

    /// Memory taken on a file's word: a sample entry claiming 65535×65535 (H.264) or 37786×37786
    /// (MJPEG in a MOV) was handed to the decoders, and an `avc1` one came back as "decoder not
    /// installed" (69). Refused by name before any decoder is made: probe and thumbnails 66,
    /// an export 66 or 70.
    @Test(arguments: [("mp4", "libx264", 65535), ("mov", "mjpeg", 37786)])
    func aFrameLargerThanTheLimitIsRefusedByName(_ ext: String, _ codec: String, _ side: Int) throws {
        let good = path("good.\(ext)"), bad = path("huge.\(ext)")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2", "-c:v", codec, good])
        try CraftedMP4.edited(good, to: bad) { movie in
            try CraftedMP4.track("vide", of: &movie) { track in
                track.box.modify(["mdia", "minf", "stbl", "stsd"]) { stsd in
                    // The visual sample entry's width and height: 16 bits each at bytes 24 and 26.
                    var body = stsd.children[0].body
                    body.replaceSubrange(24..<28, with: [UInt8(side >> 8), UInt8(side & 0xFF), UInt8(side >> 8), UInt8(side & 0xFF)])
                    stsd.children[0].body = body
                }
            }
        }
        let claim = "claims frames of \(side)x\(side) (\(side * side) pixels), which exceeds the limit of 16384x16384 (268435456 pixels)"
        let probe = try Graphctl.run(["probe", bad], limit: Self.limit)
        #expect(probe.status == 66 && probe.stderr.hasPrefix("error: cannot read \"\(bad)\": its track 1 (") && probe.stderr.contains(claim), "\(probe.stderr)")
        let thumbs = try Graphctl.run(["run", Graphctl.graph("thumbnails.json"), "--quiet", "--set", "thumbs.path=\(bad)", "--set", "thumbs.folder=\(path("th"))",
                                       "--set", "thumbs.sprite=\(path("th/s.jpg"))", "--set", "thumbs.vtt=\(path("th/s.vtt"))"], limit: Self.limit)
        #expect(thumbs.status == 66 && thumbs.stderr.contains(claim), "\(thumbs.stderr)")
        let export = try Graphctl.run(["export", bad, path("out.mp4"), "--preset", "640x480", "--quiet"], limit: Self.limit)
        // Refused by the asset's reading (66: a MOV is read through the discoverer) or by the
        // export's decode (70: an MP4's index is read by the container library first).
        #expect([66, 70].contains(export.status) && export.stderr.contains("\"\(bad)\": its track 1 (") && export.stderr.contains(claim), "\(export.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("out.mp4")))
        // The file as made is read.
        #expect(try Graphctl.run(["probe", good], limit: Self.limit).status == 0)
    }

    /// Names: a file whose name is not UTF-8 (byte 0xE9, Latin-1's é) was reported missing
    /// (66): Swift hands a command its arguments with such a byte replaced. probe, hls, export
    /// and run's --set of a file the graph reads now open it by its bytes, and name it with the
    /// byte escaped (`caf\xE9.mp4`); a missing one is named so too; an output so named is
    /// refused (64) rather than written under the replaced name, another file.
    @Test func aFileNameThatIsNotUTF8IsReadByItsBytes() throws {
        let good = path("good.mp4")
        try CraftedMP4.movie(good)
        let named = Array(folder.path.utf8) + Array("/caf".utf8) + [0xE9] + Array(".mp4".utf8)
        let renamed = (named + [0]).withUnsafeBufferPointer { p in
            p.withMemoryRebound(to: CChar.self) { rename(good, $0.baseAddress!) }
        }
        #expect(renamed == 0)
        let shown = "\(folder.path)/caf\\xE9.mp4"
        /// graphctl started by a shell, so that the name reaches it as bytes (Process passes
        /// UTF-8): `printf %b` turns `\0351` into the byte 0xE9.
        func graphctl(_ arguments: String) throws -> Graphctl.Result {
            let script = "exec \"$0\" \(arguments)"
            return try RunningGraphctl(["-c", script, Graphctl.executable.path], executable: URL(fileURLWithPath: "/bin/sh")).wait(limit: Self.limit)
        }
        let name = "\"$(printf '%b' '\(folder.path)/caf\\0351.mp4')\""
        let probe = try graphctl("probe \(name)")
        #expect(probe.status == 0, "\(probe.stderr)")
        #expect(probe.stdout.hasPrefix("\(shown): mp4, 3.0"), "\(probe.stdout)")
        let hls = try graphctl("hls \(name) '\(path("hls"))' --quiet")
        #expect(hls.status == 0, "\(hls.stderr)")
        #expect(FileManager.default.fileExists(atPath: path("hls/playlist.m3u8")))
        let export = try graphctl("export \(name) '\(path("out.mp4"))' --preset passthrough --quiet")
        #expect(export.status == 0, "\(export.stderr)")
        #expect(abs(try MediaProbe(path("out.mp4")).duration - 3) < 0.1)

        // run reads a file so named given with --set (either form), and refuses to write one.
        let m4a = path("sound.m4a")
        let run = try graphctl("run '\(Graphctl.graph("transcode-audio.json"))' --quiet --set src.path=\(name) --set file.path='\(m4a)'")
        #expect(run.status == 0, "\(run.stderr)")
        #expect(abs(try MediaProbe(m4a).duration - 3) < 0.1)
        let equals = try graphctl("run '\(Graphctl.graph("transcode-audio.json"))' --quiet --set=src.path=\(name) --set file.path='\(path("again.m4a"))'")
        #expect(equals.status == 0, "\(equals.stderr)")
        let out = "\"$(printf '%b' '\(folder.path)/out\\0351.m4a')\""
        let written = try graphctl("run '\(Graphctl.graph("transcode-audio.json"))' --quiet --set src.path=\(name) --set file.path=\(out)")
        #expect(written.status == 64, "\(written.stderr)")
        #expect(written.stderr == "error: --set file.path: \"\(folder.path)/out\\xE9.m4a\" is not UTF-8: graphctl reads inputs so named, and does not write outputs so named\n",
                "\(written.stderr)")
        let exported = try graphctl("export \(name) \(out) --preset appleM4A --quiet")
        #expect(exported.status == 64 && exported.stderr.hasPrefix("error: OUT: "), "\(exported.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasPrefix("out") && $0.hasSuffix(".m4a") } == [])

        let missing = try graphctl("probe \"$(printf '%b' '\(folder.path)/none\\0377.mp4')\"")
        #expect(missing.status == 66)
        #expect(missing.stderr == "error: cannot read \"\(folder.path)/none\\xFF.mp4\": no such file or directory\n", "\(missing.stderr)")
    }
}
