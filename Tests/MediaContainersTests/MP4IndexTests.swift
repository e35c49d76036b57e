import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import MediaContainers
import TestSupport

/// MP4Index's edits of a movie's index: the encoder delay's edit list, display matrices.
@Suite struct MP4IndexTests {
    static func decode(_ path: String) throws -> [Int16] {
        let raw = path + ".raw"
        defer { try? FileManager.default.removeItem(atPath: raw) }
        _ = try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "s16le", raw])
        return try Data(contentsOf: URL(fileURLWithPath: raw)).withUnsafeBytes { Array($0.bindMemory(to: Int16.self)) }
    }

    static func movie(_ path: String) throws -> (MP4Movie, [BoxExtent]) {
        let file = try MP4File(try #require(FileBytes(path: path)))
        return (try #require(try file.movie()), file.boxes)
    }

    /// An encoder that was given more samples than the file holds (a length limit ended it while
    /// the encoder went on): the edit stops where the track's samples do, not where the
    /// encoder's input did, so the movie is no longer than its samples.
    @Test(.media) func anEditStopsWhereTheTracksSamplesDo() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("cut.m4a").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=20 samplesperbuffer=1000 ! audio/x-raw,rate=8000,channels=1 ! "
                                + "avenc_aac aac-ms=0 ! mp4mux ! filesink location=\(file)")
        var movie = try Self.movie(file).0
        let held = try #require(movie.tracks(handler: "soun").first?.track.sampleTableDuration)
        #expect(held >= 20_000 && held < 22_000, "\(held) samples")
        MP4Index.edit(&movie, with: .init(audioDelay: EncoderDelay(priming: 1024, samples: 60_000, sampleRate: 8000)))
        let track = try #require(movie.tracks(handler: "soun").first?.track)
        #expect(track.edits == [MP4Track.Edit(duration: UInt64(held) - 1024, mediaTime: 1024)])
        #expect(movie.header?.duration == UInt64(held) - 1024 && movie.timescale == 8000)

        // A damaged table whose samples last longer than 64 bits of the delay's clock hold: the
        // edit is the encoder's count, and nothing overflows.
        var damaged = movie
        let i = try #require(damaged.tracks(handler: "soun").first?.index)
        damaged.moov.children[i].update(["mdia", "minf", "stbl", "stts"], as: TimeToSample.self) {
            $0.entries = [.init(count: .max, delta: .max)]
        }
        MP4Index.describe(EncoderDelay(priming: 1024, samples: 60_000, sampleRate: 8000), in: &damaged)
        #expect(damaged.track(i).edits == [MP4Track.Edit(duration: 60_000, mediaTime: 1024)])
    }

    /// Each orientation's matrix reads back as the same orientation.
    @Test func everyOrientationRoundTripsThroughTheMatrix() throws {
        var tkhd = MP4Box(type: "tkhd", body: [UInt8](repeating: 0, count: 84))
        tkhd.body.setU32(76, 160 << 16)
        tkhd.body.setU32(80, 120 << 16)
        for o in DisplayOrientation.allCases {
            var track = MP4Track(box: MP4Box(type: "trak", children: [tkhd]))
            track.setOrientation(o)
            #expect(track.orientation == o)
            // Translation puts the turned picture back where the screen is: no corner below 0.
            let m = try #require(track.matrix)
            for (x, y) in [(0, 0), (160, 0), (0, 120), (160, 120)] {
                let tx = Int(m[0] >> 16) * x + Int(m[3] >> 16) * y + Int(m[6] >> 16)
                let ty = Int(m[1] >> 16) * x + Int(m[4] >> 16) * y + Int(m[7] >> 16)
                #expect(tx >= 0 && ty >= 0, "\(o): corner (\(x), \(y)) lands at (\(tx), \(ty))")
            }
        }
    }

    /// A display matrix is stored as given (16.16 fixed point, so to 1/65536) and read back;
    /// its text form is sink.mp4's `videoTransform`, which takes six numbers and nothing else.
    @Test func aDisplayMatrixIsStoredAsGiven() throws {
        var tkhd = MP4Box(type: "tkhd", body: [UInt8](repeating: 0, count: 84))
        tkhd.body.setU32(76, 160 << 16)
        let turn = DisplayMatrix(a: 0, b: 1, c: -1, d: 0, tx: 120, ty: 0), odd = DisplayMatrix(a: 0.5, b: -0.25, c: 1.75, d: 2, tx: -3.5, ty: 7)
        for m in [turn, odd, .identity] {
            var track = MP4Track(box: MP4Box(type: "trak", children: [tkhd]))
            track.setDisplayMatrix(m)
            #expect(track.displayMatrix == m)
            #expect(track.matrix?[8] == 1 << 30)  // w: 1.0 in 2.30
            #expect(DisplayMatrix(text: m.description) == m)
        }
        #expect(DisplayMatrix(text: "0, 1, -1, 0, 120, 0") == turn)
        for bad in ["0 1 -1 0", "0 1 -1 0 0 0 0", "a b c d e f", ""] { #expect(DisplayMatrix(text: bad) == nil, "\(bad)") }
        #expect(!DisplayMatrix(a: 40_000, b: 0, c: 0, d: 1, tx: 0, ty: 0).isStorable)
        #expect(!DisplayMatrix(a: .infinity, b: 0, c: 0, d: 1, tx: 0, ty: 0).isStorable)
    }

    /// The index of a damaged file (a flipped entry count, a size, a version) is read without a
    /// crash, an overflow or a loop through billions of entries: decode reads every MP4's index
    /// this way before the demuxer does. A flipped elst count once looped for minutes.
    @Test(.media) func damagedIndexesAreReadSafely() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("a.mp4").path
        try TestMedia.gstLaunch("videotestsrc num-buffers=10 ! video/x-raw,width=64,height=48 ! x264enc ! mp4mux name=m ! filesink location=\(file) "
                                + "audiotestsrc num-buffers=10 ! audioconvert ! avenc_aac ! m.")
        let (_, boxes) = try Self.movie(file)
        let extent = try #require(boxes.first { $0.type == "moov" })
        let moov = Array([UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))[Int(extent.offset)..<Int(extent.end)])
        var random = SplitMix(seed: 0x6B_6B)
        for round in 0..<3000 {
            var damaged = moov
            for _ in 0..<(1 + round % 8) {
                let at = Int.random(in: 0..<damaged.count, using: &random)
                damaged[at] = round % 3 == 0 ? 0xFF : UInt8.random(in: 0...255, using: &random)
            }
            var copy = damaged
            _ = MP4AudioEdit.take(from: &copy, track: 0)
            #expect(copy.count == damaged.count)
            guard var movie = try? MP4Movie(parsing: damaged[...]) else { continue }
            for (i, track) in movie.tracks(handler: "vide") + movie.tracks(handler: "soun") {
                _ = (track.orientation, track.edits, track.sampleTableDuration, track.sampleEntry, track.displayMatrix, track.sampleBytes)
                var edited = track
                edited.setOrientation(.rotate90)
                movie.moov.children[i] = edited.box
            }
            MP4Index.describe(EncoderDelay(priming: 1024, samples: 4000, sampleRate: 44_100), in: &movie)
            movie.shiftChunkOffsets(after: 0, by: 36)
            _ = movie.moov.bytes
        }
    }

}
