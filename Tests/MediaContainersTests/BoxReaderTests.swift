import Foundation
import Testing
import GraphKit
import GraphKitTesting
@testable import MediaContainers
import TestSupport

/// The one box reader: a box's size written as 32 bits, as 0 ("to the end of the file") or as
/// 1 and 64 bits after its type, and a file cut inside a header, read one way by everything
/// that walks boxes (the library's walk, the diagnosis, the tests' box list, the editor), on a
/// file GStreamer's muxer writes here and then rewrites as other writers leave files.
@Suite struct BoxReaderTests {
    /// An M4A with its index first: its media data is the last box.
    static func make(_ folder: URL) throws -> (path: String, bytes: [UInt8]) {
        let path = folder.appendingPathComponent("original.m4a").path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=20 samplesperbuffer=1000 wave=white-noise ! audio/x-raw,rate=8000,channels=1 ! "
                                + "avenc_aac ! mp4mux faststart=true ! filesink location=\(path)")
        return (path, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    static func write(_ bytes: some Collection<UInt8>, _ name: String, in folder: URL) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// A type is printed in messages: its control bytes are written out, never passed through
    /// (a NUL cut a message in a log; a newline would forge a line); iTunes' © stays.
    @Test func aTypesControlBytesAreWrittenOut() {
        #expect(FourCC(0x6D6F_6F76).description == "moov")
        #expect(FourCC(0xA96E_616D).description == "©nam")
        #expect(FourCC(0x0061_0A9B).description == "\\x00a\\x0A\\x9B")
    }

    @Test(.media) func sizesZeroAndOneAndACutHeaderReadOneWay() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (original, bytes) = try Self.make(folder)
        let file = try MP4File(MemoryBytes(bytes))
        let types = file.boxes.map(\.type)
        let mdat = try #require(file.boxes.last)
        #expect(mdat.type == "mdat" && mdat.header.sizeField == .compact && file.ending == nil)
        let samples = try MP4IndexTests.decode(original)
        #expect(samples.count >= 19_000)

        // Size 0: the media data runs to the end of the file.
        var toEnd = bytes
        toEnd.setU32(Int(mdat.offset), 0)
        let toEndPath = try Self.write(toEnd, "to-end.m4a", in: folder)
        let walked = try MP4File(try #require(FileBytes(path: toEndPath)))
        #expect(walked.boxes.map(\.type) == types && walked.ending == nil)
        #expect(walked.boxes.last?.header.sizeField == .toEnd && walked.boxes.last?.size == mdat.size)
        #expect(MediaProbe.boxes(toEndPath) == types.map(\.description))
        #expect(ContainerDiagnosis.diagnose(path: toEndPath) == nil)
        #expect(try MP4IndexTests.decode(toEndPath) == samples)

        // Size 1: a 64-bit size after the type, 8 bytes more before the media, which the chunk
        // offsets follow.
        let moov = try #require(file.first("moov"))
        var movie = try #require(try file.movie())
        movie.shiftChunkOffsets(after: Int(mdat.offset), by: 8)
        #expect(movie.bytes.count == Int(moov.size))
        var large = Array(bytes[..<Int(moov.offset)]) + movie.bytes + bytes[Int(moov.end)..<Int(mdat.offset)]
        large += [0, 0, 0, 1] + FourCC("mdat").bytes
        large.appendU64(mdat.size + 8)
        large += bytes[Int(mdat.bodyOffset)...]
        let largePath = try Self.write(large, "large.m4a", in: folder)
        let wide = try MP4File(try #require(FileBytes(path: largePath)))
        #expect(wide.boxes.map(\.type) == types && wide.ending == nil)
        #expect(wide.boxes.last?.header.sizeField == .large && wide.boxes.last?.size == mdat.size + 8)
        #expect(MediaProbe.boxes(largePath) == types.map(\.description))
        #expect(ContainerDiagnosis.diagnose(path: largePath) == nil)
        #expect(try MP4IndexTests.decode(largePath) == samples)

        // Cut inside that 16-byte header, after its type: the walk, the box list and the
        // diagnosis all stop at the header.
        let cut = Array(large.prefix(Int(mdat.offset) + 12))
        let cutPath = try Self.write(cut, "cut.m4a", in: folder)
        let short = try MP4File(MemoryBytes(cut))
        #expect(short.boxes.map(\.type) == Array(types.dropLast()))
        #expect(short.ending == .cut(offset: mdat.offset, type: "mdat"))
        #expect(MediaProbe.boxes(cutPath) == types.dropLast().map(\.description))
        #expect(ContainerDiagnosis.diagnose(path: cutPath)?.problem
                == "ends at byte \(cut.count), inside a box header at byte \(mdat.offset): the file was cut short")
    }
}
