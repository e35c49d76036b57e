import Foundation
import Glibc
import Testing
import GraphKitTesting
@testable import MediaContainers
import TestSupport

/// A long recording's sample tables past their bound go to a temporary file: the index the file
/// gets is byte for byte the one kept in memory, what is held stays under the bound at any
/// length, and a folder that cannot take the file keeps the tables in memory, nothing lost.
@Suite struct SampleTableSpillTests {
    let folder: URL
    init() throws { folder = try TestMedia.temporaryFolder() }

    /// `count` samples of video with B-frame offsets (a run each) and a key frame every 30, in
    /// chunks of 8, into `builder`.
    static func fill(_ builder: inout SampleTableBuilder, _ count: Int, seed: UInt64) {
        var random = SplitMix(seed: seed)
        for i in 0..<count {
            if i % 8 == 0 { builder.addChunk(offset: UInt64(i) * 500, samples: min(8, count - i)) }
            let duration: UInt32 = random.below(20) == 0 ? UInt32(1 + random.below(3000)) : 3000
            builder.append(size: UInt32(1 + random.below(60_000)), duration: duration,
                           compositionOffset: Int32([2, 0, 1, -1][i % 4]) * 3000, isSync: i % 30 == 0)
        }
    }

    static func bytes(_ boxes: [MP4Box]) throws -> [UInt8] {
        var out: [UInt8] = []
        for box in boxes { try box.write(inPiecesOf: 1000) { out += $0 } }
        return out
    }

    @Test func spilledTablesWriteTheSameIndexAsTablesInMemory() throws {
        var held = SampleTableBuilder(), spilled = SampleTableBuilder(spillingPast: 256, in: folder.path)
        Self.fill(&held, 20_000, seed: 5)
        Self.fill(&spilled, 20_000, seed: 5)
        // Sizes 80 kB, offsets 160 kB, durations and key frames some kB: all past 256 bytes.
        #expect(spilled.spilledByteCount > 200_000)
        #expect(spilled.byteCount < held.byteCount / 4, "\(spilled.byteCount) \(held.byteCount)")
        #expect(held.spilledByteCount == 0)
        let (a, b) = (held.boxes(), spilled.boxes())
        #expect(a.map(\.type) == b.map(\.type))
        // In pieces (the writer's way), whole (`bytes`), and read as tables: the same.
        #expect(try Self.bytes(a) == Self.bytes(b))
        #expect(a.flatMap(\.bytes) == b.flatMap(\.bytes))
        #expect(b.map { $0.length() } == a.map { $0.length() })
        let format = MP4TrackFormat(trackID: 1, codec: .h264(avcC: [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0, 0xe1, 0], width: 320, height: 240))
        let fromHeld = try MP4Track(box: format.trak(tables: a, mediaDuration: held.mediaDuration)).samples(fileSize: .max)
        let fromSpilled = try MP4Track(box: format.trak(tables: b, mediaDuration: spilled.mediaDuration)).samples(fileSize: .max)
        #expect(fromSpilled.count == 20_000)
        #expect(fromSpilled == fromHeld)
        // Boxes made earlier keep what they held then, while more samples come.
        let before = try Self.bytes(b)
        spilled.append(size: 9, duration: 3000, compositionOffset: 0, isSync: true)
        #expect(try Self.bytes(b) == before)
    }

    @Test func aFolderThatCannotTakeTheFileKeepsTheTablesInMemory() throws {
        var held = SampleTableBuilder()
        var kept = SampleTableBuilder(spillingPast: 256, in: folder.appendingPathComponent("no-such-folder").path)
        Self.fill(&held, 3000, seed: 9)
        Self.fill(&kept, 3000, seed: 9)
        #expect(kept.spilledByteCount == 0)
        #expect(try Self.bytes(kept.boxes()) == Self.bytes(held.boxes()))
    }

    /// The writer's own bound (256 KiB a table): 120,000 pictures with an offset run each and a
    /// sync sample every 30 go past it in sizes and offsets; the file, index last and index
    /// first, holds every sample where its index says, as this library and ffprobe read it.
    @Test(.media) func aLongTrackThroughTheWriterReadsBackWhole() throws {
        let frames = 120_000
        #expect(frames * 4 > MP4Writer.tableMemoryBytes)
        for layout in [MP4Writer.Layout.indexLast, .indexFirst] {
            let path = folder.appendingPathComponent("long-\(layout == .indexLast ? "last" : "first").mp4").path
            let fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            try #require(fd >= 0)
            var writer = MP4Writer(descriptor: fd, brand: .mp4, layout: layout, trackNames: ["video"])
            try writer.setFormat(MP4WriterTests.video, track: 0)
            var data: [UInt8] = []
            for i in 0..<frames {
                let bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 1 + i % 5)
                let dts = Int64(i) * 3600
                try bytes.withUnsafeBytes {
                    try writer.append(track: 0, bytes: $0, decodeTime: dts, presentationTime: dts + Int64([2, 0, 1][i % 3]) * 3600 + 3600,
                                      duration: 3600, isSync: i % 30 == 0)
                }
                data += bytes
            }
            // Sizes (480 kB) and offsets (a run a picture: 960 kB) past 256 KiB each.
            #expect(writer.spilledIndexBytes > 1_000_000, "\(writer.spilledIndexBytes)")
            try writer.finish()
            close(fd)
            let file = try #require(FileBytes(path: path))
            let movie = try #require(try MP4File(file).movie())
            let samples = try movie.track(movie.trackIndices[0]).samples(fileSize: file.count)
            #expect(samples.count == frames)
            #expect(try samples.flatMap { try file.read(at: $0.offset, count: Int($0.size)) } == data)
            #expect(samples.filter(\.isSync).count == frames / 30)
            #expect(samples.enumerated().allSatisfy { $1.compositionOffset == Int32([2, 0, 1][$0 % 3]) * 3600 + 3600 && $1.duration == 3600 })
            let counted = try TestMedia.runTool("ffprobe", ["-v", "error", "-count_packets", "-select_streams", "v:0",
                                                            "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path])
            #expect(counted.trimmingCharacters(in: .whitespacesAndNewlines) == "\(frames)")
        }
    }
}
