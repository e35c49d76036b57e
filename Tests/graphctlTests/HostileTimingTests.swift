import Foundation
import GraphKitTesting
import MediaContainers
import TestSupport
import Testing

/// A track's clock and composition offsets as an attacker rewrites them (issue 73, class 8), each
/// named for what it is: a video `mdhd` clock of 0 Hz was "This file is corrupt and cannot be
/// played", one of 2³²−1 Hz (or any that makes the track last under a fifth of the movie, which
/// GStreamer's demuxer drops as a preview) "has no video track", one of 1 Hz made thumbnails exit
/// 64 (the usage code), and `ctts` offsets of −2³¹ were blamed on the edit list.
@Suite(.media, .timeLimit(.minutes(5))) struct HostileTimingTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static let limit: Duration = .seconds(60)

    /// 3 s of 160×120 H.264 with B-frames (so a `ctts`) and AAC, as ffmpeg writes it.
    func movie() throws -> String {
        let good = path("good.mp4")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=3",
                                         "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=3",
                                         "-c:v", "libx264", "-g", "25", "-bf", "2", "-pix_fmt", "yuv420p", "-c:a", "aac", good])
        return good
    }

    /// `good`'s copy whose video track's media clock (`mdhd` timescale) is `ticks` a second.
    func clocked(_ good: String, _ ticks: UInt32) throws -> String {
        let bad = path("clock-\(ticks).mp4")
        try CraftedMP4.edited(good, to: bad) { movie in
            try CraftedMP4.track("vide", of: &movie) { track in
                track.box.modify(["mdia", "mdhd"]) { mdhd in
                    let at = mdhd.body[0] == 1 ? 20 : 12  // after version and flags, and two times of 8 or 4 bytes
                    mdhd.body.replaceSubrange(at..<(at + 4), with: [UInt8(ticks >> 24), UInt8((ticks >> 16) & 0xFF), UInt8((ticks >> 8) & 0xFF), UInt8(ticks & 0xFF)])
                }
            }
        }
        return bad
    }

    @Test(arguments: [(UInt32(0), "its track 1 has no media clock (its mdhd timescale is 0)"),
                      (UInt32.max, "its track 1's media clock (mdhd) runs at 4294967295 ticks a second, faster than the 2147483647 GraphKit reads")])
    func aClockNoFileUsesIsRefusedByName(_ ticks: UInt32, _ why: String) throws {
        let bad = try clocked(try movie(), ticks)
        for arguments in [["probe", bad], ["export", bad, path("out.mp4"), "--preset", "640x480", "--quiet"], ["hls", bad, path("hls"), "--quiet"]] {
            let r = try Graphctl.run(arguments, limit: Self.limit)
            #expect(r.status == 66 && r.stderr.contains(bad) && r.stderr.contains(why), "\(arguments[0]): exit \(r.status): \(r.stderr)")
        }
    }

    /// A clock that makes the 3 s track last 38 µs: GStreamer's demuxer drops it as a preview
    /// picture. probe warns, and what needs the video says why it is not there.
    @Test func aVideoTrackGStreamerDropsAsAPreviewIsNamed() throws {
        let bad = try clocked(try movie(), 1_000_000_000)
        let why = "has its video track 1 lasting under a millisecond by its own clock (mdhd: 38400 ticks of 1000000000 Hz), "
            + "under a fifth of the movie's 3 s (mvhd), so GStreamer's demuxer leaves it out as a preview picture"
        let probe = try Graphctl.run(["probe", bad], limit: Self.limit)
        #expect(probe.status == 0 && probe.stderr.contains("warning: \"\(bad)\" \(why)"), "probe: exit \(probe.status): \(probe.stderr)")
        let export = try Graphctl.run(["export", bad, path("out.mp4"), "--preset", "640x480", "--quiet"], limit: Self.limit)
        #expect(export.status == 70 && export.stderr.contains(why) && !export.stderr.contains("has no video track"), "export: \(export.stderr)")
        let thumbnails = try Graphctl.run(["run", Graphctl.graph("thumbnails.json"), "--quiet", "--set", "thumbs.path=\(bad)",
                                           "--set", "thumbs.folder=\(path("th"))", "--set", "thumbs.sprite=\(path("th/s.jpg"))",
                                           "--set", "thumbs.vtt=\(path("th/s.vtt"))"], limit: Self.limit)
        #expect(thumbnails.status == 66 && thumbnails.stderr.contains(why), "thumbnails: \(thumbnails.stderr)")
    }

    /// A 1 Hz clock spreads the 75 frames over 10 hours while the movie says 3 s: the
    /// thumbnails' one pipeline reaches the end before the second picture's time. A picture
    /// whose seek finds the run ended (or ending at once) starts a new run, as the first did:
    /// ten pictures, exit 0 (it was 64, "only a run started with start(at:) and still playing
    /// can seek", or 66, "has no frame at 1.500 s").
    @Test func thumbnailsOfATrackWhoseFramesLieFarApartAreTaken() throws {
        let bad = try clocked(try movie(), 1)
        let r = try Graphctl.run(["run", Graphctl.graph("thumbnails.json"), "--quiet", "--set", "thumbs.path=\(bad)",
                                  "--set", "thumbs.folder=\(path("th"))", "--set", "thumbs.sprite=\(path("th/s.jpg"))",
                                  "--set", "thumbs.vtt=\(path("th/s.vtt"))"], limit: Self.limit)
        #expect(r.status == 0, "exit \(r.status): \(r.stderr)")
        let pictures = try FileManager.default.contentsOfDirectory(atPath: path("th")).filter { $0.hasSuffix(".jpg") && $0 != "s.jpg" }
        #expect(pictures.count == 10, "\(pictures.sorted())")
    }

    /// Composition offsets of −2³¹ ticks: named as the `ctts` they are (they were called a
    /// damaged edit list, the media's end having gone before its start).
    @Test func compositionOffsetsPastTheTrackAreNamedAsTheCTTS() throws {
        let good = try movie(), bad = path("ctts.mp4")
        try CraftedMP4.edited(good, to: bad) { movie in
            try CraftedMP4.track("vide", of: &movie) { track in
                track.box.modify(["mdia", "minf", "stbl", "ctts"]) { ctts in
                    ctts.body[0] = 1  // version 1: signed offsets
                    let count = ctts.body[4..<8].reduce(0) { $0 << 8 | Int($1) }
                    for i in 0..<count { ctts.body.replaceSubrange((12 + 8 * i)..<(16 + 8 * i), with: [0x80, 0, 0, 0]) }
                }
            }
        }
        let why = "its track 1's composition offsets (ctts) move sample 1 by -2147483648 ticks of 12800 Hz (-167772.16 s), "
            + "more than the track lasts (3 s): the ctts box is damaged"
        for arguments in [["export", bad, path("out.mp4"), "--preset", "passthrough", "--quiet"], ["hls", bad, path("hls"), "--quiet"]] {
            let r = try Graphctl.run(arguments, limit: Self.limit)
            #expect(r.status == 66 && r.stderr.contains(why) && !r.stderr.contains("elst"), "\(arguments[0]): exit \(r.status): \(r.stderr)")
        }
    }
}
