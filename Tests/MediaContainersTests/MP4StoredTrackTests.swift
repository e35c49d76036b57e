import Foundation
import Glibc
import Testing
import GraphKitTesting
@testable import MediaContainers
import TestSupport

/// What a copy of a track keeps (`MP4StoredTrack`), on files the writer makes here, their edit
/// lists then set to what a file may claim.
@Suite struct MP4StoredTrackTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// 25 pictures and 40 AAC packets, index last; the movie read back.
    func movie() throws -> (MP4Movie, UInt64) {
        let path = folder.appendingPathComponent("in.mp4").path
        let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer { close(fd) }
        var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: .indexLast, trackNames: ["video", "audio"])
        try writer.setFormat(MP4WriterTests.video, track: 0)
        try writer.setFormat(MP4WriterTests.audio, track: 1)
        let bytes = [UInt8](repeating: 7, count: 100)
        try bytes.withUnsafeBytes { raw in
            for i in 0..<25 {
                try writer.append(track: 0, bytes: raw, decodeTime: Int64(i) * 3600, presentationTime: Int64(i) * 3600, duration: 3600, isSync: i == 0)
            }
            for i in 0..<40 {
                try writer.append(track: 1, bytes: raw, decodeTime: Int64(i) * 1024, presentationTime: Int64(i) * 1024, duration: 1024, isSync: true)
            }
        }
        try writer.finish()
        let file = try #require(FileBytes(path: path))
        return (try #require(try MP4File(file).movie()), file.count)
    }

    /// An edit claiming 2^62 ticks (a version-1 elst may) is copied as the media's length, not
    /// multiplied past 64 bits: the copy shows what the file holds.
    @Test func anEditLongerThanItsMediaIsTheMedia() throws {
        var (movie, size) = try movie()
        for (i, track) in movie.trackIndices.map({ ($0, movie.track($0)) }) {
            var edited = track
            edited.setEdits([.init(duration: 1 << 62, mediaTime: track.handler == "soun" ? 1024 : 0)])
            movie.setTrack(i, edited)
        }
        let video = try #require(movie.tracks(handler: "vide").first)
        let copiedVideo = try #require(MP4StoredTrack(video.track, index: video.index, movie: movie, fileSize: size))
        #expect(copiedVideo.format.shownMedia == .init(start: 0, duration: 25 * 3600))
        #expect(copiedVideo.format.copiedTimescale == 90_000)
        let audio = try #require(movie.tracks(handler: "soun").first)
        let copiedAudio = try #require(MP4StoredTrack(audio.track, index: audio.index, movie: movie, fileSize: size))
        #expect(copiedAudio.format.gapless == CMAF.Gapless(priming: 1024, samples: 39 * 1024, padding: 0))
    }

    /// An edit list of another shape (two media edits, a rate other than 1) is not copied.
    @Test func otherEditListsAreNotCopied() throws {
        var (movie, size) = try movie()
        let video = try #require(movie.tracks(handler: "vide").first)
        for edits in [[MP4Track.Edit(duration: 100, mediaTime: 0), .init(duration: 100, mediaTime: 3600)], [.init(duration: 100, mediaTime: 0, rate: 0x2_0000)]] {
            var edited = video.track
            edited.setEdits(edits)
            movie.setTrack(video.index, edited)
            #expect(MP4StoredTrack(movie.track(video.index), index: video.index, movie: movie, fileSize: size) == nil, "\(edits)")
        }
    }
}
