import Foundation
import GraphKitTesting
import MediaContainers
import TestSupport
import Testing

/// Edit lists bounded (issue 73, class 6): 10,000 edits of 1 s at media time 0 turned a 606 KB
/// file into a 361 MB remux of 10,000 s, and 100,000 kept a remux busy past 120 s. A track's
/// list may hold 1,000 edits and show its media 8 times over (and a second); past either, every
/// command refuses the file (66), naming it, the track and the edit list, within seconds.
@Suite(.media, .timeLimit(.minutes(5))) struct HostileEditListTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static let limit: Duration = .seconds(60)

    /// `count` edits of `seconds` each, every one from media time 0, on `handler`'s track of
    /// `good` (3 s of media), at `name`.
    func repeated(_ good: String, _ handler: FourCC, count: Int, seconds: Double, name: String) throws -> String {
        let bad = path(name)
        var movieScale = 1000
        try CraftedMP4.edited(good, to: bad) { movie in
            movieScale = movie.timescale
            try CraftedMP4.track(handler, of: &movie) { track in
                let edit = MP4Track.Edit(duration: UInt64((seconds * Double(movieScale)).rounded()), mediaTime: 0)
                track.setEdits(Array(repeating: edit, count: count))
            }
        }
        return bad
    }

    /// Every way a file is read, each refusing `bad` by name with `why` (66), leaving no output.
    func expectRefused(_ bad: String, _ why: String, _ what: String) throws {
        let runs: [(String, Graphctl.Result)] = [
            ("probe", try Graphctl.run(["probe", bad], limit: Self.limit)),
            ("remux", try Graphctl.run(["run", Graphctl.graph("remux.json"), "--quiet", "--set", "src.path=\(bad)", "--set", "file.path=\(path("remuxed.mp4"))"], limit: Self.limit)),
            ("export", try Graphctl.run(["export", bad, path("out.mp4"), "--preset", "passthrough", "--quiet"], limit: Self.limit)),
            ("hls", try Graphctl.run(["hls", bad, path("hls"), "--quiet"], limit: Self.limit)),
        ]
        for (command, r) in runs {
            // A graph's source refuses as a run that fails (70), as for every claim it refuses.
            #expect(r.status == 66 || (command == "remux" && r.status == 70), "\(what), \(command): exit \(r.status): \(r.stderr)")
            #expect(r.stderr.contains(bad) && r.stderr.contains(why), "\(what), \(command): \(r.stderr)")
        }
        for output in ["remuxed.mp4", "out.mp4", "hls"] { #expect(!FileManager.default.fileExists(atPath: path(output)), "\(what): \(output)") }
    }

    @Test(arguments: ["vide", "soun"] as [FourCC]) func tooManyEditsOrShowingsAreRefusedByName(_ handler: FourCC) throws {
        let good = path("good.mp4")
        try CraftedMP4.movie(good)
        let many = try repeated(good, handler, count: 10_000, seconds: 0.001, name: "many-\(handler).mp4")
        try expectRefused(many, "edit list (elst) holds 10000 edits, more than the 1000 GraphKit reads", "\(handler), 10,000 edits")
        let looped = try repeated(good, handler, count: 1_000, seconds: 1, name: "looped-\(handler).mp4")
        // The video's 3 s; the sound's 3.023 s (AAC's last packet whole).
        let media = handler == "vide" ? "3 s of media 333" : "3.023 s of media 330"
        try expectRefused(looped, "edit list (elst) shows its \(media) times over in 1000 edits, more than the 8 GraphKit plays",
                          "\(handler), 1,000 edits of 1 s")
    }

    /// At the bound: the video's whole 3 s shown 8 times over is a real loop, and plays 24 s.
    @Test func aLoopWithinTheBoundPlays() throws {
        let good = path("good.mp4")
        try CraftedMP4.movie(good)
        let loop = try repeated(good, "vide", count: 8, seconds: 3, name: "loop.mp4")
        let probe = try Graphctl.run(["probe", loop, "--json"], limit: Self.limit)
        #expect(probe.status == 0, "\(probe.stderr)")
        let remux = try Graphctl.run(["run", Graphctl.graph("remux.json"), "--quiet", "--set", "src.path=\(loop)", "--set", "file.path=\(path("remuxed.mp4"))"],
                                     limit: Self.limit)
        #expect(remux.status == 0, "\(remux.stderr)")
        #expect(abs(try MediaProbe(path("remuxed.mp4")).duration - 24) < 0.1)
    }
}
