import Assets
import Foundation
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// HLSPackager on MP4s ffmpeg makes: the packets come out as they went in, segments start on key
/// frames, the playlist keeps RFC 8216's rules, players read it, and bad input leaves nothing.
@Suite(.media, .timeLimit(.minutes(10))) struct HLSPackagerTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// `seconds` of 320x240 H.264 (B-frames, a key frame every `gop` frames at 25 fps, none at
    /// scene cuts) and 48 kHz AAC, or only one of them.
    func movie(_ name: String, seconds: Int = 7, gop: Int = 25, video: Bool = true, audio: Bool = true) throws -> String {
        let p = path(name)
        var args = ["-v", "error", "-y"]
        if video { args += ["-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=\(seconds)"] }
        if audio { args += ["-f", "lavfi", "-i", "sine=f=440:sample_rate=48000:d=\(seconds)"] }
        if video { args += ["-c:v", "libx264", "-g", String(gop), "-keyint_min", String(gop), "-sc_threshold", "0", "-bf", "2"] }
        if audio { args += ["-c:a", "aac"] }
        try TestMedia.runTool("ffmpeg", args + [p])
        return p
    }

    /// Each stream's packets as ffmpeg demuxes them, copied: decode and presentation times from
    /// the stream's first decode time, size and hash; and where each stream starts, in seconds.
    /// (A reader may move all streams by one offset: ffmpeg's HLS demuxer starts the earliest at 0.)
    struct Packets: Equatable {
        var streams: [Int: [String]] = [:]
        var starts: [Int: Double] = [:]

        /// Whether the streams start as far apart as in `other`, to the millisecond.
        func inSync(with other: Packets) -> Bool {
            guard let a = starts.values.min(), let b = other.starts.values.min(), starts.keys == other.starts.keys else { return false }
            return starts.allSatisfy { abs(($0.value - a) - (other.starts[$0.key]! - b)) < 0.001 }
        }
        var count: Int { streams.values.reduce(0) { $0 + $1.count } }
    }

    func packets(_ file: String) throws -> Packets {
        var result = Packets()
        var timeBases: [Int: Double] = [:], first: [Int: Int] = [:]
        for line in try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", file, "-c", "copy", "-f", "framemd5", "-"]).split(whereSeparator: \.isNewline) {
            if line.hasPrefix("#tb ") {  // "#tb 0: 1/12800"
                let parts = line.dropFirst(4).split(separator: ":")
                let fraction = parts[1].trimmingCharacters(in: .whitespaces).split(separator: "/").compactMap { Double($0) }
                if let stream = Int(parts[0]), fraction.count == 2 { timeBases[stream] = fraction[0] / fraction[1] }
                continue
            }
            if line.hasPrefix("#") { continue }
            let f = line.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
            guard f.count >= 6, let stream = Int(f[0]), let dts = Int(f[1]), let pts = Int(f[2]) else { continue }
            if first[stream] == nil {
                first[stream] = dts
                result.starts[stream] = Double(dts) * (timeBases[stream] ?? 0)
            }
            let origin = first[stream]!
            result.streams[stream, default: []].append("\(dts - origin),\(pts - origin),\(f[4]),\(f[5])")
        }
        return result
    }

    /// The packets of `copy` are those of `source`: the same bytes in the same order, at the same
    /// times, the streams as far apart.
    func expectSamePackets(_ copy: String, as source: String) throws {
        let a = try packets(copy), b = try packets(source)
        #expect(a.streams == b.streams)
        #expect(a.inSync(with: b), "\(a.starts) against \(b.starts)")
    }

    /// The package's files, its generation folder seen through (``HLSPackageFiles``).
    func files() -> [String] { HLSPackageFiles.list(folder.appendingPathComponent("hls").path) }

    @Test func packetsComeOutAsTheyWentIn() throws {
        let source = try movie("talk.mp4")
        let report = try HLSPackager(source: source, folder: path("hls"), segmentDuration: 2).package()
        let playlist = path("hls/playlist.m3u8")
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [])
        #expect(check.playlistType == "VOD" && check.ended && check.map.map(HLSPackageFiles.withoutGeneration) == "init.mp4")
        // Key frames every second: cuts at 2, 4, 6 s; the last segment the 1 s left.
        #expect(check.segments.map(\.duration) == [2, 2, 2, 1])
        #expect(report.segments.map(\.name) == check.segments.map(\.uri))
        #expect(check.targetDuration == 2)
        #expect(try HLSPlaylistCheck.segmentsStartOnKeyFrames(playlist, check) == [])
        // Not one packet changed, dropped, added or moved in time.
        #expect(try packets(source).count > 170 + 320)
        try expectSamePackets(playlist, as: source)
        // GStreamer's HLS demuxer plays it to the end.
        try TestMedia.runTool("gst-launch-1.0", ["-q", "uridecodebin", "uri=file://\(playlist)", "name=d",
                                                 "d.", "!", "queue", "!", "videoconvert", "!", "fakesink",
                                                 "d.", "!", "queue", "!", "audioconvert", "!", "fakesink"])
        #expect(files() == ["init.mp4", "playlist.m3u8", "segment0.m4s", "segment1.m4s", "segment2.m4s", "segment3.m4s"])
    }

    /// Issue 47: a segment of 6 s at a high bit rate (noise: about 12 Mbit/s, 9 MB a segment)
    /// written as one fragment, all its video then all its audio, stalled GStreamer's HLS demuxer
    /// before the first audio sample (its queues hold a few MB). Its fragments now interleave the
    /// tracks in time: playbin plays it to the end, well inside the time limit, and no packet is
    /// stored more than a fragment's span (1 s) after one of the other track it follows.
    @Test func aHighBitRateSegmentInterleavesItsTracksAndGStreamerPlaysIt() throws {
        let source = path("noise.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x180:r=25:d=6", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=6", "-vf", "noise=alls=60:allf=t", "-c:v", "libx264", "-preset", "ultrafast",
                                         "-qp", "20", "-g", "25", "-sc_threshold", "0", "-c:a", "aac", source])
        _ = try HLSPackager(source: source, folder: path("hls"), segmentDuration: 6).package()
        let playlist = path("hls/playlist.m3u8")
        let check = try HLSPlaylistCheck(path: playlist)
        #expect(check.problems == [])
        #expect(check.segments.count == 1)
        let segment = try #require(check.segments.first).uri, map = try #require(check.map)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path("hls/\(segment)")))
        #expect(bytes.count > 6_000_000, "the segment should outgrow GStreamer's queues")
        // The segment after its initialization segment, as one file, read in byte order.
        let joined = path("joined.mp4")
        try (Data(contentsOf: URL(fileURLWithPath: path("hls/\(map)"))) + bytes).write(to: URL(fileURLWithPath: joined))
        #expect(try PacketOrder.worstLag(inFile: joined) < 1.1)
        let gst = try TestMedia.runTool("timeout", ["60", "gst-launch-1.0", "playbin", "uri=file://\(playlist)",
                                                    "video-sink=fakesink", "audio-sink=fakesink"])
        #expect(gst.contains("Got EOS"), "\(gst)")
        try expectSamePackets(playlist, as: source)
    }

    /// Key frames farther apart than the segment duration (every 3 s, for segments of 2 s): no
    /// segment can be cut that short without re-encoding, so the packaging is refused (64, at the
    /// segment duration) before anything is written, saying where the key frames are and what
    /// duration would do; that duration packages it. (ffmpeg's HLS muxer makes longer segments
    /// than asked instead; docs/GRAPH-FORMAT.md, sink.hls, says why GraphKit does not.)
    @Test func keyFramesFartherApartThanTheTargetAreRefused() throws {
        let source = try movie("sparse.mp4", seconds: 9, gop: 75, audio: false)
        let error = #expect(throws: GraphError.self) { try HLSPackager(source: source, folder: path("hls"), segmentDuration: 2).package() }
        #expect(error?.code == .usage)
        #expect(error?.problems.first?.location == "segmentDuration")
        #expect(error?.message == "cannot package \"\(source)\" in segments of 2.0 s: its video's key frames are 3 s apart (from 0 s to the next one at 3 s), "
                + "farther apart than the segment duration (2 s): a segment starts only on a key frame, and the packets are passed as they are "
                + "(nothing can make a key frame), so no segment can be cut that short; set the segment duration to 3 s or more, or encode "
                + "the video with a key frame at least every 2 s", "\(String(describing: error))")
        #expect(files() == [])
        // The stretch after the last key frame counts too: key frames at 0 and 1 s only, in 3 s.
        let lastKey = path("tail.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=25:d=3", "-c:v", "libx264", "-g", "1000",
                                         "-sc_threshold", "0", "-force_key_frames", "0,1", lastKey])
        let tail = #expect(throws: GraphError.self) { try HLSPackager(source: lastKey, folder: path("hls"), segmentDuration: 1.5).package() }
        #expect(tail?.message.contains("key frames are 2 s apart (from 1 s to the end at 3 s)") == true, "\(String(describing: tail))")
        let report = try HLSPackager(source: source, folder: path("hls"), segmentDuration: 3).package()
        #expect(report.segments.map(\.duration) == [3, 3, 3])
        #expect(report.targetDuration == 3)
        #expect(try HLSPlaylistCheck(path: path("hls/playlist.m3u8")).problems == [])
        try expectSamePackets(path("hls/playlist.m3u8"), as: source)
    }

    /// Audio alone is cut by its own samples, every one of which a decoder can start at.
    @Test func audioAloneIsCutAtTheTarget() throws {
        let source = try movie("song.m4a", seconds: 10, video: false)
        let report = try HLSPackager(source: source, folder: path("hls"), segmentDuration: 4).package()
        #expect(report.segments.count == 3)
        for d in report.segments.dropLast().map(\.duration) { #expect(abs(d - 4) < 0.03) }  // a 1024-sample frame is 21 ms
        #expect(abs(report.segments.reduce(0) { $0 + $1.duration } - 10) < 0.03)
        #expect(try HLSPlaylistCheck(path: path("hls/playlist.m3u8")).problems == [])
        try expectSamePackets(path("hls/playlist.m3u8"), as: source)
    }

    /// The source's edit list skips the AAC encoder's priming; packaged, the sound still starts at
    /// the input's first sample: ffmpeg (which reads no edit list in fragments) gets the priming
    /// from the gapless tag the initialization segment carries, and decodes the playlist to the
    /// source's exact sample count (an input of whole AAC frames: ffmpeg before 9.0 does not trim
    /// the last frame's padding from the tag).
    @Test func theSoundStartsAtTheInputsFirstSample() throws {
        let source = path("gapless.m4a")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=f=440:sample_rate=48000:d=3.008", "-c:a", "aac", source])
        func samples(_ p: String) throws -> Int {
            let raw = path("count.raw")
            try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", p, "-map", "0:a", "-ac", "1", "-f", "s16le", raw])
            return try FileManager.default.attributesOfItem(atPath: raw)[.size] as! Int / 2
        }
        #expect(try samples(source) == 144_384)
        _ = try HLSPackager(source: source, folder: path("hls"), segmentDuration: 1).package()
        #expect(try samples(path("hls/playlist.m3u8")) == 144_384)
    }

    /// What is not an MP4 is refused as unreadable (66), naming it; nothing is written.
    @Test func whatIsNotAnMP4IsRefused() throws {
        let wav = path("tone.wav")
        try TestMedia.writeWAV(wav, seconds: 1)
        for (source, why) in [(wav, "it is not an MP4 file (it is a WAV file)"), (path("missing.mp4"), "no such file or directory"), (folder.path, "it is a folder")] {
            #expect(throws: GraphError(.inputUnreadable, "cannot package \"\(source)\" for HLS: \(why)")) {
                try HLSPackager(source: source, folder: path("hls")).package()
            }
        }
        #expect(files() == [])
    }

    /// A file cut short inside its media: the sample table points past the end. Refused, naming
    /// the track and sample; nothing is written.
    @Test func aFileCutShortIsRefused() throws {
        let source = try movie("whole.mp4")
        let faststart = path("faststart.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", source, "-c", "copy", "-movflags", "+faststart", faststart])
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: faststart))
        try handle.truncate(atOffset: try handle.seekToEnd() / 2)
        try handle.close()
        let error = #expect(throws: GraphError.self) { try HLSPackager(source: faststart, folder: path("hls")).package() }
        #expect(error?.code == .inputUnreadable)
        #expect(error?.message.contains("runs past the end of the file") == true, "\(String(describing: error))")
        #expect(files() == [])
    }

    /// A segment duration that is no duration, a file name that is a path: usage errors (64).
    @Test func settingsThatMakeNoSenseAreRefused() throws {
        let source = try movie("talk.mp4", seconds: 2)
        for d in [0, -1, .nan, .infinity, 1e-20, 1e-9, 0.49, 61] {
            let error = #expect(throws: GraphError.self) { try HLSPackager(source: source, folder: path("hls"), segmentDuration: d).package() }
            #expect(error?.code == .usage)
        }
        let error = #expect(throws: GraphError.self) { try HLSPackager(source: source, folder: path("hls"), playlistName: "../up.m3u8").package() }
        #expect(error?.message == "\"../up.m3u8\" is not a file name (no folders, not hidden, no control characters)")
        let forged = #expect(throws: GraphError.self) { try HLSPackager(source: source, folder: path("hls"), playlistName: "a\n#EXT-X-ENDLIST").package() }
        #expect(forged?.message == #""a\n#EXT-X-ENDLIST" is not a file name (no folders, not hidden, no control characters)"#)
        #expect(files() == [])
    }

    /// An output name someone planted as a link: refused (73), and the segments written before
    /// it are removed, so no playlist and no orphan segments remain.
    @Test func aPlantedLinkFailsThePackagingAndRemovesWhatItWrote() throws {
        let source = try movie("talk.mp4", seconds: 4)
        try FileManager.default.createDirectory(atPath: path("hls"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: path("hls/playlist.m3u8"), withDestinationPath: path("victim"))
        let error = #expect(throws: GraphError.self) { try HLSPackager(source: source, folder: path("hls"), segmentDuration: 1).package() }
        #expect(error?.code == .outputUnwritable)
        #expect(files() == ["playlist.m3u8"])  // the link, left alone
        #expect(!FileManager.default.fileExists(atPath: path("victim")))
    }

    /// Cancelled: it stops before its next segment, removes what it wrote and says so (130).
    @Test func cancellingLeavesNothing() throws {
        let source = try movie("talk.mp4", seconds: 4)
        let packager = HLSPackager(source: source, folder: path("hls"), segmentDuration: 1)
        packager.cancel()
        let error = #expect(throws: GraphError.self) { try packager.package() }
        #expect(error?.code == .cancelled)
        #expect(files() == [])
    }

    /// A run killed before its switch leaves a generation no playlist names: the next packaging
    /// removes it with the one it replaces, but leaves a generation a running packaging holds
    /// (removed by a later run once let go) and a link named like one (and what it leads to).
    @Test func aKilledRunsGenerationGoesWithTheNextPackaging() throws {
        let source = try movie("talk.mp4", seconds: 3)
        let hls = path("hls"), fm = FileManager.default
        try HLSPackager(source: source, folder: hls, segmentDuration: 1).package()
        let first = HLSPackageFiles.generations(hls)
        #expect(first.count == 1)
        // What a killed run leaves: a generation with a segment and a temporary file.
        let killed = "playlist.0123456789ab", held = "playlist.aaaaaaaaaaaa", link = "playlist.bbbbbbbbbbbb"
        try fm.createDirectory(atPath: hls + "/" + killed, withIntermediateDirectories: false)
        try Data("old".utf8).write(to: URL(fileURLWithPath: hls + "/" + killed + "/segment0.m4s"))
        try Data("old".utf8).write(to: URL(fileURLWithPath: hls + "/" + killed + "/.segment1.m4s.partial"))
        // A running packaging's: its folder locked as a packaging locks it.
        try fm.createDirectory(atPath: hls + "/" + held, withIntermediateDirectories: false)
        try Data("live".utf8).write(to: URL(fileURLWithPath: hls + "/" + held + "/segment0.m4s"))
        // Close-on-exec: a process another test starts meanwhile must not inherit (and keep) the lock.
        let lock = open(hls + "/" + held, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        #expect(lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) == 0)
        // A link named like a generation, to a folder that is not the package's.
        try fm.createDirectory(atPath: path("elsewhere"), withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: path("elsewhere/segment0.m4s")))
        try fm.createSymbolicLink(atPath: hls + "/" + link, withDestinationPath: path("elsewhere"))

        try HLSPackager(source: source, folder: hls, segmentDuration: 1).package()
        let second = HLSPackageFiles.generations(hls).filter { $0 != held && $0 != link }
        #expect(second.count == 1 && second != first)
        #expect(!fm.fileExists(atPath: hls + "/" + killed))
        #expect(fm.fileExists(atPath: hls + "/" + held + "/segment0.m4s"))
        #expect((try? fm.destinationOfSymbolicLink(atPath: hls + "/" + link)) == path("elsewhere"))
        #expect(fm.fileExists(atPath: path("elsewhere/segment0.m4s")))

        // Let go, it is a killed run's like any other: the next packaging removes it.
        close(lock)
        try HLSPackager(source: source, folder: hls, segmentDuration: 1).package()
        #expect(!fm.fileExists(atPath: hls + "/" + held))
        #expect(HLSPackageFiles.generations(hls).filter { $0 != link }.count == 1)
        #expect(fm.fileExists(atPath: path("elsewhere/segment0.m4s")))
    }

    /// init.mp4 keeps the source's tags, place, languages and creation time, as ffmpeg's HLS
    /// muxer keeps them (not its chapters, which a playlist does not show); ffprobe reads them.
    @Test func theInitializationSegmentKeepsTheSourcesTags() throws {
        let source = try TaggedMedia.movie(in: folder)
        let report = try HLSPackager(source: source, folder: path("hls"), segmentDuration: 2).package()
        let p = try TaggedMedia.probe(path("hls/\(report.initializationSegment)"))
        #expect(p.tags["title"] == TaggedMedia.title && p.tags["artist"] == TaggedMedia.artist && p.tags["album"] == TaggedMedia.album
                && p.tags["date"] == TaggedMedia.date && p.tags["location"] == TaggedMedia.location, "\(p.tags)")
        #expect(p.tags["creation_time"] == TaggedMedia.creationTime, "\(p.tags)")
        #expect(p.language(of: "audio") == "fra" && p.language(of: "video") == "deu", "\(p.streams)")
        #expect(p.chapters.isEmpty)
    }
}
