import Testing
@testable import MediaContainers

/// A box written in pieces (a long file's index) is the box's bytes, whatever the pieces' size.
@Suite struct MP4BoxPiecesTests {
    @Test func thePiecesTogetherAreTheBytes() throws {
        var tables = SampleTableBuilder()
        tables.addChunk(offset: 48, samples: 5000)
        for i in 0..<5000 { tables.append(size: UInt32(100 + i % 77), duration: 1024, compositionOffset: Int32(i % 3) * 512, isSync: i % 30 == 0) }
        let format = MP4TrackFormat(trackID: 1, codec: .h264(avcC: [1, 0x64, 0, 0x1f, 0xff, 0xe0, 0, 0xe1, 0], width: 320, height: 240))
        var moov = MP4Box(type: "moov", children: [CMAF.movieHeader(duration: 0, nextTrackID: 2), format.trak(tables: tables.boxes())])
        moov.sizeField = .compact
        let whole = moov.bytes
        #expect(whole.count == Int(moov.length()))
        for size in [1, 100, 4096, 1 << 20] {
            var pieces: [[UInt8]] = []
            try moov.write(inPiecesOf: size) { (piece) throws(ContainerError) in pieces.append(piece) }
            #expect(pieces.flatMap { $0 } == whole, "pieces of \(size)")
            // Every piece but the last is at least the size asked.
            #expect(pieces.dropLast().allSatisfy { $0.count >= size })
        }
    }
}
