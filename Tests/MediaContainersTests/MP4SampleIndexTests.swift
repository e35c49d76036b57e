import Testing
@testable import MediaContainers

/// A track's samples read from its tables one at a time (`MP4SampleIndex`), on tables shaped as
/// files shape them and as damaged files do.
@Suite struct MP4SampleIndexTests {
    static func full(_ type: FourCC, version: UInt8 = 0, _ words: [UInt32]) -> MP4Box {
        var body: [UInt8] = []
        body.appendVersionAndFlags(version, 0)
        for w in words { body.appendU32(w) }
        return MP4Box(type: type, body: body)
    }

    /// A video track of `tables`.
    static func track(_ tables: [MP4Box]) -> MP4Track {
        let format = MP4TrackFormat(trackID: 1, codec: .h264(avcC: [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0, 0xe1, 0], width: 320, height: 240))
        return MP4Track(box: format.trak(tables: tables))
    }

    /// Six samples: sizes 10…60; durations 100 ×4 then 200 ×2; offsets for the first three
    /// only; sync samples listed out of order, twice, and past the end.
    static let tables: [MP4Box] = [
        full("stts", [2, 4, 100, 2, 200]),
        full("ctts", [2, 1, 300, 2, 0]),
        full("stss", [5, 4, 1, 5, 1, 99]),
        full("stsz", [0, 6, 10, 20, 30, 40, 50, 60]),
        // Chunks 2 and 3 hold two samples each, chunk 4 none, chunk 5 two: chunk 1 is named by no entry.
        full("stsc", [3, 2, 2, 1, 4, 0, 1, 5, 2, 1]),
        full("stco", [5, 0, 1000, 2000, 3000, 4000]),
    ]

    @Test func theCursorWalksTheTablesAsTheyAreStored() throws {
        let index = try MP4SampleIndex(Self.track(Self.tables), fileSize: 10_000)
        #expect(index.count == 6)
        var cursor = index.makeCursor()
        var samples: [MP4Sample] = []
        while let s = cursor.next() { samples.append(s) }
        #expect(samples.map(\.size) == [10, 20, 30, 40, 50, 60])
        #expect(samples.map(\.offset) == [1000, 1010, 2000, 2030, 4000, 4050])
        #expect(samples.map(\.duration) == [100, 100, 100, 100, 200, 200])
        #expect(samples.map(\.decodeTime) == [0, 100, 200, 300, 400, 600])
        #expect(samples.map(\.compositionOffset) == [300, 0, 0, 0, 0, 0])
        #expect(samples.map(\.isSync) == [true, false, false, true, true, false])
        #expect(index.last == samples.last)
        #expect(index.presentationEnd == 800)
        // The list of samples is the cursor's.
        #expect(try Self.track(Self.tables).samples(fileSize: 10_000) == samples)
    }

    @Test func aDamagedTableIsRefusedWhenTheIndexIsMade() {
        func refusal(_ replace: FourCC, _ box: MP4Box, fileSize: UInt64 = 10_000) -> String? {
            do {
                _ = try MP4SampleIndex(Self.track(Self.tables.map { $0.type == replace ? box : $0 }), fileSize: fileSize)
                return nil
            } catch { return error.reason }
        }
        #expect(refusal("stts", Self.full("stts", [1, 5, 100]))?.contains("stsz gives 6 samples, stts 5") == true)
        #expect(refusal("stco", Self.full("stco", [3, 0, 1000, 2000]))?.contains("chunk offset table has 3") == true)
        #expect(refusal("stsc", Self.full("stsc", [2, 3, 2, 1, 2, 2, 1]))?.contains("out of order at entry 1") == true)
        #expect(refusal("stsz", Self.full("stsz", [0, 6, 10, 20, 30, 40, 50, 60]), fileSize: 4100)?.contains("sample 6 (60 bytes at byte 4050) runs past the end") == true)
        // An entry past the last sample (chunk 1 holds all six) that names a chunk past the table.
        #expect(refusal("stsc", Self.full("stsc", [2, 1, 6, 1, 7, 1, 1]))?.contains("out of order at entry 2") == true)
        // Chunks that hold fewer samples than the sizes give.
        #expect(refusal("stsc", Self.full("stsc", [1, 1, 1, 1]))?.contains("chunks hold 5 samples") == true)
    }
}
