import Assets
import Foundation
import GraphKit
import GraphKitTesting
import TestSupport
import Testing

/// The RFC 8216 validator the HLS tests lean on (TestSupport's HLSPlaylistCheck and
/// HLSMultivariantCheck), shown to catch each rule it checks: real segments (HLSPackager's, of a
/// movie ffmpeg makes) under playlists written by hand, each breaking one rule, must each be
/// reported, and the unbroken ones pass.
@Suite(.media, .timeLimit(.minutes(10))) struct HLSPlaylistCheckTests {
    let folder: URL
    /// Six segments of 1 s (320x240 H.264, a key frame every second, and AAC) in hls/.
    init() throws {
        folder = try TestMedia.temporaryFolder()
        let source = folder.appendingPathComponent("in.mp4").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=320x240:r=25:d=6", "-f", "lavfi", "-i",
                                         "sine=sample_rate=48000:d=6", "-c:v", "libx264", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0",
                                         "-c:a", "aac", source])
        _ = try HLSPackager(source: source, folder: path("hls"), segmentDuration: 1).package()
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A media playlist of `segments` (numbers) in hls/, with `header` lines after #EXTM3U.
    func media(_ segments: [Int], header: [String] = ["#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:1"], map: Bool = true,
               durations: [Int: String] = [:], before: [Int: String] = [:], end: Bool = true) -> String {
        var lines = ["#EXTM3U"] + header + (map ? ["#EXT-X-MAP:URI=\"init.mp4\""] : [])
        for n in segments {
            if let tag = before[n] { lines.append(tag) }
            lines += ["#EXTINF:\(durations[n] ?? "1.000000"),", "segment\(n).m4s"]
        }
        if end { lines.append("#EXT-X-ENDLIST") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Where the segments are: the package's generation folder (issue 47), which the
    /// hand-written media playlists below stand in.
    var segments: String { path("hls/" + (HLSPackageFiles.generations(path("hls")).first ?? "")) }

    func problems(_ text: String) -> [String] { HLSPlaylistCheck(text: text, folder: segments).problems }

    /// `expected` is among the problems found (as a part of one of them).
    func expectProblem(_ found: [String], _ expected: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(found.contains { $0.contains(expected) }, "\(expected) not in \(found)", sourceLocation: sourceLocation)
    }

    @Test func aMediaPlaylistsBrokenRulesAreEachFound() throws {
        #expect(problems(media(Array(0..<6))) == [])
        #expect(try HLSPlaylistCheck(path: path("hls/playlist.m3u8")).problems == [])
        expectProblem(problems("#EXT-X-VERSION:7\n"), "the first line is not #EXTM3U")
        expectProblem(problems(media([0, 1], durations: [1: "1.600000"])), "rounds past the target duration 1")
        expectProblem(problems(media([0, 1], header: ["#EXT-X-VERSION:7"])), "no EXT-X-TARGETDURATION")
        expectProblem(problems(media([0, 1], map: false)), "no EXT-X-MAP")
        expectProblem(problems(media([0, 1], header: ["#EXT-X-VERSION:5", "#EXT-X-TARGETDURATION:1"])), "needs version 6 or more")
        expectProblem(problems(media([0, 1], header: ["#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:1", "#EXT-X-PLAYLIST-TYPE:VOD"], end: false)),
                      "a VOD playlist without EXT-X-ENDLIST")
        expectProblem(problems(media([0, 1], durations: [1: "one"])), "not a duration followed by a comma")
        expectProblem(problems(media([0, 1]).replacingOccurrences(of: "#EXTINF:1.000000,\nsegment1", with: "segment1")), "has no EXTINF before it")
        expectProblem(problems(media([0, 9])), "segment9.m4s is listed and missing")
        expectProblem(problems(media([0, 1], header: ["#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:1", "#EXT-X-TARGETDURATION:1"])), "appears 2 times")
        expectProblem(problems(media([0, 1], before: [1: "#EXT-X-MEDIA-SEQUENCE:3"])), "EXT-X-MEDIA-SEQUENCE comes after the first segment")
        expectProblem(problems(media([0, 1], before: [1: "#EXT-X-DISCONTINUITY-SEQUENCE:1"])), "EXT-X-DISCONTINUITY-SEQUENCE comes after the first segment")
        // Media time must run on from segment to segment, or a discontinuity be marked.
        expectProblem(problems(media([0, 2])), "segment2.m4s's track 1 starts at 25600, not where segment0.m4s's ends (12800)")
        expectProblem(problems(media([1, 0])), "and no EXT-X-DISCONTINUITY says so")
        #expect(problems(media([0, 2], before: [2: "#EXT-X-DISCONTINUITY"])) == [])
        expectProblem(problems(media([0, 1]).replacingOccurrences(of: "#EXT-X-ENDLIST", with: "#EXT-X-DISCONTINUITY")), "EXT-X-DISCONTINUITY with no segment after it")
    }

    /// Successive reads of a live or event playlist (6.2.1, 6.2.2).
    @Test func aReloadsBrokenRulesAreEachFound() {
        func reload(_ a: String, _ b: String) -> [String] {
            HLSPlaylistCheck(text: b, folder: segments).reloaded(from: HLSPlaylistCheck(text: a, folder: segments))
        }
        let live = ["#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:1"]
        func at(_ sequence: Int, _ extra: [String] = []) -> [String] { live + ["#EXT-X-MEDIA-SEQUENCE:\(sequence)"] + extra }
        // Sound: a segment appended; one dropped from the start with the sequence moving on; the end.
        #expect(reload(media([0, 1, 2], header: at(0), end: false), media([0, 1, 2, 3], header: at(0), end: false)) == [])
        #expect(reload(media([0, 1, 2, 3], header: at(0), end: false), media([1, 2, 3, 4], header: at(1), end: false)) == [])
        #expect(reload(media([1, 2, 3, 4], header: at(1), end: false), media([1, 2, 3, 4], header: at(1))) == [])
        expectProblem(reload(media([0, 1, 2], header: at(0), end: false), media([0, 1, 2, 3], header: ["#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:2"], end: false)),
                      "EXT-X-TARGETDURATION changed from 1 to 2")
        expectProblem(reload(media([1, 2, 3], header: at(1), end: false), media([0, 1, 2, 3], header: at(0), end: false)), "EXT-X-MEDIA-SEQUENCE went back from 1 to 0")
        // A segment dropped without the sequence moving on: the list no longer lines up.
        expectProblem(reload(media([0, 1, 2, 3], header: at(0), end: false), media([1, 2, 3, 4], header: at(0), end: false)), "segments still listed changed")
        // A segment dropped from the end.
        expectProblem(reload(media([0, 1, 2, 3], header: at(0), end: false), media([0, 1, 2], header: at(0), end: false)), "segments still listed changed")
        // A duration changed while listed.
        expectProblem(reload(media([0, 1, 2], header: at(0), end: false), media([0, 1, 2], header: at(0), durations: [1: "0.900000"], end: false)),
                      "segments still listed changed")
        // A discontinuity leaves without the discontinuity sequence counting it, and with it.
        let withBreak = media([0, 2, 3, 4], header: at(0), before: [2: "#EXT-X-DISCONTINUITY"], end: false)
        #expect(reload(withBreak, media([2, 3, 4, 5], header: at(1), before: [2: "#EXT-X-DISCONTINUITY"], end: false)) == [])
        expectProblem(reload(withBreak, media([3, 4, 5], header: at(2), end: false)), "EXT-X-DISCONTINUITY-SEQUENCE is 0, not 0 + the 1 discontinuities that left")
        #expect(reload(withBreak, media([3, 4, 5], header: at(2, ["#EXT-X-DISCONTINUITY-SEQUENCE:1"]), end: false)) == [])
        // An event playlist only grows; an ended one never changes; a live one keeps 3 target durations.
        let event = ["#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:1", "#EXT-X-PLAYLIST-TYPE:EVENT"]
        expectProblem(reload(media([0, 1, 2], header: event + ["#EXT-X-MEDIA-SEQUENCE:0"], end: false), media([1, 2, 3], header: event + ["#EXT-X-MEDIA-SEQUENCE:1"], end: false)),
                      "an EVENT playlist dropped 1 segments")
        expectProblem(reload(media([0, 1, 2], header: at(0)), media([0, 1, 2, 3], header: at(0))), "the playlist changed after EXT-X-ENDLIST")
        expectProblem(reload(media([0, 1, 2], header: at(0), end: false), media([1, 2], header: at(1), end: false)), "less than three target durations")
        expectProblem(reload(media([0, 1], header: at(0), end: false), media([0, 1], header: at(0), map: false, end: false)), "EXT-X-MAP changed")
    }

    /// The multivariant playlist's rules, around the packaged media playlist (whose peak segment
    /// bit rate and codecs the check measures itself).
    @Test func aMultivariantPlaylistsBrokenRulesAreEachFound() throws {
        let facts = try HLSPlaylistCheck(path: path("hls/playlist.m3u8"))
        let sizes = try facts.segments.map { s in (bytes: try FileManager.default.attributesOfItem(atPath: path("hls/" + s.uri))[.size] as! Int, duration: s.duration) }
        let peak = Int(hlsPeakBitRate(sizes, target: 1).rounded(.up))
        let average = Int((Double(sizes.map(\.bytes).reduce(0, +) * 8) / 6).rounded())
        // The codecs as the initialization segment has them (ffprobe's profile: High, level 1.3).
        let good = "BANDWIDTH=\(peak),AVERAGE-BANDWIDTH=\(average),CODECS=\"avc1.64000d,mp4a.40.2\",RESOLUTION=320x240"
        func check(_ lines: [String]) throws -> [String] {
            let file = path("master.m3u8")
            try (["#EXTM3U", "#EXT-X-VERSION:7"] + lines).joined(separator: "\n").appending("\n").write(toFile: file, atomically: true, encoding: .utf8)
            return try HLSMultivariantCheck(path: file).problems
        }
        #expect(try check(["#EXT-X-STREAM-INF:" + good, "hls/playlist.m3u8"]) == [])
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good.replacingOccurrences(of: "BANDWIDTH=\(peak),", with: "BANDWIDTH=\(peak / 2),"), "hls/playlist.m3u8"]),
                      "is below the peak segment bit rate measured")
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good.replacingOccurrences(of: "BANDWIDTH=\(peak),", with: "BANDWIDTH=\(peak * 2),"), "hls/playlist.m3u8"]),
                      "is more than 10% over the peak segment bit rate measured")
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good.replacingOccurrences(of: "AVERAGE-BANDWIDTH=\(average)", with: "AVERAGE-BANDWIDTH=\(average * 3)"),
                                 "hls/playlist.m3u8"]), "is not within 10% of the average segment bit rate measured")
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good.replacingOccurrences(of: "BANDWIDTH=\(peak),AVERAGE", with: "AVERAGE"), "hls/playlist.m3u8"]),
                      "no decimal BANDWIDTH")
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good.replacingOccurrences(of: "avc1.64000d", with: "avc1.42e01e"), "hls/playlist.m3u8"]),
                      "is not what its segments hold, avc1.64000d,mp4a.40.2")
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good.replacingOccurrences(of: "320x240", with: "640x480"), "hls/playlist.m3u8"]),
                      "RESOLUTION 640x480 is not its video's 320x240")
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good, "hls/missing.m3u8"]), "hls/missing.m3u8 is listed and missing")
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good]), "an EXT-X-STREAM-INF without a URI after it")
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good + ",AUDIO=\"sound\"", "hls/playlist.m3u8"]), "AUDIO=\"sound\" names no EXT-X-MEDIA TYPE=AUDIO group")
        expectProblem(try check(["#EXT-X-STREAM-INF:" + good + ",CODECS=\"x\"", "hls/playlist.m3u8"]), "attribute CODECS appears twice")
        // EXT-X-MEDIA: required attributes, defaults, names; a media playlist tag out of place.
        let rendition = "TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"1\",URI=\"hls/playlist.m3u8\""
        let variant = ["#EXT-X-STREAM-INF:" + good + ",AUDIO=\"a\"", "hls/playlist.m3u8"]
        expectProblem(try check(["#EXT-X-MEDIA:" + rendition.replacingOccurrences(of: "NAME=\"en\",", with: "")] + variant), "EXT-X-MEDIA without NAME")
        expectProblem(try check(["#EXT-X-MEDIA:" + rendition.replacingOccurrences(of: "AUTOSELECT=YES", with: "AUTOSELECT=NO")] + variant),
                      "is DEFAULT=YES but not AUTOSELECT=YES")
        expectProblem(try check(["#EXT-X-MEDIA:" + rendition, "#EXT-X-MEDIA:" + rendition] + variant), "have one NAME")
        expectProblem(try check(["#EXT-X-MEDIA:" + rendition, "#EXT-X-MEDIA:" + rendition.replacingOccurrences(of: "\"en\"", with: "\"fr\"")] + variant),
                      "has more than one DEFAULT=YES")
        expectProblem(try check(["#EXT-X-MEDIA:" + rendition.replacingOccurrences(of: "hls/playlist", with: "hls/gone")] + variant), "hls/gone.m3u8 is listed and missing")
        expectProblem(try check(["#EXT-X-MEDIA:" + rendition.replacingOccurrences(of: ",CHANNELS=\"1\"", with: "")] + variant), "without CHANNELS")
        expectProblem(try check(["#EXT-X-TARGETDURATION:1", "#EXT-X-STREAM-INF:" + good, "hls/playlist.m3u8"]), "a media playlist tag in a multivariant playlist")
        // An audio group's rendition counts in the variant's BANDWIDTH and CODECS: the same
        // playlist (video and sound) as the group's member doubles the peak.
        expectProblem(try check(["#EXT-X-MEDIA:" + rendition] + variant), "is below the peak segment bit rate measured")
    }
}
