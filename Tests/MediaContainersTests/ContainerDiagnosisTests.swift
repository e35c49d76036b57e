import Foundation
import GraphKitTesting
import Testing
@testable import MediaContainers
import GraphKit
import TestSupport

/// The structure walk that says why a file did not decode, on files GStreamer writes here and
/// then damages as users' files are damaged: cut short, never finished, bytes changed.
@Suite struct ContainerDiagnosisTests {
    /// Writes `pipeline ! filesink` to `name` in `folder` and returns its bytes.
    static func make(_ name: String, _ pipeline: String, in folder: URL) throws -> (path: String, bytes: [UInt8]) {
        let path = folder.appendingPathComponent(name).path
        try TestMedia.gstLaunch("audiotestsrc num-buffers=40 samplesperbuffer=1024 ! audio/x-raw,rate=44100,channels=2 ! audioconvert ! \(pipeline) ! filesink location=\(path)")
        return (path, [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// `bytes` written as a new file; its diagnosis.
    static func diagnose(_ bytes: [UInt8], as name: String, in folder: URL, indexOnly: Bool = false) throws -> ContainerDiagnosis? {
        let path = folder.appendingPathComponent(name).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return ContainerDiagnosis.diagnose(path: path, indexOnly: indexOnly)
    }

    /// The top-level boxes of an MP4, as the library walks them: type, offset and size.
    static func boxes(_ bytes: [UInt8]) -> [(type: FourCC, offset: Int, size: Int)] {
        ((try? MP4File(MemoryBytes(bytes)))?.boxes ?? []).map { ($0.type, Int($0.offset), Int($0.size)) }
    }

    @Test(.media) func anMP4WhoseIndexIsMissingWasNotFinished() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // Without faststart the index (moov) comes last: any cut loses it.
        let (good, bytes) = try Self.make("good.m4a", "avenc_aac ! mp4mux faststart=false", in: folder)
        #expect(ContainerDiagnosis.diagnose(path: good) == nil)
        #expect(Self.boxes(bytes).last?.type == "moov")
        let half = Array(bytes.prefix(bytes.count / 2))
        #expect(try Self.diagnose(half, as: "half.m4a", in: folder)?.problem
                == "ends at byte \(half.count) before its index: the file was not finished")
        // A recording killed before its index was written: the media data whole, then nothing.
        let moov = try #require(Self.boxes(bytes).first { $0.type == "moov" })
        let unfinished = Array(bytes.prefix(moov.offset))
        let d = try Self.diagnose(unfinished, as: "unfinished.m4a", in: folder)
        #expect(d?.problem == "ends at byte \(moov.offset) before its index: the file was not finished")
        #expect(d?.cutShort == true)
        // Its media data's size never written (0: "to the end of the file"), as a killed mp4mux leaves it.
        let mdat = try #require(Self.boxes(bytes).first { $0.type == "mdat" })
        var sizeless = unfinished
        sizeless.replaceSubrange(mdat.offset..<mdat.offset + 4, with: [0, 0, 0, 0])
        #expect(try Self.diagnose(sizeless, as: "sizeless.m4a", in: folder)?.problem
                == "ends at byte \(moov.offset) before its index: the file was not finished")
        // A box structure that breaks (zeroed bytes where the index should start): there, and
        // the file goes on past it.
        var broken = bytes
        for i in moov.offset..<moov.offset + 8 { broken[i] = 0 }
        let rest = bytes.count - moov.offset
        let b = try Self.diagnose(broken, as: "broken.m4a", in: folder)
        #expect(b?.problem == "is damaged at byte \(moov.offset): no MP4 box starts there, and no index came before it (\(rest) more bytes follow, which are not MP4 boxes)")
        #expect(b?.cutShort == false)
    }

    /// Random bytes, or zeros, after a whole MP4 header: the file does not end there (it was
    /// said to "end at byte 28 before its index" at 100 KB); what is there is said.
    @Test(.media, arguments: ["random", "zeros"])
    func bytesThatAreNoBoxesAfterAHeaderAreSaidToBeThere(_ kind: String) throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, bytes) = try Self.make("good.m4a", "avenc_aac ! mp4mux faststart=true", in: folder)
        let ftyp = try #require(Self.boxes(bytes).first)
        #expect(ftyp.type == "ftyp")
        var generator = SystemRandomNumberGenerator()
        var tail = (0..<100_000).map { _ in kind == "zeros" ? 0 : UInt8.random(in: 0...255, using: &generator) }
        tail[4] = 0x01  // no box type by chance (four printable bytes there would read as one)
        let d = try Self.diagnose(Array(bytes.prefix(ftyp.size)) + tail, as: "\(kind).m4a", in: folder)
        #expect(d?.problem == "is damaged at byte \(ftyp.size): no MP4 box starts there, and no index came before it (100000 more bytes follow, which are not MP4 boxes)")
    }

    /// A file whose size the kernel says is 0 until it is read (under /proc) is measured by
    /// reading it: not "empty". (It is text, which no walk claims.)
    @Test func aProcFileIsReadNotJudgedByItsStatedSize() throws {
        #expect(ContainerDiagnosis.diagnose(path: "/proc/self/status") == nil)
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try Self.diagnose([], as: "empty.m4a", in: folder)?.problem == "is empty (0 bytes)")
    }

    @Test(.media) func anIndexFirstMP4CutShortSaysWhere() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (_, bytes) = try Self.make("good.m4a", "avenc_aac ! mp4mux faststart=true", in: folder)
        let moov = try #require(Self.boxes(bytes).first { $0.type == "moov" })
        let mdat = try #require(Self.boxes(bytes).first { $0.type == "mdat" })
        #expect(moov.offset < mdat.offset)
        let inIndex = Array(bytes.prefix(moov.offset + moov.size / 2))
        #expect(try Self.diagnose(inIndex, as: "a.m4a", in: folder)?.problem
                == "ends at byte \(inIndex.count), inside its index (which runs to byte \(moov.offset + moov.size)): the file was cut short")
        // Cut in its media data: decodable up to the cut, which even the cheap walk finds.
        let inMedia = Array(bytes.prefix(mdat.offset + mdat.size / 2))
        let expected = "ends at byte \(inMedia.count), inside its media data (which runs to byte \(mdat.offset + mdat.size)): the file was cut short"
        #expect(try Self.diagnose(inMedia, as: "b.m4a", in: folder)?.problem == expected)
        #expect(try Self.diagnose(inMedia, as: "c.m4a", in: folder, indexOnly: true)?.problem == expected)
    }

    @Test(.media) func oggPagesCutShortOrChangedAreFound() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (good, bytes) = try Self.make("good.ogg", "vorbisenc ! oggmux", in: folder)
        #expect(ContainerDiagnosis.diagnose(path: good) == nil)
        let cut = Array(bytes.prefix(bytes.count / 2))
        let d = try #require(try Self.diagnose(cut, as: "cut.ogg", in: folder))
        #expect(d.problem.hasPrefix("ends at byte \(cut.count), inside Ogg page "), "\(d.problem)")
        #expect(d.problem.hasSuffix(": the file was cut short"))
        // One byte changed in the first page's granule position: its checksum no longer matches.
        var changed = bytes
        changed[10] ^= 0x01
        #expect(try Self.diagnose(changed, as: "changed.ogg", in: folder)?.problem
                == "is damaged: Ogg page 1, bytes 0 to \(27 + Int(bytes[26]) + bytes[27..<27 + Int(bytes[26])].reduce(0) { $0 + Int($1) }), fails its checksum")
        #expect(ContainerDiagnosis.diagnose(path: good, indexOnly: true) == nil)  // not an MP4: not walked
    }

    @Test(.media) func aFLACFileCutInsideItsFirstFrame() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (good, bytes) = try Self.make("good.flac", "flacenc", in: folder)
        #expect(ContainerDiagnosis.diagnose(path: good) == nil)
        let header = Array(bytes.prefix(60))  // "fLaC", STREAMINFO (38 bytes), and part of the next block
        let d = try Self.diagnose(header, as: "header.flac", in: folder)
        #expect(d?.problem.hasPrefix("ends at byte 60, inside its header") == true, "\(String(describing: d))")
        let cut = Array(bytes.prefix(bytes.count / 20))
        let smallest = bytes[12..<15].reduce(0) { $0 << 8 | Int($1) }  // STREAMINFO's minimum frame size
        try #require(smallest > cut.count)
        let e = try Self.diagnose(cut, as: "cut.flac", in: folder)
        #expect(e?.problem.hasPrefix("ends at byte \(cut.count), inside its first audio frame") == true, "\(String(describing: e))")
    }

    @Test(.media) func anMP3CutInsideAFrame() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let (good, bytes) = try Self.make("good.mp3", "lamemp3enc bitrate=128 target=bitrate cbr=true", in: folder)
        #expect(ContainerDiagnosis.diagnose(path: good) == nil)
        // 128 kb/s at 44.1 kHz: frames of 417 or 418 bytes.
        let first = try #require(MPEGAudio.frameLength(Array(bytes.prefix(4))))
        #expect(first == 417 || first == 418)
        let cut = Array(bytes.prefix(Int(first) + 100))
        #expect(try Self.diagnose(cut, as: "cut.mp3", in: folder)?.problem.hasPrefix("ends at byte \(cut.count), inside MP3 frame 2 (which runs to byte ") == true)
    }

    @Test(.media) func emptyAndUnknownFiles() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(try Self.diagnose([], as: "empty.m4a", in: folder)?.problem == "is empty (0 bytes)")
        let junk = (0..<4000).map { UInt8(truncatingIfNeeded: ($0 &* 7919) >> 3) }
        #expect(try Self.diagnose(junk, as: "junk.wav", in: folder) == nil)
        #expect(ContainerDiagnosis.diagnose(path: folder.appendingPathComponent("absent.mp4").path) == nil)
        #expect(ContainerDiagnosis.diagnose(path: folder.path) == nil)  // a folder is not read
        // A WAV file is not a format walked: nil, whatever its state.
        let (_, wav) = try Self.make("good.wav", "wavenc", in: folder)
        #expect(try Self.diagnose(Array(wav.prefix(wav.count / 2)), as: "half.wav", in: folder) == nil)
    }
}
