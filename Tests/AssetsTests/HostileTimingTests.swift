import Foundation
import Testing
import GraphKit
import GraphKitTesting
import TestSupport
import MediaContainers

/// Timing a file or a caller claims that nothing can mean (issue 47), in the library that
/// packages, trims and joins MP4s, in process: refused by name, never trapped on (the old code
/// stopped the process converting an edit list's 2^63−1), never looped on for ever.
@Suite(.media, .timeLimit(.minutes(2))) struct HostileTimingTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    func movie(_ edit: ((inout MP4Movie) throws -> Void)? = nil) throws -> (movie: MP4Movie, size: UInt64) {
        let good = folder.appendingPathComponent("good.mp4").path, crafted = folder.appendingPathComponent("crafted.mp4").path
        try CraftedMP4.movie(good)
        try CraftedMP4.edited(good, to: crafted) { try edit?(&$0) }
        let bytes = try #require(FileBytes(path: crafted))
        return (try #require(try MP4File(bytes).movie()), bytes.count)
    }

    /// The next cut is computed, not stepped to: a target of 1e-20 s, which added to 3 s
    /// changes nothing, looped for ever; 1e-9 s, three billion steps.
    @Test func theNextCutIsOneStepWhateverTheTarget() {
        #expect(HLSSegmenter.nextCut(2, after: 5.9, every: 2) == 6)
        #expect(HLSSegmenter.nextCut(2, after: 6, every: 2) == 8)
        #expect(HLSSegmenter.nextCut(8, after: 6, every: 2) == 8)
        #expect(HLSSegmenter.nextCut(.infinity, after: 6, every: .infinity) == .infinity)
        #expect(HLSSegmenter.nextCut(1, after: 6, every: .nan) == .infinity)
        let tiny = HLSSegmenter.nextCut(1e-20, after: 3, every: 1e-20)
        #expect(tiny > 3 + 1e-6 && tiny < 3.0001, "\(tiny)")
        let small = HLSSegmenter.nextCut(1e-9, after: 3, every: 1e-9)
        #expect(small > 3 + 1e-6 && small < 3 + 1e-5, "\(small)")
    }

    /// The plan's loops run over the file's samples: a target of 1e-20 s (allowed to the
    /// library, refused by graphctl) ends at once, a cut at every key frame; and it stops when
    /// asked, within a sample.
    @Test func thePlanIsBoundedByTheSamplesAndStopsWhenAsked() throws {
        let (movie, size) = try movie()
        let plan = try HLSSegmentPlan(movie: movie, fileSize: size, target: 1e-20)
        #expect(plan.segments.count == 3)  // a key frame a second, 3 s
        var asked = 0
        let error = #expect(throws: ContainerError.self) {
            try HLSSegmentPlan(movie: movie, fileSize: size, target: 1) { asked += 1; return asked > 10 }
        }
        #expect(error?.reason == "cancelled" && asked == 11)
    }

    /// An edit list whose media time is 2^63−1 (video or sound): the track reader refuses it,
    /// naming the track and the box; a trim and a join of the file say the same, not trap.
    @Test(arguments: ["vide", "soun"] as [FourCC])
    func anEditListPastTheMediaIsRefused(_ handler: FourCC) throws {
        let (movie, size) = try movie { movie in
            try CraftedMP4.track(handler, of: &movie) { $0.setEdits([MP4Track.Edit(duration: 3000, mediaTime: .max)]) }
        }
        let (index, track) = try #require(movie.tracks(handler: handler).first)
        let error = #expect(throws: ContainerError.self) { try HLSSegmentPlan.Track(reading: track, index: index, movie: movie, fileSize: size) }
        #expect(error?.reason.hasPrefix("its track \(track.trackID)'s edit list (elst) starts its media at 9223372036854775807 ticks of ") == true,
                "\(String(describing: error))")
        #expect(throws: ContainerError.self) { try MP4Trim(movie: movie, fileSize: size, fileType: nil, start: 1, end: 2) }
    }

    /// Empty edits that delay the media past 64 bits of the movie's clock, samples that last
    /// 2^32−1 ticks of a 1 Hz clock each (75 of them: 10,000 years), a range that ends at 1e300
    /// s, an empty piece of 1e300 s: refused by name (a cut's range end is taken as past every
    /// sample), never converted past what 64 bits hold.
    @Test func timesPastWhat64BitsHoldAreRefusedOrSaturate() throws {
        let delayed = try movie { movie in
            try CraftedMP4.track("vide", of: &movie) { $0.setEdits([MP4Track.Edit(duration: .max, mediaTime: -1), MP4Track.Edit(duration: 3000, mediaTime: 0)]) }
        }
        let late = #expect(throws: ContainerError.self) { try HLSSegmentPlan(movie: delayed.movie, fileSize: delayed.size, target: 6) }
        #expect(late?.reason.contains("delays its media by 18446744073709551615 ticks") == true, "\(String(describing: late))")

        let slow = try movie { movie in
            try CraftedMP4.track("vide", of: &movie) { track in
                track.box.update(["mdia", "mdhd"], as: MediaHeader.self) { $0.timescale = 1 }
                track.box.update(["mdia", "minf", "stbl", "stts"], as: TimeToSample.self) { stts in
                    stts.entries = [.init(count: UInt32(stts.entries.reduce(0) { $0 + Int($1.count) }), delta: .max)]
                }
            }
        }
        let long = #expect(throws: ContainerError.self) { try HLSSegmentPlan(movie: slow.movie, fileSize: slow.size, target: 6) }
        #expect(long?.reason.contains("samples last") == true && long?.reason.contains("its timing is damaged") == true, "\(String(describing: long))")

        let (movie, size) = try movie()
        let trim = #expect(throws: ContainerError.self) { try MP4Trim(movie: movie, fileSize: size, fileType: nil, start: 1, end: 1e300) }
        #expect(trim?.reason.hasPrefix("track 1's piece 1 lasts 1e+300 s") == true, "\(String(describing: trim))")
        let track = try HLSSegmentPlan(movie: movie, fileSize: size, target: 6).tracks[0]
        #expect(track.ticks(1e300) == .max && track.ticks(-1e300) == .min && track.ticks(1) == 12_800)
        let source = MP4Join.Source(name: "good", movie: movie, fileSize: size)
        let empty = #expect(throws: ContainerError.self) {
            try MP4Join(sources: [source], tracks: [MP4Join.Track(handler: "vide", parts: [.empty(seconds: 1e300), .media(source: 0, indexInType: 0, start: 0, end: 1)])],
                        fileType: nil)
        }
        #expect(empty?.reason.hasPrefix("track 1's piece 1 lasts 1e+300 s, more than a track's timeline may") == true, "\(String(describing: empty))")
    }

    /// An index that runs "to the end" of its file (moov's size 0, lawful as the last box), ending
    /// in bytes too few for a box: a trim
    /// or a join that puts the index first writes its size out, so it does not swallow the media
    /// after it (fuzz-join's finding: the new file did not read back).
    @Test func anIndexToTheEndIsWrittenWithItsSizeWhenItGoesFirst() throws {
        let good = folder.appendingPathComponent("good.mp4").path
        try CraftedMP4.movie(good)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let moov = try #require(try MP4File(MemoryBytes(bytes)).first("moov"))
        #expect(moov.offset + moov.size == UInt64(bytes.count))
        bytes.replaceSubrange(Int(moov.offset)..<Int(moov.offset) + 4, with: [0, 0, 0, 0])
        bytes += [0, 0x0A, 0, 0]  // after its last box, too few for one (as fuzz-join found them)
        let source = MemoryBytes(bytes)
        let movie = try #require(try MP4File(source).movie())
        func readsBack(_ header: [UInt8], _ copies: [(offset: UInt64, count: Int)], _ trailer: [UInt8]) throws {
            var out = header
            for c in copies { out += bytes[Int(c.offset)..<Int(c.offset) + c.count] }
            out += trailer
            let written = MemoryBytes(out)
            let read = try #require(try MP4File(written).movie())
            for i in read.trackIndices { #expect(try !read.track(i).samples(fileSize: written.count).isEmpty) }
        }
        let trim = try MP4Trim(movie: movie, fileSize: source.count, fileType: nil, start: 0.5, end: 2, indexFirst: true)
        try readsBack(trim.header, trim.copies.map { ($0.offset, $0.count) }, trim.trailer)
        let sources = [MP4Join.Source(name: "a", movie: movie, fileSize: source.count)]
        let join = try MP4Join(sources: sources, tracks: [MP4Join.Track(handler: "vide", parts: [.media(source: 0, indexInType: 0, start: 0, end: 1),
                                                                                                 .media(source: 0, indexInType: 0, start: 2, end: 3)])],
                               fileType: nil, indexFirst: true)
        try readsBack(join.header, join.copies.map { ($0.offset, $0.count) }, join.trailer)
    }
}
