import Foundation
import Testing
import GraphKit
import GraphKitTesting
import Nodes
import TestSupport

/// 10-bit video (phones' HDR) through `decode`'s `i420_10le` or `p010_10le` and `encode.hevc`'s
/// main10 with no 8-bit step, and the nodes that take 8-bit frames refusing 10-bit ones before the run.
@Suite(.media) struct TenBitVideoTests {
    static func ramp(in folder: URL) throws -> String { try HDRTestMedia.makeTenBitRamp(in: folder) }

    /// Row 10 of the first decoded frame's luma, sample by sample (P010's in a word's high 10
    /// bits: the low 6 must be 0).
    static func decodedRow(_ file: String, pixelFormat: String) throws -> (format: MediaFormat?, row: [Int]) {
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
              "dec": { "type": "decode", "params": { "pixelFormat": "\(pixelFormat)" } }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.video -> out.in" ] }
            """)
        let run = try GraphRun(graph)
        try run.start()
        let output = try run.output("out")
        var first: SampleBuffer?
        while let b = output.copyNextSampleBuffer() { if first == nil { first = b } }
        #expect(run.wait().status == .completed)
        let frame = try #require(first)
        let row = try frame.withPixelPlanes { planes in
            let luma = planes[0], line = luma.baseAddress + 10 * luma.bytesPerRow
            let word = { (x: Int) in Int(UInt16(littleEndian: line.loadUnaligned(fromByteOffset: 2 * x, as: UInt16.self))) }
            return switch pixelFormat {
            case "i420_10le": (0..<luma.width).map(word)
            case "p010_10le": (0..<luma.width).map { word($0) & 0x3F == 0 ? word($0) >> 6 : -1 }
            default: (0..<luma.width).map { Int(line.load(fromByteOffset: $0, as: UInt8.self)) }
            }
        }
        return (frame.format, row)
    }

    @Test(arguments: [PixelFormat.i420_10le, .p010_10le]) func decodeGivesTheTenBitSamplesAsStored(_ pixelFormat: PixelFormat) throws {
        let file = try Self.ramp(in: TestMedia.temporaryFolder())
        let (format, row) = try Self.decodedRow(file, pixelFormat: pixelFormat.rawValue)
        guard case .rawVideo(let v)? = format else { Issue.record("not raw video: \(String(describing: format))"); return }
        #expect(v.pixelFormat == pixelFormat && v.width == 1024 && v.height == 64)
        #expect(row == Array(0..<1024), "first samples \(row.prefix(8)), last \(row.suffix(4))")
        // The 8-bit frames of the same file hold a quarter of the levels.
        let (_, eight) = try Self.decodedRow(file, pixelFormat: "i420")
        #expect(Set(eight).count <= 256 && Set(row).count == 1024)
    }

    /// The ramp decoded and encoded again as HEVC Main 10, with 10-bit frames between, or with
    /// 8-bit ones: how far the re-encoded luma strays from the ramp, on average (10-bit units).
    static func reencodedError(_ file: String, pixelFormat: String, profile: String = "main10", h264: Bool = false,
                               into folder: URL) throws -> (error: Double, profile: String) {
        let out = folder.appendingPathComponent("\(profile)-\(h264)-\(pixelFormat).mp4").path
        let encoder = h264 ? #""type": "encode.h264", "params": { "bitrate": 50000000 }"#
            : #""type": "encode.hevc", "params": { "profile": "\#(profile)", "bitrate": 50000000, "preset": "ultrafast" }"#
        let graph = try GraphLoader(registry: .builtIn).load(json: """
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "\(file)" } },
              "dec": { "type": "decode", "params": { "pixelFormat": "\(pixelFormat)" } },
              "enc": { \(encoder) },
              "file": { "type": "sink.mp4", "params": { "path": "\(out)" } } },
              "edges": [ "src.out -> dec.in", "dec.video -> enc.in", "enc.out -> file.video" ] }
            """)
        let report = try GraphRun(graph).run()
        #expect(report.status == .completed)
        let raw = folder.appendingPathComponent("\(profile)-\(h264)-\(pixelFormat).yuv").path
        try TestMedia.runTool("ffmpeg", ["-v", "error", "-i", out, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "yuv420p10le", "-y", raw])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        var total = 0
        for y in 0..<64 {
            for x in 0..<1024 {
                let at = 2 * (y * 1024 + x)
                total += abs(Int(bytes[at]) | Int(bytes[at + 1]) << 8 - x)
            }
        }
        let profile = try TestMedia.runTool("ffprobe", ["-v", "error", "-show_entries", "stream=profile,pix_fmt", "-of", "csv=p=0", out])
        return (Double(total) / Double(64 * 1024), profile.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test func aMain10EncodeOfTenBitFramesKeepsTheirSamples() throws {
        let folder = try TestMedia.temporaryFolder()
        let file = try Self.ramp(in: folder)
        let ten = try Self.reencodedError(file, pixelFormat: "i420_10le", into: folder)
        let p010 = try Self.reencodedError(file, pixelFormat: "p010_10le", into: folder)
        let eight = try Self.reencodedError(file, pixelFormat: "i420", into: folder)
        #expect(ten.profile == "Main 10,yuv420p10le" && eight.profile == ten.profile && p010.profile == ten.profile, "\(ten.profile); \(eight.profile)")
        // Through 8 bits the ramp becomes steps of 4 (a mean error of about 1.5); through 10 it stays.
        #expect(ten.error < 0.75 && p010.error < 0.75 && eight.error > 2 * ten.error, "10-bit paths \(ten.error), \(p010.error); 8-bit path \(eight.error)")
    }

    /// 10-bit frames into an 8-bit encode (HEVC Main, H.264) are narrowed on the way (a
    /// videoconvert before GraphKit's 8-bit converter): the ramp in steps of 4, as a Mac's encoders
    /// take a reader's 10-bit pixel buffers.
    @Test(arguments: ["i420_10le", "p010_10le"]) func anEightBitEncodeTakesTenBitFrames(_ pixelFormat: String) throws {
        let folder = try TestMedia.temporaryFolder()
        let file = try Self.ramp(in: folder)
        let main = try Self.reencodedError(file, pixelFormat: pixelFormat, profile: "main", into: folder)
        #expect(main.profile == "Main,yuv420p", "\(main.profile)")
        #expect(main.error < 3, "\(main.error)")
        let h264 = try Self.reencodedError(file, pixelFormat: pixelFormat, h264: true, into: folder)
        #expect(h264.profile == "High,yuv420p", "\(h264.profile)")
        #expect(h264.error < 3, "\(h264.error)")
    }

    /// A node that takes 8-bit frames, given 10-bit ones, is refused before the run, naming the
    /// edge and the format; so are the parameters that cannot give or keep 10 bits.
    @Test func eightBitNodesRefuseTenBitFramesBeforeTheRun() throws {
        func load(_ json: String) -> GraphError? {
            do { _ = try GraphLoader(registry: .builtIn).load(json: json) } catch let e as GraphError { return e } catch { return nil }
            return nil
        }
        let gray = load("""
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "in.mp4" } },
              "dec": { "type": "decode", "params": { "pixelFormat": "i420_10le" } }, "fx": { "type": "effect.grayscale" },
              "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.video -> fx.in", "fx.out -> out.in" ] }
            """)
        #expect(gray?.code == .invalidGraph && gray?.description.contains("dec.video") == true
                && gray?.description.contains("I420_10LE") == true, "\(String(describing: gray))")
        let toneMapped = load("""
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "in.mp4" } },
              "dec": { "type": "decode", "params": { "pixelFormat": "i420_10le", "toneMap": true } }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.video -> out.in" ] }
            """)
        #expect(toneMapped?.code == .invalidGraph && toneMapped?.description.contains("toneMap gives 8-bit SDR frames") == true,
                "\(String(describing: toneMapped))")
        let toneMappedP010 = load("""
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "in.mp4" } },
              "dec": { "type": "decode", "params": { "pixelFormat": "p010_10le", "toneMap": true } }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.video -> out.in" ] }
            """)
        #expect(toneMappedP010?.code == .invalidGraph && toneMappedP010?.description.contains("p010_10le keeps the video's 10 bits") == true,
                "\(String(describing: toneMappedP010))")
        let p010Gray = load("""
            { "version": 1, "nodes": { "src": { "type": "source.file", "params": { "path": "in.mp4" } },
              "dec": { "type": "decode", "params": { "pixelFormat": "p010_10le" } }, "fx": { "type": "effect.grayscale" },
              "out": { "type": "sink.app" } },
              "edges": [ "src.out -> dec.in", "dec.video -> fx.in", "fx.out -> out.in" ] }
            """)
        #expect(p010Gray?.code == .invalidGraph && p010Gray?.description.contains("P010_10LE") == true, "\(String(describing: p010Gray))")
        let drawn = load("""
            { "version": 1, "nodes": { "src": { "type": "generate.frames", "params": { "pixelFormat": "i420_10le" } }, "out": { "type": "sink.app" } },
              "edges": [ "src.out -> out.in" ] }
            """)
        #expect(drawn?.code == .invalidGraph && drawn?.description.contains("generate.frames draws 8-bit frames") == true, "\(String(describing: drawn))")
    }
}
