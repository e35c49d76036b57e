import Foundation
import Testing
import GraphKitTesting
import MediaContainers
import TestSupport

/// Claims an attacker's file makes on memory, stack and time (issue 47), through graphctl as a
/// user runs it, each run under `/usr/bin/time` for its peak memory: sample tables claiming
/// millions of samples, boxes nested 100,000 deep, 200,000 metadata items, frames of 37786².
/// Each is refused by name before anything allocates on its word (probe, hls, export, concat
/// and the thumbnails graph), within its time limit, and no run's peak RSS passes 1 GiB (what
/// the Kubernetes Job is given).
@Suite(.media, .timeLimit(.minutes(10))) struct HostileClaimsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }
    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    static let limit: Duration = .seconds(60)
    /// The most memory any run may take, in bytes.
    static let memoryLimit = 1 << 30

    /// graphctl run under `/usr/bin/time`, and its peak resident memory in bytes.
    func measured(_ arguments: [String], limit: Duration = Self.limit) throws -> (result: Graphctl.Result, peak: Int) {
        let report = path("rss-\(UUID().uuidString)")
        let result = try RunningGraphctl(["-f", "%M", "-o", report, Graphctl.executable.path] + arguments,
                                         executable: URL(fileURLWithPath: "/usr/bin/time")).wait(limit: limit)
        // The last line (a first one says "Command exited with non-zero status 66").
        let text = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        let kilobytes = text.split(separator: "\n").last.flatMap { Int($0) }
        #expect(kilobytes != nil, "no peak from /usr/bin/time for \(arguments): \(text.debugDescription)")
        return (result, (kilobytes ?? Int.max / 1024) * 1024)
    }

    /// Every command that reads `bad`, measured: probe, hls, export (passthrough and re-encoded),
    /// concat, and the thumbnails graph.
    func everyCommand(on bad: String, limit: Duration = Self.limit) throws -> [(name: String, result: Graphctl.Result, peak: Int)] {
        let good = path("good.mp4")
        if !FileManager.default.fileExists(atPath: good) { try CraftedMP4.movie(good) }
        let commands: [(String, [String])] = [
            ("probe", ["probe", bad]),
            ("hls", ["hls", bad, path("hls"), "--quiet"]),
            ("export", ["export", bad, path("out.mp4"), "--preset", "passthrough", "--quiet"]),
            ("export 640x480", ["export", bad, path("out.mp4"), "--preset", "640x480", "--quiet"]),
            ("concat", ["run", Graphctl.graph("concat.json"), "--quiet", "--set", "file.path=\(path("joined.mp4"))",
                        "--set", #"join.pieces=[{"path": "\#(good)"}, {"path": "\#(bad)", "inpoint": 1}]"#]),
            ("thumbnails", ["run", Graphctl.graph("thumbnails.json"), "--quiet", "--set", "thumbs.path=\(bad)", "--set", "thumbs.folder=\(path("th"))",
                            "--set", "thumbs.sprite=\(path("th/s.jpg"))", "--set", "thumbs.vtt=\(path("th/s.vtt"))"]),
        ]
        return try commands.map { name, arguments in
            let started = ContinuousClock.now
            let (result, peak) = try measured(arguments, limit: limit)
            print("\(name) on \((bad as NSString).lastPathComponent): exit \(result.status), \(peak >> 20) MiB, \(ContinuousClock.now - started)")
            for output in ["hls", "out.mp4", "joined.mp4", "th"] { try? FileManager.default.removeItem(atPath: path(output)) }
            return (name, result, peak)
        }
    }

    /// Memory: a 20 MB MP4 whose tracks each claim 20 million samples of one byte (a 12-byte
    /// `stsz`, one `stts` run, one chunk) took 1.6–4.9 GB in export, hls and concat. The claims
    /// are weighed against the file before a list of samples is made: refused, naming the file,
    /// the track and its stsz box; every command's peak stays far below 1 GiB.
    @Test(arguments: [
        ("20M each", 20_000_000 as UInt32, 1 as UInt32, ["vide", "soun"] as [FourCC], "bytes of samples, more than the file's"),
        ("9M each, listed", 9_000_000, 0, ["vide", "soun"], "makes 18000000, more than the 10000000 GraphKit reads from one file"),
        ("bytes", 3_000_000, 4, ["vide", "soun"], "bytes of samples, more than the file's"),
        ("more than the file", 4_000_000_000, 1, ["soun"], "more than the file's"),
    ])
    func sampleCountsTheFileCannotHoldAreRefusedBeforeAllocation(_ name: String, _ count: UInt32, _ size: UInt32, _ handlers: [FourCC], _ why: String) throws {
        let bad = path("claims.mp4")
        try Self.claiming(count, of: size, in: handlers, from: path("good.mp4"), to: bad)
        for (command, r, peak) in try everyCommand(on: bad) {
            #expect([66, 70].contains(r.status), "\(name), \(command): exit \(r.status): \(r.stderr)")
            #expect(r.stderr.contains(bad) && r.stderr.contains("stsz box claims") && r.stderr.contains(why), "\(name), \(command): \(r.stderr)")
            #expect(peak < Self.memoryLimit / 4, "\(name), \(command): \(peak >> 20) MiB")
        }
    }

    /// Stack: 100,000 nested `udta`, `meta` or `trak` boxes in the index overflowed the stack
    /// of GStreamer 1.22's qtdemux (probe, export and thumbnails crashed). GraphKit's walk
    /// refuses nesting past ``ContainerLimits/depth`` before any GStreamer element sees the
    /// file: probe and thumbnails 66, a re-encoding export 66 or 70, naming the file and the
    /// box. hls, a passthrough export and concat, which read the file with GraphKit's own
    /// reader alone, refuse it too (66): a passthrough export copied the nesting into its output.
    @Test(arguments: ["udta", "meta", "trak"] as [FourCC])
    func boxesNestedDeeperThanTheLimitAreRefusedBeforeGStreamer(_ type: FourCC) throws {
        let good = path("good.mp4"), bad = path("nested-\(type).mp4")
        try CraftedMP4.movie(good)
        try CraftedMP4.edited(good, to: bad) { movie in
            movie.moov.children.append(MP4Box(type: type, body: CraftedMP4.nested(type, levels: 100_000)))
        }
        let claim = "box at byte"
        let deep = "holds boxes nested more than \(ContainerLimits.depth) deep"
        let started = ContinuousClock.now
        for (command, r, peak) in try everyCommand(on: bad) {
            #expect([66, 70].contains(r.status) && r.stderr.contains(bad) && r.stderr.contains(claim) && r.stderr.contains(deep),
                    "\(type), \(command): exit \(r.status): \(r.stderr)")
            #expect(peak < Self.memoryLimit / 4, "\(type), \(command): \(peak >> 20) MiB")
        }
        #expect(ContinuousClock.now - started < .seconds(120))
    }

    /// Time: 200,000 iTunes items in one `ilst` kept probe busy for minutes. More than
    /// ``ContainerLimits/children`` boxes in one box, or ``ContainerLimits/items`` items in all
    /// (here 20 `udta` of 1,000), are refused (66) within seconds; 9,000 items are read.
    @Test func twoHundredThousandMetadataItemsAreRefusedWithinSeconds() throws {
        let good = path("good.mp4")
        try CraftedMP4.movie(good)
        let cases: [(name: String, lists: Int, items: Int, why: String?)] = [
            ("one.mp4", 1, 200_000, "its ilst box at byte"),
            ("many.mp4", 20, 1_000, "brings its metadata items to more than \(ContainerLimits.items)"),
            ("within.mp4", 1, 9_000, nil),
        ]
        for (name, lists, count, why) in cases {
            let bad = path(name)
            try CraftedMP4.edited(good, to: bad) { movie in
                for _ in 0..<lists { movie.moov.children.append(Self.udta(items: count)) }
            }
            for command in [["probe", bad], ["probe", "--json", bad]] {
                let started = ContinuousClock.now
                let (r, peak) = try measured(command, limit: .seconds(30))
                if let why {
                    #expect(r.status == 66, "\(name): \(r.stderr)")
                    #expect(r.stderr.contains("cannot read \"\(bad)\": its ilst box at byte") && r.stderr.contains(why), "\(name): \(r.stderr)")
                } else {
                    #expect(r.status == 0, "\(name): \(r.stderr)")
                }
                #expect(ContinuousClock.now - started < .seconds(10), "\(name)")
                #expect(peak < Self.memoryLimit / 4, "\(name): \(peak >> 20) MiB")
            }
        }
    }

    /// A `udta` holding an iTunes `meta` whose `ilst` has `count` title items.
    static func udta(items count: Int) -> MP4Box {
        let item: [UInt8] = [0, 0, 0, 25, 0xA9, 0x6E, 0x61, 0x6D, 0, 0, 0, 17] + Array("data".utf8) + [0, 0, 0, 1, 0, 0, 0, 0] + Array("x".utf8)
        let hdlr = MP4Box(type: "hdlr", body: [UInt8](repeating: 0, count: 8) + Array("mdir".utf8) + [UInt8](repeating: 0, count: 13))
        let ilst = MP4Box(type: "ilst", body: [UInt8]((0..<count).lazy.flatMap { _ in item }))
        return MP4Box(type: "udta", children: [MP4Box(type: "meta", leading: [0, 0, 0, 0], children: [hdlr, ilst])])
    }

    /// Memory: a few-KB MJPEG MOV whose sample entry claims frames of 37786×37786 took 4.2 GB
    /// in probe and 5 GB in thumbnails. FrameSizeLimit, checked with the other claims before
    /// GStreamer sees the file, refuses it (66, naming the claim); every command stays small.
    @Test func aFrameClaimOf37786SquaredTakesNoMemory() throws {
        let good = path("good.mov"), bad = path("huge.mov"), side = 37786
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2", "-c:v", "mjpeg", good])
        try Self.claimingSize(good, to: bad, width: side, height: side)
        let claim = "claims frames of 37786x37786 (1427781796 pixels), which exceeds the limit of 16384x16384"
        for (command, r, peak) in try everyCommand(on: bad) {
            #expect(r.status < 128, "\(command): killed: \(r.stderr)")
            if ["probe", "thumbnails", "export 640x480"].contains(command) {
                #expect([66, 70].contains(r.status) && r.stderr.contains(bad) && r.stderr.contains(claim), "\(command): exit \(r.status): \(r.stderr)")
            }
            #expect(peak < Self.memoryLimit / 4, "\(command): \(peak >> 20) MiB")
        }
    }

    /// `good`'s copy at `bad`, 20 MB, whose `handlers` tracks each claim `count` samples of
    /// `size` bytes in one chunk at the start of the file.
    static func claiming(_ count: UInt32, of size: UInt32, in handlers: [FourCC], from good: String, to bad: String) throws {
        if !FileManager.default.fileExists(atPath: good) { try CraftedMP4.movie(good) }
        try CraftedMP4.edited(good, to: bad, padding: 20_000_000) { movie in
            for handler in handlers {
                try CraftedMP4.track(handler, of: &movie) { track in
                    track.box.modify(["mdia", "minf", "stbl"]) { stbl in
                        func box(_ type: FourCC, _ words: [UInt32]) -> MP4Box {
                            MP4Box(type: type, body: words.flatMap { w in [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: w >> UInt32($0)) } })
                        }
                        stbl.children.removeAll { ["stsz", "stts", "stsc", "stco", "co64", "ctts"].contains($0.type) }
                        stbl.children += [box("stts", [0, 1, count, 1]), box("stsc", [0, 1, 1, count, 1]),
                                          box("stsz", [0, size, count]), box("stco", [0, 1, 0])]
                    }
                }
            }
        }
    }
}
