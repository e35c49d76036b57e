import Foundation
import GraphKit
import GraphKitTesting
@testable import MediaContainers
import Testing
import TestSupport

/// `graphctl probe` pairs a Live Photo's halves: a HEIC whose maker note holds the content
/// identifier and the MOV beside it with the same stem, whose `mdta` key repeats it and whose
/// timed-metadata track (a `mebx` entry keyed `com.apple.quicktime.still-image-time`) places the
/// still. Both made in the test: the HEIC by HEIFBuilder around heif-enc's picture, the MOV by
/// ffmpeg with the track added to its index.
@Suite(.media) struct ProbeLivePhotoTests {
    static let id = "7C1B2A4E-1111-4C4C-9D9D-0123456789AB"

    static func box(_ type: String, _ body: [UInt8]) -> [UInt8] { HEIFBuilder.box(type, body) }
    static func u32(_ v: Int) -> [UInt8] { HEIFBuilder.be32(UInt32(truncatingIfNeeded: v)) }

    /// A timed-metadata track (ID 3) of one sample at `seconds` (an empty edit before it) whose
    /// `mebx` entry declares `key`, in a movie of timescale `movieScale`.
    static func stillTrack(key: String, seconds: Double, movieScale: Int) -> [UInt8] {
        let lead = Int(seconds * Double(movieScale))
        let tkhd = box("tkhd", [0, 0, 0, 1] + u32(0) + u32(0) + u32(3) + u32(0) + u32(lead + 1) + [UInt8](repeating: 0, count: 8)
            + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0] + [UInt8](repeating: 0, count: 12)
            + [0x40, 0, 0, 0] + u32(0) + u32(0))
        let elst = box("elst", [0, 0, 0, 0] + u32(2) + u32(lead) + u32(-1) + [0, 1, 0, 0] + u32(1) + u32(0) + [0, 1, 0, 0])
        let mdhd = box("mdhd", [0, 0, 0, 0] + u32(0) + u32(0) + u32(600) + u32(1) + [0x55, 0xC4, 0, 0])
        let hdlr = box("hdlr", [0, 0, 0, 0] + u32(0) + Array("meta".utf8) + [UInt8](repeating: 0, count: 12) + [0])
        let keyd = box("keyd", Array("mdta".utf8) + Array(key.utf8))
        let keys = box("keys", u32(8 + keyd.count) + [0, 0, 0, 1] + keyd)  // a box named by its local key ID, 1
        let mebx = box("mebx", [0, 0, 0, 0, 0, 0, 0, 1] + keys)
        let stbl = box("stbl", box("stsd", [0, 0, 0, 0] + u32(1) + mebx) + box("stts", [0, 0, 0, 0] + u32(1) + u32(1) + u32(1))
            + box("stsc", [0, 0, 0, 0] + u32(1) + u32(1) + u32(1) + u32(1)) + box("stsz", [0, 0, 0, 0] + u32(0) + u32(1) + u32(9))
            + box("stco", [0, 0, 0, 0] + u32(1) + u32(0)))
        let dinf = box("dinf", box("dref", [0, 0, 0, 0] + u32(1) + box("url ", [0, 0, 0, 1])))
        let minf = box("minf", box("nmhd", [0, 0, 0, 0]) + dinf + stbl)
        return box("trak", tkhd + box("edts", elst) + box("mdia", mdhd + hdlr + minf))
    }

    /// A MOV with `identifier` as its content identifier and, when `still` is given, the still's
    /// track at that time.
    static func movie(_ url: URL, identifier: String, still: Double?) throws {
        let plain = url.deletingLastPathComponent().appendingPathComponent("plain-" + url.lastPathComponent)
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=160x120:r=30:d=3", "-c:v", "libx264",
                                         "-movflags", "use_metadata_tags", "-metadata", "\(LivePhotoMovie.contentIdentifierKey)=\(identifier)", plain.path])
        try CraftedMP4.edited(plain.path, to: url.path) { movie in
            if let still {
                movie.moov.children.append(try MP4Box(parsing: stillTrack(key: LivePhotoMovie.stillImageTimeKey, seconds: still, movieScale: movie.timescale)[...]))
            }
        }
    }

    /// A HEIC whose maker note holds `identifier`.
    static func still(_ url: URL, identifier: String, folder: URL) throws {
        let png = folder.appendingPathComponent("still.png")
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x48", "-frames:v", "1", png.path])
        let picture = try HEIFBuilder.encoded(png: png, in: folder)
        var exif = EXIFBuilder(little: false)
        exif.makerApple = [(17, .ascii(identifier))]
        let items: [HEIFBuilder.Item] = [
            .init(id: 1, type: "hvc1", data: picture.data, properties: [picture.configuration, HEIFBuilder.ispe(64, 48)]),
            .init(id: 2, type: "Exif", data: [0, 0, 0, 0] + exif.bytes(), references: [("cdsc", [1])]),
        ]
        try Data(HEIFBuilder(primary: 1, items: items).bytes()).write(to: url)
    }

    static func livePhoto(_ path: String) throws -> [String: JSONValue] {
        let r = try Graphctl.run("probe", "--json", path)
        #expect(r.status == 0, "\(r.stderr)")
        return ProbePhotoTests.object(ProbePhotoTests.object(try JSONParser.parse(r.stdout))["livePhoto"])
    }

    @Test func theStillAndTheMovieNameEachOtherAndTheStillsTime() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let heic = folder.appendingPathComponent("IMG_0001.HEIC"), mov = folder.appendingPathComponent("IMG_0001.MOV")
        try Self.still(heic, identifier: Self.id, folder: folder)
        try Self.movie(mov, identifier: Self.id, still: 1.5)

        let fromStill = try Self.livePhoto(heic.path)
        #expect(fromStill["contentIdentifier"] == .string(Self.id) && fromStill["paired"] == .bool(true))
        #expect(fromStill["pairedWith"] == .string(mov.path) && fromStill["stillImageTime"] == .number(1.5))
        let fromMovie = try Self.livePhoto(mov.path)
        #expect(fromMovie["contentIdentifier"] == .string(Self.id) && fromMovie["paired"] == .bool(true))
        #expect(fromMovie["pairedWith"] == .string(heic.path) && fromMovie["stillImageTime"] == .number(1.5))
        let text = try Graphctl.run("probe", heic.path).stdout
        #expect(text.contains("Live Photo \(Self.id), the still at 1.500 s, paired with \(mov.path)"), "\(text)")
        // The motion plays as any movie: the added track leaves its video and duration as they were.
        let movie = ProbePhotoTests.object(try JSONParser.parse(try Graphctl.run("probe", "--json", mov.path).stdout))
        #expect(movie["duration"] == .number(3))
    }

    @Test func anotherIdentifierBesideItIsSaidNotPairedAndAFIFOIsPassedOver() throws {
        let folder = try TestMedia.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let heic = folder.appendingPathComponent("IMG_0002.heic"), mov = folder.appendingPathComponent("IMG_0002.mov")
        try Self.still(heic, identifier: Self.id, folder: folder)
        try Self.movie(mov, identifier: "00000000-0000-0000-0000-000000000000", still: nil)
        let other = try Self.livePhoto(heic.path)
        #expect(other["paired"] == .bool(false) && other["stillImageTime"] == nil)
        #expect(try Graphctl.run("probe", heic.path).stdout.contains("has another identifier: not paired"))
        // A FIFO where the movie would be: probe does not wait on it, and says no pairing.
        try FileManager.default.removeItem(at: mov)
        #expect(mkfifo(mov.path, 0o600) == 0)
        let alone = try Self.livePhoto(heic.path)
        #expect(alone["contentIdentifier"] == .string(Self.id) && alone["pairedWith"] == nil)
    }
}
