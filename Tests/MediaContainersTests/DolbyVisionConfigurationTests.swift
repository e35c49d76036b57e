import Foundation
import Glibc
import Testing
import GraphKitTesting
@testable import MediaContainers
import TestSupport

/// Dolby Vision's configuration record: read as Dolby specifies its fields, and kept byte for
/// byte by a copy of its track.
@Suite struct DolbyVisionConfigurationTests {
    /// An iPhone's profile 8.4: profile 8, HLG-compatible base layer, RPUs, no enhancement layer.
    @Test func theRecordsFieldsAndName() throws {
        let c = try #require(DolbyVisionConfiguration(boxType: "dvvC", body: HDRTestMedia.dolbyVision84))
        #expect(c.versionMajor == 1 && c.versionMinor == 0)
        #expect(c.profile == 8 && c.level == 5 && c.compatibilityID == 4)
        #expect(c.hasRPU && !c.hasEnhancementLayer && c.hasBaseLayer)
        #expect(c.baseLayer == "hlg")
        #expect(c.description == "Dolby Vision profile 8.4 (HLG base), level 5")
        // Profile 8.1 (HDR10 base, level 6) and 5 (no compatible base: IPTPQc2 only).
        let hdr10 = try #require(DolbyVisionConfiguration(boxType: "dvvC", body: [1, 0, 8 << 1, 6 << 3 | 0b101, 1 << 4]))
        #expect(hdr10.description == "Dolby Vision profile 8.1 (HDR10 base), level 6")
        let five = try #require(DolbyVisionConfiguration(boxType: "dvcC", body: [1, 0, 5 << 1, 7 << 3 | 0b101, 0]))
        #expect(five.profile == 5 && five.baseLayer == nil && five.description == "Dolby Vision profile 5.0, level 7")
    }

    @Test func anotherBoxOrAShortRecordIsNone() {
        #expect(DolbyVisionConfiguration(boxType: "colr", body: HDRTestMedia.dolbyVision84) == nil)
        #expect(DolbyVisionConfiguration(boxType: "dvcC", body: [1, 0, 0x10, 0x2D]) == nil)
        #expect(DolbyVisionConfiguration(boxType: "dvcC", body: [UInt8](repeating: 0, count: 257)) == nil)
        #expect(DolbyVisionConfiguration(boxType: "dvvC", body: HDRTestMedia.dolbyVision84 + [UInt8](repeating: 0, count: 40)) != nil, "a longer record is kept")
    }

    /// Written in the sample entry after the colour boxes and read back from it as it was: what a
    /// copy of the track (remux, passthrough export, HLS packaging) writes.
    @Test func aCopiedTrackKeepsItsBox() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("dv.mp4").path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        var format = MP4WriterTests.video
        format.colour = MP4TrackFormat.Colour(primaries: 9, transfer: 18, matrix: 9, fullRange: false)
        format.dolbyVision = DolbyVisionConfiguration(boxType: "dvvC", body: HDRTestMedia.dolbyVision84)
        var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: .indexLast, trackNames: ["video"])
        try writer.setFormat(format, track: 0)
        try [UInt8](repeating: 7, count: 100).withUnsafeBytes { raw in
            for i in 0..<5 {
                try writer.append(track: 0, bytes: raw, decodeTime: Int64(i) * 3600, presentationTime: Int64(i) * 3600, duration: 3600, isSync: i == 0)
            }
        }
        try writer.finish()
        close(fd)
        let file = try #require(FileBytes(path: path))
        let movie = try #require(try MP4File(file).movie())
        let video = try #require(movie.tracks(handler: "vide").first)
        let copied = try #require(MP4StoredTrack(video.track, index: video.index, movie: movie, fileSize: file.count))
        #expect(copied.format.dolbyVision == format.dolbyVision)
        #expect(copied.format.colour == format.colour)
        #expect(IndexedTrack.all(in: file).first?.dolbyVision?.profile == 8)
        // A piece without the box is another stream: a join or a new description says so.
        let described = try #require(SampleDescription(video.track))
        var plain = described
        plain.dolbyVision = nil
        #expect(described.difference(from: described) == nil)
        #expect(plain.difference(from: described) == "its Dolby Vision configuration is none, not Dolby Vision profile 8.4 (HLG base), level 5")
    }
}
