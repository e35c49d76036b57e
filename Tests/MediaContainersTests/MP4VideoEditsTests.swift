import Foundation
import GraphKitTesting
@testable import MediaContainers
import Testing
import TestSupport

/// MP4VideoEdits: which video edit lists decode applies itself (several edits following each
/// other in the media), and the index it gives the demuxer: the edit list gone, the headers
/// reaching the last frame, not a byte more or less.
@Suite(.media) struct MP4VideoEditsTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// CraftedMP4's movie (3 s of 25 fps video, a 12,800-tick clock, a 1,000-tick movie clock)
    /// with `edits` (movie ticks, media ticks) on its video track; its index's bytes and the track.
    func movie(_ edits: [(UInt64, Int64)]) throws -> (moov: [UInt8], track: MP4Track, movieScale: Int) {
        let good = folder.appendingPathComponent("good.mp4").path, edited = folder.appendingPathComponent("edited.mp4").path
        if !FileManager.default.fileExists(atPath: good) { try CraftedMP4.movie(good) }
        try CraftedMP4.edited(good, to: edited) { movie in
            try CraftedMP4.track("vide", of: &movie) { $0.setEdits(edits.map { MP4Track.Edit(duration: $0.0, mediaTime: $0.1) }) }
        }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: edited)))
        let extent = try #require(try MP4File(MemoryBytes(bytes)).first("moov"))
        let moov = Array(bytes[Int(extent.offset)...])
        let movie = try MP4Movie(parsing: moov[...])
        return (moov, try #require(movie.tracks(handler: "vide").first?.track), movie.timescale)
    }

    @Test func editsFollowingEachOtherAreTakenAndTheIndexKeepsItsSize() throws {
        // An empty edit of 0.1 s, then media 0.2-1.0 s, then 1.5-2.5 s.
        var (moov, track, scale) = try movie([(100, -1), (800, 2_560), (1_000, 19_200)])
        #expect(scale == 1_000 && track.mediaTimescale == 12_800)
        let expected = MP4VideoEdits(edits: [.init(start: 2_560, end: 12_800, at: 1_280), .init(start: 19_200, end: 32_000, at: 11_520)], timescale: 12_800)
        #expect(MP4VideoEdits.edits(of: track, movieTimescale: scale) == expected)
        #expect(expected.text == "2560:12800:1280,19200:32000:11520")
        let size = moov.count
        #expect(MP4VideoEdits.take(from: &moov) == expected)
        #expect(moov.count == size)
        let after = try MP4Movie(parsing: moov[...])
        let video = try #require(after.tracks(handler: "vide").first?.track)
        #expect(video.edits == nil)
        // The headers reach the media's end (3 s), so that the demuxer ends no frame early.
        #expect(video.box.find(["mdia", "mdhd"])?.read(MediaHeader.self)?.duration ?? 0 >= 38_400)
        #expect(video.box.find(["tkhd"])?.read(TrackHeader.self)?.duration ?? 0 >= 3_000)
        #expect(after.moov.find(["mvhd"])?.read(MovieHeader.self)?.duration ?? 0 >= 3_000)
        // The sound's edit list is not touched.
        let original = try MP4Movie(parsing: try movie([(800, 2_560), (1_000, 19_200)]).moov[...])
        #expect(after.tracks(handler: "soun").first?.track.edits == original.tracks(handler: "soun").first?.track.edits)
    }

    @Test func listsTheDemuxerShowsRightOrThatCannotBeAppliedInOrderAreLeft() throws {
        let lists: [[(UInt64, Int64)]] = [
            [(1_000, 1_024)],  // one edit: the demuxer's own
            [(100, -1), (1_000, 1_024)],  // a delay and one edit
            [(1_000, 19_200), (500, 2_560)],  // back in the media
            [(1_000, 2_560), (500, 12_800)],  // overlapping
            [(1_000, 2_560), (0, 19_200)],  // a last edit of no length
        ]
        for list in lists {
            var (moov, track, scale) = try movie(list)
            #expect(MP4VideoEdits.edits(of: track, movieTimescale: scale) == nil, "\(list)")
            let before = moov
            #expect(MP4VideoEdits.take(from: &moov) == nil && moov == before, "\(list)")
        }
        // Claims past 2^62 ticks overflow nothing and are left to the demuxer too.
        let (_, huge, scale) = try movie([(UInt64(1) << 62, 0), (1_000, Int64.max - 5)])
        #expect(MP4VideoEdits.edits(of: huge, movieTimescale: scale) == nil)
    }
}
